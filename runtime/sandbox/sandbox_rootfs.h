/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's root directory itself (sandbox_rootfs.c). */
#ifndef AGENTRUN_SANDBOX_ROOTFS_H
#define AGENTRUN_SANDBOX_ROOTFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "rootfs_fill.h"
#include "sandbox_types.h"

/* Its content, as data for the runtime (rootfs_fill.h): etc/passwd and
 * etc/group generated for the user, the files `etc_names` (relative to
 * /etc, checked by oci_etc_file_name_ok) with the texts `etc_texts` (a
 * profile's "etc_files"; NULL: none), the host's merged-/usr links (bin ->
 * usr/bin, ...) and the mount points of `mounts` (a run's; NULL for
 * --print-bundle) that land in the root itself. In the arena `a`. The
 * container process makes it in its fresh tmpfs root
 * (ar_create_opts.tmpfs_root), --print-bundle in DIR/rootfs. */
struct ar_rootfs_content sb_rootfs_content(struct ar_arena *a,
					   const struct ar_sandbox_host *h,
					   const struct oci_strv *etc_names,
					   const struct oci_strv *etc_texts,
					   const struct oci_mount *mounts,
					   size_t n_mounts);
/* The empty host directory a run's tmpfs root is mounted over (in the
 * sandbox's mount namespace only); *remove: a fresh one to rmdir after
 * the run. NULL with errno on failure. */
char *sb_root_mountpoint(uid_t uid, bool *remove);

#endif
