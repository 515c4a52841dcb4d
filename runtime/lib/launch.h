/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * One launch of a container process (create, run): the options, the
 * config, the namespace plan and every resource made for it. Filled by
 * the runtime (container.c), read by the container process
 * (container_init.c) after the clone. The messages between the two:
 * sync.h.
 */
#ifndef AGENTRUN_LAUNCH_H
#define AGENTRUN_LAUNCH_H

#include <stdbool.h>
#include <sys/types.h>

#include "create_opts.h"
#include "namespaces.h"
#include "oci_config.h"

struct ar_seccomp_filter;

struct ar_launch {
	const struct ar_create_opts *o;
	struct oci_config *cfg;
	struct ar_ns_plan plan;
	char *bundle; /* absolute */
	char *config_path; /* absolute; NULL for an in-memory config */
	char *rootfs; /* absolute */
	/* the bundle's root.path when on_config gave the container another
	 * root (the vm handler: QEMU's view): what state.json records and
	 * `list` shows; NULL: rootfs */
	char *bundle_rootfs;
	/* the root's tmpfs content (create_opts.h: tmpfs_root, or what
	 * on_config gave); NULL: root.path as it is */
	const struct ar_rootfs_content *tmpfs_root;
	bool rootless;
	bool use_fifo; /* create: wait on the exec fifo before execve */
	bool detached; /* create / run --detach (recorded in state.json) */
	bool relay_tty; /* run in the foreground owns the terminal */
	int sync_fd; /* our end of the socketpair */
	int console_fd; /* --console-socket, connected; -1 */
	int fifo_fd; /* O_PATH fd of the exec fifo; -1 */
	/* the runtime's /proc (O_PATH): the container process reopens
	 * fifo_fd through it, in a root that may have no /proc (no mount
	 * namespace: chroot, nothing mounted; or no proc mount); -1 */
	int proc_fd;
	int listen_fds; /* LISTEN_FDS of the runtime's environment */
	int preserve_fds; /* --preserve-fds + listen_fds */
	struct ar_seccomp_filter *seccomp; /* compiled before the clone */
	/* the filter's listener is the runtime's own (o->on_refusal): the
	 * fd comes up with the filter loaded last, as usual */
	bool refusal_listener;
	int refusal_fd; /* that listener, received; -1 */
	/* o->init in a foreground run: the init's channel (init.h), our end
	 * in the runtime, its end in the container process; -1 */
	int init_fd;
	/* o->notify_socket (sd_notify.h): the index of its bind in
	 * cfg->mounts (source filled once the state directory exists), -1;
	 * and `run`'s listening socket, -1 */
	int notify_mount;
	/* process.apparmorProfile applies: AppArmor is enabled on the host
	 * (apparmor.h), as seen before the clone */
	bool apparmor;
	/* process.selinuxLabel applies: SELinux is enabled on the host
	 * (selinux_label.h), as seen before the clone */
	bool selinux;
	int notify_fd;
	bool setgroups_denied; /* by the runtime when it writes the maps;
				* the container process gets it from GO */
	/* GO as soon as the ids, oom_score_adj and cgroup are set: the
	 * container process sets itself up while the runtime writes
	 * state.json, and waits for EXEC before its execve (no hooks run
	 * before the container's, no exec fifo, no terminal, no seccomp
	 * listener; see overlap_setup() in container.c) */
	bool overlap;
	pid_t host_pid; /* filled in the child from HOST_PID, for hooks */
	int *premade_mounts; /* ar_premade_mounts_open(): per mounts[] entry,
			      * closed in the runtime after the clone */
	int *premade_devices; /* ar_premade_devices_open(): per
			       * linux.devices entry, the same */
	struct ar_cgroup *cgroup; /* from ar_cgroup_plan(), made by
				   * ar_cgroup_make(); path NULL when the
				   * container runs without one */
	int state_fds[2]; /* state root and the locked container directory:
			   * closed first thing in the child (the flock is
			   * on the open file, shared by the clone) */
	/* The runtime's side only: */
	bool state_dir_made; /* the container directory is this launch's */
	pid_t first_pid; /* the clone (slow path: it forks the container
			  * process and exits) */
	pid_t pid; /* the container process */
	bool committed; /* the container exists: released without undoing
			 * anything */
};

/*
 * Fill *l from the options: the config read and checked, the bundle and
 * rootfs paths, the agent hooks applied, the console socket connected, the
 * namespace plan, the seccomp program compiled, the premade mounts opened.
 * Nothing exists on the host yet. On error *l holds what was done so far,
 * for ar_launch_release().
 */
int ar_launch_prepare(const struct ar_create_opts *o, bool run_fg,
		      struct ar_launch *l, struct ar_error *err);

/*
 * Release everything *l holds. Unless l->committed, undo the launch first:
 * kill the container process, remove its cgroup and its state directory.
 * Does nothing for a zeroed *l (not prepared).
 */
void ar_launch_release(struct ar_launch *l);
#define _cleanup_launch_ __attribute__((cleanup(ar_launch_release)))

#endif
