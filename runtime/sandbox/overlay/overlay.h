/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces (`agentrun sandbox --overlay`): the sandbox sees
 * an overlay whose lower layer is the real workspace and whose upper layer
 * lives outside it, in
 *
 *   ${XDG_DATA_HOME:-~/.local/share}/agentrun/sandboxes/NAME/
 *       workspace    the real workspace's path (one line)
 *       started      the ctime of this file when it was written, as
 *                    "SECONDS.NANOSECONDS": host files whose ctime is
 *                    later changed while the sandbox existed
 *       lock         flock()ed by the running sandbox; holds its pid
 *       upper/       what the sandbox changed (overlayfs, userxattr)
 *       work/        overlayfs's work directory
 *
 * Nothing touches the real workspace until `agentrun commit NAME`, which
 * refuses while the sandbox runs and applies the changes file by file,
 * each atomically (temp file + rename), reading the upper layer and
 * writing the workspace through file descriptors that never follow a
 * symlink. `changes` lists them, `diff` shows them, `discard` drops them.
 */
#ifndef AGENTRUN_OVERLAY_H
#define AGENTRUN_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "error.h"

struct ar_overlay {
	char *name;
	char *dir; /* .../sandboxes/NAME */
	char *workspace; /* the lower layer */
	char *upper;
	char *work;
	struct timespec started; /* see "started" above */
	bool has_started; /* false for a directory without the file */
	int lock_fd; /* -1 unless this process holds the lock */
};

enum ar_change_kind {
	AR_CHANGE_ADDED = 'A',
	AR_CHANGE_MODIFIED = 'M',
	AR_CHANGE_DELETED = 'D',
	/* an added file with the content of a deleted one (set by
	 * ar_overlay_pair_renames) */
	AR_CHANGE_RENAMED = 'R'
};

struct ar_change {
	enum ar_change_kind kind;
	char *path; /* relative to the workspace */
	bool dir;
	/* the host changed this path (or, for a deleted directory, a path
	 * under it) after the sandbox started */
	bool conflict;
	/* the sandbox's entry is a fifo, socket or device node: listed,
	 * never opened nor committed */
	bool special;
	mode_t up_mode; /* st_mode in the upper layer (0: none) */
	mode_t lo_mode; /* st_mode in the workspace (0: none) */
	off_t size; /* of a file added (upper) or deleted (workspace) */
	char *from; /* R: the deleted path */
	bool renamed; /* D: the old half of an R, listed with it */
	size_t pair; /* R and its D: the other half */
	/* at or below a path the host may run code from (protect.h:
	 * sb_protect_rel_why) or a git directory of any layout: commit
	 * holds it back unless named; NULL for an ordinary change */
	const char *protect_why;
	char *protect_root; /* that path, relative to the workspace */
	/* git's own data (objects, refs, index, logs...) in the git
	 * directory protect_root: listed as one line per directory */
	bool git_internal;
};

struct ar_changes {
	struct ar_change *v;
	size_t n;
};

/* The sandboxes directory (malloc'd). */
char *ar_overlay_base_dir(void);

/* Create a sandbox directory for `workspace` and take its lock for the
 * life of this process (released by ar_overlay_release). NAME NULL: a
 * fresh sandbox-DATE-TIME[-N] name. Fails when NAME exists or when the
 * directory would be inside the workspace. */
int ar_overlay_create(const char *name, const char *workspace,
		      struct ar_overlay *out, struct ar_error *err);
/* Open an existing NAME. */
int ar_overlay_open(const char *name, struct ar_overlay *out,
		    struct ar_error *err);
void ar_overlay_release(struct ar_overlay *ov);

/* Take NAME's lock (fails with EBUSY and the sandbox's pid while it
 * runs). `what` names the refused action in the message. */
int ar_overlay_lock(struct ar_overlay *ov, const char *what,
		    struct ar_error *err);
/* Write this process's pid into the lock held (a child that inherited
 * it and outlives its parent); nothing without the lock. */
void ar_overlay_lock_owner(const struct ar_overlay *ov);
/* The pid holding the lock, 0 when none does. */
pid_t ar_overlay_running(const struct ar_overlay *ov);

/* The changes, sorted by path (directories before their contents); the
 * contents of a deleted directory are listed one by one. */
int ar_overlay_changes(const struct ar_overlay *ov, struct ar_changes *out,
		       struct ar_error *err);
void ar_changes_free(struct ar_changes *c);
/* Turn each added regular file whose content and size are those of a
 * deleted one into an R (from = the deleted path) and mark that D as its
 * half: what `changes`, `diff` and `commit` show. */
void ar_overlay_pair_renames(const struct ar_overlay *ov, struct ar_changes *c);

/* `path` quoted as git quotes names (core.quotePath): in double quotes
 * with C escapes and octal bytes when it holds a control character, a
 * byte >= 0x80, '"' or '\\'; as is otherwise (malloc'd). */
char *ar_quote_path(const char *path);

/* The changes under `paths` (all when n_paths == 0; relative to the
 * workspace or absolute inside it) as status lines:
 *   "XY PATH[ (NOTE)]"
 * X: A added, M modified, D deleted; Y: '!' when it is protected (commit
 * holds it back), else 'U' when it conflicts with a host change, ' '
 * otherwise; directories end in '/'. Git's own data in a git directory
 * that no PATH names is one line per directory; a last line counts the
 * protected changes. A PATH that selects no change is an error. */
int ar_overlay_print_changes(const struct ar_overlay *ov, char *const *paths,
			     size_t n_paths, FILE *out, struct ar_error *err);
/* The same, git's own data listed path by path when `all` (--all). */
int ar_overlay_print_changes_all(const struct ar_overlay *ov,
				 char *const *paths, size_t n_paths, bool all,
				 FILE *out, struct ar_error *err);

/* git-style unified diff of the changes under `paths` (headers with modes,
 * the contents of deleted directories, symlinks as their target), or with
 * `stat` a diffstat, to `out`. */
int ar_overlay_diff(const struct ar_overlay *ov, char *const *paths,
		    size_t n_paths, bool stat, FILE *out, struct ar_error *err);

struct ar_commit_opts {
	bool force; /* apply conflicts too, keeping the host's as .orig */
	/* apply protected changes too (else only those at or below a PATH
	 * given at or below their protected path) */
	bool include_protected;
	bool interactive; /* ask per change on `in`, prompts to `out` */
	FILE *in;
	FILE *out; /* what was applied, skipped and why */
	FILE *err; /* what was held back (NULL: stderr) */
};

/* Apply the changes under `paths` (all when n_paths == 0) to the real
 * workspace; needs the lock (refused while the sandbox runs). Protected
 * changes are held back (listed on o->err, left in the upper layer, not
 * a failure) unless a PATH at or below their protected path names them
 * or o->include_protected; -i asks only for the others. Fails
 * (after applying the rest) when a change could not be applied or was a
 * conflict left out. Committed entries stop being changes because they
 * match the workspace afterwards. */
int ar_overlay_commit(struct ar_overlay *ov, char *const *paths, size_t n_paths,
		      const struct ar_commit_opts *o, struct ar_error *err);

/* Remove NAME and everything it holds (refused while it runs). */
int ar_overlay_discard(struct ar_overlay *ov, struct ar_error *err);

/* One line per sandbox of this user: NAME, workspace, age, number of
 * changes, running (pid) or stopped. */
int ar_overlay_list(FILE *out, struct ar_error *err);

#endif
