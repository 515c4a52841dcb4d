/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The safe resolver against a hostile rootfs: absolute symlinks to /etc and
 * /, ../ chains, symlinks to a directory next to the root, loops, dangling
 * symlinks that would create files outside.  Every case runs twice: with
 * openat2 and with the forced fallback walk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "rootfs_path.h"
#include "unit.h"

static char top[PATH_MAX]; /* the temp dir */
static char root[PATH_MAX + 16]; /* top/root */
static char outside[PATH_MAX + 16]; /* top/outside: must stay empty */
static char
	tag[64]; /* unique names for files that must not appear in /etc, /tmp */

static void mk(const char *rel, bool dir)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (dir) {
		mkdir(p, 0755);
	} else {
		FILE *f = fopen(p, "w");

		if (f) {
			fputs("inside", f);
			fclose(f);
		}
	}
}

static void ln(const char *target, const char *rel)
{
	char p[PATH_MAX * 2];

	snprintf(p, sizeof(p), "%s/%s", root, rel);
	if (symlink(target, p) < 0)
		perror("symlink");
}

static void setup_tree(void)
{
	char p[PATH_MAX * 2];

	if (top[0])
		return;
	snprintf(top, sizeof(top), "/tmp/ar-rootfs-path-XXXXXX");
	if (!mkdtemp(top)) {
		perror("mkdtemp");
		exit(2);
	}
	snprintf(tag, sizeof(tag), "agentrun-test-%d", (int)getpid());
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(outside, sizeof(outside), "%s/outside", top);
	mkdir(root, 0755);
	mkdir(outside, 0755);
	mk("etc", true);
	mk("etc/passwd", false);
	mk("dir", true);
	mk("dir/sub", true);
	mk("file", false);
	mk("tmp", true);
	ln("/etc", "abs_etc");
	ln("/", "slash");
	ln("../../../../../../../..", "rel_up");
	ln("../outside", "rel_out");
	ln(outside, "abs_out");
	ln("loop2", "loop1");
	ln("loop1", "loop2");
	ln("/nonexistent-ar/dir", "dangling");
	snprintf(p, sizeof(p), "/etc/%s", tag);
	ln(p, "dangling_etc");
	ln("dir/sub/../../../../etc", "mixed");
	ln("/proc/self/root", "magic");
}

static void cleanup_tree(void)
{
	char cmd[PATH_MAX + 32];

	if (!top[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", top);
	if (system(cmd) != 0)
		fprintf(stderr, "cleanup of %s failed\n", top);
}

static int rootfd(void)
{
	setup_tree();
	return open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
}

/* fd must be at or below root */
static bool fd_inside(int fd)
{
	char l[64], buf[PATH_MAX];
	ssize_t n;

	snprintf(l, sizeof(l), "/proc/self/fd/%d", fd);
	n = readlink(l, buf, sizeof(buf) - 1);
	if (n < 0)
		return false;
	buf[n] = '\0';
	if (strncmp(buf, root, strlen(root)) != 0) {
		printf("# fd %d is at %s, outside %s\n", fd, buf, root);
		return false;
	}
	return true;
}

static bool host_untouched(void)
{
	char p[PATH_MAX * 2];
	int entries = 0;
	bool ok = true;
	FILE *f;

	/* the outside dir must be empty */
	snprintf(p, sizeof(p), "ls -A '%s' | wc -l", outside);
	f = popen(p, "r");
	if (f) {
		if (fscanf(f, "%d", &entries) != 1)
			entries = -1;
		pclose(f);
	}
	if (entries != 0) {
		printf("# %s is not empty\n", outside);
		ok = false;
	}
	snprintf(p, sizeof(p), "/etc/%s", tag);
	if (access(p, F_OK) == 0) {
		printf("# %s was created\n", p);
		unlink(p);
		ok = false;
	}
	snprintf(p, sizeof(p), "/tmp/%s", tag);
	if (access(p, F_OK) == 0) {
		printf("# %s was created\n", p);
		unlink(p);
		ok = false;
	}
	if (access("/nonexistent-ar", F_OK) == 0) {
		printf("# /nonexistent-ar was created\n");
		ok = false;
	}
	return ok;
}

static void read_inside(int rfd, const char *path)
{
	struct ar_error err = AR_ERROR_INIT;
	char buf[32] = { 0 };
	int fd = ar_open_in_root(rfd, path, O_RDONLY, 0, &err);

	if (fd < 0)
		printf("# open %s: %s\n", path, err.msg);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK(fd_inside(fd));
	CHECK(read(fd, buf, sizeof(buf) - 1) == 6);
	CHECK_STR_EQ(buf, "inside");
	close(fd);
}

static void expect_open_error(int rfd, const char *path, int flags, int code)
{
	struct ar_error err = AR_ERROR_INIT;
	int fd = ar_open_in_root(rfd, path, flags, 0644, &err);

	if (fd >= 0) {
		printf("# open %s unexpectedly succeeded\n", path);
		close(fd);
	}
	CHECK(fd < 0);
	if (err.code != code)
		printf("# open %s: %s\n", path, err.msg);
	CHECK_INT_EQ(err.code, code);
	CHECK_STR_CONTAINS(err.msg, path);
}

static void reads_stay_inside(void)
{
	int rfd = rootfd();

	read_inside(rfd, "/etc/passwd");
	read_inside(rfd, "etc/passwd");
	read_inside(rfd, "abs_etc/passwd");
	read_inside(rfd, "slash/etc/passwd");
	read_inside(rfd, "slash/slash/abs_etc/passwd");
	read_inside(rfd, "rel_up/etc/passwd");
	read_inside(rfd, "../../../etc/passwd");
	read_inside(rfd, "dir/sub/../../../../../etc/passwd");
	read_inside(rfd, "mixed/passwd");
	read_inside(rfd, "/dir/../file");
	expect_open_error(rfd, "loop1", O_RDONLY, ELOOP);
	expect_open_error(rfd, "loop1/x", O_RDONLY, ELOOP);
	expect_open_error(rfd, "file/x", O_RDONLY, ENOTDIR);
	expect_open_error(rfd, "dangling", O_RDONLY, ENOENT);
	expect_open_error(rfd, "abs_out/x", O_RDONLY, ENOENT);
	CHECK(host_untouched());
	close(rfd);
}

static void nofollow_and_dirs(void)
{
	struct ar_error err = AR_ERROR_INIT;
	int rfd = rootfd();
	struct stat st;
	int fd;

	fd = ar_open_in_root(rfd, "abs_etc", O_PATH | O_NOFOLLOW, 0, &err);
	CHECK(fd >= 0);
	CHECK(fd >= 0 && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode));
	if (fd >= 0)
		close(fd);
	fd = ar_open_in_root(rfd, "/", O_PATH | O_DIRECTORY, 0, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	fd = ar_open_in_root(rfd, "slash", O_RDONLY | O_DIRECTORY, 0, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	close(rfd);
}

static void creation_stays_inside(void)
{
	struct ar_error err = AR_ERROR_INIT;
	char p[PATH_MAX * 2], q[PATH_MAX * 3];
	int rfd = rootfd();
	int fd;

	/* mkdir -p through an absolute symlink naming the host's outside
	 * dir: must land at root/<outside>/... */
	fd = ar_mkdir_p_in_root(rfd, "abs_out/new1/sub", 0755, &err);
	if (fd < 0)
		printf("# %s\n", err.msg);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s%s/new1/sub", root, outside);
	CHECK(access(q, F_OK) == 0);

	fd = ar_mkdir_p_in_root(rfd, "rel_out/new2", 0755, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/outside/new2", root);
	CHECK(access(q, F_OK) == 0);

	/* dangling absolute symlink: parents of its target created inside */
	fd = ar_mount_target_in_root(rfd, "dangling/f", false, &err);
	if (fd < 0)
		printf("# %s\n", err.msg);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/nonexistent-ar/dir/f", root);
	CHECK(access(q, F_OK) == 0);

	/* a dangling symlink as the last component of a file target */
	fd = ar_mount_target_in_root(rfd, "dangling_etc", false, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/etc/%s", root, tag);
	CHECK(access(q, F_OK) == 0);
	unlink(q);

	/* the same as a directory target */
	fd = ar_mount_target_in_root(rfd, "dangling_etc", true, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	CHECK(access(q, F_OK) == 0);
	rmdir(q);

	/* file target through "/" symlink */
	snprintf(p, sizeof(p), "slash/tmp/%s", tag);
	fd = ar_mount_target_in_root(rfd, p, false, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/tmp/%s", root, tag);
	CHECK(access(q, F_OK) == 0);
	unlink(q);

	/* O_CREAT through a dangling symlink to /etc/<tag> */
	fd = ar_open_in_root(rfd, "dangling_etc", O_WRONLY | O_CREAT, 0644,
			     &err);
	if (fd < 0)
		printf("# %s\n", err.msg);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/etc/%s", root, tag);
	CHECK(access(q, F_OK) == 0);
	unlink(q);

	/* ../ chains while creating */
	fd = ar_mkdir_p_in_root(rfd, "../../rel_up/../made/by/test", 0755,
				&err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	snprintf(q, sizeof(q), "%s/made/by/test", root);
	CHECK(access(q, F_OK) == 0);

	/* errors */
	fd = ar_mkdir_p_in_root(rfd, "file/sub", 0755, &err);
	CHECK(fd < 0);
	CHECK_INT_EQ(err.code, ENOTDIR);
	fd = ar_mkdir_p_in_root(rfd, "file", 0755, &err);
	CHECK(fd < 0);
	CHECK_INT_EQ(err.code, ENOTDIR);
	fd = ar_mkdir_p_in_root(rfd, "loop1/x", 0755, &err);
	CHECK(fd < 0);
	CHECK_INT_EQ(err.code, ELOOP);

	/* existing targets are just opened */
	fd = ar_mount_target_in_root(rfd, "/", true, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);
	fd = ar_mount_target_in_root(rfd, "abs_etc/passwd", false, &err);
	CHECK(fd >= 0 && fd_inside(fd));
	if (fd >= 0)
		close(fd);

	CHECK(host_untouched());
	close(rfd);
}

static void magic_links(void)
{
	struct ar_error err = AR_ERROR_INIT;
	int rfd = rootfd();
	int fd;

	/* "magic" -> /proc/self/root: resolved in the root, where there is
	 * no /proc: nothing found, never the host's root */
	fd = ar_open_in_root(rfd, "magic/etc/passwd", O_RDONLY, 0, &err);
	CHECK(fd < 0);
	if (fd >= 0)
		close(fd);
	close(rfd);
}

#define BOTH_MODES(name, fn)                                                   \
	UNIT_TEST(name##_openat2)                                              \
	{                                                                      \
		ar_rootfs_path_force_fallback(false);                          \
		fn();                                                          \
	}                                                                      \
	UNIT_TEST(name##_fallback)                                             \
	{                                                                      \
		ar_rootfs_path_force_fallback(true);                           \
		fn();                                                          \
		ar_rootfs_path_force_fallback(false);                          \
	}

BOTH_MODES(reads_stay_inside, reads_stay_inside)
BOTH_MODES(nofollow_and_dirs, nofollow_and_dirs)
BOTH_MODES(creation_stays_inside, creation_stays_inside)
BOTH_MODES(magic_links, magic_links)

UNIT_TEST(zz_cleanup)
{
	CHECK(host_untouched());
	cleanup_tree();
}

UNIT_MAIN()
