/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `exec`: run one more process in a running container. It joins every
 * namespace of the container's process (user first: one setns() on a
 * pidfd), its cgroup, its root (/proc/PID/root), and gets the same process
 * setup as the init process (rlimits, user, capabilities, no_new_privs,
 * seccomp of the container's config, env, cwd, terminal).
 */
#ifndef AGENTRUN_EXEC_H
#define AGENTRUN_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct oci_config;
struct oci_process;

struct ar_exec_opts {
	const char *root; /* state root */
	const char *id;
	const char *process_file; /* --process FILE (OCI process object) */
	char **args; /* else: the command (NULL-terminated) */
	bool tty; /* --tty (ignored with --process) */
	const char *console_socket;
	bool detach;
	const char *pid_file;
	const char *cwd;
	char **env; /* K=V, NULL-terminated; override the config's */
	const char *user; /* "UID[:GID]" */
	/* --additional-gids (runc): appended to the process's */
	const uint32_t *additional_gids;
	size_t n_additional_gids;
	const char *process_label; /* --process-label: its SELinux label */
	const char *apparmor; /* --apparmor: its AppArmor profile */
	/* --ignore-paused (runc): a paused container is joined too; the
	 * process starts frozen and runs once the container is resumed */
	bool ignore_paused;
	char **caps; /* added to bounding, effective, permitted */
	bool no_new_privs;
	int preserve_fds;
	/* --cgroup SUB (runc, crun): an existing sub-cgroup of the
	 * container's, relative to it; NULL: the container's cgroup */
	const char *cgroup;
	/* Called once the process is built from the options and the
	 * container's config (`cfg`, whose arena it may allocate from): it
	 * may rewrite it (the CLI: a plain bundle's container under the vm
	 * handler runs the command in the guest, vm_bundle.c). NULL: none. */
	int (*on_process)(struct oci_process *p, struct oci_config *cfg,
			  struct ar_error *err);
};

/*
 * Run the process. In the foreground *exit_status is its exit status
 * (128+N when killed by signal N); with detach it is 0 once the process
 * was exec'd (pid file written). Fails when the container is not running.
 */
int ar_container_exec(const struct ar_exec_opts *o, int *exit_status,
		      struct ar_error *err);

#endif
