/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The OCI lifecycle: create, start, run, kill, delete, state, list.
 *
 * create: the runtime clones the container process into its namespaces,
 *   writes the user namespace maps, makes its cgroup, lets it set up
 *   its root and process, and leaves it blocked opening the exec fifo of
 *   the state directory for writing; state.json is written, the runtime
 *   exits. start opens the fifo for reading, the container process goes on
 *   to execve, start removes the fifo (status: running).
 * run: the same in one process without the fifo (the fast path); in the
 *   foreground the runtime forwards signals, relays the terminal when it
 *   owns it, passes the exit status through (128+N for a signal) and
 *   deletes the container at the end (unless --keep).
 */
#ifndef AGENTRUN_CONTAINER_H
#define AGENTRUN_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "create_opts.h"
#include "error.h"

int ar_container_create(const struct ar_create_opts *o, struct ar_error *err);

/* run: *exit_status gets the status the CLI exits with (the container
 * process's, 128+signal, or 0 with --detach). */
int ar_container_run(const struct ar_create_opts *o, int *exit_status,
		     struct ar_error *err);

int ar_container_start(const char *root, const char *id, struct ar_error *err);

/* Signal the container process (all of its processes with `all`).
 * Error when the container is stopped. */
int ar_container_kill(const char *root, const char *id, int sig, bool all,
		      struct ar_error *err);
/* crun's `kill --regex`: every container whose id the POSIX extended
 * regular expression matches is signalled; one that cannot be (stopped)
 * is a warning, and the result an error naming how many. */
int ar_container_kill_matching(const char *root, const char *pattern, int sig,
			       bool all, struct ar_error *err);

/* Remove a stopped container (with `force`: kill it first with SIGKILL
 * and wait for it). */
int ar_container_delete(const char *root, const char *id, bool force,
			struct ar_error *err);

/* crun's `delete --regex`: every container whose id the POSIX extended
 * regular expression matches (anywhere in the id, as crun) is deleted;
 * one that cannot be is a warning, and the result an error naming how
 * many were left. No match: 0. */
int ar_container_delete_matching(const char *root, const char *pattern,
				 bool force, struct ar_error *err);

/* The OCI state JSON (malloc'ed, compact, no trailing newline). */
int ar_container_state(const char *root, const char *id, char **json,
		       size_t *len, struct ar_error *err);

enum ar_list_format { AR_LIST_TABLE = 0, AR_LIST_JSON };

int ar_container_list(const char *root, enum ar_list_format format, bool quiet,
		      FILE *out, struct ar_error *err);

#endif
