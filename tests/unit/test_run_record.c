/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for run_record.c on a scratch directory: a live run's record
 * is held (never taken by a start), ended it is gone; a record whose run
 * died unchecked is checked once by the next start and removed; a
 * half-written one is removed unchecked; a file of another kind is left. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../runtime/sandbox/protect/protect.h"
#include "../../runtime/sandbox/protect/run_record.h"
#include "unit.h"
#include "utils.h"

static char *scratch(void)
{
	char tmpl[] = "/tmp/agentrun-rr-XXXXXX";

	return ar_xstrdup(mkdtemp(tmpl));
}

static void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
}

static int count(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			n++;
	closedir(d);
	return n;
}

static void write_file(const char *dir, const char *name, const char *data,
		       size_t len)
{
	char *p = ar_xasprintf("%s/%s", dir, name);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd >= 0) {
		(void)!write(fd, data, len);
		close(fd);
	}
	free(p);
}

UNIT_TEST(run_record_held_while_the_run_lives)
{
	char *top = scratch();
	char *dir = ar_xasprintf("%s/state/agentrun/unchecked", top);
	struct sb_run_record r = SB_RUN_RECORD_INIT;
	struct timespec start = { 1700000000, 5 };
	const char *rw[] = { "sub" };
	int fd;

	sb_run_record_begin(&r, dir, &start, top, rw, 1);
	CHECK(r.fd >= 0);
	CHECK(r.path != NULL);
	CHECK_INT_EQ(count(dir), 1);
	/* another open file cannot take it: a start leaves it */
	fd = open(r.path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(flock(fd, LOCK_EX | LOCK_NB) < 0);
	close(fd);
	CHECK_INT_EQ((int)sb_run_record_recover(dir, top, NULL), 0);
	CHECK_INT_EQ(count(dir), 1);
	sb_run_record_end(&r);
	CHECK_INT_EQ(r.fd, -1);
	CHECK_INT_EQ(count(dir), 0);
	sb_run_record_end(&r); /* idempotent */
	free(dir);
	rm_rf(top);
	free(top);
}

UNIT_TEST(run_record_of_a_killed_run_is_checked_once)
{
	char *top = scratch();
	char *dir = ar_xasprintf("%s/unchecked", top);
	char *ws = ar_xasprintf("%s/ws", top);
	struct timespec start = { 1700000000, 0 };
	pid_t pid;
	int status;

	CHECK_INT_EQ(mkdir(ws, 0700), 0);
	/* a run that dies without ending its record (its lock goes with
	 * it) */
	pid = fork();
	if (pid == 0) {
		struct sb_run_record r = SB_RUN_RECORD_INIT;

		sb_run_record_begin(&r, dir, &start, ws, NULL, 0);
		_exit(r.fd >= 0 ? 0 : 1);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_INT_EQ(count(dir), 1);
	CHECK_INT_EQ((int)sb_run_record_recover(dir, top, NULL), 1);
	CHECK_INT_EQ(count(dir), 0);
	CHECK_INT_EQ((int)sb_run_record_recover(dir, top, NULL), 0);
	free(ws);
	free(dir);
	rm_rf(top);
	free(top);
}

UNIT_TEST(run_record_half_written_or_foreign)
{
	char *top = scratch();
	static const char half[] = "agentrun-unchecked-run 1\0"
				   "17";
	static const char other[] = "something else";

	write_file(top, "1-1", half, sizeof(half) - 1);
	write_file(top, "notes", other, sizeof(other) - 1);
	write_file(top, ".new-99999", "", 0);
	CHECK_INT_EQ(count(top), 3);
	CHECK_INT_EQ((int)sb_run_record_recover(top, top, NULL), 0);
	/* the half-written record and the stale temporary one removed, the
	 * file of another kind left */
	CHECK_INT_EQ(count(top), 1);
	rm_rf(top);
	free(top);
}

/* A live grant is appended (on disk before its mount); a torn last one
 * (the machine stopped while it was written) is no grant, the run is
 * still checked. */
UNIT_TEST(run_record_live_grants_appended)
{
	static const char want[] = "\001grant\0"
				   "1700000005\0"
				   "7\0"
				   "/granted/dir\0";
	static const char torn[] = "agentrun-unchecked-run 1\0"
				   "1700000000\0"
				   "0\0"
				   "1\0"
				   "/nonexistent-ws\0"
				   "\001grant\0"
				   "1700";
	char *top = scratch();
	char *dir = ar_xasprintf("%s/unchecked", top);
	struct timespec start = { 1700000000, 0 }, since = { 1700000005, 7 };
	struct sb_run_record r = SB_RUN_RECORD_INIT;
	char buf[512];
	struct stat st0, st1;
	ssize_t n;
	int fd;

	sb_run_record_begin(&r, dir, &start, top, NULL, 0);
	CHECK(r.fd >= 0);
	CHECK_INT_EQ(fstat(r.fd, &st0), 0);
	sb_run_record_grant(&r, "/granted/dir", &since);
	sb_run_record_grant(&r, "relative", &since); /* not a real path */
	CHECK_INT_EQ(fstat(r.fd, &st1), 0);
	CHECK_INT_EQ((int)(st1.st_size - st0.st_size), (int)sizeof(want) - 1);
	fd = open(r.path, O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0);
	n = pread(fd, buf, sizeof(buf), st0.st_size);
	close(fd);
	CHECK_INT_EQ((int)n, (int)sizeof(want) - 1);
	CHECK(memcmp(buf, want, sizeof(want) - 1) == 0);
	sb_run_record_end(&r);
	/* after the end: nothing written, nothing crashes */
	sb_run_record_grant(&r, "/granted/dir", &since);
	CHECK_INT_EQ(count(dir), 0);
	write_file(dir, "1700000000.000000000-1", torn, sizeof(torn) - 1);
	CHECK_INT_EQ((int)sb_run_record_recover(dir, top, NULL), 1);
	CHECK_INT_EQ(count(dir), 0);
	free(dir);
	rm_rf(top);
	free(top);
}

UNIT_TEST(run_record_dir_follows_xdg_state_home)
{
	char *env1[] = { "XDG_STATE_HOME=/s", NULL };
	char *env2[] = { "XDG_STATE_HOME=relative", NULL };
	char *a = sb_run_record_dir("/h", env1);
	char *b = sb_run_record_dir("/h", env2);

	char *c = sb_protect_state_dir("/h", env1);

	CHECK_STR_EQ(a, "/s/agentrun/unchecked");
	CHECK_STR_EQ(b, "/h/.local/state/agentrun/unchecked");
	CHECK_STR_EQ(c, "/s/agentrun");
	free(a);
	free(b);
	free(c);
}

UNIT_MAIN()
