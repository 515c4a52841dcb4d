/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cgroup v2 interface files: reading and writing them in a cgroup open as
 * a directory fd, and opening a cgroup by path (checked to be a non-root
 * cgroup2 directory). The bottom of the cgroup*.c files: it calls none of
 * them.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cgroup_file.h"
#include "utils.h"

#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int ar_cg_write(int dirfd, const char *file, const char *val,
		struct ar_error *err)
{
	return ar_cg_write_lines(dirfd, file, (char *const *)&val, 1, err);
}

int ar_cg_write_lines(int dirfd, const char *file, char *const *vals, size_t n,
		      struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, file, O_WRONLY | O_TRUNC | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ar_error_set(err, errno, "open cgroup file `%s`", file);
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(vals[i]);
		ssize_t w;

		do
			w = write(fd, vals[i], len);
		while (w < 0 && errno == EINTR);
		if (w < 0)
			return ar_error_set(err, errno, "write `%s` to `%s`",
					    vals[i], file);
	}
	return 0;
}

int ar_cg_read(int dirfd, const char *file, char **out, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return ar_error_set(err, errno, "open cgroup file `%s`", file);
	return ar_read_fd(fd, file, AR_CG_FILE_MAX, 4096, out, NULL, err);
}

int ar_cg_read_u64(int dirfd, const char *file, uint64_t *out,
		   struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	unsigned long long v;

	if (ar_cg_read(dirfd, file, &buf, err) < 0)
		return -1;
	buf[strcspn(buf, " \n")] = '\0';
	if (strcmp(buf, "max") == 0) {
		*out = AR_CG_MAX;
		return 0;
	}
	if (ar_parse_u64(buf, &v) < 0)
		return ar_error_set_plain(err, EINVAL,
					  "`%s`: unexpected content `%s`", file,
					  buf);
	*out = v;
	return 0;
}

int ar_cg_keyed(const char *buf, const char *key, uint64_t *out)
{
	size_t klen = strlen(key);
	const char *p = buf;

	while (p && *p) {
		if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
			const char *v = p + klen + 1;

			if (strncmp(v, "max", 3) == 0)
				*out = AR_CG_MAX;
			else
				*out = strtoull(v, NULL, 10);
			return 0;
		}
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	return -1;
}

static bool path_has_dotdot(const char *path)
{
	const char *p = path;

	while (*p) {
		size_t n;

		while (*p == '/')
			p++;
		n = strcspn(p, "/");
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return true;
		p += n;
	}
	return false;
}

bool ar_cg_file_gone(int dirfd, const char *name)
{
	return faccessat(dirfd, name, F_OK, 0) < 0 &&
	       (errno == ENOENT || errno == ENODEV);
}

int ar_cg_check(int dirfd, const char *path, struct ar_error *err)
{
	struct statfs sfs;

	if (fstatfs(dirfd, &sfs) < 0)
		return ar_error_set(err, errno, "statfs `%s`", path);
	if (sfs.f_type != CGROUP2_SUPER_MAGIC)
		return ar_error_set_plain(
			err, EINVAL, "`%s` is not on a cgroup2 file system",
			path);
	/* cgroup.events is not on the root cgroup: never treat the root of
	 * a hierarchy as a container's cgroup. A removed cgroup has no
	 * file at all, cgroup.procs included, which every cgroup and the
	 * root have. */
	if (faccessat(dirfd, "cgroup.events", F_OK, 0) == 0)
		return 0;
	if (ar_cg_file_gone(dirfd, "cgroup.procs"))
		return ar_error_set_plain(err, ENOENT,
					  "cgroup `%s` was removed", path);
	return ar_error_set_plain(
		err, EINVAL,
		"`%s` is the root of a cgroup hierarchy, not a container cgroup",
		path);
}

int ar_cg_open(const char *path, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	if (!path || path[0] != '/' || path_has_dotdot(path))
		return ar_error_set_plain(err, EINVAL,
					  "invalid cgroup path `%s`",
					  path ? path : "");
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "open cgroup `%s`", path);
	if (ar_cg_check(fd, path, err) < 0)
		return -1;
	return ar_steal_fd(&fd);
}
