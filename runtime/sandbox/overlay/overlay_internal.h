/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared by the runtime/sandbox/overlay/overlay*.c files; not for other users. */
#ifndef AGENTRUN_OVERLAY_INTERNAL_H
#define AGENTRUN_OVERLAY_INTERNAL_H

#include <dirent.h>
#include <fcntl.h>

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>

#include "overlay.h"

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define FILE_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

/* The directory `rel` ("" for root itself) under root, every component
 * opened without following symlinks. */
int ov_open_dir_beneath(int root, const char *rel);

/* The parent directory of `rel` under the workspace (*leaf points into
 * rel). With up >= 0, missing components that are directories in the
 * upper layer are created (their mode without setuid/setgid). */
int ov_open_parent(int wsfd, int up, const char *rel, const char **leaf);

/* A regular file at dirfd/name, opened without following a symlink and
 * without blocking on a fifo; -1 with ESTALE if it is not (or no longer)
 * a regular file. */
int ov_open_regular(int dirfd, const char *name, struct stat *st);

/* A DIR stream on a duplicate of fd (fd stays open). */

/* Remove dirfd/name and, for a directory, everything below it, without
 * following symlinks. */
int ov_remove_tree_at(int dirfd, const char *name);

/* The directory part of rel ("" for none), malloc'd. */
char *ov_parent_of(const char *rel);

/* One line of `changes` (git status --short style). */
void ov_print_change(FILE *out, const struct ar_change *ch);

/* "fifo", "socket", "character device"... for special files. */
const char *ov_kind_name(mode_t m);

/* The diff (or, with stat, the diffstat) of the selected changes;
 * protected ones marked, those grouped (NULL: none) as one comment line
 * per git directory. */
int ov_diff_selected(const struct ar_overlay *ov, const struct ar_changes *c,
		     const bool *sel, const bool *grouped, bool stat, FILE *out,
		     struct ar_error *err);

/* rels: the PATHS relative to the workspace; every one must select at
 * least one change. sel[i]: change i is selected. */
int ov_select_changes(const struct ar_overlay *ov, char *const *paths, size_t n,
		      const struct ar_changes *c, bool **sel,
		      struct ar_error *err);

/* prefix + path, quoted as a whole as git quotes names (malloc'd). */
char *ov_quote_prefixed(const char *prefix, const char *path);

/* git's mode numbers: 100644, 100755, 120000, 040000. */
unsigned ov_git_mode(mode_t m);

/* A PATH argument relative to the workspace ("" for all of it), or NULL
 * outside it (malloc'd). */
char *ov_relative_arg(const struct ar_overlay *ov, const char *p);
/* ov_relative_arg of each (one that is outside: "/", matching nothing);
 * free each and the array. */
char **ov_relative_args(const struct ar_overlay *ov, char *const *paths,
			size_t n);

/* ---- protected changes (overlay_protect.c) ---- */

/* Set protect_why, protect_root and git_internal of each change (sorted),
 * looking at both layers (up, lo: their root directories; ws: the
 * workspace's path, for an absolute core.hooksPath). */
void ov_mark_protected(int up, int lo, const char *ws, struct ar_changes *c);
/* An R and its D are protected together. */
void ov_protect_pair(struct ar_change *r, struct ar_change *d);
/* A protected change the user named: a PATH (relative, in rels) at or
 * below its protected path that selects it. */
bool ov_named(const struct ar_change *ch, char *const *rels, size_t n);
/* grouped[i]: change i (selected) is git's own data in a git directory
 * no PATH names at or below it: one line per directory (malloc'd). */
bool *ov_grouped(const struct ar_changes *c, const bool *sel, char *const *rels,
		 size_t n);
/* The selected changes (not the D of an R), one line each with prefix,
 * those grouped as one line per git directory (NAME: the sandbox's, for
 * the hint). Returns how many protected changes were among them. */
size_t ov_print_list(FILE *out, const char *prefix, const char *name,
		     const struct ar_changes *c, const bool *sel,
		     const bool *grouped);
/* "LEAD%zu protected change(s) (ROOT, ROOT...)" with no newline: the
 * distinct protected paths of the selected changes, at most 20. */
void ov_print_protected_summary(FILE *out, const char *lead,
				const struct ar_changes *c, const bool *sel,
				size_t count);

#endif
