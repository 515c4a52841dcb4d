/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for placeholder.c on a scratch directory: two users of one
 * placeholder (the last one out removes it), a placeholder left by a
 * killed run (marked, held by nobody: a placeholder for the next plan,
 * removed by its end or by an --overlay start), a directory of the
 * user's (never removed) and one the host wrote into (left, unmarked). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "../../runtime/sandbox/protect/placeholder.h"
#include "unit.h"
#include "utils.h"

static char *scratch(void)
{
	char tmpl[] = "/tmp/agentrun-ph-XXXXXX";

	return ar_xstrdup(mkdtemp(tmpl));
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

static bool is_dir(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool xattrs_work(const char *dir)
{
	return setxattr(dir, "user.agentrun.test", "1", 1, 0) == 0;
}

UNIT_TEST(placeholder_the_last_one_out_removes_it)
{
	_cleanup_free_ char *ws = scratch();
	_cleanup_free_ char *path = ar_xasprintf("%s/.vscode", ws);
	struct sb_placeholders a = SB_PLACEHOLDERS_INIT;
	struct sb_placeholders b = SB_PLACEHOLDERS_INIT;
	struct ar_error err = AR_ERROR_INIT;

	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, false, &err), 0);
	CHECK(is_dir(path));
	CHECK_INT_EQ((int)a.n, 1);
	CHECK(a.v[0].ours);
	/* in use: a placeholder for the next plan, not the user's */
	CHECK(sb_placeholder_is(path));
	CHECK_INT_EQ(sb_placeholder_take(&b, path, true, false, &err), 0);
	CHECK_INT_EQ((int)b.n, 1);
	CHECK(b.v[0].ours);
	/* the first out leaves it to the second */
	sb_placeholders_release(&a);
	CHECK(is_dir(path));
	sb_placeholders_release(&b);
	CHECK(!is_dir(path));
	rm_rf(ws);
}

/* A file placeholder (a project .claude's missing settings.json): an
 * empty regular file, shared, removed by the last one out while empty;
 * written into in place by the host, the user's file (kept, unmarked). */
UNIT_TEST(placeholder_file_removed_while_empty)
{
	_cleanup_free_ char *ws = scratch();
	_cleanup_free_ char *path = ar_xasprintf("%s/settings.json", ws);
	struct sb_placeholders a = SB_PLACEHOLDERS_INIT;
	struct sb_placeholders b = SB_PLACEHOLDERS_INIT;
	struct ar_error err = AR_ERROR_INIT;
	struct stat st;
	char v[64];

	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, true, &err), 0);
	CHECK(lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0);
	CHECK(a.n == 1 && a.v[0].ours);
	CHECK(sb_placeholder_is(path));
	CHECK_INT_EQ(sb_placeholder_take(&b, path, true, true, &err), 0);
	CHECK(b.n == 1 && b.v[0].ours);
	sb_placeholders_release(&a);
	CHECK(lstat(path, &st) == 0);
	sb_placeholders_release(&b);
	CHECK(lstat(path, &st) < 0 && errno == ENOENT);
	/* the host writes into it meanwhile */
	a = (struct sb_placeholders)SB_PLACEHOLDERS_INIT;
	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, true, &err), 0);
	{
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

		CHECK(fd >= 0 && write(fd, "{}", 2) == 2);
		if (fd >= 0)
			close(fd);
	}
	sb_placeholders_release(&a);
	CHECK(lstat(path, &st) == 0 && st.st_size == 2);
	CHECK(getxattr(path, SB_PLACEHOLDER_XATTR, v, sizeof(v)) < 0);
	CHECK(!sb_placeholder_is(path));
	rm_rf(ws);
}

UNIT_TEST(placeholder_left_by_a_killed_run_is_removed_next_time)
{
	_cleanup_free_ char *ws = scratch();
	_cleanup_free_ char *path = ar_xasprintf("%s/.mcp.json", ws);
	struct sb_placeholders a = SB_PLACEHOLDERS_INIT;
	struct sb_placeholders b = SB_PLACEHOLDERS_INIT;
	struct ar_error err = AR_ERROR_INIT;

	if (!xattrs_work(ws))
		UNIT_SKIP("no user xattrs on /tmp");
	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, false, &err), 0);
	/* killed: its locks go with its files, the directory stays */
	close(a.v[0].fd);
	free(a.v[0].path);
	free(a.v);
	CHECK(is_dir(path));
	CHECK(sb_placeholder_is(path));
	/* the next run reuses it and its end removes it */
	CHECK_INT_EQ(sb_placeholder_take(&b, path, true, false, &err), 0);
	CHECK(b.n == 1 && b.v[0].ours);
	sb_placeholders_release(&b);
	CHECK(!is_dir(path));
	/* an --overlay start (nothing mounted) removes it too */
	a = (struct sb_placeholders)SB_PLACEHOLDERS_INIT;
	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, false, &err), 0);
	close(a.v[0].fd);
	free(a.v[0].path);
	free(a.v);
	b = (struct sb_placeholders)SB_PLACEHOLDERS_INIT;
	CHECK_INT_EQ(sb_placeholder_take(&b, path, false, false, &err), 0);
	CHECK_INT_EQ((int)b.n, 0);
	CHECK(!is_dir(path));
	rm_rf(ws);
}

UNIT_TEST(placeholder_never_a_directory_of_the_users)
{
	_cleanup_free_ char *ws = scratch();
	_cleanup_free_ char *path = ar_xasprintf("%s/.idea", ws);
	_cleanup_free_ char *file = ar_xasprintf("%s/.idea/workspace.xml", ws);
	struct sb_placeholders a = SB_PLACEHOLDERS_INIT;
	struct ar_error err = AR_ERROR_INIT;
	char buf[64];
	int fd;

	/* the user's own empty directory: not a placeholder, kept */
	CHECK(mkdir(path, 0755) == 0);
	CHECK(!sb_placeholder_is(path));
	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, false, &err), 0);
	CHECK(a.n == 1 && !a.v[0].ours);
	sb_placeholders_release(&a);
	CHECK(is_dir(path));
	CHECK(rmdir(path) == 0);
	/* the host writes into a placeholder while it is in use: left,
	 * and unmarked (the user's now) */
	a = (struct sb_placeholders)SB_PLACEHOLDERS_INIT;
	CHECK_INT_EQ(sb_placeholder_take(&a, path, true, false, &err), 0);
	fd = open(file, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	CHECK(fd >= 0);
	close(fd);
	sb_placeholders_release(&a);
	CHECK(access(file, F_OK) == 0);
	CHECK(getxattr(path, SB_PLACEHOLDER_XATTR, buf, sizeof(buf)) < 0);
	CHECK(!sb_placeholder_is(path));
	rm_rf(ws);
}

UNIT_MAIN()
