/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fd-based mount primitives: bind mounts through the new mount API
 * (open_tree, mount_setattr, move_mount), "/proc/self/fd/N" paths, and the
 * check that a mount landed inside the container root.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mount_syscalls.h"
#include "mounts_internal.h"
#include "utils.h"

void ar_proc_fd_path(int fd, char buf[AR_PROC_FD_PATH_MAX])
{
	snprintf(buf, AR_PROC_FD_PATH_MAX, "/proc/self/fd/%d", fd);
}

char *ar_fd_path(int fd)
{
	char link[AR_PROC_FD_PATH_MAX];
	char buf[PATH_MAX];
	ssize_t n;

	ar_proc_fd_path(fd, link);
	n = readlink(link, buf, sizeof(buf) - 1);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return ar_xstrdup(buf);
}

int ar_check_inside_root(const struct ar_rootfs_ctx *ctx, int fd,
			 const char *what, struct ar_error *err)
{
	_cleanup_free_ char *p = NULL;
	size_t n = strlen(ctx->root_real);

	if (ctx->private_root)
		return 0;
	p = ar_fd_path(fd);
	if (!p)
		return ar_error_set(err, errno, "%s: cannot read where it is",
				    what);
	if (strcmp(ctx->root_real, "/") == 0)
		return 0;
	if (strncmp(p, ctx->root_real, n) == 0 && (p[n] == '/' || !p[n]))
		return 0;
	return ar_error_set_plain(
		err, EXDEV, "%s: landed outside the container root at \"%s\"",
		what, p);
}

void ar_ms_to_attrs(unsigned long set, unsigned long clear, uint64_t *attr_set,
		    uint64_t *attr_clr)
{
	static const struct {
		unsigned long ms;
		uint64_t attr;
	} map[] = {
		{ MS_RDONLY, MOUNT_ATTR_RDONLY },
		{ MS_NOSUID, MOUNT_ATTR_NOSUID },
		{ MS_NODEV, MOUNT_ATTR_NODEV },
		{ MS_NOEXEC, MOUNT_ATTR_NOEXEC },
		{ MS_NODIRATIME, MOUNT_ATTR_NODIRATIME },
		{ MS_NOSYMFOLLOW, MOUNT_ATTR_NOSYMFOLLOW },
	};

	*attr_set = 0;
	*attr_clr = 0;
	for (size_t i = 0; i < AR_ARRAY_SIZE(map); i++) {
		if (set & map[i].ms)
			*attr_set |= map[i].attr;
		if (clear & map[i].ms)
			*attr_clr |= map[i].attr;
	}
	/* The atime mode is one field: setting it means clearing it first. */
	if (set & MS_NOATIME) {
		*attr_set |= MOUNT_ATTR_NOATIME;
		*attr_clr |= MOUNT_ATTR__ATIME;
	} else if (set & MS_STRICTATIME) {
		*attr_set |= MOUNT_ATTR_STRICTATIME;
		*attr_clr |= MOUNT_ATTR__ATIME;
	} else if (set & MS_RELATIME) {
		*attr_clr |= MOUNT_ATTR__ATIME;
	} else if (clear & (MS_NOATIME | MS_STRICTATIME)) {
		/* "atime", "nostrictatime": back to the default, relatime */
		*attr_clr |= MOUNT_ATTR__ATIME;
	}
}

static int setattr(int mfd, unsigned int flags, uint64_t set, uint64_t clr,
		   uint64_t propagation)
{
	struct ar_mount_attr a = {
		.attr_set = set,
		.attr_clr = clr,
		.propagation = propagation,
	};

	if (!set && !clr && !propagation)
		return 0;
	return ar_sys_mount_setattr(mfd, "", flags | AT_EMPTY_PATH, &a);
}

int ar_bind_tree_open(int source_fd, const char *source, bool recursive,
		      const struct ar_bind_attrs *attrs)
{
	unsigned int tflags = OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC;
	_cleanup_close_ int tree = -1;

	if (recursive)
		tflags |= AT_RECURSIVE;
	if (source)
		tree = ar_sys_open_tree(AT_FDCWD, source, tflags);
	else
		tree = ar_sys_open_tree(source_fd, "", tflags | AT_EMPTY_PATH);
	if (tree < 0)
		return -1;

	if (attrs) {
		/* Recursive first, so an explicit per-mount option on the
		 * top mount wins over it. */
		if (setattr(tree, AT_RECURSIVE, attrs->rec_set, attrs->rec_clr,
			    0) < 0)
			return -1;
		if (setattr(tree, 0, attrs->set, attrs->clr, 0) < 0)
			return -1;
	}
	if (attrs && attrs->idmap) {
		struct ar_mount_attr a = {
			.attr_set = MOUNT_ATTR_IDMAP,
			.userns_fd = (uint64_t)attrs->userns_fd,
		};
		unsigned int fl = AT_EMPTY_PATH;

		if (attrs->idmap_recursive)
			fl |= AT_RECURSIVE;
		if (ar_sys_mount_setattr(tree, "", fl, &a) < 0)
			return -1;
	}
	return ar_steal_fd(&tree);
}

int ar_bind_tree_attach(int tree, int target_fd,
			const struct ar_bind_attrs *attrs)
{
	unsigned long prop = attrs ? attrs->propagation : 0;

	if (ar_sys_move_mount(tree, "", target_fd, "",
			      MOVE_MOUNT_F_EMPTY_PATH |
				      MOVE_MOUNT_T_EMPTY_PATH) < 0)
		return -1;
	if (prop && setattr(tree, (prop & MS_REC) ? AT_RECURSIVE : 0, 0, 0,
			    prop & ~(unsigned long)MS_REC) < 0)
		return -1;
	return 0;
}

int ar_bind_fd(int source_fd, const char *source, int target_fd, bool recursive,
	       const struct ar_bind_attrs *attrs, int *mnt_out)
{
	_cleanup_close_ int tree =
		ar_bind_tree_open(source_fd, source, recursive, attrs);

	if (tree < 0 || ar_bind_tree_attach(tree, target_fd, attrs) < 0)
		return -1;
	if (mnt_out)
		*mnt_out = ar_steal_fd(&tree);
	return 0;
}

char *ar_clean_path(const char *path)
{
	size_t n = strlen(path);
	char *out = ar_xmalloc(n + 2);
	size_t o = 0;
	const char *p = path;

	while (*p) {
		const char *end;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (!(len == 1 && p[0] == '.')) {
			out[o++] = '/';
			memcpy(out + o, p, len);
			o += len;
		}
		p = end;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	return out;
}
