/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Live grants of a running sandbox (docs/sandbox.md, "Live grants"):
 * `agentrun sandbox allow|revoke NAME --net HOST[:PORT] | --ro PATH |
 * --rw PATH`, served by the control plane (control_server.c).
 *
 *   --net   a pattern of the egress policy's (egress_policy.h) added to
 *           the running proxy's rules (ar_egress_proxy_set_grant), the
 *           address classes kept: only a grant of an address literal
 *           with its port opens a loopback/private address; pending
 *           `ask` requests it matches go through. revoke: refused from
 *           the next connection on (established ones are not cut).
 *   --ro/--rw  the host directory bound in at the same path
 *           (control_mount.h), after the sandbox's own checks
 *           (ctl_path_check_fn: never-share list, kernel interfaces,
 *           the workspace; the protected paths inside a --rw one, a
 *           placeholder for each missing one), then told what became
 *           of it (ctl_path_done_fn: placeholders released, the
 *           directory walked at the end). revoke: detached.
 */
#ifndef AGENTRUN_CONTROL_GRANT_H
#define AGENTRUN_CONTROL_GRANT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "control_proto.h"
#include "control_queue.h"
#include "egress/egress_policy.h"
#include "error.h"

/* The sandbox's checks of a path grant (sandbox_grant.c): 0 with
 * *protect (NULL-terminated, malloc'd, may be NULL: paths below `path`,
 * each after a flag, 'r' kept read-only, 'h' a placeholder the check
 * made for a missing one (kept read-only), 'p' pinned or 'a' missing
 * and watched, as ctl_mount_add takes them), or -1 with err. */
typedef int (*ctl_path_check_fn)(const char *path, bool rw, bool force,
				 char ***protect, void *data,
				 struct ar_error *err);

/* What became of a path grant the check passed (same data): mounted,
 * failed (what the check made is undone), or revoked (detached). */
enum ctl_path_event {
	CTL_PATH_GRANTED,
	CTL_PATH_FAILED,
	CTL_PATH_REVOKED,
};
typedef void (*ctl_path_done_fn)(const char *path, bool rw,
				 enum ctl_path_event ev, void *data);

struct ctl_grant_mnt {
	char *path;
	bool rw;
	int fd; /* the mount's root, inside */
	/* --rw: the missing protected paths only watched (no placeholder):
	 * the ones the agent created are named at revoke and at the end */
	char **absent;
	size_t n_absent;
};

struct ctl_grants {
	pthread_mutex_t lock; /* rules: read by the proxy's threads */
	struct ar_egress_rule *rules;
	size_t n_rules;
	bool egress; /* the sandbox has an egress proxy */
	pid_t pid; /* the container's process, 0 before it exists */
	int pidfd; /* its pidfd (-1: none; pidfd_open needs Linux 5.3) */
	struct ctl_grant_mnt *mnts; /* the control thread's only */
	size_t n_mnts;
	ctl_path_check_fn check;
	ctl_path_done_fn done; /* may be NULL */
	void *check_data;
	struct ctl_queue *q;
};

void ctl_grants_init(struct ctl_grants *g, struct ctl_queue *q);
/* The container's process: its namespaces are where grants go. */
void ctl_grants_set_pid(struct ctl_grants *g, pid_t pid);
void ctl_grants_release(struct ctl_grants *g);
/* An ar_egress_grant_fn's work. */
bool ctl_grants_net(struct ctl_grants *g, const char *host, uint16_t port,
		    bool *exact);
/* The live grants in force as a JSON array into b:
 * [{"kind":"net|ro|rw","target":PATTERN|PATH}...], in grant order
 * (net first). The control thread's. */
void ctl_grants_list(struct ctl_grants *g, struct ar_jbuf *b);
/* One allow/revoke: 0 with `done` (what was done, for the reply), or
 * -1 with err. */
int ctl_grants_apply(struct ctl_grants *g, const struct ctl_msg *m, char *done,
		     size_t dsize, struct ar_error *err);

#endif
