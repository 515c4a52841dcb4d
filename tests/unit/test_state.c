/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "proc_stat.h"
#include "state.h"
#include "state_json.h"
#include "unit.h"
#include "utils.h"

UNIT_TEST(id_validation)
{
	struct ar_error err = AR_ERROR_INIT;
	char *long_id = malloc(AR_ID_MAX + 2);

	CHECK(ar_state_validate_id("abc-DEF_1.2+x", &err) == 0);
	CHECK(ar_state_validate_id("", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "empty");
	CHECK(ar_state_validate_id("..", &err) < 0);
	CHECK(ar_state_validate_id(".", &err) < 0);
	CHECK(ar_state_validate_id("a/b", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "a/b");
	CHECK(ar_state_validate_id("../x", &err) < 0);
	CHECK(ar_state_validate_id("a b", &err) < 0);
	CHECK(ar_state_validate_id("a\nb", &err) < 0);
	memset(long_id, 'a', AR_ID_MAX + 1);
	long_id[AR_ID_MAX + 1] = '\0';
	CHECK(ar_state_validate_id(long_id, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "longer than");
	long_id[AR_ID_MAX] = '\0';
	CHECK(ar_state_validate_id(long_id, &err) == 0);
	free(long_id);
}

static struct ar_state sample(void)
{
	static struct oci_kv ann[] = { { (char *)"org.x/y", (char *)"v\"q" } };
	struct ar_state st = {
		.id = (char *)"c1",
		.pid = 1234,
		.pid_start = 18446744073709551615ULL,
		.bundle = (char *)"/b/u n",
		.rootfs = (char *)"/b/u n/rootfs",
		.created = (char *)"2026-01-01T00:00:00.000000000Z",
		.owner = 1000,
		.cgroup_path = (char *)"/sys/fs/cgroup/x",
		.rootless = true,
		.has_poststop_hooks = true,
		.annotations = ann,
		.n_annotations = 1,
	};
	return st;
}

UNIT_TEST(json_round_trip)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_state st = sample();
	_cleanup_free_ char *json = NULL;
	_cleanup_state_ struct ar_state *back = NULL;

	CHECK(ar_state_json_generate(&st, NULL, true, true, &json, NULL,
				     &err) == 0);
	/* '/' is not escaped: hook consumers parse this strictly. */
	CHECK_STR_CONTAINS(json, "\"bundle\":\"/b/u n\"");
	CHECK(ar_state_json_parse(json, "t", &back, &err) == 0);
	if (!back)
		return;
	CHECK_STR_EQ(back->id, "c1");
	CHECK_INT_EQ(back->pid, 1234);
	CHECK(back->pid_start == 18446744073709551615ULL);
	CHECK_STR_EQ(back->rootfs, "/b/u n/rootfs");
	CHECK_STR_EQ(back->cgroup_path, "/sys/fs/cgroup/x");
	CHECK(back->rootless);
	CHECK(!back->detached);
	CHECK(back->has_poststop_hooks);
	CHECK_INT_EQ(back->owner, 1000);
	CHECK_INT_EQ(back->n_annotations, 1);
	CHECK_STR_EQ(back->annotations[0].key, "org.x/y");
	CHECK_STR_EQ(back->annotations[0].value, "v\"q");
	CHECK(!back->creating);
	CHECK(strstr(json, "creating") == NULL);

	/* the "creating" mark of a create in progress survives the trip */
	free(json);
	json = NULL;
	ar_state_free(back);
	back = NULL;
	st.creating = true;
	CHECK(ar_state_json_generate(&st, NULL, true, true, &json, NULL,
				     &err) == 0);
	CHECK(ar_state_json_parse(json, "t", &back, &err) == 0);
	CHECK(back && back->creating);
}

UNIT_TEST(oci_state_json)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_state st = sample();
	_cleanup_free_ char *running = NULL, *stopped = NULL;

	CHECK(ar_state_oci_json(&st, AR_STATUS_RUNNING, &running, NULL, &err) ==
	      0);
	CHECK_STR_EQ(
		running,
		"{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"status\":\"running\","
		"\"pid\":1234,\"bundle\":\"/b/u n\",\"annotations\":"
		"{\"org.x/y\":\"v\\\"q\"}}");
	CHECK(ar_state_oci_json(&st, AR_STATUS_STOPPED, &stopped, NULL, &err) ==
	      0);
	CHECK(strstr(stopped, "\"pid\"") == NULL);
	CHECK_STR_CONTAINS(stopped, "\"status\":\"stopped\"");
}

UNIT_TEST(parse_rejects_garbage)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_state *st = NULL;

	CHECK(ar_state_json_parse("{\"id\":", "f", &st, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "f: invalid JSON");
	CHECK(ar_state_json_parse("[]", "f", &st, &err) < 0);
	CHECK(ar_state_json_parse("{\"id\":\"a\",\"bundle\":\"/\"}", "f", &st,
				  &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "agentrun");
	CHECK(st == NULL);
}

UNIT_TEST(dir_lifecycle)
{
	struct ar_error err = AR_ERROR_INIT;
	char tmpl[] = "/tmp/agentrun-state-XXXXXX";
	char *root = mkdtemp(tmpl);
	_cleanup_free_ char *sub = NULL;
	_cleanup_close_ int rootfd = -1, d = -1, d2 = -1;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_state_ struct ar_state *back = NULL;
	struct ar_state st = sample();

	CHECK(root != NULL);
	if (!root)
		return;
	sub = ar_xasprintf("%s/a/b", root);
	rootfd = ar_state_root_open(sub, true, &err);
	CHECK(rootfd >= 0);
	d = ar_state_dir_create(rootfd, "c1", &err);
	CHECK(d >= 0);
	CHECK(ar_state_dir_create(rootfd, "c1", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "container `c1` already exists");
	CHECK(ar_state_dir_create(rootfd, "../evil", &err) < 0);
	CHECK(ar_state_lock(d, true, &err) == 0);
	CHECK(ar_state_write(d, &st, &err) == 0);
	CHECK(ar_state_read(d, "c1", &back, &err) == 0);
	CHECK(back && back->pid == 1234);
	/* pid 1234 with an impossible start time is not "alive". */
	CHECK(ar_state_status(d, &st) == AR_STATUS_STOPPED);
	d2 = ar_state_dir_open(rootfd, "nope", &err);
	CHECK(d2 < 0);
	CHECK_STR_CONTAINS(err.msg, "container `nope` does not exist");
	CHECK(ar_state_dir_create(rootfd, "c2", &err) >= 0);
	CHECK(ar_state_list_ids(rootfd, &ids, &err) == 0);
	CHECK(ids && ids[0] && ids[1] && !ids[2]);
	if (ids && ids[0] && ids[1]) {
		CHECK_STR_EQ(ids[0], "c1");
		CHECK_STR_EQ(ids[1], "c2");
	}
	CHECK(ar_state_remove(rootfd, "c1", &err) == 0);
	CHECK(ar_state_remove(rootfd, "c2", &err) == 0);
	CHECK(ar_state_remove(rootfd, "c2", &err) == 0);
	CHECK(faccessat(rootfd, "c1", F_OK, 0) < 0);
	{
		_cleanup_free_ char *cmd = ar_xasprintf("rm -rf %s", root);
		CHECK(system(cmd) == 0);
	}
}

UNIT_TEST(status_of_live_process)
{
	struct ar_error err = AR_ERROR_INIT;
	char tmpl[] = "/tmp/agentrun-state-XXXXXX";
	char *root = mkdtemp(tmpl);
	_cleanup_close_ int rootfd = -1, d = -1;
	struct ar_state st = sample();
	pid_t child;
	int status, ready[2];
	char c;

	CHECK(root != NULL);
	if (!root)
		return;
	rootfd = ar_state_root_open(root, false, &err);
	d = ar_state_dir_create(rootfd, "live", &err);
	CHECK(d >= 0);
	CHECK(pipe(ready) == 0);
	child = fork();
	if (child == 0) {
		/* the name of a container process before its execve */
		prctl(PR_SET_NAME, AR_INIT_COMM);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	CHECK(read(ready[0], &c, 1) == 1);
	close(ready[0]);
	close(ready[1]);
	st.pid = child;
	st.pid_start = ar_proc_start_time(child);
	st.cgroup_path = NULL;
	CHECK(st.pid_start > 0);
	CHECK(ar_state_status(d, &st) == AR_STATUS_RUNNING);
	CHECK(mkfifoat(d, AR_EXEC_FIFO, 0600) == 0);
	CHECK(ar_state_status(d, &st) == AR_STATUS_CREATED);
	/* create still at work (or killed at work): creating */
	st.creating = true;
	CHECK(ar_state_status(d, &st) == AR_STATUS_CREATING);
	st.creating = false;
	/* A fifo left by an interrupted start, the process has exec'd (its
	 * name is not AR_INIT_COMM any more): running. */
	st.pid = getpid();
	st.pid_start = ar_proc_start_time(st.pid);
	CHECK(ar_state_status(d, &st) == AR_STATUS_RUNNING);
	st.pid = child;
	st.pid_start = ar_proc_start_time(child);
	unlinkat(d, AR_EXEC_FIFO, 0);
	/* A reused pid (different start time) is not our container. */
	st.pid_start++;
	CHECK(ar_state_status(d, &st) == AR_STATUS_STOPPED);
	st.pid_start--;
	kill(child, SIGKILL);
	/* Dead but not reaped yet: a zombie is stopped too. */
	usleep(100000);
	CHECK(ar_state_status(d, &st) == AR_STATUS_STOPPED);
	waitpid(child, &status, 0);
	CHECK(ar_state_status(d, &st) == AR_STATUS_STOPPED);
	ar_state_remove(rootfd, "live", &err);
	rmdir(root);
}

/* State files are replaced atomically (temp + rename, no fsync): the new
 * content, the mode asked for, no temporary file left behind. */
UNIT_TEST(write_replace_atomic)
{
	struct ar_error err = AR_ERROR_INIT;
	char tmpl[] = "/tmp/agentrun-state-XXXXXX";
	char *root = mkdtemp(tmpl);
	_cleanup_close_ int d = -1;
	_cleanup_free_ char *back = NULL;
	struct stat sb;
	size_t len = 0;
	int entries = 0;

	CHECK(root != NULL);
	if (!root)
		return;
	d = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(d >= 0);
	CHECK_INT_EQ(ar_write_file_replace_at(d, "f", "first", 5, 0600, &err),
		     0);
	CHECK_INT_EQ(ar_write_file_replace_at(d, "f", "second", 6, 0600, &err),
		     0);
	CHECK_INT_EQ(ar_read_file_at(d, "f", 64, &back, &len, &err), 0);
	CHECK(back && len == 6);
	if (back)
		CHECK_STR_EQ(back, "second");
	CHECK(fstatat(d, "f", &sb, 0) == 0 && (sb.st_mode & 07777) == 0600);
	{
		DIR *dir = opendir(root);
		struct dirent *de;

		CHECK(dir != NULL);
		while (dir && (de = readdir(dir)))
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				entries++;
		if (dir)
			closedir(dir);
	}
	CHECK_INT_EQ(entries, 1); /* only "f" */
	/* A directory that cannot be written: an error naming the file. */
	CHECK(ar_write_file_replace_at(d, "no/such/dir", "x", 1, 0600, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "no/such/dir");
	unlinkat(d, "f", 0);
	rmdir(root);
}

/* The fields of /proc/PID/stat: comm with spaces and parens, a comm cut
 * to 16 bytes, the state, the parent, the start time (field 22); what is
 * not a stat line leaves the result untouched. */
UNIT_TEST(proc_stat_parse)
{
	struct ar_proc_stat ps = { 0 };
	const char *tail = " 1 1 0 -1 4194560 100 0 0 0 0 0 0 0 20 0 1 0 "
			   "4242 1000 200 18446744073709551615";
	char line[512];

	snprintf(line, sizeof(line), "77 (sh) S 5%s", tail);
	CHECK(ar_proc_stat_parse(line, &ps) == 0);
	CHECK_STR_EQ(ps.comm, "sh");
	CHECK(ps.state == 'S');
	CHECK(ps.ppid == 5);
	CHECK(ps.start == 4242);

	snprintf(line, sizeof(line), "78 (a) (b c)) Z 0%s", tail);
	CHECK(ar_proc_stat_parse(line, &ps) == 0);
	CHECK_STR_EQ(ps.comm, "a) (b c)");
	CHECK(ps.state == 'Z');
	CHECK(ps.ppid == 0);
	CHECK(ps.start == 4242);

	snprintf(line, sizeof(line), "79 (0123456789abcdefXYZ) R 9%s", tail);
	CHECK(ar_proc_stat_parse(line, &ps) == 0);
	CHECK_STR_EQ(ps.comm, "0123456789abcdef");

	ps.ppid = 123;
	CHECK(ar_proc_stat_parse("", &ps) < 0);
	CHECK(ar_proc_stat_parse("80 (x", &ps) < 0);
	CHECK(ar_proc_stat_parse("80 x) S 1", &ps) < 0);
	CHECK(ar_proc_stat_parse("80 (x) S", &ps) < 0);
	CHECK(ar_proc_stat_parse("80 (x) S notapid 1 1", &ps) < 0);
	CHECK(ar_proc_stat_parse("80 (x) S 1 1 1", &ps) < 0); /* no field 22 */
	CHECK(ps.ppid == 123);

	/* This process, read from /proc: its parent and a start time. */
	CHECK(ar_proc_stat_read(getpid(), &ps) == 0);
	CHECK(ps.ppid == getppid());
	CHECK(ps.start == ar_proc_start_time(getpid()));
	CHECK(ps.start > 0);
	errno = 0;
	CHECK(ar_proc_stat_read(-5, &ps) < 0 && errno == ENOENT);
}

UNIT_MAIN()
