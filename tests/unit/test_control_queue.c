/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for the control plane's pending decisions
 * (runtime/sandbox/control/control_queue.c) and its protocol
 * (control_proto.c), and the allowlist item `ask` (egress_policy.c). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runtime/sandbox/control/control_always.h"
#include "../../runtime/sandbox/control/control_proto.h"
#include "../../runtime/sandbox/control/control_queue.h"
#include "../../runtime/sandbox/egress/egress_policy.h"
#include "control/control_peer.h"
#include "unit.h"
#include "utils.h"

struct asker {
	struct ctl_queue *q;
	const char *host;
	uint16_t port;
	bool granted;
	char reason[512];
	pthread_t t;
};

static void *ask_main(void *arg)
{
	struct asker *a = arg;

	a->granted = ctl_queue_ask(a->q, "http", a->host, a->port, "1.2.3.4",
				   a->reason, sizeof(a->reason));
	return NULL;
}

static void ask_start(struct asker *a, struct ctl_queue *q, const char *host,
		      uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->q = q;
	a->host = host;
	a->port = port;
	CHECK(pthread_create(&a->t, NULL, ask_main, a) == 0);
}

/* the number of connections waiting, once it is n (5 s at most) */
static int wait_waiting(struct ctl_queue *q, int n)
{
	int w = -1;

	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&q->lock);
		w = q->n_waiting;
		pthread_mutex_unlock(&q->lock);
		if (w == n)
			break;
		usleep(10000);
	}
	return w;
}

static int answer(struct ctl_queue *q, uint64_t id, enum ctl_answer a)
{
	char host[256], why[512];
	uint16_t port;

	return ctl_queue_answer(q, id, a, 1000, "cli", host, sizeof(host),
				&port, why, sizeof(why));
}

UNIT_TEST(queue_once_merges_and_grants_one)
{
	struct ctl_queue q;
	struct asker a[3];
	struct ar_jbuf b = { 0 };

	ctl_queue_init(&q, "box", 30);
	for (int i = 0; i < 3; i++)
		ask_start(&a[i], &q, "x.test", 443);
	CHECK_INT_EQ(wait_waiting(&q, 3), 3);
	CHECK_INT_EQ((int)q.n_reqs, 1); /* merged */
	ctl_queue_list(&q, &b);
	CHECK(strstr(b.p, "\"id\":\"1\"") != NULL);
	CHECK(strstr(b.p, "\"target\":\"x.test:443\"") != NULL);
	CHECK(strstr(b.p, "\"waiting\":3") != NULL);
	ar_jbuf_free(&b);
	CHECK_INT_EQ(answer(&q, 1, CTL_ANSWER_ONCE), 0);
	CHECK_INT_EQ(wait_waiting(&q, 2), 2);
	/* refuse the rest */
	CHECK_INT_EQ(answer(&q, 1, CTL_ANSWER_REFUSE), 0);
	CHECK_INT_EQ(wait_waiting(&q, 0), 0);
	{
		int granted = 0;

		for (int i = 0; i < 3; i++) {
			pthread_join(a[i].t, NULL);
			granted += a[i].granted;
			if (!a[i].granted)
				CHECK(strstr(a[i].reason,
					     "refused by uid 1000 (cli)") !=
				      NULL);
		}
		CHECK_INT_EQ(granted, 1);
	}
	CHECK_INT_EQ((int)q.n_reqs, 0);
	/* an unknown id */
	CHECK_INT_EQ(answer(&q, 1, CTL_ANSWER_ONCE), -1);
	ctl_queue_close(&q);
	ctl_queue_release(&q);
}

struct agent_asker {
	struct ctl_queue *q;
	bool granted;
	char reason[512];
	pthread_t t;
};

static void *agent_main(void *arg)
{
	struct agent_asker *a = arg;

	a->granted = ctl_queue_ask_agent(a->q, "y.test", 443,
					 "need \033[31mdocs", a->reason,
					 sizeof(a->reason));
	return NULL;
}

/* The agent's request (control_channel.c): marked, its words quoted; a
 * `once` grant is for the next connection to it, one connection only. */
UNIT_TEST(queue_agent_request_once_is_the_next_connection)
{
	struct ctl_queue q;
	struct agent_asker a = { 0 };
	struct ar_jbuf b = { 0 };
	char reason[512];

	ctl_queue_init(&q, "box", 30);
	a.q = &q;
	CHECK(pthread_create(&a.t, NULL, agent_main, &a) == 0);
	CHECK_INT_EQ(wait_waiting(&q, 1), 1);
	ctl_queue_list(&q, &b);
	CHECK(strstr(b.p, "\"from\":\"agent\"") != NULL);
	/* ar_quote: the escape as text, no ESC byte */
	CHECK(strstr(b.p, "\\\\033[31mdocs") != NULL);
	CHECK(strchr(b.p, '\033') == NULL);
	ar_jbuf_free(&b);
	CHECK_INT_EQ(answer(&q, 1, CTL_ANSWER_ONCE), 0);
	pthread_join(a.t, NULL);
	CHECK(a.granted);
	/* the next connection goes through without asking; the one after
	 * that asks (and times out at once: closed) */
	CHECK(ctl_queue_ask(&q, "http", "y.test", 443, NULL, reason,
			    sizeof(reason)));
	ctl_queue_close(&q);
	CHECK(!ctl_queue_ask(&q, "http", "y.test", 443, NULL, reason,
			     sizeof(reason)));
	ctl_queue_release(&q);
}

UNIT_TEST(queue_session_then_no_question)
{
	struct ctl_queue q;
	struct asker a;
	char reason[256];

	ctl_queue_init(&q, "box", 30);
	ask_start(&a, &q, "::1", 8080);
	CHECK_INT_EQ(wait_waiting(&q, 1), 1);
	CHECK_INT_EQ(answer(&q, 1, CTL_ANSWER_SESSION), 0);
	pthread_join(a.t, NULL);
	CHECK(a.granted);
	CHECK_STR_EQ(q.session[0].target, "[::1]:8080");
	/* granted at once, nothing pending */
	CHECK(ctl_queue_ask(&q, "http", "::1", 8080, NULL, reason,
			    sizeof(reason)));
	CHECK_INT_EQ((int)q.n_reqs, 0);
	ctl_queue_close(&q);
	/* closed: refused at once */
	CHECK(!ctl_queue_ask(&q, "http", "y.test", 80, NULL, reason,
			     sizeof(reason)));
	CHECK(strstr(reason, "the sandbox is ending") != NULL);
	ctl_queue_release(&q);
}

UNIT_TEST(queue_timeout_refuses)
{
	struct ctl_queue q;
	char reason[256];

	ctl_queue_init(&q, "box", 1);
	CHECK(!ctl_queue_ask(&q, "http", "z.test", 80, NULL, reason,
			     sizeof(reason)));
	CHECK(strstr(reason, "had no answer within 1 s") != NULL);
	CHECK(strstr(reason, "agentrun: blocked z.test:80") == reason);
	CHECK_INT_EQ((int)q.n_reqs, 0);
	ctl_queue_close(&q);
	ctl_queue_release(&q);
}

UNIT_TEST(queue_bounded)
{
	struct ctl_queue q;
	struct asker *a = calloc(CTL_MAX_PENDING, sizeof(*a));
	char reason[512];
	char(*hosts)[32] = calloc(CTL_MAX_PENDING, 32);

	ctl_queue_init(&q, "box", 30);
	for (int i = 0; i < CTL_MAX_PENDING; i++) {
		snprintf(hosts[i], 32, "h%d.test", i);
		ask_start(&a[i], &q, hosts[i], 443);
	}
	CHECK_INT_EQ(wait_waiting(&q, CTL_MAX_PENDING), CTL_MAX_PENDING);
	/* one more HOST:PORT: refused at once */
	CHECK(!ctl_queue_ask(&q, "http", "more.test", 443, NULL, reason,
			     sizeof(reason)));
	CHECK(strstr(reason, "too many questions are open") != NULL);
	CHECK_INT_EQ((int)q.n_reqs, CTL_MAX_PENDING);
	/* the end of the sandbox refuses them all */
	ctl_queue_close(&q);
	for (int i = 0; i < CTL_MAX_PENDING; i++) {
		pthread_join(a[i].t, NULL);
		CHECK(!a[i].granted);
		CHECK(strstr(a[i].reason, "the sandbox ended") != NULL);
	}
	ctl_queue_release(&q);
	free(a);
	free(hosts);
}

UNIT_TEST(proto_parse)
{
	struct ctl_msg m;
	char why[256];
	static const char ok[] =
		"{\"op\":\"answer\",\"id\":\"12\",\"answer\":\"session\",\"interface\":\"cli\"}";

	CHECK_INT_EQ(ctl_proto_parse(ok, sizeof(ok) - 1, &m, why, sizeof(why)),
		     0);
	CHECK_INT_EQ(m.op, CTL_OP_ANSWER);
	CHECK_INT_EQ((int)m.id, 12);
	CHECK_INT_EQ(m.answer, CTL_ANSWER_SESSION);
	CHECK_INT_EQ(ctl_proto_parse("{\"op\":\"events\"}", 15, &m, why,
				     sizeof(why)),
		     0);
	CHECK_INT_EQ(m.op, CTL_OP_EVENTS);
	CHECK_INT_EQ(ctl_proto_parse("[1]", 3, &m, why, sizeof(why)), -1);
	CHECK(strstr(why, "expected a JSON object") != NULL);
	CHECK_INT_EQ(ctl_proto_parse("{\"op\":\"grant\"}", 14, &m, why,
				     sizeof(why)),
		     -1);
	CHECK_INT_EQ(
		ctl_proto_parse(
			"{\"op\":\"answer\",\"id\":\"0\",\"answer\":\"once\",\"interface\":\"cli\"}",
			58, &m, why, sizeof(why)),
		-1);
	CHECK(strstr(why, "id") != NULL);
	CHECK_INT_EQ(
		ctl_proto_parse(
			"{\"op\":\"answer\",\"id\":\"1\",\"answer\":\"yes\",\"interface\":\"cli\"}",
			57, &m, why, sizeof(why)),
		-1);
	CHECK(strstr(why, "answer") != NULL);
	CHECK_INT_EQ(ctl_proto_parse("{\"op\":", 6, &m, why, sizeof(why)), -1);
}

UNIT_TEST(policy_ask_item)
{
	struct ar_egress_policy p;
	struct ar_error err = AR_ERROR_INIT;

	memset(&p, 0, sizeof(p));
	CHECK_INT_EQ(ar_egress_policy_add(&p, "pypi.org,ask", &err), 0);
	CHECK(p.ask);
	CHECK_INT_EQ((int)p.n_rules, 1);
	CHECK(!ar_egress_host_allowed(&p, "ask", 443));
	CHECK(ar_egress_host_allowed(&p, "pypi.org", 443));
	ar_egress_policy_release(&p);
	memset(&p, 0, sizeof(p));
	CHECK_INT_EQ(ar_egress_policy_add(&p, "ASK", &err), 0);
	CHECK(p.ask);
	CHECK_INT_EQ((int)p.n_rules, 0);
	ar_egress_policy_release(&p);
}

static char *always_on(const char *text, const char *host, uint16_t port,
		       int *rc, char **diff)
{
	char path[] = "/tmp/agentrun-unit-always-XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	struct ar_jbuf d = { 0 };
	char *out = NULL;
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text));
	close(fd);
	*rc = ctl_always_write(path, host, port, &d, &err);
	CHECK(ar_read_file_at(AT_FDCWD, path, 1 << 20, &out, NULL, &err) == 0);
	unlink(path);
	*diff = d.p ? d.p : ar_xstrdup("");
	return out;
}

UNIT_TEST(always_adds_the_exact_target)
{
	char *out, *diff;
	int rc;

	out = always_on("{\"net\": {\"allow\": [\"a.test\"]}}\n", "pypi.org",
			443, &rc, &diff);
	CHECK_INT_EQ(rc, 0);
	CHECK_STR_EQ(
		out,
		"{\"net\": {\"allow\": [\"pypi.org:443\", \"a.test\"]}}\n");
	CHECK_STR_CONTAINS(diff, "+{\"net\": {\"allow\": [\"pypi.org:443\"");
	free(out);
	free(diff);
	out = always_on("{\"net\": {\"allow\": [\n  \"a.test\"\n]}}", "::1",
			8080, &rc, &diff);
	CHECK_INT_EQ(rc, 0);
	CHECK_STR_EQ(
		out,
		"{\"net\": {\"allow\": [\n  \"[::1]:8080\", \"a.test\"\n]}}");
	CHECK_STR_CONTAINS(diff,
			   "-  \"a.test\"\n+  \"[::1]:8080\", \"a.test\"\n");
	free(out);
	free(diff);
	/* already there: unchanged */
	out = always_on("{\"net\": {\"allow\": [\"x.test:80\"]}}", "x.test", 80,
			&rc, &diff);
	CHECK_INT_EQ(rc, 0);
	CHECK_STR_EQ(out, "{\"net\": {\"allow\": [\"x.test:80\"]}}");
	CHECK_STR_EQ(diff, "");
	free(out);
	free(diff);
	/* no list, or "allow" only inside a string: nothing written */
	out = always_on("{\"net\": \"none\"}", "x.test", 80, &rc, &diff);
	CHECK_INT_EQ(rc, -1);
	CHECK_STR_EQ(out, "{\"net\": \"none\"}");
	free(out);
	free(diff);
	out = always_on("{\"description\": \"\\\"allow\\\": [\"}", "x.test", 80,
			&rc, &diff);
	CHECK_INT_EQ(rc, -1);
	free(out);
	free(diff);
}

UNIT_TEST(peer_tcp_inode)
{
	/* 127.0.0.1:40000 -> 127.0.0.1:3128, inode 12345; a listener */
	static const char t4[] =
		"  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 0100007F:0C38 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 999 1 0000000000000000 100 0 0 10 0\n"
		"   1: 0100007F:9C40 0100007F:0C38 01 00000000:00000000 00:00000000 00000000  1000        0 12345 1 0000000000000000 20 4 30 10 -1\n";
	static const char t6[] =
		"  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
		"   0: 00000000000000000000000001000000:9C41 00000000000000000000000001000000:0C38 01 00000000:00000000 00:00000000 00000000  1000        0 777 1 0000000000000000 20 4 30 10 -1\n";
	unsigned char lo[4] = { 127, 0, 0, 1 }, other[4] = { 10, 0, 0, 1 };
	unsigned char lo6[16] = { 0 };

	lo6[15] = 1;
	CHECK(ctl_peer_tcp_inode(t4, lo, 4, 40000) == 12345);
	CHECK(ctl_peer_tcp_inode(t4, lo, 4, 3128) == 999);
	CHECK(ctl_peer_tcp_inode(t4, lo, 4, 1) == 0);
	CHECK(ctl_peer_tcp_inode(t4, other, 4, 40000) == 0);
	CHECK(ctl_peer_tcp_inode(t6, lo6, 16, 40001) == 777);
	CHECK(ctl_peer_tcp_inode(t6, lo, 4, 40001) == 0);
	CHECK(ctl_peer_tcp_inode("", lo, 4, 1) == 0);
	CHECK(ctl_peer_tcp_inode("header only", lo, 4, 1) == 0);
}

UNIT_MAIN()
