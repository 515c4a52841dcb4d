/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * linux.readonlyPaths (a read-only recursive bind of the path onto itself;
 * nosuid/nodev/noexec as they were) and linux.maskedPaths (/dev/null bound
 * over files, an empty read-only tmpfs over directories).  Paths that do
 * not exist are skipped.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount_syscalls.h"
#include "mounts_internal.h"
#include "rootfs_path.h"
#include "utils.h"

/* O_PATH fd of an existing path in the root; -1 with *missing set when
 * there is nothing to mask or protect. */
static int open_existing(struct ar_rootfs_ctx *ctx, const char *path,
			 bool *missing, struct ar_error *err)
{
	struct ar_error lerr = AR_ERROR_INIT;
	int fd = ar_open_in_root(ctx->rootfd, path, O_PATH, 0, &lerr);

	*missing = false;
	if (fd >= 0)
		return fd;
	if (lerr.code == ENOENT || lerr.code == ENOTDIR) {
		*missing = true;
		return -1;
	}
	*err = lerr;
	return -1;
}

int ar_readonly_paths_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const struct oci_strv *v = &ctx->cfg->linux_.readonly_paths;

	for (size_t i = 0; i < v->n; i++) {
		struct ar_bind_attrs a = { .rec_set = MOUNT_ATTR_RDONLY };
		_cleanup_close_ int fd = -1;
		_cleanup_close_ int mfd = -1;
		bool missing;

		fd = open_existing(ctx, v->v[i], &missing, err);
		if (fd < 0) {
			if (missing)
				continue;
			return ar_error_wrap(err, "linux.readonlyPaths[%zu]",
					     i);
		}
		if (ar_bind_fd(fd, NULL, fd, true, &a, &mfd) < 0)
			return ar_error_set(err, errno,
					    "make \"%s\" read-only "
					    "(linux.readonlyPaths[%zu])",
					    v->v[i], i);
		if (ar_check_inside_root(ctx, mfd, v->v[i], err) < 0)
			return ar_error_wrap(err, "linux.readonlyPaths[%zu]",
					     i);
	}
	return 0;
}

static int mask_dir(int fd)
{
	char p[AR_PROC_FD_PATH_MAX];

	ar_proc_fd_path(fd, p);
	return mount("tmpfs", p, "tmpfs",
		     MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, "mode=0555");
}

int ar_masked_paths_apply(struct ar_rootfs_ctx *ctx, struct ar_error *err)
{
	const struct oci_strv *v = &ctx->cfg->linux_.masked_paths;

	for (size_t i = 0; i < v->n; i++) {
		_cleanup_close_ int fd = -1;
		struct stat st;
		bool missing;
		int r;

		fd = open_existing(ctx, v->v[i], &missing, err);
		if (fd < 0) {
			if (missing)
				continue;
			return ar_error_wrap(err, "linux.maskedPaths[%zu]", i);
		}
		if (fstat(fd, &st) < 0)
			return ar_error_set(
				err, errno,
				"stat \"%s\" (linux.maskedPaths[%zu])", v->v[i],
				i);
		if (S_ISDIR(st.st_mode)) {
			r = mask_dir(fd);
		} else {
			_cleanup_close_ int mfd = -1;

			r = ar_bind_fd(-1, "/dev/null", fd, false, NULL, &mfd);
		}
		if (r < 0)
			return ar_error_set(
				err, errno,
				"mask \"%s\" (linux.maskedPaths[%zu])", v->v[i],
				i);
		if (ar_check_inside_root(ctx, fd, v->v[i], err) < 0)
			return ar_error_wrap(err, "linux.maskedPaths[%zu]", i);
	}
	return 0;
}
