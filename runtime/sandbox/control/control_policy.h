/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The effective network policy of a running sandbox as its control
 * plane knows it ({"op":"policy"}, control_proto.h; docs/sandbox.md,
 * "The control plane"): the allowlist it started with (--net allow=,
 * the profile's net.allow, a --secret gateway's host), whether `ask` is
 * on, the --secret names and the hosts each goes to (never a value nor
 * a placeholder), the live grants (control_grant.h) and the `session`
 * and `always` answers in force (control_queue.h). Copied at start
 * (before the control thread exists), read by that thread only.
 */
#ifndef AGENTRUN_CONTROL_POLICY_H
#define AGENTRUN_CONTROL_POLICY_H

#include <stdbool.h>
#include <stddef.h>

#include "audit/audit.h"
#include "control_grant.h"
#include "control_queue.h"
#include "egress/egress_policy.h"

struct ar_egress_secret;

struct ctl_policy_secret {
	char *name; /* the variable's name */
	char **hosts; /* the patterns it goes to */
	size_t n_hosts;
};

struct ctl_policy {
	bool egress; /* a proxy runs (--net allow, ask, --publish) */
	bool ask;
	bool shadow;
	char **allow; /* the start's patterns, as written */
	size_t n_allow;
	struct ctl_policy_secret *secrets;
	size_t n_secrets;
};

/* The start's policy copied: rule texts and secret names only. */
void ctl_policy_set(struct ctl_policy *p, const struct ar_egress_policy *pol,
		    const struct ar_egress_secret *s, size_t n);
void ctl_policy_release(struct ctl_policy *p);
/* The reply to {"op":"policy"} into b (newline-ended):
 * {"ok":true,"sandbox":NAME,"profile":PATH|null,"egress","ask","shadow",
 *  "allow":[PATTERN...],"secrets":[{"name","hosts":[PATTERN...]}...],
 *  "grants":[{"kind":"net|ro|rw","target"}...],
 *  "session":[{"target","answer":"session|always","interface","uid"}...]} */
void ctl_policy_reply(const struct ctl_policy *p, const char *name,
		      const char *profile, struct ctl_grants *g,
		      struct ctl_queue *q, struct ar_jbuf *b);

#endif
