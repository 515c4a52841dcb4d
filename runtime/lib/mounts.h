/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container's root filesystem: propagation, the rootfs bind, every
 * entry of `mounts`, default and configured devices, /dev/console,
 * pivot_root (or chroot with --no-pivot), read-only root, maskedPaths,
 * readonlyPaths and sysctl.
 */
#ifndef AGENTRUN_MOUNTS_H
#define AGENTRUN_MOUNTS_H

#include <stdbool.h>

#include "error.h"
#include "oci_config.h"

struct ar_rootfs_content;

struct ar_rootfs_opts {
	const char *rootfs; /* absolute host path of the root fs */
	bool no_pivot; /* --no-pivot: MS_MOVE + chroot instead of pivot_root */
	bool userns; /* the container has its own user namespace */
	bool rootless; /* not privileged on the host: bind devices, no mknod */
	bool new_netns; /* a new network namespace was created (sysfs
			 * can be mounted; else rbind host /sys) */
	bool new_cgroupns;
	/* The runtime created the container's mount namespace. Else (none
	 * in linux.namespaces, or one joined by path) nothing is mounted,
	 * remounted, unmounted or pivoted: the root is entered with chroot
	 * and mounts, devices, maskedPaths, readonlyPaths, root.readonly and
	 * rootfsPropagation are not applied (a warning says so). */
	bool new_mntns;
	const char *console_path; /* pty slave to bind over /dev/console, or
				   * NULL when process.terminal is false */
	/* Added: */
	const char *bundle; /* relative bind sources are relative to it;
			     * NULL: relative to the current directory */
	const int *premade; /* per mounts[] entry: a detached mount the
			     * runtime made (mount_premade.c), or -1; NULL:
			     * none */
	const int *premade_devices; /* per linux.devices entry: the same,
				     * of a node the runtime made */
	/* Non-NULL: the root is a fresh tmpfs mounted over `rootfs`,
	 * filled with these entries before the mounts
	 * (ar_create_opts.tmpfs_root). */
	const struct ar_rootfs_content *tmpfs_root;
	/* Non-NULL: called after the mounts, devices and /dev/console,
	 * before sysctls, read-only/masked paths and pivot_root (the
	 * createContainer hooks). */
	int (*after_mounts)(void *arg, struct ar_error *err);
	void *after_mounts_arg;
};

/*
 * Runs in the container process, after it entered its new mount namespace
 * (and its user namespace, maps written), before process setup. Leaves the
 * process inside the new root with cwd "/".
 *
 * Calling contract (the lifecycle code, container_init.c):
 *  - the process is already in the new mount namespace (and the new pid,
 *    ipc, uts, net, cgroup namespaces it will live in: sysctls and the
 *    mqueue/proc/sysfs mounts are made for the namespaces current then);
 *  - with a user namespace: its uid/gid maps are written and the process
 *    did setresuid/setresgid(0) in it (mounts need CAP_SYS_ADMIN there);
 *  - the host's /proc is still mounted at /proc (targets are mounted
 *    through /proc/self/fd/N before the pivot);
 *  - hostname/domainname may be set before or after (independent);
 *  - afterwards come the process steps (rlimits, caps, user, seccomp).
 * Steps, in order: "/" made rslave (rprivate for rootfsPropagation
 * "private"), rootfs bound onto itself, every `mounts` entry, devices,
 * /dev/console (when console_path), after_mounts (the createContainer
 * hooks), sysctl (through the new /proc),
 * readonlyPaths, maskedPaths, root.readonly, pivot_root (or MS_MOVE +
 * chroot), rootfsPropagation shared/slave/unbindable on the new "/".
 * Needs Linux >= 5.12 (open_tree, move_mount, mount_setattr); openat2
 * (5.6) is used when present, else a safe fd walk.
 */
int ar_rootfs_setup(const struct oci_config *cfg,
		    const struct ar_rootfs_opts *opts, struct ar_error *err);

/*
 * Runs in the runtime before the clone (mount_premade.c): the mounts the
 * container process cannot make in its user namespace (idmapped binds),
 * as detached mounts. *out is NULL when there are none, else one fd per
 * mounts[] entry (-1 for the others), for ar_rootfs_opts.premade; close
 * them with ar_premade_mounts_close() once the container process is
 * cloned.
 */
int ar_premade_mounts_open(const struct oci_config *cfg, const char *bundle,
			   int **out, struct ar_error *err);
void ar_premade_mounts_close(int *fds, size_t n);

/*
 * Also before the clone: the nodes of linux.devices when the container
 * gets a user namespace of its own and the runtime is root on the host
 * (where the container process cannot mknod): each made in a private
 * tmpfs, owned by the host ids its uid/gid map to, as a detached bind per
 * linux.devices entry (-1 for the others; *out NULL when none is made,
 * e.g. rootless or a kernel that cannot clone from a detached mount: the
 * host's nodes are bound then, devices.c). Close with
 * ar_premade_mounts_close(fds, cfg->linux_.n_devices).
 */
int ar_premade_devices_open(const struct oci_config *cfg, bool new_userns,
			    bool rootless, int **out, struct ar_error *err);

/* Parse an OCI mount options list into mount(2) flags, propagation flags
 * and the remaining fs-specific data string (comma separated, allocated
 * with malloc; caller frees). Unknown options that look like flags are
 * passed on as data, as the kernel decides. Pure; unit-tested. */
struct ar_mount_flags {
	unsigned long flags; /* MS_* to set */
	unsigned long clear; /* MS_* explicitly cleared (e.g. "rw", "suid") */
	/* MS_SHARED/MS_SLAVE/MS_PRIVATE/MS_UNBINDABLE [|MS_REC] */
	unsigned long propagation;
	/* MOUNT_ATTR_* for mount_setattr (e.g. nosymfollow) */
	unsigned long attr_set;
	bool bind; /* bind or rbind */
	bool recursive; /* rbind, or r* propagation */
	bool idmap; /* idmap / ridmap option */
	bool copy_up; /* tmpcopyup */
	char *data; /* fs-specific options, or NULL */
	/* Added: */
	unsigned long attr_clr; /* MOUNT_ATTR_* to clear (e.g. symfollow) */
	unsigned long rec_attr_set; /* rro, rnosuid, ...: set with AT_RECURSIVE */
	unsigned long rec_attr_clr; /* rrw, rsuid, ...: clear with AT_RECURSIVE */
	bool idmap_recursive; /* ridmap */
};
/*
 * Meaning of the fields: `flags` holds MS_BIND (bind, rbind), MS_REC
 * (rbind only), MS_REMOUNT and the per-mount/superblock MS_* flags, the
 * last of conflicting options winning (a flag is never in both flags and
 * clear; at most one of MS_NOATIME/MS_RELATIME/MS_STRICTATIME is set).
 * `propagation` has MS_REC for rshared/rslave/rprivate/runbindable.
 * MOUNT_ATTR__ATIME is added to the clear masks whenever an r*atime option
 * changes the atime mode, as mount_setattr(2) requires.
 * On error nothing needs freeing; on success free with
 * ar_mount_flags_free().
 */
int ar_mount_parse_options(const struct oci_strv *options,
			   struct ar_mount_flags *out, struct ar_error *err);
void ar_mount_flags_free(struct ar_mount_flags *f);

/* Whether a config's mount is a bind: type "bind"/"rbind", or a "bind" or
 * "rbind" option (runc's rule; the options need not be parsed). Pure. */
bool ar_mount_is_bind(const struct oci_mount *m);

/* The namespace a linux.sysctl key is in: OCI_NS_NETWORK (net.*),
 * OCI_NS_IPC (the System V IPC keys and fs.mqueue.*), OCI_NS_UTS
 * (kernel.domainname, kernel.hostname); -1 when the key is not namespaced
 * (a write changes the whole host). Keys may be dotted or slashed. Pure. */
int ar_sysctl_namespace(const char *key);
/* Refuse, naming the key, every linux.sysctl entry that is not namespaced,
 * kernel.hostname (the hostname field sets it), and every namespaced key
 * whose namespace is not the container's own (separate[type] false: not
 * created by the runtime, nor joined by a path that is not the runtime's
 * own). Called before anything is created. */
int ar_sysctl_check(const struct oci_config *cfg,
		    const bool separate[OCI_NS_NTYPES], struct ar_error *err);

/* Host path of the root filesystem: root.path when absolute, else
 * bundle/root.path. Returns a malloc'd string. */
char *ar_rootfs_host_path(const char *bundle, const char *root_path);

#endif
