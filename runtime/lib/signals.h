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

#endif
