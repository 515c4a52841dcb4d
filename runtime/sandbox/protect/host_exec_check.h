/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the host would execute, checked at the end of every plain run
 * (host_exec_check.c): the protected-path plan (protect.h) is made once,
 * from the workspace as it was at the start; the run can make new
 * repositories (any layout, any depth: a `.git` directory or file, a
 * bare layout), change repositories the start scan did not reach, rewrite
 * the worktree files the host's hooks run (core.hooksPath, hook
 * frameworks' config, scripts a hook names), leave a rebase with `exec`
 * lines in progress, or add editor and agent config to a new repository.
 * One walk of the workspace after the exit finds what was created or
 * changed since the start (inode change times), and neutralises it: the
 * code-running keys of a config commented out, every other file moved to
 * a quarantine directory outside the workspace
 * ($XDG_STATE_HOME/agentrun/quarantine/RUN/, a MANIFEST naming each
 * original path), each named in a warning. Paths opted in with --rw
 * inside the workspace are left alone; each --rw directory outside it
 * is walked the same way (the agent could write anywhere in it), and so
 * is each directory granted --rw while the sandbox ran (from the time of
 * its grant). A config is rewritten in place (its inode kept: another
 * sandbox's read-only bind over it stays).
 *
 * Before the run (prevention, not cleanup): a missing `commondir` in a
 * protected git directory gets a placeholder file holding "." (git reads
 * it as "the common directory is this one": nothing changes for git on
 * the host or inside), bound read-only like any protected file, so the
 * agent cannot create one that the host's git would honour while the
 * sandbox runs. It is removed after the run by the last sandbox holding
 * it (a shared flock on it while a sandbox runs).
 */
#ifndef AGENTRUN_SANDBOX_HOST_EXEC_CHECK_H
#define AGENTRUN_SANDBOX_HOST_EXEC_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "change_watch.h"
#include "placeholder.h"
#include "protect.h"

struct sb_hostexec_placeholder {
	char *path;
	int fd; /* O_RDONLY, LOCK_SH held while the sandbox runs */
	dev_t dev;
	ino_t ino;
};

struct sb_hostexec {
	struct timespec start; /* changes at or after it are the run's */
	bool armed;
	struct sb_hostexec_placeholder *ph;
	size_t n_ph;
};

/* A directory granted --rw while the sandbox ran (agentrun sandbox allow,
 * sandbox_grant.h): walked like a start-time --rw one, from the time of
 * its grant on. */
/* struct sb_hostexec_dir (a directory and the time from which its
 * changes count): placeholder.h, which holds the keeper's list of them */

/* What the check reads (all borrowed). */
struct sb_hostexec_input {
	const struct sb_protect *protect;
	const char *workspace; /* real path */
	const char *home;
	char *const *environ; /* XDG_STATE_HOME */
	const char *const *rw; /* --rw values as given (opt-ins inside the
				* workspace, directories walked outside) */
	size_t n_rw;
	/* live --rw grants (revoked ones too): walked from their own time */
	const struct sb_hostexec_dir *late;
	size_t n_late;
	/* the run's changed directories (change_watch.h), ended by the
	 * check; NULL, or not all known: every directory is read */
	struct sb_watch *watch;
};

/* Before the mounts are planned, for a plain run: takes the start time
 * and turns each missing `commondir` of the plan (SB_PROT_WATCH) into a
 * "." placeholder file bound read-only (SB_PROT_RO). */
void sb_hostexec_prevent(struct sb_hostexec *hx, struct sb_protect *p);

/* After the exit: the walk, the neutralisation, the warnings. Returns
 * how many paths were neutralised. `ms` (may be NULL) gets the time it
 * took. */
size_t sb_hostexec_check(struct sb_hostexec *hx,
			 const struct sb_hostexec_input *in, double *ms);

/* The placeholders removed (the last sandbox holding one removes it),
 * the fds closed. keep: close only (a --detach caller hands them to its
 * monitor). */
void sb_hostexec_release(struct sb_hostexec *hx, bool keep);

#endif
