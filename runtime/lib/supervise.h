/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Foreground supervision of a child process (run, exec). */
#ifndef AGENTRUN_SUPERVISE_H
#define AGENTRUN_SUPERVISE_H

#include <signal.h>
#include <sys/types.h>

#include "seccomp_refusal.h"
#include "watch_fd.h"

/* Forward the signals of `mask` (blocked by the caller, SIGCHLD included)
 * to pid, relay the pty master when >= 0 (the terminal), answer the
 * seccomp refusal listener nfd (-1: none; closed here) through
 * on_refusal (seccomp_refusal.h), take the job-control stops the
 * container's init reports on init_fd (init.h; -1: none; closed here):
 * the terminal given back, the runtime stopped as a job of the user's
 * shell, and the program continued when the shell continues us; forward
 * READY=1 read on notify_fd (sd_notify.h; -1: none; closed here) to
 * notify_to; call watch->ready when watch->fd (>= 0; watch NULL: none;
 * not closed here) is readable, until it returns false; reap;
 * returns the exit code (128+N on signal). */
int ar_supervise(pid_t pid, int master, const sigset_t *mask, int nfd,
		 ar_refusal_fn on_refusal, void *on_refusal_arg, int init_fd,
		 int notify_fd, const char *notify_to, struct ar_watch *watch);

#endif
