/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A root directory the caller has just made (a fresh tmpfs in the
 * container's mount namespace, or a new bundle's rootfs/) filled from a
 * list of entries: directories, files with their content, symbolic
 * links. The list is data computed before any process exists (agentrun
 * sandbox: its passwd, group, merged-/usr links and mount points); the
 * container process applies it without calling back into its maker.
 */
#ifndef AGENTRUN_ROOTFS_FILL_H
#define AGENTRUN_ROOTFS_FILL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

enum ar_rootfs_kind {
	AR_ROOTFS_DIR,
	AR_ROOTFS_FILE,
	AR_ROOTFS_SYMLINK,
};

struct ar_rootfs_entry {
	/* relative to the root, plain names only (no "", ".", "..", no
	 * leading '/'); its parent is made by an earlier entry */
	const char *path;
	enum ar_rootfs_kind kind;
	mode_t mode; /* DIR, FILE */
	const char *data; /* FILE: the content; SYMLINK: the target */
	/* true: an entry that cannot be made (it exists already, its parent
	 * is missing) is skipped without an error; what then needs it (a
	 * mount onto it) makes or reports it */
	bool optional;
};

struct ar_rootfs_content {
	const struct ar_rootfs_entry *v;
	size_t n;
};

/* Make every entry below rootfd (a directory fd; O_PATH is enough), in
 * order, never replacing anything (O_EXCL) nor following a symbolic link
 * at the end of a path. Errors name the entry. */
int ar_rootfs_fill(int rootfd, const struct ar_rootfs_content *c,
		   struct ar_error *err);

#endif
