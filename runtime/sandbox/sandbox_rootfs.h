/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's root directory itself (sandbox_rootfs.c). */
#ifndef AGENTRUN_SANDBOX_ROOTFS_H
#define AGENTRUN_SANDBOX_ROOTFS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

/* Its content: generated etc/passwd and etc/group, the host's
 * merged-/usr links. */
struct sb_rootfs {
	char *passwd;
	char *group;
	struct {
		const char *name; /* "bin" */
		char target[256]; /* "usr/bin" */
	} links[6];
	size_t n_links;
	/* A run (not --print-bundle): the config, whose mount points
	 * sb_rootfs_populate() makes in the fresh tmpfs root (its mounts
	 * as the runtime has them then). */
	const struct oci_config *cfg;
};
void sb_rootfs_init(struct sb_rootfs *r, const struct ar_sandbox_host *h);
void sb_rootfs_release(struct sb_rootfs *r);
/* Write it into the directory rfd (an O_PATH fd is enough). */
int sb_rootfs_fill(int rfd, const struct sb_rootfs *r, struct ar_error *err);
/* ar_create_opts.rootfs_populate; arg: a struct sb_rootfs. */
int sb_rootfs_populate(int rootfd, void *arg, struct ar_error *err);
/* The empty host directory a run's tmpfs root is mounted over (in the
 * sandbox's mount namespace only); *remove: a fresh one to rmdir after
 * the run. NULL with errno on failure. */
char *sb_root_mountpoint(uid_t uid, bool *remove);

#endif
