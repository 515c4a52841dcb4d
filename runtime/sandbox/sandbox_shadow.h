/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --shadow (docs/sandbox.md, "Shadow mode"): the profile's network
 * allowlist is evaluated and not enforced. A connection it would refuse
 * goes through the proxy's --net ask path with this as the one asked:
 * it is allowed (the address classes still hold: a name never opens
 * loopback, a private range, the metadata address or the host's own
 * addresses) and recorded as a `would_deny` event (docs/audit.md) on
 * the control plane's stream and in the --audit log; the counts are
 * summed up at exit, one line per kind with its top entries.
 * Everything else stays enforced (protected paths, the never-share
 * list, Landlock, seccomp): shadow mode lowers the allowlist only.
 */
#ifndef AGENTRUN_SANDBOX_SHADOW_H
#define AGENTRUN_SANDBOX_SHADOW_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "egress/egress_proxy.h"

#define SB_SHADOW_MAX_TARGETS 1024 /* distinct targets counted */
#define SB_SHADOW_TOP 5 /* entries shown per kind at exit */

struct sb_control;

struct sb_shadow_target {
	char *target; /* "host:port" */
	unsigned long count;
};

struct sb_shadow {
	pthread_mutex_t lock;
	struct sb_control *ctl; /* where the events go */
	struct sb_shadow_target *v;
	size_t n;
	unsigned long total, uncounted; /* uncounted: past the table */
};

void sb_shadow_init(struct sb_shadow *s, struct sb_control *ctl);
/* An ar_egress_ask_fn (data: the struct sb_shadow): records, grants. */
bool sb_shadow_ask(const struct ar_egress_ask *q, char *reason, size_t size,
		   void *data);
/* The exit summary on stderr (and the --log file); nothing when none. */
void sb_shadow_summary(struct sb_shadow *s);
void sb_shadow_release(struct sb_shadow *s);

#endif
