/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Signal names and numbers, and the relay of the runtime's signals to the
 * container process for `run` in the foreground.
 */
#ifndef AGENTRUN_SIGNALS_H
#define AGENTRUN_SIGNALS_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* Parse a signal: "TERM", "SIGTERM", "term", "15", "RTMIN+3",
 * "SIGRTMAX-1". Error: "unknown signal `FOO`". */
int ar_signal_parse(const char *s, int *sig, struct ar_error *err);

/* The set of signals `run` forwards to the container (everything that
 * can be caught except SIGCHLD and the job-control stops of the tty). */
void ar_signal_forward_set(sigset_t *set);

/* Reset every signal disposition to SIG_DFL, including the two real-time
 * signals glibc reserves for itself (32, 33), which sigaction() refuses to
 * touch but which an ignoring parent could leak through execve. Used by the
 * container process and by exec right before the user process. */
void ar_signals_reset_all(void);
/* Default dispositions and an empty mask, as a program expects them at
 * its start: an ignored SIGPIPE or SIGINT, or a blocked signal, of
 * whoever started the runtime must not leak in through execve. */
void ar_signals_reset_for_exec(void);

#endif
