/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/lib/rootfs_fill.c. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rootfs_fill.h"
#include "unit.h"
#include "utils.h"

static char dir[] = "/tmp/ar-rootfs-fill-XXXXXX";

static int open_root(void)
{
	static bool made;

	if (!made && !mkdtemp(dir))
		return -1;
	made = true;
	return open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

static char *read_rel(const char *rel)
{
	char path[PATH_MAX], buf[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return NULL;
	buf[n] = '\0';
	return strdup(buf);
}

UNIT_TEST(fills_dirs_files_links)
{
	static const struct ar_rootfs_entry v[] = {
		{ "etc", AR_ROOTFS_DIR, 0755, NULL, false },
		{ "etc/passwd", AR_ROOTFS_FILE, 0644, "me:x:1:1::/h:/bin/sh\n",
		  false },
		{ "bin", AR_ROOTFS_SYMLINK, 0, "usr/bin", false },
		{ "etc/hosts", AR_ROOTFS_FILE, 0600, NULL, true },
		/* optional: made already / its parent missing */
		{ "etc", AR_ROOTFS_DIR, 0755, NULL, true },
		{ "no/parent", AR_ROOTFS_DIR, 0755, NULL, true },
		{ "../escape", AR_ROOTFS_DIR, 0755, NULL, true },
	};
	struct ar_rootfs_content c = { v, AR_ARRAY_SIZE(v) };
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_close_ int fd = open_root();
	char path[PATH_MAX], target[64];
	struct stat st;
	char *s;
	ssize_t n;

	CHECK(fd >= 0);
	CHECK(ar_rootfs_fill(fd, &c, &err) == 0);
	s = read_rel("etc/passwd");
	CHECK_STR_EQ(s, "me:x:1:1::/h:/bin/sh\n");
	free(s);
	snprintf(path, sizeof(path), "%s/etc/hosts", dir);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0 &&
	      (st.st_mode & 0777) == 0600);
	snprintf(path, sizeof(path), "%s/bin", dir);
	n = readlink(path, target, sizeof(target) - 1);
	CHECK(n == 7);
	if (n > 0) {
		target[n] = '\0';
		CHECK_STR_EQ(target, "usr/bin");
	}
	snprintf(path, sizeof(path), "%s/no", dir);
	CHECK(access(path, F_OK) < 0);
}

UNIT_TEST(never_replaces_nor_follows)
{
	/* "bin" is the symbolic link made above: a file entry there is
	 * refused (O_EXCL), never written through the link */
	static const struct ar_rootfs_entry v[] = {
		{ "bin", AR_ROOTFS_FILE, 0644, "x", false },
	};
	static const struct ar_rootfs_entry again[] = {
		{ "etc/passwd", AR_ROOTFS_FILE, 0644, "other", false },
	};
	struct ar_rootfs_content c = { v, 1 }, c2 = { again, 1 };
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_close_ int fd = open_root();
	char *s;

	CHECK(fd >= 0);
	CHECK(ar_rootfs_fill(fd, &c, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "create `bin`");
	ar_error_clear(&err);
	CHECK(ar_rootfs_fill(fd, &c2, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "etc/passwd");
	s = read_rel("etc/passwd");
	CHECK_STR_EQ(s, "me:x:1:1::/h:/bin/sh\n");
	free(s);
}

UNIT_TEST(refuses_paths_that_are_not_plain)
{
	static const char *const bad[] = { "/etc", "../x", "a/../b", "a//b",
					   "./a",  "a/",   "" };
	_cleanup_close_ int fd = open_root();

	CHECK(fd >= 0);
	for (size_t i = 0; i < AR_ARRAY_SIZE(bad); i++) {
		struct ar_rootfs_entry e = { bad[i], AR_ROOTFS_DIR, 0755, NULL,
					     false };
		struct ar_rootfs_content c = { &e, 1 };
		struct ar_error err = AR_ERROR_INIT;

		CHECK(ar_rootfs_fill(fd, &c, &err) < 0);
		CHECK_STR_CONTAINS(err.msg, "not a relative path");
	}
}

UNIT_TEST(zz_cleanup)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	CHECK(system(cmd) == 0);
}

UNIT_MAIN()
