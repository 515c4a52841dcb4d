/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: opening entries of the upper layer and the
 * workspace by file descriptor, never following a symlink (the rules are
 * in overlay.c's header comment).
 */
#define _GNU_SOURCE
#include "overlay.h"
#include "overlay_internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "log.h"
#include "utils.h"

/* ---- file descriptors ---- */

int ov_open_dir_beneath(int root, const char *rel)
{
	_cleanup_free_ char *copy = ar_xstrdup(rel);
	int fd = fcntl(root, F_DUPFD_CLOEXEC, 3);
	char *save = NULL;

	for (char *c = strtok_r(copy, "/", &save); c && fd >= 0;
	     c = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(c, "..") || !strcmp(c, ".")) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		next = openat(fd, c, DIR_FLAGS);
		close(fd);
		fd = next;
	}
	return fd;
}

int ov_open_parent(int wsfd, int up, const char *rel, const char **leaf)
{
	_cleanup_free_ char *copy = ar_xstrdup(rel);
	_cleanup_close_ int ufd = up >= 0 ? fcntl(up, F_DUPFD_CLOEXEC, 3) : -1;
	char *slash = strrchr(copy, '/');
	int fd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	char *save = NULL;

	*leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (!slash || fd < 0)
		return fd;
	*slash = '\0';
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int next;
		struct stat su;

		if (!strcmp(c, "..") || !strcmp(c, ".")) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		next = openat(fd, c, DIR_FLAGS);
		if (next < 0 && errno == ENOENT && ufd >= 0 &&
		    fstatat(ufd, c, &su, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(su.st_mode)) {
			if (mkdirat(fd, c, su.st_mode & 01777) == 0 ||
			    errno == EEXIST)
				next = openat(fd, c, DIR_FLAGS);
		}
		if (ufd >= 0) {
			int un = openat(ufd, c, DIR_FLAGS);

			close(ufd);
			ufd = un;
		}
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

int ov_open_regular(int dirfd, const char *name, struct stat *st)
{
	int fd;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (!S_ISREG(st->st_mode)) {
		errno = ESTALE;
		return -1;
	}
	fd = openat(dirfd, name, FILE_FLAGS);
	if (fd < 0)
		return -1;
	if (fstat(fd, st) < 0 || !S_ISREG(st->st_mode)) {
		close(fd);
		errno = ESTALE;
		return -1;
	}
	return fd;
}

int ov_remove_tree_at(int dirfd, const char *name)
{
	struct stat st;
	_cleanup_close_ int fd = -1;
	DIR *d;
	struct dirent *de;
	int r = 0;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(dirfd, name, 0) < 0 && errno != ENOENT ? -1 : 0;
	fd = openat(dirfd, name, DIR_FLAGS);
	if (fd < 0 && errno == EACCES) {
		/* overlayfs leaves work/work with mode 000 */
		if (fchmodat(dirfd, name, 0700, 0) == 0)
			fd = openat(dirfd, name, DIR_FLAGS);
	}
	if (fd < 0)
		return -1;
	d = ar_dir_at(fd, ".", 0);
	if (!d)
		return -1;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = ov_remove_tree_at(fd, de->d_name);
	}
	closedir(d);
	if (r < 0)
		return -1;
	return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 :
									    0;
}

char *ov_parent_of(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return slash ? ar_xasprintf("%.*s", (int)(slash - rel), rel) :
		       ar_xstrdup("");
}
