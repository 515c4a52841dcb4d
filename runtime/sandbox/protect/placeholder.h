/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placeholders' mount points on the host (placeholder.c): the empty
 * directories (or, for a settings file, empty regular files) made in the
 * workspace where a protected path is missing
 * (protect.h, SB_PROT_ABSENT), shared by every sandbox on the workspace
 * and removed by the last one out.
 *
 * Removing a directory that is a mount point in another mount namespace
 * succeeds and detaches the mount there: a sandbox must never remove a
 * placeholder another sandbox (of any user, root or rootless) still has
 * its read-only mount on. So every sandbox holds a shared flock(2) on
 * each placeholder it mounts over, for as long as its container lives
 * (a keeper process holds it past a killed agentrun, and then removes
 * it), and
 * removes one only under an exclusive lock taken without waiting: the
 * kernel counts the users, and a dead one lets go by itself.
 *
 * A placeholder carries the xattr user.agentrun.placeholder = "DEV:INO"
 * of itself, so any later start (of any user) knows an empty directory
 * at a placeholder's name for agentrun's (in use: locked; left by a
 * killed run: not locked) rather than the user's. Nothing is removed
 * but an empty directory that is a placeholder by that mark (or made by
 * this run), still at its path; a directory the user wrote files into is
 * left, unmarked.
 */
#ifndef AGENTRUN_SANDBOX_PLACEHOLDER_H
#define AGENTRUN_SANDBOX_PLACEHOLDER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

#define SB_PLACEHOLDER_XATTR "user.agentrun.placeholder"

struct sb_placeholder {
	char *path;
	int fd; /* O_RDONLY on the directory, flock LOCK_SH held */
	dev_t dev;
	ino_t ino;
	bool ours; /* a placeholder (not a directory of the user's) */
	char *grant; /* the keeper's: the live --rw grant it is of, or NULL */
};

/* What the keeper does for a killed agentrun once the container has
 * ended (a plain run's end-of-run check, host_exec_check.h): called in
 * the keeper, a fork of agentrun (the caller's memory as it was at
 * sb_placeholders_keep), its standard fds on /dev/null. */
typedef void (*sb_keeper_orphan_fn)(void *arg);

/* fd is a directory or file marked as a placeholder (by a mark naming
 * it). */
bool sb_placeholder_marked(int fd);

/* A directory whose changes the end-of-run check walks
 * (host_exec_check.h), from a time on: a live --rw grant. */
struct sb_hostexec_dir {
	char *dir; /* real path */
	struct timespec since;
};

struct sb_placeholders {
	struct sb_placeholder *v;
	size_t n;
	pid_t keeper; /* holds the locks while the container lives */
	int keeper_sock; /* the container's pidfd goes there */
	/* set before sb_placeholders_keep (all optional): run by the
	 * keeper when agentrun is gone before the container's end, and
	 * the fds it needs kept open (every other one is closed) */
	sb_keeper_orphan_fn orphan;
	void *orphan_arg;
	const int *orphan_fds;
	size_t n_orphan_fds;
	/* the keeper's: the live --rw grants agentrun told it of
	 * (sb_placeholders_keep_grant), revoked ones included, for the
	 * orphan function's walk */
	struct sb_hostexec_dir *grants;
	size_t n_grants;
};

#define SB_PLACEHOLDERS_INIT                                                   \
	{                                                                      \
		NULL, 0, -1, -1, NULL, NULL, NULL, 0, NULL, 0                  \
	}

/* `path` (an existing directory where a placeholder would go) is one:
 * empty, and marked, or locked by a running sandbox. */
bool sb_placeholder_is(const char *path);

/* Before the run, for each placeholder of the plan (protect.h:
 * SB_PROT_ABSENT): `path` made (and marked) or joined, locked shared,
 * and checked to still be the directory locked; with `file`, an empty
 * regular file instead (a settings file a CLI reads: a directory there
 * is an error to it), removed at the end while still empty, the user's
 * once the host wrote into it. With !mount (an
 * --overlay run: nothing is mounted there), a placeholder left by an
 * earlier run is only removed. Fails only when the path stays locked
 * exclusively (nothing agentrun does holds that lock for long). */
int sb_placeholder_take(struct sb_placeholders *ph, const char *path,
			bool mount, bool file, struct ar_error *err);

/* The keeper: a process that inherits the locks and lets go of them
 * only when the container's first process (`pid`, given through
 * sb_placeholders_keep_pid once it exists) has exited, so that a
 * container outliving a killed agentrun keeps its placeholders; when
 * agentrun was killed meanwhile, the keeper removes them itself (the
 * last one out), then calls ph->orphan. Without placeholders or an
 * orphan function, nothing is started. */
void sb_placeholders_keep(struct sb_placeholders *ph);
void sb_placeholders_keep_pid(struct sb_placeholders *ph, pid_t pid);

/* A live --rw grant (sandbox_grant.c), told to the keeper (no-op
 * without one): `dir` is walked by the orphan function from `since` on
 * (into ph->grants, in the keeper), and the placeholders of `gph` are
 * held by the keeper too, removed by it (the last one out) when agentrun
 * is gone. Called from the control thread: the socket is shared under a
 * lock with sb_placeholders_keep_pid and the release. */
void sb_placeholders_keep_grant(struct sb_placeholders *ph, const char *dir,
				const struct timespec *since,
				const struct sb_placeholders *gph);
/* The grant of `dir` revoked: the keeper lets go of its placeholders
 * (agentrun removes them); its walk stays. */
void sb_placeholders_keep_revoke(struct sb_placeholders *ph, const char *dir);

/* After the run: wait for the keeper, then remove each placeholder this
 * sandbox is the last user of (an empty directory, still the one
 * locked), and release everything. */
void sb_placeholders_release(struct sb_placeholders *ph);
/* Released without removing any (the sandbox may still use them). */
void sb_placeholders_forget(struct sb_placeholders *ph);

#endif
