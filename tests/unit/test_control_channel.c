/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the agent channel's outer end
 * (runtime/sandbox/control/control_channel.c): the wire format, the
 * agent that cannot grant, and the bounds. */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../../runtime/sandbox/control/control_channel.h"
#include "unit.h"
#include "utils.h"

struct events {
	pthread_mutex_t lock;
	char buf[65536];
	size_t len;
};

static void on_event(void *data, struct ar_jbuf *b)
{
	struct events *e = data;

	ar_jbuf_lit(b, "}\n");
	pthread_mutex_lock(&e->lock);
	if (e->len + b->len < sizeof(e->buf)) {
		memcpy(e->buf + e->len, b->p, b->len);
		e->len += b->len;
		e->buf[e->len] = '\0';
	}
	pthread_mutex_unlock(&e->lock);
	ar_jbuf_free(b);
}

/* One line from the agent's end (5 s at most); "" when none. */
static void read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	while (n + 1 < size) {
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		char c;

		if (poll(&pf, 1, 5000) <= 0 || read(fd, &c, 1) != 1)
			break;
		if (c == '\n')
			break;
		buf[n++] = c;
	}
	buf[n] = '\0';
}

static void say(int fd, const char *s)
{
	CHECK(write(fd, s, strlen(s)) == (ssize_t)strlen(s));
}

struct fixture {
	struct ctl_queue q;
	struct ctl_channel *ch;
	struct events ev;
	int agent;
};

static void setup(struct fixture *f, bool can_ask)
{
	struct ar_error err = AR_ERROR_INIT;
	char line[4096];

	memset(f, 0, sizeof(*f));
	pthread_mutex_init(&f->ev.lock, NULL);
	ctl_queue_init(&f->q, "box", 1);
	CHECK(ctl_channel_open(&f->q, can_ask, on_event, &f->ev, &f->agent,
			       &f->ch, &err) == 0);
	CHECK(ctl_channel_serve(f->ch, &err) == 0);
	read_line(f->agent, line, sizeof(line));
	CHECK_STR_EQ(line, "{\"type\":\"hello\",\"protocol_version\":1}");
}

static void teardown(struct fixture *f)
{
	ctl_queue_close(&f->q);
	ctl_channel_free(f->ch);
	close(f->agent);
	ctl_queue_release(&f->q);
	pthread_mutex_destroy(&f->ev.lock);
}

UNIT_TEST(channel_before_hello_denies_and_queues_blocked)
{
	struct fixture f;
	char line[4096];

	setup(&f, true);
	ctl_channel_blocked(f.ch, "x.test", 443,
			    "agentrun: blocked x.test:443");
	say(f.agent,
	    "{\"type\":\"permission_request\",\"id\":\"a\",\"resource\":{\"type\":\"network\",\"host\":\"x.test\",\"port\":443}}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "\"id\":\"a\",\"behavior\":\"deny\"");
	CHECK_STR_CONTAINS(line, "hello");
	/* the hello flushes what was blocked, once */
	say(f.agent, "{\"type\":\"hello\",\"protocol_version\":1}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "\"type\":\"blocked\"");
	CHECK_STR_CONTAINS(line, "\"host\":\"x.test\",\"port\":443");
	ctl_channel_blocked(f.ch, "x.test", 443, "again");
	ctl_channel_blocked(f.ch, "y.test", 80, "agentrun: blocked y.test:80");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "y.test");
	teardown(&f);
}

UNIT_TEST(channel_agent_cannot_grant)
{
	struct fixture f;
	char line[4096];

	setup(&f, true);
	say(f.agent, "{\"type\":\"hello\",\"protocol_version\":1}\n");
	say(f.agent,
	    "{\"type\":\"permission_request\",\"id\":\"r\",\"resource\":{\"type\":\"network\",\"host\":\"Z.Test\",\"port\":8080},\"description\":\"why\"}\n");
	/* pending, the agent's */
	for (int i = 0; i < 500 && f.q.n_reqs == 0; i++)
		usleep(10000);
	CHECK_INT_EQ((int)f.q.n_reqs, 1);
	/* its forged grant: ignored; the timeout (1 s) refuses */
	say(f.agent,
	    "{\"type\":\"permission_response\",\"id\":\"r\",\"behavior\":\"allow\"}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "\"id\":\"r\",\"behavior\":\"deny\"");
	CHECK_STR_CONTAINS(line, "z.test:8080");
	CHECK_STR_CONTAINS(line, "no answer within 1 s");
	teardown(&f);
	CHECK_STR_CONTAINS(f.ev.buf, "\"problem\":\"forged_response\"");
	CHECK_STR_CONTAINS(f.ev.buf, "\"forged_response\":1");
}

UNIT_TEST(channel_bad_lines_counted_and_survived)
{
	struct fixture f;
	char line[4096];
	char *big = ar_xmalloc(CTL_CHANNEL_LINE_MAX + 100);

	setup(&f, false);
	say(f.agent, "{\"type\":\"hello\",\"protocol_version\":1}\n");
	say(f.agent, "not json\n[1,2]\n{\"no\":\"type\"}\n\n   \n");
	say(f.agent, "{\"type\":\"hello\",\"protocol_version\":2}\n");
	memset(big, 'x', CTL_CHANNEL_LINE_MAX + 99);
	big[CTL_CHANNEL_LINE_MAX + 99] = '\n';
	CHECK(write(f.agent, big, CTL_CHANNEL_LINE_MAX + 100) ==
	      CTL_CHANNEL_LINE_MAX + 100);
	free(big);
	/* bad fields, then a good request: no `ask`, denied saying so */
	say(f.agent,
	    "{\"type\":\"permission_request\",\"id\":\"b\",\"resource\":{\"type\":\"network\",\"host\":\"bad host\",\"port\":1}}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "\"id\":\"b\",\"behavior\":\"deny\"");
	say(f.agent,
	    "{\"type\":\"permission_request\",\"id\":\"f\",\"resource\":{\"type\":\"file\",\"path\":\"/etc\"}}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "only for network destinations");
	say(f.agent,
	    "{\"type\":\"permission_request\",\"id\":\"c\",\"resource\":{\"type\":\"network\",\"host\":\"ok.test\",\"port\":443}}\n");
	read_line(f.agent, line, sizeof(line));
	CHECK_STR_CONTAINS(line, "\"id\":\"c\",\"behavior\":\"deny\"");
	CHECK_STR_CONTAINS(line, "does not ask");
	teardown(&f);
	/* not json, [1,2], no type, bad host: invalid; version 2: unknown */
	CHECK_STR_CONTAINS(f.ev.buf, "\"invalid\":4");
	CHECK_STR_CONTAINS(f.ev.buf, "\"oversized\":1");
	CHECK_STR_CONTAINS(f.ev.buf, "\"unknown\":1");
}

UNIT_MAIN()
