/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tmpcopyup: copy what the image had in a directory into the tmpfs that
 * is mounted over it (regular files, directories, symlinks, fifos; owner,
 * mode kept).  Both sides are fds; nothing is followed.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "mounts_internal.h"
#include "utils.h"

#define COPY_MAX_DEPTH 64

static int copy_file(int src_dir, int dst_dir, const char *name,
		     const struct stat *st, struct ar_error *err)
{
	_cleanup_close_ int in = -1;
	_cleanup_close_ int out = -1;
	char buf[65536];
	ssize_t n;

	in = openat(src_dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return ar_error_set(err, errno, "open \"%s\"", name);
	out = openat(dst_dir, name,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     st->st_mode & 07777);
	if (out < 0)
		return ar_error_set(err, errno, "create \"%s\"", name);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (ar_write_all(out, buf, (size_t)n) < 0)
			return ar_error_set(err, errno, "write \"%s\"", name);
	if (n < 0)
		return ar_error_set(err, errno, "read \"%s\"", name);
	if (fchmod(out, st->st_mode & 07777) < 0)
		return ar_error_set(err, errno, "chmod \"%s\"", name);
	return 0;
}

static int copy_dir(int src, int dst, int depth, struct ar_error *err);

static int copy_entry(int src, int dst, const char *name, int depth,
		      struct ar_error *err)
{
	struct stat st;
	int r = 0;

	if (fstatat(src, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return ar_error_set(err, errno, "stat \"%s\"", name);
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int s = -1;
		_cleanup_close_ int d = -1;

		if (mkdirat(dst, name, st.st_mode & 07777) < 0)
			return ar_error_set(err, errno, "mkdir \"%s\"", name);
		s = openat(src, name,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		d = openat(dst, name,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || d < 0)
			return ar_error_set(err, errno, "open \"%s\"", name);
		if (copy_dir(s, d, depth + 1, err) < 0)
			return ar_error_wrap(err, "%s", name);
		if (fchmod(d, st.st_mode & 07777) < 0)
			return ar_error_set(err, errno, "chmod \"%s\"", name);
	} else if (S_ISREG(st.st_mode)) {
		r = copy_file(src, dst, name, &st, err);
	} else if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlinkat(src, name, target, sizeof(target) - 1);

		if (n < 0)
			return ar_error_set(err, errno, "readlink \"%s\"",
					    name);
		target[n] = '\0';
		if (symlinkat(target, dst, name) < 0)
			return ar_error_set(err, errno, "symlink \"%s\"", name);
	} else if (S_ISFIFO(st.st_mode)) {
		if (mkfifoat(dst, name, st.st_mode & 07777) < 0)
			return ar_error_set(err, errno, "mkfifo \"%s\"", name);
	} else {
		ar_debug("tmpcopyup: skipping special file \"%s\"", name);
		return 0;
	}
	if (r == 0 &&
	    fchownat(dst, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) <
		    0 &&
	    errno != EPERM && errno != EINVAL)
		return ar_error_set(err, errno, "chown \"%s\"", name);
	return r;
}

static int copy_dir(int src, int dst, int depth, struct ar_error *err)
{
	DIR *d;
	struct dirent *de;
	int dupfd, r = 0;

	if (depth > COPY_MAX_DEPTH)
		return ar_error_set_plain(err, ELOOP,
					  "tree too deep (over %d levels)",
					  COPY_MAX_DEPTH);
	dupfd = fcntl(src, F_DUPFD_CLOEXEC, 3);
	if (dupfd < 0)
		return ar_error_set(err, errno, "dup");
	d = fdopendir(dupfd);
	if (!d) {
		close(dupfd);
		return ar_error_set(err, errno, "opendir");
	}
	while (r == 0 && (errno = 0, de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		r = copy_entry(src, dst, de->d_name, depth, err);
	}
	if (r == 0 && errno)
		r = ar_error_set(err, errno, "readdir");
	closedir(d);
	return r;
}

int ar_copy_tree(int src_dirfd, int dst_dirfd, struct ar_error *err)
{
	return copy_dir(src_dirfd, dst_dirfd, 0, err);
}
