/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces (`agentrun sandbox --overlay`): the sandbox sees
 * an overlay whose lower layer is the real workspace and whose upper layer
 * lives outside it, in
 *
 *   ${XDG_DATA_HOME:-~/.local/share}/agentrun/sandboxes/NAME/
 *       workspace    the real workspace's path (one line)
 *       upper/       what the sandbox changed (overlayfs, userxattr)
 *       work/        overlayfs's work directory
 *
 * Nothing touches the real workspace until `agentrun commit NAME`, which
 * applies the changes file by file, each atomically (temp file + rename);
 * `changes` lists them, `diff` shows them, `discard` drops them.
 */
#ifndef AGENTRUN_OVERLAY_H
#define AGENTRUN_OVERLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

struct ar_overlay {
	char *name;
	char *dir; /* .../sandboxes/NAME */
	char *workspace; /* the lower layer */
	char *upper;
	char *work;
};

enum ar_change_kind {
	AR_CHANGE_ADDED = 'A',
	AR_CHANGE_MODIFIED = 'M',
	AR_CHANGE_DELETED = 'D'
};

struct ar_change {
	enum ar_change_kind kind;
	char *path; /* relative to the workspace */
	bool dir;
};

struct ar_changes {
	struct ar_change *v;
	size_t n;
};

/* The sandboxes directory (malloc'd). */
char *ar_overlay_base_dir(void);

/* Create NAME for `workspace` (fails when it exists or when the
 * directory would be inside the workspace). */
int ar_overlay_create(const char *name, const char *workspace,
		      struct ar_overlay *out, struct ar_error *err);
/* Open an existing NAME. */
int ar_overlay_open(const char *name, struct ar_overlay *out,
		    struct ar_error *err);
void ar_overlay_release(struct ar_overlay *ov);

/* The changes, sorted by path (directories before their contents). */
int ar_overlay_changes(const struct ar_overlay *ov, struct ar_changes *out,
		       struct ar_error *err);
void ar_changes_free(struct ar_changes *c);

/* "A path", "M path", "D path" lines (directories end in '/'). */
int ar_overlay_print_changes(const struct ar_overlay *ov, FILE *out,
			     struct ar_error *err);

/* Unified diff of the changes (through diff(1) -Nu), to stdout. */
int ar_overlay_diff(const struct ar_overlay *ov, char *const *paths,
		    size_t n_paths, struct ar_error *err);

/* Apply the changes under `paths` (all when n_paths == 0; paths relative
 * to the workspace or absolute inside it) to the real workspace, each file
 * atomically (a temp file in the same directory, fsync, rename). Parent
 * directories are opened without following symlinks. Committed entries
 * stop being changes because they match the workspace afterwards. */
int ar_overlay_commit(const struct ar_overlay *ov, char *const *paths,
		      size_t n_paths, struct ar_error *err);

/* Remove NAME and everything it holds. */
int ar_overlay_discard(const struct ar_overlay *ov, struct ar_error *err);

#endif
