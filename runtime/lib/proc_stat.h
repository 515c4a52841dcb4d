/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The fields of /proc/PID/stat the runtime reads: the name, the state,
 * the parent and the start time (what makes a pid the same process
 * across a pid reuse). One parser for the container's liveness (state.c),
 * the processes a SIGKILL left in a cgroup (cgroup.c) and the parent of
 * an audited process (sandbox/audit/).
 */
#ifndef AGENTRUN_PROC_STAT_H
#define AGENTRUN_PROC_STAT_H

#include <sys/types.h>

struct ar_proc_stat {
	char comm[17]; /* TASK_COMM_LEN, truncated to it */
	char state; /* R, S, D, Z, X, ... */
	pid_t ppid;
	unsigned long long start; /* clock ticks after boot */
};

/* Parse the text of /proc/PID/stat. comm runs from the first '(' to the
 * last ')' (it may hold spaces and parens). 0, or -1 when the text is not
 * a stat line (then *ps is untouched). */
int ar_proc_stat_parse(const char *text, struct ar_proc_stat *ps);

/* Read and parse /proc/PID/stat: 0, or -1 with errno (ENOENT: no such
 * process; EINVAL: unparsable). */
int ar_proc_stat_read(pid_t pid, struct ar_proc_stat *ps);

#endif
