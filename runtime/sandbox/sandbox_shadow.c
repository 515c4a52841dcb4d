/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --shadow: would-be refusals of the allowlist (sandbox_shadow.h). */
#define _GNU_SOURCE
#include "sandbox_shadow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit/audit.h"
#include "control/control.h"
#include "log.h"
#include "utils.h"

void sb_shadow_init(struct sb_shadow *s, struct sb_control *ctl)
{
	memset(s, 0, sizeof(*s));
	pthread_mutex_init(&s->lock, NULL);
	s->ctl = ctl;
}

static void count(struct sb_shadow *s, const char *t)
{
	s->total++;
	for (size_t i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].target, t) == 0) {
			s->v[i].count++;
			return;
		}
	}
	if (s->n >= SB_SHADOW_MAX_TARGETS) {
		s->uncounted++;
		return;
	}
	s->v = ar_xrealloc(s->v, (s->n + 1) * sizeof(*s->v));
	s->v[s->n].target = ar_xstrdup(t);
	s->v[s->n].count = 1;
	s->n++;
}

bool sb_shadow_ask(const struct ar_egress_ask *q, char *reason, size_t size,
		   void *data)
{
	struct sb_shadow *s = data;
	struct ar_jbuf b = { 0 };
	char t[300];
	bool v6 = strchr(q->host, ':') != NULL;

	(void)reason;
	(void)size;
	snprintf(t, sizeof(t), "%s%s%s:%u", v6 ? "[" : "", q->host,
		 v6 ? "]" : "", (unsigned)q->port);
	pthread_mutex_lock(&s->lock);
	count(s, t);
	pthread_mutex_unlock(&s->lock);
	ar_audit_begin(&b, "would_deny");
	ar_jbuf_key(&b, "kind");
	ar_jbuf_cstr(&b, "net");
	ar_jbuf_key(&b, "proto");
	ar_jbuf_cstr(&b, q->proto);
	ar_jbuf_key(&b, "host");
	ar_jbuf_cstr(&b, q->host);
	ar_jbuf_addf(&b, ",\"port\":%u", (unsigned)q->port);
	ar_jbuf_key(&b, "target");
	ar_jbuf_cstr(&b, t);
	ar_jbuf_key(&b, "address");
	ar_jbuf_cstr(&b, q->addr);
	ar_jbuf_key(&b, "reason");
	ar_jbuf_cstr(&b, "not in the allowlist");
	sb_control_event(s->ctl, &b);
	return true;
}

static int by_count(const void *a, const void *b)
{
	const struct sb_shadow_target *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->target, y->target);
}

void sb_shadow_summary(struct sb_shadow *s)
{
	struct ar_jbuf b = { 0 };

	pthread_mutex_lock(&s->lock);
	if (s->total == 0) {
		pthread_mutex_unlock(&s->lock);
		return;
	}
	qsort(s->v, s->n, sizeof(*s->v), by_count);
	ar_jbuf_addf(
		&b,
		"shadow mode: would have refused: net %lu connection%s to %zu destination%s%s (",
		s->total, s->total == 1 ? "" : "s", s->n, s->n == 1 ? "" : "s",
		s->uncounted ? "+" : "");
	for (size_t i = 0; i < s->n && i < SB_SHADOW_TOP; i++)
		ar_jbuf_addf(&b, "%s%s x%lu", i ? ", " : "", s->v[i].target,
			     s->v[i].count);
	ar_jbuf_addf(
		&b,
		"%s); `agentrun sandbox learn --from LOG` (with --audit LOG) makes them profile lines",
		s->n > SB_SHADOW_TOP ? ", ..." : "");
	pthread_mutex_unlock(&s->lock);
	ar_jbuf_lit(&b, "\0");
	if (ar_log_has_destination())
		ar_log(AR_LOG_INFO, "%s", b.p);
	dprintf(STDERR_FILENO, "agentrun: %s\n", b.p);
	ar_jbuf_free(&b);
}

void sb_shadow_release(struct sb_shadow *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].target);
	free(s->v);
	pthread_mutex_destroy(&s->lock);
	memset(s, 0, sizeof(*s));
}
