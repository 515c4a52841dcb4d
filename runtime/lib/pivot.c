/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Propagation of the new mount namespace, and switching into the rootfs:
 * pivot_root(".", ".") + detaching the old root, or (--no-pivot) MS_MOVE
 * of the rootfs onto "/" + chroot. In a mount namespace the runtime did
 * not create: chroot only (as crun), nothing mounted or unmounted.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount_syscalls.h"
#include "log.h"
#include "mounts_internal.h"
#include "utils.h"

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
	return ar_error_set_plain(
		err, EINVAL, "linux.rootfsPropagation: unknown value \"%s\"",
		p);
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

/* What a config asks of the mount namespace, comma-separated, or "". */
static char *mount_work(const struct oci_config *cfg,
			const struct ar_rootfs_opts *opts)
{
	const struct oci_linux *l = &cfg->linux_;
	const char *parts[] = {
		cfg->n_mounts ? "mounts" : NULL,
		l->n_devices ? "linux.devices" : NULL,
		l->masked_paths.n ? "linux.maskedPaths" : NULL,
		l->readonly_paths.n ? "linux.readonlyPaths" : NULL,
		cfg->root.readonly ? "root.readonly" : NULL,
		l->rootfs_propagation ? "linux.rootfsPropagation" : NULL,
		opts->no_pivot ? "--no-pivot" : NULL,
	};
	char *out = ar_xstrdup("");

	for (size_t i = 0; i < AR_ARRAY_SIZE(parts); i++) {
		char *n;

		if (!parts[i])
			continue;
		n = ar_xasprintf("%s%s%s", out, *out ? ", " : "", parts[i]);
		free(out);
		out = n;
	}
	return out;
}

int ar_enter_root_inherited(const struct oci_config *cfg,
			    const struct ar_rootfs_opts *opts,
			    struct ar_error *err)
{
	struct ar_rootfs_ctx ctx = { .cfg = cfg, .opts = opts, .rootfd = -1 };
	_cleanup_close_ int rootfd = -1;
	_cleanup_free_ char *skipped = mount_work(cfg, opts);
	struct stat st, host_st;
	int r;

	if (opts->tmpfs_root)
		return ar_error_set_plain(
			err, EINVAL,
			"a root filesystem built by the runtime needs a mount namespace of its own");
	if (*skipped)
		ar_warn("no mount namespace of the container's own in linux.namespaces: the root is entered with chroot, %s not applied (agentrun does not change a mount namespace it did not create)",
			skipped);
	rootfd = open(opts->rootfs, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return ar_error_set(err, errno, "open root filesystem \"%s\"",
				    opts->rootfs);
	if (fstat(rootfd, &st) < 0 || stat("/", &host_st) < 0)
		return ar_error_set(err, errno, "stat root filesystem \"%s\"",
				    opts->rootfs);
	if (st.st_dev == host_st.st_dev && st.st_ino == host_st.st_ino)
		return ar_error_set_plain(err, EINVAL,
					  "root filesystem \"%s\" is the "
					  "host's root directory",
					  opts->rootfs);
	/* The sysctls are checked to be in namespaces of the container's
	 * own (ar_sysctl_check); /proc/sys writes apply to the writer's
	 * namespaces, so the runtime's /proc serves. */
	ctx.rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ctx.rootfd < 0)
		return ar_error_set(err, errno, "open /");
	r = ar_sysctl_apply(&ctx, err);
	close(ctx.rootfd);
	if (r < 0)
		return -1;
	if (fchdir(rootfd) < 0 || chroot(".") < 0)
		return ar_error_set(err, errno, "chroot to \"%s\"",
				    opts->rootfs);
	if (chdir("/") < 0)
		return ar_error_set(err, errno, "chdir \"/\"");
	return 0;
}
