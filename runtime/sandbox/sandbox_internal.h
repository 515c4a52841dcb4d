/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared between the runtime/sandbox/ sources: the mount list being built. */
#ifndef AGENTRUN_SANDBOX_INTERNAL_H
#define AGENTRUN_SANDBOX_INTERNAL_H

#include "sandbox.h"

/* Mounts in the order added; strings live in the config's arena, the
 * vector is malloc'd and copied into the arena at the end (sorted parents
 * first, see sb_mounts_finish). */
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
/* Hide a host path: an empty read-only tmpfs over a directory, /dev/null
 * over anything else. No-op when the path does not exist. */
void sb_hide(struct sb_mounts *m, const char *path);
/* True when a mount with this destination is already in the list. */
bool sb_has_dest(const struct sb_mounts *m, const char *dest);

/* Home (sandbox_home.c): a tmpfs at the home path and the default
 * dotfiles, read-only. */
int sb_home_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   struct ar_error *err);
/* Hide every existing secret below any bind already in the list (call
 * it after the last bind). */
void sb_hide_secrets(struct sb_mounts *m, const struct ar_sandbox_host *h);

/* /etc entries (sandbox_etc.c): the default list plus `extra`. */
void sb_etc_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   const struct ar_sandbox_list *extra,
		   const struct oci_strv *profile_extra);

/* Path helpers (sandbox_config.c). */
bool sb_path_under(const char *path, const char *dir); /* or equal */
/* "~/x" -> HOME/x; absolute kept; realpath'd when it exists. NULL with
 * errno when it does not (ENOENT) or is relative (EINVAL). Malloc'd. */
char *sb_expand_path(const struct ar_sandbox_host *h, const char *p);

#endif
