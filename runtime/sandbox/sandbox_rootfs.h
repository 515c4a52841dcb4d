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
 * etc/group generated for the user, the host's merged-/usr links (bin ->
 * usr/bin, ...) and, for a run, the mount points of the config's mounts
 * that land in the root itself. Computed before any process exists; the
 * container process makes it in its fresh tmpfs root
 * (ar_create_opts.tmpfs_root), --print-bundle in DIR/rootfs. */
struct sb_rootfs {
	struct ar_rootfs_content content; /* points into v */
	struct ar_rootfs_entry *v;
	size_t n, cap;
	struct ar_arena a; /* the strings */
};
/* cfg: the config whose mount points are made too (a run), or NULL. */
void sb_rootfs_init(struct sb_rootfs *r, const struct ar_sandbox_host *h,
		    const struct oci_config *cfg);
void sb_rootfs_release(struct sb_rootfs *r);
/* The empty host directory a run's tmpfs root is mounted over (in the
 * sandbox's mount namespace only); *remove: a fresh one to rmdir after
 * the run. NULL with errno on failure. */
char *sb_root_mountpoint(uid_t uid, bool *remove);

#endif
