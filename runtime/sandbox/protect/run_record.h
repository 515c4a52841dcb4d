/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The record of a plain run whose end-of-run check (host_exec_check.h) is
 * still owed (run_record.c): a file in
 * $XDG_STATE_HOME/agentrun/unchecked/ (default ~/.local/state/...), made
 * before the container starts and removed once the check has run, by
 * agentrun or by its keeper (placeholder.h). It is locked (flock
 * LOCK_EX) by the run for as long as agentrun or its keeper lives: the
 * kernel lets go of the lock when the last of them dies, however it dies.
 *
 * So a record that exists and is not locked is a run nobody checked:
 * agentrun and its keeper were both killed (`kill -9` of both, the OOM
 * killer, a cgroup's whole kill at `systemctl stop`), or the machine
 * stopped. Every `agentrun sandbox` start of the same user checks such
 * runs first (sb_run_record_recover), with the run's start time and its
 * --rw opt-ins, and says so. On disk (not /run): a machine crash does not
 * forget it.
 *
 * The file: "agentrun-unchecked-run 1", the start time's seconds and
 * nanoseconds, the agentrun pid, the workspace, then each --rw value,
 * then, appended while the run goes on, each live --rw grant
 * (sandbox_grant.h: `agentrun sandbox allow --rw`) as "\001grant", its
 * time's seconds and nanoseconds and its directory; every field ended
 * by a NUL byte.
 */
#ifndef AGENTRUN_SANDBOX_RUN_RECORD_H
#define AGENTRUN_SANDBOX_RUN_RECORD_H

#include <stddef.h>
#include <time.h>

struct sb_run_record {
	int fd; /* LOCK_EX held; -1: none */
	char *path;
};

#define SB_RUN_RECORD_INIT                                                     \
	{                                                                      \
		-1, NULL                                                       \
	}

/* The directory of the records: $XDG_STATE_HOME/agentrun/unchecked, or
 * HOME/.local/state/agentrun/unchecked (allocated). */
char *sb_run_record_dir(const char *home, char *const *envp);

/* Before the container starts: the record written and locked (its fd
 * O_CLOEXEC; the keeper keeps it open). Failing to write it is a
 * warning: the run goes on, only a double kill would go unchecked. */
void sb_run_record_begin(struct sb_run_record *r, const char *dir,
			 const struct timespec *start, const char *workspace,
			 const char *const *rw, size_t n_rw);

/* A live --rw grant of `dir` (a real path) whose changes count from
 * `since`: appended to the record and on disk (fdatasync) before the
 * grant is mounted, so that the check of a run killed with its keeper
 * walks it too. A failure is a warning. Thread-safe; nothing without a
 * record. */
void sb_run_record_grant(struct sb_run_record *r, const char *dir,
			 const struct timespec *since);

/* After the check: the record removed, its lock released. Idempotent. */
void sb_run_record_end(struct sb_run_record *r);

/* At a start: every record in `dir` no run holds (unlocked) is checked
 * now, with a warning naming the run, then removed. Returns how many
 * runs were checked. */
size_t sb_run_record_recover(const char *dir, const char *home,
			     char *const *envp);

#endif
