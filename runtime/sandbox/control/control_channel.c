/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent channel's outer end (control_channel.h): one thread reads
 * the agent's lines and writes what is queued for it; each request of
 * the agent waits for the human in a small thread of its own (bounded).
 */
#define _GNU_SOURCE
#include "control_channel.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "arena.h"
#include "json_tree.h"
#include "log.h"
#include "utils.h"

#define OUT_MAX (256 * 1024) /* bytes queued for an agent not reading */
#define READ_CHUNK 16384
#define ID_MAX 64
#define STACK_BYTES (128 * 1024)

enum problem {
	P_INVALID, /* not JSON, not an object, a bad field */
	P_OVERSIZED, /* a line longer than CTL_CHANNEL_LINE_MAX */
	P_FORGED, /* a permission_response: the agent cannot grant */
	P_UNKNOWN, /* an unknown type, or an unsupported hello */
	P_BUSY, /* a request over CTL_CHANNEL_MAX_ASKS */
	P_DROPPED, /* a message to the agent dropped: it does not read */
	P_N,
};
static const char *const problem_names[P_N] = {
	"invalid", "oversized",		"forged_response",
	"unknown", "too_many_requests", "dropped_output",
};

struct ctl_channel {
	struct ctl_queue *q;
	bool can_ask;
	ctl_channel_emit_fn emit;
	void *emit_data;
	int fd; /* the outer end */
	int wake_fd;
	pthread_t thread;
	bool running;
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond; /* n_workers */
	bool handshaken, stopping;
	int n_workers;
	char *out; /* what the agent has not taken yet */
	size_t out_len;
	char **sent; /* "host:port" told as blocked */
	size_t n_sent;
	char **queued; /* `blocked` lines before the hello */
	size_t n_queued;
	unsigned long long count[P_N];
	unsigned long long n_requests;
	/* the reader's own */
	char *in;
	size_t in_len;
	bool discarding; /* in an oversized line, up to its newline */
};

static char *xstrndup(const char *s, size_t n)
{
	char *r = strndup(s, n);

	if (!r)
		abort();
	return r;
}

/* ---- output ---- */

static void wake(struct ctl_channel *ch)
{
	uint64_t one = 1;

	(void)!write(ch->wake_fd, &one, sizeof(one));
}

/* Called with the lock. */
static void flush_locked(struct ctl_channel *ch)
{
	while (ch->out_len > 0) {
		ssize_t w = send(ch->fd, ch->out, ch->out_len,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return; /* the thread polls for room */
		if (w <= 0) {
			ch->out_len = 0; /* the agent is gone */
			return;
		}
		memmove(ch->out, ch->out + w, ch->out_len - (size_t)w);
		ch->out_len -= (size_t)w;
	}
}

static void problem_locked(struct ctl_channel *ch, enum problem p,
			   const char *detail, size_t dlen);

/* One whole line (newline-ended) for the agent, or none: never half. */
static void send_locked(struct ctl_channel *ch, const char *line, size_t len)
{
	bool was_empty = ch->out_len == 0;

	if (ch->out_len + len > OUT_MAX) {
		problem_locked(ch, P_DROPPED, line, len);
		return;
	}
	if (!ch->out)
		ch->out = ar_xmalloc(OUT_MAX);
	memcpy(ch->out + ch->out_len, line, len);
	ch->out_len += len;
	flush_locked(ch);
	if (was_empty && ch->out_len > 0)
		wake(ch); /* poll for POLLOUT */
}

/* ---- events ---- */

/* Counted; an event for the 1st, 2nd, 4th, 8th... of each kind, so a
 * flood costs the log a few lines. */
static void problem_locked(struct ctl_channel *ch, enum problem p,
			   const char *detail, size_t dlen)
{
	unsigned long long n = ++ch->count[p];
	struct ar_jbuf b = { 0 };
	char quoted[160];

	if ((n & (n - 1)) != 0 || !ch->emit)
		return;
	ar_quote_to(quoted, sizeof(quoted), detail ? detail : "",
		    detail ? (dlen < 120 ? dlen : 120) : 0);
	ar_audit_begin(&b, "agent_channel");
	ar_jbuf_key(&b, "problem");
	ar_jbuf_cstr(&b, problem_names[p]);
	ar_jbuf_addf(&b, ",\"count\":%llu", n);
	ar_jbuf_key(&b, "line");
	ar_jbuf_cstr(&b, quoted);
	ch->emit(ch->emit_data, &b);
}

/* ---- the agent's requests ---- */

struct ask {
	struct ctl_channel *ch;
	char id[ID_MAX + 1];
	char host[256];
	uint16_t port;
	char *explanation;
};

static void respond_locked(struct ctl_channel *ch, const char *id, bool allow,
			   const char *why)
{
	struct ar_jbuf b = { 0 };

	ar_jbuf_lit(&b, "{\"type\":\"permission_response\"");
	ar_jbuf_key(&b, "id");
	ar_jbuf_cstr(&b, id);
	ar_jbuf_key(&b, "behavior");
	ar_jbuf_cstr(&b, allow ? "allow" : "deny");
	ar_jbuf_key(&b, "description");
	ar_jbuf_cstr(&b, why);
	ar_jbuf_lit(&b, "}\n");
	send_locked(ch, b.p, b.len);
	ar_jbuf_free(&b);
}

static void *ask_main(void *arg)
{
	struct ask *a = arg;
	struct ctl_channel *ch = a->ch;
	char reason[600];
	bool ok;

	ok = ctl_queue_ask_agent(ch->q, a->host, a->port, a->explanation,
				 reason, sizeof(reason));
	if (ok)
		snprintf(reason, sizeof(reason),
			 "granted by the user: connect to the destination now");
	pthread_mutex_lock(&ch->lock);
	respond_locked(ch, a->id, ok, reason);
	ch->n_workers--;
	pthread_cond_broadcast(&ch->cond);
	pthread_mutex_unlock(&ch->lock);
	free(a->explanation);
	free(a);
	return NULL;
}

static const char *member_str(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = o ? jt_get(o, key) : NULL;

	if (!n || n->type != JT_STRING || strlen(n->u.str.s) != n->u.str.len)
		return NULL;
	return n->u.str.s;
}

/* A DNS name or an address literal, as the proxy takes it; lowercased. */
static bool host_ok(const char *s, char *out, size_t size)
{
	size_t n = strlen(s);

	if (*s == '[' && n > 2 && s[n - 1] == ']') {
		s++;
		n -= 2;
	}
	if (n == 0 || n >= size || n > 253)
		return false;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != ':')
			return false;
		out[i] = (char)tolower(c);
	}
	out[n] = '\0';
	return true;
}

static bool id_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x21 || s[i] > 0x7e)
			return false;
	return true;
}

/* Called with the lock. */
static void request_locked(struct ctl_channel *ch, const struct jt_node *m,
			   const char *line, size_t len)
{
	const char *id = member_str(m, "id"), *type, *host, *desc;
	const struct jt_node *res = jt_get(m, "resource"), *port;
	unsigned long long pv = 0;
	char h[256], *end;
	struct ask *a;
	pthread_t t;
	pthread_attr_t attr;
	int e;

	if (!id || !id_ok(id)) {
		problem_locked(ch, P_INVALID, line, len);
		return;
	}
	ch->n_requests++;
	if (!ch->handshaken) {
		respond_locked(
			ch, id, false,
			"send {\"type\":\"hello\",\"protocol_version\":1} first");
		return;
	}
	type = res && res->type == JT_OBJECT ? member_str(res, "type") : NULL;
	if (!type || strcmp(type, "network") != 0) {
		respond_locked(
			ch, id, false,
			"agentrun asks the user only for network destinations (resource.type \"network\", host, port); files need a restart with --ro/--rw or `agentrun sandbox allow`");
		return;
	}
	host = member_str(res, "host");
	port = jt_get(res, "port");
	if (port && port->type == JT_NUMBER) {
		errno = 0;
		pv = strtoull(port->u.str.s, &end, 10);
		if (errno || *end)
			pv = 0;
	}
	if (!host || !host_ok(host, h, sizeof(h)) || pv == 0 || pv > 65535) {
		problem_locked(ch, P_INVALID, line, len);
		respond_locked(
			ch, id, false,
			"resource: expected {\"type\":\"network\",\"host\":NAME,\"port\":1..65535}");
		return;
	}
	if (!ch->can_ask) {
		respond_locked(
			ch, id, false,
			"this sandbox does not ask the user: its network policy has no `ask` (--net ask, --net allow=...,ask)");
		return;
	}
	if (ch->n_workers >= CTL_CHANNEL_MAX_ASKS || ch->stopping) {
		problem_locked(ch, P_BUSY, line, len);
		respond_locked(
			ch, id, false,
			"too many requests of the agent are waiting for the user (at most 16)");
		return;
	}
	desc = member_str(m, "description");
	a = ar_xcalloc(1, sizeof(*a));
	a->ch = ch;
	snprintf(a->id, sizeof(a->id), "%s", id);
	snprintf(a->host, sizeof(a->host), "%s", h);
	a->port = (uint16_t)pv;
	a->explanation = xstrndup(desc ? desc : "", CTL_EXPLANATION_MAX);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_BYTES);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	e = pthread_create(&t, &attr, ask_main, a);
	pthread_attr_destroy(&attr);
	if (e != 0) {
		free(a->explanation);
		free(a);
		problem_locked(ch, P_BUSY, line, len);
		respond_locked(ch, id, false, "agentrun: no thread to wait in");
		return;
	}
	ch->n_workers++;
}

/* ---- input ---- */

static void hello_locked(struct ctl_channel *ch, const struct jt_node *m,
			 const char *line, size_t len)
{
	const struct jt_node *v = jt_get(m, "protocol_version");

	if (!v || v->type != JT_NUMBER || strcmp(v->u.str.s, "1") != 0) {
		/* as srt: never ready, nothing asked */
		problem_locked(ch, P_UNKNOWN, line, len);
		return;
	}
	if (ch->handshaken)
		return;
	ch->handshaken = true;
	for (size_t i = 0; i < ch->n_queued; i++) {
		send_locked(ch, ch->queued[i], strlen(ch->queued[i]));
		free(ch->queued[i]);
	}
	ch->n_queued = 0;
}

static void handle_line(struct ctl_channel *ch, const char *line, size_t len)
{
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *m = NULL;
	const char *type;
	size_t i;

	for (i = 0; i < len && isspace((unsigned char)line[i]); i++)
		;
	if (i == len)
		return; /* blank, as srt */
	pthread_mutex_lock(&ch->lock);
	if (jt_parse(&a, line, len, "agent channel", &m, &err) < 0 ||
	    m->type != JT_OBJECT || !(type = member_str(m, "type"))) {
		problem_locked(ch, P_INVALID, line, len);
	} else if (strcmp(type, "hello") == 0) {
		hello_locked(ch, m, line, len);
	} else if (strcmp(type, "permission_request") == 0) {
		request_locked(ch, m, line, len);
	} else if (strcmp(type, "permission_response") == 0) {
		/* srt's direction: here the agent cannot grant */
		problem_locked(ch, P_FORGED, line, len);
	} else {
		problem_locked(ch, P_UNKNOWN, line, len);
	}
	pthread_mutex_unlock(&ch->lock);
	oci_arena_free(&a);
}

/* New bytes from the agent: whole lines handled, an over-long one
 * dropped up to its newline. */
static void take(struct ctl_channel *ch, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t part = nl ? (size_t)(nl - p) : n;

		if (ch->discarding) {
			if (nl)
				ch->discarding = false;
		} else if (ch->in_len + part > CTL_CHANNEL_LINE_MAX) {
			pthread_mutex_lock(&ch->lock);
			problem_locked(ch, P_OVERSIZED, ch->in, 64);
			pthread_mutex_unlock(&ch->lock);
			ch->in_len = 0;
			ch->discarding = nl == NULL;
		} else {
			memcpy(ch->in + ch->in_len, p, part);
			ch->in_len += part;
			if (nl) {
				handle_line(ch, ch->in, ch->in_len);
				ch->in_len = 0;
			}
		}
		p += part + (nl ? 1 : 0);
		n -= part + (nl ? 1 : 0);
	}
}

static void *reader_main(void *arg)
{
	struct ctl_channel *ch = arg;
	char *buf = ar_xmalloc(READ_CHUNK);
	bool eof = false;

	for (;;) {
		struct pollfd pf[2] = {
			{ .fd = ch->fd, .events = 0 },
			{ .fd = ch->wake_fd, .events = POLLIN },
		};
		uint64_t v;

		pthread_mutex_lock(&ch->lock);
		if (ch->stopping) {
			pthread_mutex_unlock(&ch->lock);
			break;
		}
		if (!eof)
			pf[0].events |= POLLIN;
		if (ch->out_len > 0)
			pf[0].events |= POLLOUT;
		pthread_mutex_unlock(&ch->lock);
		if (!pf[0].events)
			pf[0].fd = -1;
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents & POLLIN)
			(void)!read(ch->wake_fd, &v, sizeof(v));
		if (pf[0].revents & POLLOUT) {
			pthread_mutex_lock(&ch->lock);
			flush_locked(ch);
			pthread_mutex_unlock(&ch->lock);
		}
		if (pf[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t r = recv(ch->fd, buf, READ_CHUNK, MSG_DONTWAIT);

			if (r > 0)
				take(ch, buf, (size_t)r);
			else if (r == 0 ||
				 (errno != EAGAIN && errno != EINTR)) {
				eof = true; /* every copy of its end closed */
				pthread_mutex_lock(&ch->lock);
				ch->out_len = 0;
				pthread_mutex_unlock(&ch->lock);
			}
		}
	}
	free(buf);
	return NULL;
}

/* ---- the outside's API ---- */

int ctl_channel_open(struct ctl_queue *q, bool can_ask,
		     ctl_channel_emit_fn emit, void *emit_data, int *inner,
		     struct ctl_channel **out, struct ar_error *err)
{
	struct ctl_channel *ch;
	int sv[2];

	/* a stream socketpair, as srt's (node's stdio 'pipe') */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "agent channel: socketpair");
	ch = ar_xcalloc(1, sizeof(*ch));
	ch->q = q;
	ch->can_ask = can_ask;
	ch->emit = emit;
	ch->emit_data = emit_data;
	ch->fd = sv[0];
	ch->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ch->wake_fd < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		free(ch);
		return ar_error_set(err, e, "agent channel: eventfd");
	}
	pthread_mutex_init(&ch->lock, NULL);
	pthread_cond_init(&ch->cond, NULL);
	ch->in = ar_xmalloc(CTL_CHANNEL_LINE_MAX);
	*inner = sv[1];
	*out = ch;
	return 0;
}

int ctl_channel_serve(struct ctl_channel *ch, struct ar_error *err)
{
	static const char hello[] =
		"{\"type\":\"hello\",\"protocol_version\":1}\n";
	pthread_attr_t attr;
	sigset_t all, old;
	int e;

	if (!ch || ch->running)
		return 0;
	pthread_mutex_lock(&ch->lock);
	send_locked(ch, hello, sizeof(hello) - 1);
	pthread_mutex_unlock(&ch->lock);
	/* its threads (and the askers they start) take no signal */
	sigfillset(&all);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_BYTES);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	e = pthread_create(&ch->thread, &attr, reader_main, ch);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (e != 0)
		return ar_error_set(err, e, "agent channel: start its thread");
	ch->running = true;
	return 0;
}

/* Called with the lock: false when key was told already (else noted). */
static bool first_time_locked(struct ctl_channel *ch, const char *key)
{
	for (size_t i = 0; i < ch->n_sent; i++)
		if (strcmp(ch->sent[i], key) == 0)
			return false;
	if (ch->n_sent >= CTL_CHANNEL_MAX_BLOCKED) {
		/* as srt: forget, bounded */
		for (size_t i = 0; i < ch->n_sent; i++)
			free(ch->sent[i]);
		ch->n_sent = 0;
	}
	if (!ch->sent)
		ch->sent = ar_xcalloc(CTL_CHANNEL_MAX_BLOCKED, sizeof(char *));
	ch->sent[ch->n_sent++] = ar_xstrdup(key);
	return true;
}

/* Called with the lock: a whole `blocked` line, sent or kept for after
 * the hello. */
static void tell_locked(struct ctl_channel *ch, const struct ar_jbuf *b)
{
	if (ch->handshaken) {
		send_locked(ch, b->p, b->len);
	} else if (ch->n_queued < CTL_CHANNEL_MAX_QUEUED) {
		if (!ch->queued)
			ch->queued = ar_xcalloc(CTL_CHANNEL_MAX_QUEUED,
						sizeof(char *));
		ch->queued[ch->n_queued++] = xstrndup(b->p, b->len);
	}
}

void ctl_channel_audit_line(struct ctl_channel *ch, const char *line,
			    size_t len)
{
	static const char tag[] = "\"event\":\"protected_attempt\"";
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct ar_jbuf b = { 0 };
	struct jt_node *m = NULL;
	const char *path, *why, *op;
	char key[PATH_MAX + 8], desc[PATH_MAX + 300];

	if (!ch || !memmem(line, len, tag, sizeof(tag) - 1))
		return;
	while (len > 0 && line[len - 1] == '\n')
		len--;
	if (jt_parse(&a, line, len, "audit", &m, &err) < 0 ||
	    m->type != JT_OBJECT || !(path = member_str(m, "path"))) {
		oci_arena_free(&a);
		return;
	}
	why = member_str(m, "why");
	op = member_str(m, "op");
	snprintf(key, sizeof(key), "file:%s", path);
	snprintf(
		desc, sizeof(desc),
		"agentrun: refused %s on %s: a protected path (%s): what the host would run or read later stays read-only in the sandbox",
		op ? op : "a write", path, why ? why : "protected");
	ar_jbuf_lit(&b,
		    "{\"type\":\"blocked\",\"resource\":{\"type\":\"file\"");
	ar_jbuf_key(&b, "path");
	ar_jbuf_cstr(&b, path);
	ar_jbuf_lit(&b, "}");
	ar_jbuf_key(&b, "operation");
	ar_jbuf_cstr(&b, "write");
	ar_jbuf_key(&b, "description");
	ar_jbuf_cstr(&b, desc);
	ar_jbuf_lit(&b, "}\n");
	oci_arena_free(&a);
	pthread_mutex_lock(&ch->lock);
	if (first_time_locked(ch, key))
		tell_locked(ch, &b);
	pthread_mutex_unlock(&ch->lock);
	ar_jbuf_free(&b);
}

void ctl_channel_blocked(struct ctl_channel *ch, const char *host,
			 uint16_t port, const char *reason)
{
	struct ar_jbuf b = { 0 };
	char key[300];

	if (!ch || !host)
		return;
	snprintf(key, sizeof(key), "%s:%u", host, (unsigned)port);
	pthread_mutex_lock(&ch->lock);
	if (!first_time_locked(ch, key)) {
		pthread_mutex_unlock(&ch->lock);
		return; /* told once */
	}
	ar_jbuf_lit(&b,
		    "{\"type\":\"blocked\",\"resource\":{\"type\":\"network\"");
	ar_jbuf_key(&b, "host");
	ar_jbuf_cstr(&b, host);
	ar_jbuf_addf(&b, ",\"port\":%u}", (unsigned)port);
	ar_jbuf_key(&b, "operation");
	ar_jbuf_cstr(&b, "connect");
	ar_jbuf_key(&b, "description");
	ar_jbuf_cstr(&b, reason ? reason : "blocked by the sandbox's policy");
	ar_jbuf_lit(&b, "}\n");
	tell_locked(ch, &b);
	pthread_mutex_unlock(&ch->lock);
	ar_jbuf_free(&b);
}

void ctl_channel_free(struct ctl_channel *ch)
{
	struct ar_jbuf b = { 0 };
	bool any = false;

	if (!ch)
		return;
	pthread_mutex_lock(&ch->lock);
	ch->stopping = true;
	pthread_mutex_unlock(&ch->lock);
	wake(ch);
	if (ch->running)
		pthread_join(ch->thread, NULL);
	/* the queue is closed: every asker is on its way out */
	pthread_mutex_lock(&ch->lock);
	while (ch->n_workers > 0)
		pthread_cond_wait(&ch->cond, &ch->lock);
	pthread_mutex_unlock(&ch->lock);
	for (int p = 0; p < P_N; p++)
		any |= ch->count[p] > 0;
	if (ch->emit && (any || ch->n_requests > 0)) {
		ar_audit_begin(&b, "agent_channel");
		ar_jbuf_key(&b, "problem");
		ar_jbuf_cstr(&b, "summary");
		ar_jbuf_addf(&b, ",\"requests\":%llu", ch->n_requests);
		for (int p = 0; p < P_N; p++)
			ar_jbuf_addf(&b, ",\"%s\":%llu", problem_names[p],
				     ch->count[p]);
		ch->emit(ch->emit_data, &b);
	}
	if (ch->count[P_FORGED] || ch->count[P_INVALID] ||
	    ch->count[P_OVERSIZED])
		ar_warn("sandbox: agent channel: ignored %llu permission_response(s) from the agent (it cannot grant), dropped %llu invalid and %llu over-long line(s)",
			ch->count[P_FORGED], ch->count[P_INVALID],
			ch->count[P_OVERSIZED]);
	close(ch->fd);
	close(ch->wake_fd);
	for (size_t i = 0; i < ch->n_sent; i++)
		free(ch->sent[i]);
	free(ch->sent);
	for (size_t i = 0; i < ch->n_queued; i++)
		free(ch->queued[i]);
	free(ch->queued);
	free(ch->out);
	free(ch->in);
	pthread_cond_destroy(&ch->cond);
	pthread_mutex_destroy(&ch->lock);
	free(ch);
}
