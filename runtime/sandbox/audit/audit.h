/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --audit FILE`: the audit log, JSON lines, one object
 * per event (schema: docs/audit.md). Events come from the sandbox's
 * start and exit, the seccomp user-notification listener (audit_notify.c:
 * exec, connect, attempts on protected paths) and the egress proxy (ar_audit_egress_event). Writers
 * may run on several threads: one line is one write(2) under a mutex.
 */
#ifndef AGENTRUN_AUDIT_H
#define AGENTRUN_AUDIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"

struct ar_egress_event;

/* A growing buffer holding one JSON line. */
struct ar_jbuf {
	char *p;
	size_t len, cap;
};
void ar_jbuf_add(struct ar_jbuf *b, const char *s, size_t n);
/* A string literal, added as is. */
#define ar_jbuf_lit(b, lit) ar_jbuf_add((b), "" lit, sizeof(lit) - 1)
void ar_jbuf_addf(struct ar_jbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A JSON string of n bytes: quotes, backslashes and control characters
 * escaped; bytes that are not valid UTF-8 become U+FFFD. NULL: null. */
void ar_jbuf_str(struct ar_jbuf *b, const char *s, size_t n);
void ar_jbuf_cstr(struct ar_jbuf *b, const char *s);
/* ,"key": */
void ar_jbuf_key(struct ar_jbuf *b, const char *key);
/* A JSON array of strings. */
void ar_jbuf_strv(struct ar_jbuf *b, char *const *v, size_t n);
void ar_jbuf_free(struct ar_jbuf *b);

struct ar_audit;

/* "-": stderr; else FILE, created or truncated (0600). */
int ar_audit_open(const char *path, struct ar_audit **out,
		  struct ar_error *err);
void ar_audit_close(struct ar_audit *a);

/* Start a line: {"time":"...","event":"NAME" — the caller adds
 * fields with ar_jbuf_key() and friends, then ar_audit_emit(). */
void ar_audit_begin(struct ar_jbuf *b, const char *event);
/* Close the object, write it as one line, free the buffer. */
void ar_audit_emit(struct ar_audit *a, struct ar_jbuf *b);

void ar_audit_start(struct ar_audit *a, char *const *argv,
		    const char *workspace, const char *protections,
		    const char *mode);
void ar_audit_exit(struct ar_audit *a, int status, double seconds);
/* Every line written is also given to fn (under the log's lock, in
 * order): the control plane's event stream. */
typedef void (*ar_audit_tee_fn)(void *data, const char *line, size_t len);
void ar_audit_set_tee(struct ar_audit *a, ar_audit_tee_fn fn, void *data);
/* The "proxy" event of one decision, begun and filled in b (not closed:
 * ar_audit_emit closes it). */
void ar_audit_egress_json(struct ar_jbuf *b, const struct ar_egress_event *ev);
/* An ar_egress_event_fn: data is the struct ar_audit. Also prints the
 * deny line on stderr (as without --audit). */
void ar_audit_egress_event(const struct ar_egress_event *ev, void *data);

#endif
