/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pending decisions of one sandbox (control_queue.h). */
#define _GNU_SOURCE
#include "control_queue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "control_peer.h"
#include "utils.h"

struct ctl_request {
	uint64_t id;
	char proto[16];
	char host[256];
	uint16_t port;
	char addr[64]; /* "" when not resolved */
	struct timespec since; /* CLOCK_REALTIME, for the list */
	int waiting; /* connections waiting on it */
	int once; /* `once` answers not yet taken by a waiter */
	bool session; /* granted for the session */
	bool refused;
	char refusal[200]; /* who refused it */
	struct ctl_peer peer; /* who asked first (pid 0: not known) */
	bool from_agent; /* the agent asked through its channel */
	char explanation[CTL_EXPLANATION_MAX + 1]; /* the agent's words */
	struct ctl_request *next;
};

static const char *const answer_names[] = {
	[CTL_ANSWER_NONE] = "none",	  [CTL_ANSWER_ONCE] = "once",
	[CTL_ANSWER_SESSION] = "session", [CTL_ANSWER_ALWAYS] = "always",
	[CTL_ANSWER_REFUSE] = "refuse",
};

enum ctl_answer ctl_answer_parse(const char *s)
{
	for (size_t i = CTL_ANSWER_ONCE; i < AR_ARRAY_SIZE(answer_names); i++)
		if (s && strcmp(s, answer_names[i]) == 0)
			return (enum ctl_answer)i;
	return CTL_ANSWER_NONE;
}

const char *ctl_answer_name(enum ctl_answer a)
{
	return (size_t)a < AR_ARRAY_SIZE(answer_names) ? answer_names[a] : "?";
}

void ctl_queue_init(struct ctl_queue *q, const char *sandbox, int timeout_s)
{
	pthread_condattr_t ca;

	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&q->cond, &ca);
	pthread_condattr_destroy(&ca);
	q->sandbox = sandbox;
	q->timeout_s = timeout_s > 0 ? timeout_s : CTL_DEFAULT_TIMEOUT;
	q->next_id = 1;
	q->tokens = CTL_ASK_BURST;
	clock_gettime(CLOCK_MONOTONIC, &q->refilled);
}

void ctl_queue_close(struct ctl_queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = true;
	pthread_cond_broadcast(&q->cond);
	while (q->n_waiting > 0)
		pthread_cond_wait(&q->cond, &q->lock);
	pthread_mutex_unlock(&q->lock);
}

void ctl_queue_release(struct ctl_queue *q)
{
	while (q->reqs) {
		struct ctl_request *r = q->reqs;

		q->reqs = r->next;
		free(r);
	}
	for (size_t i = 0; i < q->n_session; i++)
		free(q->session[i].target);
	free(q->session);
	for (size_t i = 0; i < q->n_once_next; i++)
		free(q->once_next[i]);
	free(q->once_next);
	pthread_cond_destroy(&q->cond);
	pthread_mutex_destroy(&q->lock);
}

/* "host:port", "[v6]:port" */
static void target(char *buf, size_t size, const char *host, uint16_t port)
{
	bool v6 = strchr(host, ':') != NULL;

	snprintf(buf, size, "%s%s%s:%u", v6 ? "[" : "", host, v6 ? "]" : "",
		 (unsigned)port);
}

static bool session_granted(const struct ctl_queue *q, const char *t)
{
	for (size_t i = 0; i < q->n_session; i++)
		if (strcmp(q->session[i].target, t) == 0)
			return true;
	return false;
}

/* A `once` grant of an agent's request for t, taken by this connection. */
static bool take_once_next(struct ctl_queue *q, const char *t)
{
	for (size_t i = 0; i < q->n_once_next; i++) {
		if (strcmp(q->once_next[i], t) == 0) {
			free(q->once_next[i]);
			q->once_next[i] = q->once_next[--q->n_once_next];
			return true;
		}
	}
	return false;
}

static void add_once_next(struct ctl_queue *q, const char *t)
{
	/* bounded: one per request, requests are capped */
	if (q->n_once_next >= CTL_MAX_PENDING)
		return;
	q->once_next = ar_xrealloc(q->once_next,
				   (q->n_once_next + 1) * sizeof(char *));
	q->once_next[q->n_once_next++] = ar_xstrdup(t);
}

static struct ctl_request *find(struct ctl_queue *q, const char *host,
				uint16_t port)
{
	for (struct ctl_request *r = q->reqs; r; r = r->next)
		if (r->port == port && strcmp(r->host, host) == 0 &&
		    !r->refused && !r->session)
			return r;
	return NULL;
}

static void unlink_req(struct ctl_queue *q, struct ctl_request *r)
{
	for (struct ctl_request **pp = &q->reqs; *pp; pp = &(*pp)->next) {
		if (*pp == r) {
			*pp = r->next;
			q->n_reqs--;
			free(r);
			return;
		}
	}
}

static void request_json(const struct ctl_queue *q, const struct ctl_request *r,
			 struct ar_jbuf *b)
{
	char t[300], ts[40];
	struct tm tm;

	target(t, sizeof(t), r->host, r->port);
	gmtime_r(&r->since.tv_sec, &tm);
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
	ar_jbuf_addf(b, "{\"id\":\"%llu\"", (unsigned long long)r->id);
	ar_jbuf_key(b, "sandbox");
	ar_jbuf_cstr(b, q->sandbox);
	ar_jbuf_addf(b, ",\"since\":\"%s.%06ldZ\"", ts,
		     r->since.tv_nsec / 1000);
	ar_jbuf_key(b, "kind");
	ar_jbuf_lit(b, "\"net\"");
	ar_jbuf_key(b, "proto");
	ar_jbuf_cstr(b, r->proto);
	ar_jbuf_key(b, "host");
	ar_jbuf_cstr(b, r->host);
	ar_jbuf_addf(b, ",\"port\":%u", (unsigned)r->port);
	ar_jbuf_key(b, "target");
	ar_jbuf_cstr(b, t);
	ar_jbuf_key(b, "address");
	ar_jbuf_cstr(b, r->addr[0] ? r->addr : NULL);
	/* the process that opened the first connection, when found */
	if (r->peer.pid > 0) {
		ar_jbuf_addf(b, ",\"pid\":%d,\"sandbox_pid\":%d",
			     (int)r->peer.pid, (int)r->peer.ns_pid);
		ar_jbuf_key(b, "exe");
		ar_jbuf_cstr(b, r->peer.exe[0] ? r->peer.exe : NULL);
		ar_jbuf_key(b, "cmdline");
		ar_jbuf_cstr(b, r->peer.cmdline[0] ? r->peer.cmdline : NULL);
	} else {
		ar_jbuf_lit(b, ",\"pid\":null,\"sandbox_pid\":null,"
			       "\"exe\":null,\"cmdline\":null");
	}
	ar_jbuf_addf(b, ",\"waiting\":%d", r->waiting);
	ar_jbuf_key(b, "reason");
	ar_jbuf_addf(b, "\"not in the allowlist\"");
	/* the agent's own request: who asked, and its words, quoted for a
	 * terminal (ar_quote: no escape sequence of the agent's reaches it) */
	ar_jbuf_key(b, "from");
	ar_jbuf_cstr(b, r->from_agent ? "agent" : "connection");
	if (r->explanation[0]) {
		char *qe = ar_quote(r->explanation);

		ar_jbuf_key(b, "explanation");
		ar_jbuf_cstr(b, qe);
		free(qe);
	}
	ar_jbuf_lit(b, "}");
}

static void deadline_in(struct timespec *d, int s)
{
	clock_gettime(CLOCK_MONOTONIC, d);
	d->tv_sec += s;
}

/* One token of the rate limit taken: false when none is left. Under
 * the lock. */
static bool rate_take(struct ctl_queue *q)
{
	struct timespec now;
	double dt;

	clock_gettime(CLOCK_MONOTONIC, &now);
	dt = (double)(now.tv_sec - q->refilled.tv_sec) +
	     (double)(now.tv_nsec - q->refilled.tv_nsec) / 1e9;
	q->refilled = now;
	q->tokens += dt * CTL_ASK_RATE;
	if (q->tokens > CTL_ASK_BURST)
		q->tokens = CTL_ASK_BURST;
	if (q->tokens < 1)
		return false;
	q->tokens -= 1;
	return true;
}

static bool ask(struct ctl_queue *q, const char *proto, const char *host,
		uint16_t port, const char *addr, int client,
		const char *explanation, char *reason, size_t size)
{
	struct ctl_request *r;
	struct ar_jbuf news = { 0 };
	struct timespec deadline;
	char t[300];
	bool granted = false, fresh = false;
	int e = 0;

	target(t, sizeof(t), host, port);
	pthread_mutex_lock(&q->lock);
	if (q->closed) {
		pthread_mutex_unlock(&q->lock);
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 the sandbox is ending",
			t);
		return false;
	}
	if (session_granted(q, t) || (!explanation && take_once_next(q, t))) {
		pthread_mutex_unlock(&q->lock);
		return true;
	}
	r = find(q, host, port);
	if ((!r && q->n_reqs >= CTL_MAX_PENDING) ||
	    q->n_waiting >= CTL_MAX_WAITING) {
		int np = (int)q->n_reqs, nw = q->n_waiting;

		pthread_mutex_unlock(&q->lock);
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist, and too many questions are open (%d requests, %d connections waiting; at most %d and %d): answer them (agentrun sandbox requests)",
			t, np, nw, CTL_MAX_PENDING, CTL_MAX_WAITING);
		return false;
	}
	if (!r && !rate_take(q)) {
		pthread_mutex_unlock(&q->lock);
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist, and new questions come too fast (at most %d a second after %d): answer them (agentrun sandbox requests)",
			t, CTL_ASK_RATE, CTL_ASK_BURST);
		return false;
	}
	if (!r) {
		r = ar_xcalloc(1, sizeof(*r));
		r->id = q->next_id++;
		snprintf(r->proto, sizeof(r->proto), "%s", proto);
		snprintf(r->host, sizeof(r->host), "%s", host);
		snprintf(r->addr, sizeof(r->addr), "%s", addr ? addr : "");
		r->port = port;
		clock_gettime(CLOCK_REALTIME, &r->since);
		/* the oldest first */
		struct ctl_request **pp = &q->reqs;

		while (*pp)
			pp = &(*pp)->next;
		*pp = r;
		q->n_reqs++;
		fresh = true;
	}
	if (explanation && !r->from_agent) {
		r->from_agent = true;
		snprintf(r->explanation, sizeof(r->explanation), "%s",
			 explanation);
	}
	r->waiting++;
	q->n_waiting++;
	pthread_mutex_unlock(&q->lock);
	if (fresh) {
		/* who asks: outside the lock (it reads /proc); r stays, it
		 * has our waiter */
		struct ctl_peer who;
		bool found = ctl_peer_find(q->sandbox_pid, client, &who);

		pthread_mutex_lock(&q->lock);
		if (found)
			r->peer = who;
		if (q->on_request)
			request_json(q, r, &news);
		pthread_mutex_unlock(&q->lock);
	}
	if (news.p) {
		q->on_request(q->on_request_data, &news);
		ar_jbuf_free(&news);
	}

	deadline_in(&deadline, q->timeout_s);
	pthread_mutex_lock(&q->lock);
	for (;;) {
		if (r->refused || q->closed)
			break;
		if (r->session) {
			granted = true;
			break;
		}
		if (r->once > 0) {
			r->once--;
			granted = true;
			break;
		}
		if (e == ETIMEDOUT)
			break;
		e = pthread_cond_timedwait(&q->cond, &q->lock, &deadline);
	}
	if (!granted && r->refused)
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist; request %llu %s",
			t, (unsigned long long)r->id, r->refusal);
	else if (!granted && q->closed)
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist; the sandbox ended before request %llu was answered",
			t, (unsigned long long)r->id);
	else if (!granted)
		snprintf(
			reason, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist; request %llu had no answer within %d s (agentrun sandbox requests; --ask-timeout)",
			t, (unsigned long long)r->id, q->timeout_s);
	/* the agent's request granted `once`: its connection to come */
	if (granted && explanation && !r->session)
		add_once_next(q, t);
	r->waiting--;
	q->n_waiting--;
	if (r->waiting == 0)
		unlink_req(q, r);
	/* ctl_queue_close waits for the last one */
	if (q->closed && q->n_waiting == 0)
		pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return granted;
}

bool ctl_queue_ask(struct ctl_queue *q, const char *proto, const char *host,
		   uint16_t port, const char *addr, char *reason, size_t size)
{
	return ask(q, proto, host, port, addr, -1, NULL, reason, size);
}

bool ctl_queue_ask_from(struct ctl_queue *q, const char *proto,
			const char *host, uint16_t port, const char *addr,
			int client, char *reason, size_t size)
{
	return ask(q, proto, host, port, addr, client, NULL, reason, size);
}

bool ctl_queue_ask_agent(struct ctl_queue *q, const char *host, uint16_t port,
			 const char *explanation, char *reason, size_t size)
{
	return ask(q, "agent", host, port, NULL, -1,
		   explanation ? explanation : "", reason, size);
}

int ctl_queue_answer(struct ctl_queue *q, uint64_t id, enum ctl_answer a,
		     uid_t who, const char *iface, char *host, size_t hsize,
		     uint16_t *port, char *why, size_t wsize)
{
	struct ctl_request *r;
	char t[300];

	pthread_mutex_lock(&q->lock);
	for (r = q->reqs; r; r = r->next)
		if (r->id == id && !r->refused && !r->session)
			break;
	if (!r || r->waiting <= r->once) {
		pthread_mutex_unlock(&q->lock);
		snprintf(
			why, wsize,
			"no pending request %llu in sandbox `%s` (answered, timed out, or never asked: agentrun sandbox requests %s)",
			(unsigned long long)id, q->sandbox, q->sandbox);
		return -1;
	}
	snprintf(host, hsize, "%s", r->host);
	*port = r->port;
	switch (a) {
	case CTL_ANSWER_ONCE:
		r->once++;
		break;
	case CTL_ANSWER_SESSION:
	case CTL_ANSWER_ALWAYS:
		target(t, sizeof(t), r->host, r->port);
		if (!session_granted(q, t)) {
			struct ctl_session *s;

			q->session = ar_xrealloc(q->session,
						 (q->n_session + 1) *
							 sizeof(*q->session));
			s = &q->session[q->n_session++];
			*s = (struct ctl_session){ .target = ar_xstrdup(t),
						   .how = a,
						   .uid = who };
			snprintf(s->iface, sizeof(s->iface), "%s", iface);
		}
		r->session = true;
		break;
	default:
		r->refused = true;
		snprintf(r->refusal, sizeof(r->refusal),
			 "was refused by uid %u (%s)", (unsigned)who, iface);
		break;
	}
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

size_t ctl_queue_grant_matching(struct ctl_queue *q,
				bool (*match)(const char *host, uint16_t port,
					      void *data),
				void *data)
{
	size_t n = 0;

	pthread_mutex_lock(&q->lock);
	for (struct ctl_request *r = q->reqs; r; r = r->next) {
		if (r->refused || r->session || !match(r->host, r->port, data))
			continue;
		r->session = true;
		n++;
	}
	if (n)
		pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	return n;
}

bool ctl_queue_forget_session(struct ctl_queue *q, const char *target)
{
	bool found = false;

	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < q->n_session; i++) {
		if (strcmp(q->session[i].target, target) != 0)
			continue;
		free(q->session[i].target);
		memmove(&q->session[i], &q->session[i + 1],
			(q->n_session - i - 1) * sizeof(*q->session));
		q->n_session--;
		found = true;
		break;
	}
	pthread_mutex_unlock(&q->lock);
	return found;
}

int ctl_queue_target(struct ctl_queue *q, uint64_t id, char *host, size_t hsize,
		     uint16_t *port, char *why, size_t wsize)
{
	struct ctl_request *r;

	pthread_mutex_lock(&q->lock);
	for (r = q->reqs; r; r = r->next)
		if (r->id == id && !r->refused && !r->session &&
		    r->waiting > r->once)
			break;
	if (r) {
		snprintf(host, hsize, "%s", r->host);
		*port = r->port;
	}
	pthread_mutex_unlock(&q->lock);
	if (!r)
		snprintf(
			why, wsize,
			"no pending request %llu in sandbox `%s` (answered, timed out, or never asked: agentrun sandbox requests %s)",
			(unsigned long long)id, q->sandbox, q->sandbox);
	return r ? 0 : -1;
}

void ctl_queue_list(struct ctl_queue *q, struct ar_jbuf *b)
{
	bool first = true;

	ar_jbuf_lit(b, "[");
	pthread_mutex_lock(&q->lock);
	for (struct ctl_request *r = q->reqs; r; r = r->next) {
		/* answered ones are on their way out */
		if (r->refused || r->session || r->waiting <= r->once)
			continue;
		if (!first)
			ar_jbuf_lit(b, ",");
		first = false;
		request_json(q, r, b);
	}
	pthread_mutex_unlock(&q->lock);
	ar_jbuf_lit(b, "]");
}

void ctl_queue_session_list(struct ctl_queue *q, struct ar_jbuf *b)
{
	ar_jbuf_lit(b, "[");
	pthread_mutex_lock(&q->lock);
	for (size_t i = 0; i < q->n_session; i++) {
		const struct ctl_session *s = &q->session[i];

		ar_jbuf_addf(b, "%s{\"target\":", i ? "," : "");
		ar_jbuf_cstr(b, s->target);
		ar_jbuf_key(b, "answer");
		ar_jbuf_cstr(b, ctl_answer_name(s->how));
		ar_jbuf_key(b, "interface");
		ar_jbuf_cstr(b, s->iface);
		ar_jbuf_addf(b, ",\"uid\":%u}", (unsigned)s->uid);
	}
	pthread_mutex_unlock(&q->lock);
	ar_jbuf_lit(b, "]");
}
