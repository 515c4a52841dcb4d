/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Shared between the files that build the container root filesystem
 * (mounts.c, mount_bind.c, devices.c, masked_paths.c, sysctl.c, pivot.c).
 * Not a public interface: the lifecycle code only calls ar_rootfs_setup().
 */
#ifndef AGENTRUN_MOUNTS_INTERNAL_H
#define AGENTRUN_MOUNTS_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "mounts.h"
#include "rootfs_path.h"
#include "oci_config.h"

struct ar_rootfs_ctx {
	const struct oci_config *cfg;
	const struct ar_rootfs_opts *opts;
	int rootfd; /* O_PATH fd of the root of the rootfs bind mount */
	char *root_real; /* where rootfd is in this mount namespace */
	dev_t root_dev; /* of rootfd */
	ino_t root_ino;
	/* The root is a tmpfs this process mounted in its own new mount
	 * namespace (opts->tmpfs_root): no other process can rename
	 * anything inside it while the mounts are made, so a mount cannot
	 * land outside it and ar_check_inside_root() has nothing to
	 * check. */
	bool private_root;
};

/* Attributes for ar_bind_fd(), in MOUNT_ATTR_* terms. */
struct ar_bind_attrs {
	uint64_t set, clr; /* the top mount only */
	uint64_t rec_set, rec_clr; /* every mount of the tree */
	unsigned long propagation; /* MS_SHARED... [| MS_REC], 0: keep */
	bool idmap; /* MOUNT_ATTR_IDMAP with userns_fd */
	bool idmap_recursive;
	int userns_fd;
};

/* "/proc/self/fd/N" */
#define AR_PROC_FD_PATH_MAX 32
void ar_proc_fd_path(int fd, char buf[AR_PROC_FD_PATH_MAX]);

/* Fail unless the mount or file fd refers to lies inside the root. */
int ar_check_inside_root(const struct ar_rootfs_ctx *ctx, int fd,
			 const char *what, struct ar_error *err);

/* Bind (recursively when `recursive`) a host path -- or, when source is
 * NULL, the object source_fd refers to -- onto the object target_fd refers
 * to, with the new mount API: open_tree(OPEN_TREE_CLONE), mount_setattr
 * on the detached copy, move_mount.  *mnt_out (if non-NULL) receives an
 * fd of the new mount.  Returns 0 or -1 with errno set. */
int ar_bind_fd(int source_fd, const char *source, int target_fd, bool recursive,
	       const struct ar_bind_attrs *attrs, int *mnt_out);

/* ar_bind_fd() in two steps: a detached copy of the source with the
 * attributes (incl. the idmap) set, as an fd; then move_mount of it onto
 * target_fd and the propagation. The copy can be made by the runtime and
 * attached by the container process (mount_premade.c). */
int ar_bind_tree_open(int source_fd, const char *source, bool recursive,
		      const struct ar_bind_attrs *attrs);
int ar_bind_tree_attach(int tree, int target_fd,
			const struct ar_bind_attrs *attrs);

/* The attributes of a parsed mount options list, for ar_bind_fd(). */
void ar_mount_flags_to_attrs(const struct ar_mount_flags *mf,
			     struct ar_bind_attrs *a);

/* MS_* flags (set and cleared) to MOUNT_ATTR_* set/clear masks. */
void ar_ms_to_attrs(unsigned long set, unsigned long clear, uint64_t *attr_set,
		    uint64_t *attr_clr);

/* Normalise a container path for comparisons: one leading '/', no
 * duplicate or trailing slashes, "." components dropped. malloc'd. */
char *ar_clean_path(const char *path);

/* devices.c: default devices, linux.devices, /dev/ptmx, /dev/fd... */
int ar_devices_setup(struct ar_rootfs_ctx *ctx, struct ar_error *err);
/* devices.c: bind opts->console_path over /dev/console. */
int ar_console_setup(struct ar_rootfs_ctx *ctx, struct ar_error *err);

/* masked_paths.c */
int ar_readonly_paths_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err);
int ar_masked_paths_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err);

/* sysctl.c */
int ar_sysctl_key_to_path(const char *key, char **out, struct ar_error *err);
int ar_sysctl_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err);

/* pivot.c: make the rootfs "/" (pivot_root or MS_MOVE + chroot), cwd "/",
 * then apply linux.rootfsPropagation. */
int ar_enter_root(struct ar_rootfs_ctx *ctx, struct ar_error *err);
/* !opts->new_mntns: sysctls, then chroot into the rootfs; nothing else. */
int ar_enter_root_inherited(const struct oci_config *cfg,
			    const struct ar_rootfs_opts *opts,
			    struct ar_error *err);
/* pivot.c: propagation of "/" of the new mount namespace before anything
 * is mounted. */
int ar_prepare_propagation(const struct oci_config *cfg, struct ar_error *err);

/* idmap.c: a user namespace with these maps, for MOUNT_ATTR_IDMAP.
 * Returns its fd or -1. */
int ar_idmap_userns_fd(const struct oci_id_mappings *uids,
		       const struct oci_id_mappings *gids,
		       struct ar_error *err);

/* tmpcopyup: copy the tree of src_dirfd into dst_dirfd. */
int ar_copy_tree(int src_dirfd, int dst_dirfd, struct ar_error *err);

#endif
