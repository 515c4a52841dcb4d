/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * An fd of the caller's that a foreground run watches for it
 * (create_opts.watch, ar_supervise): the sandbox's control socket,
 * served by a thread started only when its first client connects, so
 * that a sandbox nobody watches pays no thread.
 */
#ifndef AGENTRUN_WATCH_FD_H
#define AGENTRUN_WATCH_FD_H

#include <stdbool.h>

struct ar_watch {
	/* once the container process was let go, while it sets up (the
	 * runtime would only wait for it): the fd to watch, or -1; it
	 * stays the caller's (closed by the caller) */
	int (*open)(void *arg);
	/* the fd is readable: false to stop watching it */
	bool (*ready)(void *arg);
	void *arg;
	int fd; /* set by the runtime from open(); -1 before */
};

#endif
