/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's mount list as it is built (sandbox_mounts.c), and the
 * path helpers every file that adds to it uses.
 */
#ifndef AGENTRUN_SANDBOX_MOUNTS_H
#define AGENTRUN_SANDBOX_MOUNTS_H

#include <stdbool.h>
#include <stddef.h>

#include "oci_config.h"
#include "sandbox_types.h"

/* Mounts in the order added; strings live in the arena `a` (the plan's),
 * the vector is malloc'd and copied into the arena at the end (sorted
 * parents first, see sb_mounts_finish). */
struct sb_mounts {
	struct ar_arena *a;
	struct oci_mount *v;
	size_t n, cap;
};

#define SB_OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

void sb_mount_add(struct sb_mounts *m, const char *dest, const char *type,
		  const char *source, const char *const *options);
/* Same-path bind of a host path, read-only or read-write. */
void sb_bind(struct sb_mounts *m, const char *path, bool rw);
/* A bind of host path `path` at `dest` (a link's path, its target). */
void sb_bind_at(struct sb_mounts *m, const char *dest, const char *path,
		bool rw);
/* Hide a host path: an empty read-only tmpfs over a directory, /dev/null
 * over anything else. No-op when the path does not exist. */
void sb_hide(struct sb_mounts *m, const char *path);
/* One of the first n mounts (a bind other than /dev/null, or an overlay)
 * shows `path`: its destination is at or above it. */
bool sb_mounts_show(const struct sb_mounts *m, size_t n, const char *path);
/* True when a mount with this destination is already in the list. */
bool sb_has_dest(const struct sb_mounts *m, const char *dest);

/* As root on a workspace owned by someone else: make the last mount
 * (a bind of `path`) idmapped to the owner of `path` (no-op otherwise). */
void sb_workspace_idmap(struct sb_mounts *m, const char *path);
/* Move the list into *out (in its arena), parents before children (a
 * stable sort by depth), so that a bind lands on top of the tmpfs or
 * bind that contains it and later entries for the same path win. */
void sb_mounts_finish(struct sb_mounts *m, struct oci_mount **out,
		      size_t *n_out);

/* "DIR/NAME" in the arena (no printf: it runs ~80 times per start). */
char *sb_path_join(struct ar_arena *a, const char *dir, const char *name);
/* "~/x" -> HOME/x; absolute kept; realpath'd when it exists. NULL with
 * errno when it does not (ENOENT) or is relative (EINVAL). Malloc'd. */
char *sb_expand_path(const struct ar_sandbox_host *h, const char *p);

/* "~/x" -> HOME/x, absolute kept, "." ".." "//" resolved by name (no
 * symbolic link followed; the path need not exist). NULL for anything
 * else. Malloc'd. */
char *sb_lexical_path(const struct ar_sandbox_host *h, const char *p);

#endif
