/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The pending decisions of one sandbox (--net ask): connections the
 * policy does not allow wait here, one request per HOST:PORT (later
 * connections to the same HOST:PORT join it), until the user answers
 * through the control socket (control_server.c) or the timeout refuses
 * them. Nothing here grants by itself.
 *
 *   once     one waiting connection of the request goes through; the
 *            others keep waiting, the next one asks again
 *   session  every connection to HOST:PORT until the sandbox ends
 *   refuse   every connection waiting on the request is refused
 *
 * Floods are bounded: at most CTL_MAX_PENDING requests and
 * CTL_MAX_WAITING waiting connections; beyond, a connection is refused
 * at once with the reason. Thread-safe.
 */
#ifndef AGENTRUN_CONTROL_QUEUE_H
#define AGENTRUN_CONTROL_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "audit/audit.h"

#define CTL_MAX_PENDING 64 /* requests (distinct HOST:PORT) at once */
#define CTL_MAX_WAITING 256 /* connections waiting at once */
#define CTL_DEFAULT_TIMEOUT 60 /* seconds: --ask-timeout */
/* New requests are rate-limited (a token bucket): CTL_ASK_BURST at once,
 * then CTL_ASK_RATE a second; beyond, refused at once with the reason.
 * A connection joining a pending request costs nothing. */
#define CTL_ASK_BURST 64
#define CTL_ASK_RATE 10
#define CTL_EXPLANATION_MAX 512 /* bytes of an agent's explanation kept */

enum ctl_answer {
	CTL_ANSWER_NONE = 0,
	CTL_ANSWER_ONCE,
	CTL_ANSWER_SESSION,
	CTL_ANSWER_ALWAYS,
	CTL_ANSWER_REFUSE,
};
/* "once" -> CTL_ANSWER_ONCE; CTL_ANSWER_NONE when unknown. */
enum ctl_answer ctl_answer_parse(const char *s);
const char *ctl_answer_name(enum ctl_answer a);

struct ctl_request;

/* A `session` (or `always`) answer: HOST:PORT let through until the
 * sandbox ends, and who answered (for the effective policy). */
struct ctl_session {
	char *target; /* "host:port", "[v6]:port" */
	enum ctl_answer how; /* CTL_ANSWER_SESSION or CTL_ANSWER_ALWAYS */
	char iface[16]; /* "cli", "watch", "web" */
	uid_t uid;
};

/* Told of each new request (its JSON object in b, to publish), under no
 * lock of the queue. */
typedef void (*ctl_request_fn)(void *data, const struct ar_jbuf *request);

struct ctl_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	const char *sandbox; /* the sandbox's name, for the requests */
	int timeout_s;
	bool closed; /* the sandbox ends: every ask is refused */
	struct ctl_request *reqs; /* oldest first */
	size_t n_reqs;
	int n_waiting;
	uint64_t next_id;
	struct ctl_session *session; /* granted for the session */
	size_t n_session;
	/* "host:port" an agent's request was granted `once` for: the next
	 * connection to it goes through without asking (control_channel.h) */
	char **once_next;
	size_t n_once_next;
	ctl_request_fn on_request;
	void *on_request_data;
	pid_t sandbox_pid; /* its init (host pid): to find who asks */
	double tokens; /* the rate limit's bucket */
	struct timespec refilled; /* CLOCK_MONOTONIC */
};

void ctl_queue_init(struct ctl_queue *q, const char *sandbox, int timeout_s);
/* Refuse every waiting connection and every later ask; returns once
 * no thread waits any more. */
void ctl_queue_close(struct ctl_queue *q);
void ctl_queue_release(struct ctl_queue *q);

/* A connection to HOST:PORT (addr: resolved, or NULL) asks: true when
 * granted (a session grant answers at once), false with `reason` (the
 * deny line) when refused, timed out, over the bounds or closed. */
bool ctl_queue_ask(struct ctl_queue *q, const char *proto, const char *host,
		   uint16_t port, const char *addr, char *reason, size_t size);

/* The same for the connection the proxy accepted as `client` (its
 * socket, or -1): a new request names the process of the sandbox that
 * opened it (control_peer.h), found once q->sandbox_pid is set. */
bool ctl_queue_ask_from(struct ctl_queue *q, const char *proto,
			const char *host, uint16_t port, const char *addr,
			int client, char *reason, size_t size);
/* The agent asks, through its channel (control_channel.h), for HOST:PORT
 * with its explanation (its own words: shown quoted, never trusted): the
 * same request and the same human answer as a waiting connection's, the
 * request marked as the agent's. true when the human granted it (`once`:
 * the next connection to HOST:PORT goes through; `session`: every one),
 * false with `reason`. Blocks like ctl_queue_ask. */
bool ctl_queue_ask_agent(struct ctl_queue *q, const char *host, uint16_t port,
			 const char *explanation, char *reason, size_t size);

/* The user's answer to request `id`: 0, or -1 with `why` filled (no
 * such request). CTL_ANSWER_ALWAYS (its profile line written by the
 * caller) is a `session` answer here. who/iface: for the refusal's
 * reason and the session list. host/port of the
 * request are copied out (for the audit event). */
int ctl_queue_answer(struct ctl_queue *q, uint64_t id, enum ctl_answer a,
		     uid_t who, const char *iface, char *host, size_t hsize,
		     uint16_t *port, char *why, size_t wsize);

/* The HOST:PORT of pending request `id`: 0, or -1 with `why`. */
int ctl_queue_target(struct ctl_queue *q, uint64_t id, char *host, size_t hsize,
		     uint16_t *port, char *why, size_t wsize);

/* A live grant (control_grant.h): every pending request whose HOST:PORT
 * `match` accepts goes through as if answered `session` (without adding
 * to the session list: the grant answers later asks). How many. */
size_t ctl_queue_grant_matching(struct ctl_queue *q,
				bool (*match)(const char *host, uint16_t port,
					      void *data),
				void *data);
/* revoke --net TARGET: a `session` answer of that exact HOST:PORT text
 * is forgotten too (the next connection asks again). True when there
 * was one. */
bool ctl_queue_forget_session(struct ctl_queue *q, const char *target);

/* The pending requests as a JSON array into b. */
void ctl_queue_list(struct ctl_queue *q, struct ar_jbuf *b);
/* The `session`/`always` answers in force as a JSON array into b:
 * [{"target","answer","interface","uid"}...], oldest first. */
void ctl_queue_session_list(struct ctl_queue *q, struct ar_jbuf *b);

#endif
