/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sync protocol between the runtime and the process it clones (the
 * container process of create/run, the process of exec): fixed-size
 * messages over a SOCK_SEQPACKET socketpair (O_CLOEXEC: it closes by itself
 * when the process execs, which tells the runtime that setup succeeded).
 *
 *   runtime                              container process
 *   clone3(new namespaces) ───────────►  wait for GO
 *   write uid/gid maps, oom_score_adj,
 *   cgroup, GO ──────────────────────►   setup (rootfs, process, ...)
 *   HOST_PID (createContainer or
 *   startContainer hooks) ───────────►
 *                          ◄───────────  TTY (master fd; `run` relay only)
 *                          ◄───────────  NOTIFY_FD (seccomp listener)
 *                          ◄───────────  READY (create) | ERROR | exec (EOF)
 *
 * Slow path (joined namespaces, time offsets), before GO:
 *                          ◄───────────  USERNS (after unshare(CLONE_NEWUSER))
 *   write maps, USERNS_DONE ─────────►
 *                          ◄───────────  PID (the container process's pid)
 *
 * Overlapped setup (struct ar_launch.overlap): GO right after the cgroup,
 * EXEC once state.json is written; the process waits for EXEC before its
 * execve.
 */
#ifndef AGENTRUN_SYNC_H
#define AGENTRUN_SYNC_H

#include "error.h"

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

int ar_sync_send(int fd, int type, int value, struct ar_error *err);
int ar_sync_send_error(int fd, const struct ar_error *e);
/* Receive one message; EOF is reported as type 0. */
int ar_sync_recv(int fd, struct ar_sync_msg *m, struct ar_error *err);

#endif
