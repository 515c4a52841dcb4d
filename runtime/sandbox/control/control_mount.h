/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host path bound into a running sandbox (`agentrun sandbox allow NAME
 * --ro|--rw PATH`, control_grant.c), at the same path, as crun's `mounts
 * add` does: the tree is cloned (open_tree) in a private copy of the
 * host's mount namespace made inside the sandbox's user namespace (so
 * every mount of it is locked: the agent cannot remount it read-write,
 * not even from a user namespace of its own), its protected paths
 * covered read-only there, then it is moved (move_mount) onto a mount
 * point created in the sandbox's root by fd, component by component,
 * refusing every symbolic link (the agent owns that tree). All of it in
 * a short-lived child: the monitor's own namespaces never change.
 */
#ifndef AGENTRUN_CONTROL_MOUNT_H
#define AGENTRUN_CONTROL_MOUNT_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"

/* The bind of host `path` (absolute, a real path) into the mount
 * namespace of process `pid` (pidfd: its pidfd, or -1; with one, a pid
 * that ended, and may be another process's now, is refused) at `path`: read-only unless rw (nosuid,
 * nodev either way); `protect` (NULL-terminated; each an absolute path
 * below `path` after a flag: 'r' read-only, 'p' pinned: bound onto
 * itself read-write so that it cannot be renamed; 'a' missing, skipped;
 * parents first) bound over themselves first. *mnt_fd: an O_PATH fd
 * of the new mount's root (what ctl_mount_remove detaches, wherever
 * the agent moves its parent). */
int ctl_mount_add(pid_t pid, int pidfd, const char *path, bool rw,
		  const char *const *protect, int *mnt_fd,
		  struct ar_error *err);
/* Detach (MNT_DETACH) the mount whose root is mnt_fd inside the mount
 * namespace of `pid`. */
int ctl_mount_remove(pid_t pid, int pidfd, int mnt_fd, const char *path,
		     struct ar_error *err);

#endif
