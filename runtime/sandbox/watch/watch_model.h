/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The model of `agentrun watch [NAME]` (docs/sandbox.md, "The terminal
 * dashboard"): the running sandboxes (the control sockets of the state
 * root, control/control.h), their live events (each sandbox's "events"
 * stream, newest kept, filtered by kind) and their pending requests
 * (refreshed on a request or answer event, and twice a second), with the
 * selected request and the answer being confirmed. watch_view.c draws
 * it; watch_term.c owns the terminal; runtime/cli/watch.c is the loop.
 *
 * Everything of the agent shown here (host names, paths, argv, exe) is
 * quoted with ar_quote: no escape sequence of the agent reaches the
 * user's terminal. Memory is bounded: WATCH_MAX_EVENTS events of at most
 * WATCH_LINE bytes, WATCH_MAX_SANDBOXES streams, the requests as the
 * sandboxes list them (each capped by CTL_MAX_PENDING).
 */
#ifndef AGENTRUN_WATCH_MODEL_H
#define AGENTRUN_WATCH_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define WATCH_MAX_EVENTS 500
#define WATCH_MAX_SANDBOXES 64
#define WATCH_LINE 320 /* one event or request line, formatted */
#define WATCH_STREAM_BUF 65536 /* an event stream's partial line */

enum watch_kind {
	WATCH_NET = 0,
	WATCH_EXEC,
	WATCH_FILE,
	WATCH_PROTECTED,
	WATCH_OTHER, /* start, exit: always shown */
	WATCH_KINDS,
};

struct watch_event {
	enum watch_kind kind;
	char text[WATCH_LINE]; /* "HH:MM:SS SANDBOX what" */
};

struct watch_req {
	char sandbox[128];
	char id[24];
	char text[WATCH_LINE]; /* "SANDBOX #ID TARGET -> ADDR  PROCESS  REASON" */
};

struct watch_sandbox {
	char *name;
	int fd; /* its event stream, or -1 */
	bool greeted; /* the stream's {"ok":true} line was read */
	bool seen; /* in the last scan */
	size_t n_pending;
	size_t len;
	char *buf; /* WATCH_STREAM_BUF */
};

struct watch_model {
	char *root;
	char *only; /* watch NAME, or NULL: every sandbox */
	struct watch_sandbox sb[WATCH_MAX_SANDBOXES];
	size_t n_sb;
	struct watch_event ev[WATCH_MAX_EVENTS]; /* a ring */
	size_t ev_head, ev_n; /* the oldest, and how many */
	struct watch_req *reqs;
	size_t n_reqs;
	size_t sel; /* the selected request */
	bool show[WATCH_KINDS];
	bool confirm_always; /* `a` pressed: y confirms */
	bool dirty_reqs; /* refresh the requests now */
	char status[WATCH_LINE];
};

void watch_model_init(struct watch_model *m, const char *root,
		      const char *only);
void watch_model_free(struct watch_model *m);

/* Find the sandboxes (new streams connected, ended ones dropped) and
 * list their pending requests. */
void watch_model_scan(struct watch_model *m);
/* Read what sandbox i's stream has (non-blocking); false when it ended
 * (its fd is closed; the next scan may connect again). */
bool watch_model_read(struct watch_model *m, size_t i);

/* One line of sandbox NAME's stream (an audit-schema event, without its
 * newline) into the events; a request or answer marks the requests for
 * refreshing. */
void watch_model_event(struct watch_model *m, const char *sandbox,
		       const char *line, size_t len);
/* The kind of an audit event's name ("proxy" -> WATCH_NET, ...). */
enum watch_kind watch_kind_of(const char *event);

/* A key (a byte, or WATCH_KEY_UP/DOWN): true to quit. Answers go to the
 * sandbox at once (interface "watch"); the result is in m->status. */
#define WATCH_KEY_UP 0x101
#define WATCH_KEY_DOWN 0x102
bool watch_model_key(struct watch_model *m, int key);

#endif
