/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `mounts add|remove ID FILE`: mounts made in, or taken out of, the mount
 * namespace of a container that is running (or created, or paused), as
 * crun's `mounts` command. FILE is a JSON array of OCI mount objects.
 */
#ifndef AGENTRUN_MOUNTS_LIVE_H
#define AGENTRUN_MOUNTS_LIVE_H

#include <stdbool.h>

#include "error.h"

/*
 * add: each mount is made detached by the runtime (a bind: open_tree of
 * the host source, its options set with mount_setattr; another type:
 * fsopen, fsconfig, fsmount), then a joiner process enters the
 * container's mount namespace (its user namespace first when the caller
 * is not root) and attaches it on the destination, resolved and created
 * inside the container's root (RESOLVE_IN_ROOT: a symlink of the
 * container's never leads out). All are checked before any is made;
 * when one fails, those attached before it stay (crun does the same).
 *
 * remove: each destination, resolved without following any symlink, must
 * be the root of a mount; it is unmounted (MNT_DETACH) by its fd, never
 * by a path the container could change under the runtime.
 *
 * For a single-threaded caller (the CLI): the forked joiner allocates.
 * A threaded one (the sandbox's monitor) has control/control_mount.c,
 * whose child makes system calls only.
 */
int ar_container_mounts_update(const char *root, const char *id,
			       const char *file, bool add,
			       struct ar_error *err);

#endif
