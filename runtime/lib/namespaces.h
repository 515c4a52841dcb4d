/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Namespaces of the container: which are new, which are joined by path,
 * and how the container process gets into them.
 *
 * Fast path (every namespace new, no time offsets): one clone3() with all
 * the CLONE_NEW* flags; the kernel creates the user namespace first and
 * makes it the owner of the others. The child is the container process.
 *
 * Slow path (a namespace joined by path, or time offsets): a plain clone;
 * the child setns()es the joined namespaces (the user namespace first when
 * it is joined; all of them before a new user namespace is created, while
 * we still have our privileges over them), unshare()s the new ones (a new
 * user namespace first, maps written by the parent), writes the time
 * offsets, and forks once more with CLONE_PARENT when a pid or time
 * namespace only applies to its children. The grandchild is the container
 * process, still a child of the runtime.
 */
#ifndef AGENTRUN_NAMESPACES_H
#define AGENTRUN_NAMESPACES_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"

struct ar_ns_plan {
	unsigned long clone_flags; /* for the first clone (fast path) */
	unsigned long unshare_flags; /* new namespaces, slow path, without
				      * CLONE_NEWUSER */
	int join_fd[OCI_NS_NTYPES]; /* namespace to join, -1 when none */
	bool new_user;
	bool slow; /* join/unshare/fork in the child */
	bool fork_again; /* pid or time namespace: one more fork */
	bool time_offsets;
	bool has_uts; /* new or joined: hostname may be set */
	bool new_mnt; /* a mount namespace this runtime creates: the only
		       * kind it mounts in, pivots or unmounts */
	/* Per type: created by this runtime, or joined by a path that is not
	 * the runtime's own namespace (somebody made it for the container,
	 * as podman does for its network namespaces). Hostname and sysctls
	 * are only written in such a namespace. */
	bool separate[OCI_NS_NTYPES];
	bool new_net;
	bool new_cgroup; /* unshared by the container process after GO
			  * (never in clone_flags/unshare_flags) */
	bool new_pid;
	bool own_pid; /* new or joined pid namespace */
};

/* Build the plan; opens the namespaces to join (O_CLOEXEC) so a bad path
 * is reported before anything is created:
 *   "linux.namespaces: open network namespace `/run/netns/x`: ..."
 * and refuses what would change a namespace the container does not own
 * (hostname, domainname, linux.sysctl; see ar_sysctl_check). */
int ar_ns_plan_init(const struct oci_config *cfg, struct ar_ns_plan *plan,
		    struct ar_error *err);
void ar_ns_plan_release(struct ar_ns_plan *plan);

/* clone3() into the fast-path namespaces (flags), fork-like: returns the
 * pid in the parent, 0 in the child, -1 with err. With cgroup_fd >= 0 (a
 * cgroup v2 directory) the child is born in that cgroup
 * (CLONE_INTO_CGROUP: no migration, which waits for an RCU grace period,
 * ~8 ms of wall time per start); *in_cgroup says whether it was, false
 * where the kernel cannot (older than 5.7, clone3 refused): the caller
 * then moves it in. */
pid_t ar_ns_clone(unsigned long flags, int cgroup_fd, bool *in_cgroup,
		  struct ar_error *err);

/* Slow path, child side, before the user namespace: join the namespaces
 * given by path (user first). */
int ar_ns_join(const struct ar_ns_plan *plan, struct ar_error *err);
/* Whether process pid is in our own namespace of /proc/PID/ns/NAME
 * ("mnt", "user", ...): 1 the same, 0 another, -1 the kernel has no such
 * namespace (or pid is gone). */
int ar_ns_same_as_self(pid_t pid, const char *name);

/* Slow path, child side, after the maps of a new user namespace are in:
 * unshare the other new namespaces and write the time offsets. */
int ar_ns_unshare_rest(const struct oci_config *cfg,
		       const struct ar_ns_plan *plan, struct ar_error *err);

/* "boottime S N\nmonotonic S N\n" into /proc/self/timens_offsets. */
int ar_ns_write_time_offsets(const struct oci_config *cfg,
			     struct ar_error *err);

/* After GO (the process is in its cgroup): the new cgroup namespace. */
int ar_ns_unshare_cgroup(const struct ar_ns_plan *plan, struct ar_error *err);

/* sethostname/setdomainname in the container's UTS namespace (only when
 * plan->separate[OCI_NS_UTS]). */
int ar_ns_set_hostname(const struct oci_config *cfg,
		       const struct ar_ns_plan *plan, struct ar_error *err);

#endif
