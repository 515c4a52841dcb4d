/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * NOTIFY_SOCKET (sd_notify(3)) as crun proxies it: when the caller of
 * create/run has NOTIFY_SOCKET=PATH, the container sees a directory PATH
 * (a bind of STATE/notify) holding the runtime's own socket `notify`, and
 * NOTIFY_SOCKET=PATH/notify in its environment. The runtime listens there
 * (`run` from the start, `start` for a created container) and sends
 * READY=1 to the caller's socket when the container says READY=1: `start`
 * and `run --detach` return after that (or when the container exits), a
 * foreground `run` forwards it while it supervises.
 */
#ifndef AGENTRUN_SD_NOTIFY_H
#define AGENTRUN_SD_NOTIFY_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

struct oci_config;

#define AR_NOTIFY_DIR "notify" /* in the container's state directory */
#define AR_NOTIFY_SOCK "notify" /* in that directory */

/* The caller's NOTIFY_SOCKET usable for the proxy: an absolute path
 * (an abstract "@name" cannot be made a path inside; "" or a relative
 * path are not systemd's). NULL: none, or not usable (a warning). */
const char *ar_notify_caller(void);

/* Add the bind of PATH (its source filled by ar_notify_dir_make) and
 * NOTIFY_SOCKET=PATH/notify to cfg; *mount_idx: the mount's index. */
int ar_notify_plan(struct oci_config *cfg, const char *path, int *mount_idx,
		   struct ar_error *err);

/* STATE/notify made (0755, the runtime's user: the container reaches the
 * socket through it but cannot plant anything there unless its root is
 * that user); *host_dir: its absolute path, for the bind. */
int ar_notify_dir_make(int state_dirfd, char **host_dir, struct ar_error *err);

/* Whether STATE/notify exists (create was asked for the proxy). */
bool ar_notify_dir_exists(int state_dirfd);

/* The runtime's socket STATE/notify/notify, bound (mode 0777, so any user
 * of the container may send), non-blocking; returns the fd. */
int ar_notify_listen(int state_dirfd, struct ar_error *err);

/* Read what is queued on fd: 1 when a datagram said READY=1 and it was
 * sent on to `to` (then a barrier, as crun: up to 30 s for the receiver to
 * have read it), 0 when nothing to forward, -1 on error. */
int ar_notify_pump(int fd, const char *to, struct ar_error *err);

/* Until the container says READY=1 (forwarded to `to`) or pid exits
 * (pidfd readable; -1: polled by kill(pid, 0)). */
int ar_notify_wait_ready(int fd, pid_t pid, int pidfd, const char *to,
			 struct ar_error *err);

/* Send READY=1 to the socket at `to` (a path, or "@name": abstract). */
int ar_notify_send_ready(const char *to, struct ar_error *err);

#endif
