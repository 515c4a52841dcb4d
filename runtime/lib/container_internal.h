/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared between the runtime side (container.c) and the container process
 * side (container_init.c): the launch description and the sync protocol
 * over the SOCK_SEQPACKET socketpair (O_CLOEXEC: it closes by itself when
 * the container process execs, which tells `run` that setup succeeded).
 *
 *   runtime                              container process
 *   clone3(new namespaces) ───────────►  wait for GO
 *   write uid/gid maps, oom_score_adj,
 *   cgroup hook, GO ─────────────────►   setup (rootfs, process, ...)
 *                          ◄───────────  TTY (master fd; `run` relay only)
 *                          ◄───────────  READY (create) | ERROR | exec (EOF)
 *
 * Slow path (joined namespaces, time offsets), before GO:
 *                          ◄───────────  USERNS (after unshare(CLONE_NEWUSER))
 *   write maps, USERNS_DONE ─────────►
 *                          ◄───────────  PID (the container process's pid)
 */
#ifndef AGENTRUN_CONTAINER_INTERNAL_H
#define AGENTRUN_CONTAINER_INTERNAL_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "container.h"
#include "error.h"
#include "namespaces.h"
#include "oci_config.h"
#include "state.h"

struct ar_seccomp_filter;

enum ar_sync_type {
	AR_SYNC_GO = 1,
	AR_SYNC_USERNS,
	AR_SYNC_USERNS_DONE,
	AR_SYNC_PID,
	AR_SYNC_TTY,
	AR_SYNC_NOTIFY_FD,
	AR_SYNC_READY,
	AR_SYNC_ERROR,
	AR_SYNC_HOST_PID, /* after GO, only when the config has
			   * createContainer or startContainer hooks: the
			   * container process's pid in the runtime's pid
			   * namespace, for the hooks' state */
	AR_SYNC_EXEC, /* ar_launch.overlap only: state.json is written,
		       * the container process may execve */
};

struct ar_sync_msg {
	int type;
	int value; /* PID: the pid; GO: setgroups denied */
	struct ar_error err; /* ERROR only (sent truncated otherwise) */
};

struct ar_launch {
	const struct ar_create_opts *o;
	struct oci_config *cfg;
	struct ar_ns_plan plan;
	char *bundle; /* absolute */
	char *config_path; /* absolute; NULL for an in-memory config */
	char *rootfs; /* absolute */
	bool rootless;
	bool use_fifo; /* create: wait on the exec fifo before execve */
	bool detached; /* create / run --detach (recorded in state.json) */
	bool relay_tty; /* run in the foreground owns the terminal */
	int sync_fd; /* our end of the socketpair */
	int console_fd; /* --console-socket, connected; -1 */
	int fifo_fd; /* O_PATH fd of the exec fifo; -1 */
	int listen_fds; /* LISTEN_FDS of the runtime's environment */
	int preserve_fds; /* --preserve-fds + listen_fds */
	struct ar_seccomp_filter *seccomp; /* compiled before the clone */
	/* the filter's listener is the runtime's own (o->on_refusal): the
	 * fd comes up with the filter loaded last, as usual */
	bool refusal_listener;
	int refusal_fd; /* that listener, received; -1 */
	bool setgroups_denied; /* filled in the child from GO */
	/* GO as soon as the ids, oom_score_adj and cgroup are set: the
	 * container process sets itself up while the runtime writes
	 * state.json, and waits for EXEC before its execve (no hooks run
	 * before the container's, no exec fifo, no terminal, no seccomp
	 * listener; see overlap_setup() in container.c) */
	bool overlap;
	pid_t host_pid; /* filled in the child from HOST_PID, for hooks */
	int *premade_mounts; /* ar_premade_mounts_open(): per mounts[] entry,
			      * closed in the runtime after the clone */
	struct ar_cgroup *cgroup; /* from ar_cgroup_create(); path NULL when
				   * the container runs without one */
	const char *cgroup_planned; /* the path ar_cgroup_create() is about
				     * to make, while l->cgroup is NULL */
	pid_t state_pid; /* the container process, for state.json written
			  * from the cgroup callback */
	bool cgroup_recorded; /* that state.json holds pid and cgroup */
	int state_fds[2]; /* state root and the locked container directory:
			   * closed first thing in the child (the flock is
			   * on the open file, shared by the clone) */
};

int ar_sync_send(int fd, int type, int value, struct ar_error *err);
int ar_sync_send_error(int fd, const struct ar_error *e);
/* Receive one message; EOF is reported as type 0. */
int ar_sync_recv(int fd, struct ar_sync_msg *m, struct ar_error *err);

/* True when the container process needs AR_SYNC_HOST_PID (it runs the
 * createContainer or startContainer hooks). */
bool ar_launch_needs_host_pid(const struct oci_config *cfg);

/*
 * Run the hooks of one stage with the OCI state of the container (id, pid
 * in the runtime's pid namespace, bundle, the config's annotations, the
 * given status) on their stdin. 0 when there are none.
 */
int ar_container_run_hooks(const struct oci_config *cfg,
			   enum oci_hook_stage stage, const char *id, pid_t pid,
			   const char *bundle, enum ar_status status,
			   struct ar_error *err);

/* Foreground supervision of a child process (run, exec): forward the
 * signals of `mask` (blocked by the caller, SIGCHLD included), relay the
 * pty master when >= 0, reap; returns the exit code (128+N on signal). */
int ar_container_supervise(pid_t pid, int master, const sigset_t *mask);

/* Write PID atomically to the --pid-file PATH (create, run and exec). */
int ar_write_pid_file(const char *path, pid_t pid, struct ar_error *err);

/* The container process: never returns. */
__attribute__((noreturn)) void ar_container_init(struct ar_launch *l);

#endif
