/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Safe resolution of paths inside a container root filesystem.
 *
 * Every path that comes from a config or lives inside a rootfs is opened
 * through these helpers: openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS),
 * with a component-by-component O_NOFOLLOW walk (symlinks resolved and
 * clamped to the root) on kernels without openat2. A symlink can never
 * lead outside the root (the CVE-2021-30465 class).
 */
#ifndef AGENTRUN_ROOTFS_PATH_H
#define AGENTRUN_ROOTFS_PATH_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* Open `path` (absolute or relative; always interpreted inside the root
 * referred to by rootfd). flags as for openat (O_CLOEXEC is always added).
 * Returns the fd or -1 with err filled. */
int ar_open_in_root(int rootfd, const char *path, int flags, mode_t mode,
		    struct ar_error *err);

/* mkdir -p of `path` inside the root (no component may be a symlink that
 * leaves the root). Returns an O_PATH|O_DIRECTORY fd of the final
 * directory, or -1. */
int ar_mkdir_p_in_root(int rootfd, const char *path, mode_t mode,
		       struct ar_error *err);

/* Make sure a mount target exists inside the root (a directory, or an empty
 * file when is_dir is false, creating parents) and return an O_PATH fd to
 * it, or -1. */
int ar_mount_target_in_root(int rootfd, const char *path, bool is_dir,
			    struct ar_error *err);

/* Force the component-by-component fallback walk even when openat2 works
 * (tests). Also enabled by AGENTRUN_RESOLVE_FALLBACK=1 in the environment.
 * The fallback is used automatically when openat2 is not available. */
void ar_rootfs_path_force_fallback(bool on);

/* Where fd is (readlink of /proc/self/fd/N); malloc'd, NULL on error. */
char *ar_fd_path(int fd);

#endif
