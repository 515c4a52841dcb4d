/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Propagation of the new mount namespace, and switching into the rootfs:
 * pivot_root(".", ".") + detaching the old root, or (--no-pivot) MS_MOVE
 * of the rootfs onto "/" + chroot.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

#include "mount_syscalls.h"
#include "mounts_internal.h"

/* linux.rootfsPropagation to MS_* (without MS_REC); 0 when unset. */
static int rootfs_propagation(const struct oci_config *cfg, unsigned long *out,
			      struct ar_error *err)
{
	static const struct {
		const char *name;
		unsigned long flag;
	} map[] = {
		{ "private", MS_PRIVATE },
		{ "rprivate", MS_PRIVATE },
		{ "shared", MS_SHARED },
		{ "rshared", MS_SHARED },
		{ "slave", MS_SLAVE },
		{ "rslave", MS_SLAVE },
		{ "unbindable", MS_UNBINDABLE },
		{ "runbindable", MS_UNBINDABLE },
	};
	const char *p = cfg->linux_.rootfs_propagation;

	*out = 0;
	if (!p || !*p)
		return 0;
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(map[i].name, p) == 0) {
			*out = map[i].flag;
			return 0;
		}
	}
	return ar_error_set(err, EINVAL,
			    "linux.rootfsPropagation: unknown value \"%s\"", p);
}

int ar_prepare_propagation(const struct oci_config *cfg, struct ar_error *err)
{
	unsigned long prop;

	if (rootfs_propagation(cfg, &prop, err) < 0)
		return -1;
	/* Nothing we mount may propagate back to the host.  "shared" and
	 * "unbindable" are applied to the new root after the pivot (an
	 * unbindable tree could not be bound, a shared one not pivoted). */
	prop = prop == MS_PRIVATE ? MS_PRIVATE : MS_SLAVE;
	if (mount(NULL, "/", NULL, MS_REC | prop, NULL) < 0)
		return ar_error_set(err, errno,
				    "make \"/\" of the mount namespace %s",
				    prop == MS_PRIVATE ? "private" : "slave");
	return 0;
}

static int do_pivot(struct ar_error *err)
{
	if (ar_sys_pivot_root(".", ".") < 0)
		return ar_error_set(err, errno, "pivot_root");
	/* The old root is now stacked on ".": keep its unmount from
	 * propagating anywhere, then detach it. */
	if (mount(NULL, ".", NULL, MS_SLAVE | MS_REC, NULL) < 0)
		return ar_error_set(err, errno, "make the old root slave");
	if (umount2(".", MNT_DETACH) < 0)
		return ar_error_set(err, errno, "detach the old root");
	return 0;
}

static int do_move_chroot(struct ar_error *err)
{
	if (mount(".", "/", NULL, MS_MOVE, NULL) < 0)
		return ar_error_set(err, errno,
				    "move the root filesystem "
				    "onto \"/\" (--no-pivot)");
	if (chroot(".") < 0)
		return ar_error_set(err, errno, "chroot (--no-pivot)");
	return 0;
}

int ar_enter_root(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	unsigned long prop;

	if (rootfs_propagation(ctx->cfg, &prop, err) < 0)
		return -1;
	if (fchdir(ctx->rootfd) < 0)
		return ar_error_set(err, errno, "chdir to the root filesystem");
	if (ctx->opts->no_pivot ? do_move_chroot(err) : do_pivot(err))
		return -1;
	if (chdir("/") < 0)
		return ar_error_set(err, errno, "chdir \"/\"");
	if (prop && prop != MS_PRIVATE &&
	    mount(NULL, "/", NULL, MS_REC | prop, NULL) < 0)
		return ar_error_set(err, errno,
				    "linux.rootfsPropagation \"%s\"",
				    ctx->cfg->linux_.rootfs_propagation);
	return 0;
}
