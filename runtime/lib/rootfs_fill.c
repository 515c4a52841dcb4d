/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fresh root directory filled from a list of entries (rootfs_fill.h). */
#define _GNU_SOURCE
#include "rootfs_fill.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

/* Plain names only: no "", ".", ".." component, not absolute. */
static bool plain_rel(const char *p)
{
	if (!p || !*p || p[0] == '/')
		return false;
	for (const char *c = p; c;
	     c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	return true;
}

static int make_one(int rootfd, const struct ar_rootfs_entry *e)
{
	int fd;

	switch (e->kind) {
	case AR_ROOTFS_DIR:
		return mkdirat(rootfd, e->path, e->mode);
	case AR_ROOTFS_SYMLINK:
		return symlinkat(e->data, rootfd, e->path);
	case AR_ROOTFS_FILE:
		fd = openat(rootfd, e->path,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    e->mode);
		if (fd < 0)
			return -1;
		if (e->data && ar_write_all(fd, e->data, strlen(e->data)) < 0) {
			int saved = errno;

			close(fd);
			errno = saved;
			return -1;
		}
		return close(fd);
	}
	errno = EINVAL;
	return -1;
}

int ar_rootfs_fill(int rootfd, const struct ar_rootfs_content *c,
		   struct ar_error *err)
{
	for (size_t i = 0; c && i < c->n; i++) {
		const struct ar_rootfs_entry *e = &c->v[i];

		if (!plain_rel(e->path)) {
			if (e->optional)
				continue;
			return ar_error_set_plain(
				err, EINVAL,
				"root filesystem: entry `%s`: not a relative path of plain names",
				e->path ? e->path : "");
		}
		if (make_one(rootfd, e) < 0 && !e->optional)
			return ar_error_set(err, errno,
					    "root filesystem: create `%s`",
					    e->path);
	}
	return 0;
}
