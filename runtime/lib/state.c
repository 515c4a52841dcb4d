/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "state.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "crash_point.h"
#include "proc_stat.h"
#include "state_json.h"
#include "utils.h"

/* state.json is small; anything bigger is corrupt or hostile. */
#define STATE_MAX_SIZE (4u * 1024 * 1024)

const char *ar_status_name(enum ar_status s)
{
	switch (s) {
	case AR_STATUS_CREATING:
		return "creating";
	case AR_STATUS_CREATED:
		return "created";
	case AR_STATUS_RUNNING:
		return "running";
	case AR_STATUS_STOPPED:
		return "stopped";
	case AR_STATUS_PAUSED:
		return "paused";
	}
	return "unknown";
}

int ar_state_validate_id(const char *id, struct ar_error *err)
{
	size_t len;

	if (!id || !*id)
		return ar_error_set_plain(err, EINVAL,
					  "invalid container id: empty");
	len = strlen(id);
	if (len > AR_ID_MAX)
		return ar_error_set_plain(
			err, EINVAL,
			"invalid container id: longer than %d characters",
			AR_ID_MAX);
	if (strcmp(id, ".") == 0 || strcmp(id, "..") == 0)
		return ar_error_set_plain(err, EINVAL,
					  "invalid container id `%s`", id);
	for (const char *p = id; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '_' || c == '-' ||
		    c == '.' || c == '+')
			continue;
		return ar_error_set_plain(
			err, EINVAL,
			"invalid container id `%s`: only letters, digits and _ + - . are allowed",
			id);
	}
	return 0;
}

/* Whoever can write the state directory decides what `delete` and the
 * other commands run (the hooks of a container's config): it must be
 * the caller's (or root's, which is trusted anyway), writable by nobody
 * else, and not a symbolic link. A fallback such as /tmp/agentrun-UID
 * may have been made by another local user before the caller got there. */
static int check_root_trusted(int fd, const char *root, struct ar_error *err)
{
	struct stat st;
	uid_t me = geteuid();

	if (fstat(fd, &st) < 0)
		return ar_error_set(err, errno, "state directory `%s`", root);
	if (st.st_uid != me && st.st_uid != 0)
		return ar_error_set_plain(
			err, EPERM,
			"state directory `%s` belongs to uid %u, not to you (uid %u): whoever owns it can forge container state whose hooks would run as you; remove it, or set XDG_RUNTIME_DIR, or pass --root DIR with a directory of your own (mode 0700)",
			root, (unsigned)st.st_uid, (unsigned)me);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		return ar_error_set_plain(
			err, EPERM,
			"state directory `%s` is writable by %s (mode %04o): another user could forge container state whose hooks would run as you; fix: chmod 0700 %s (after checking what is in it), or set XDG_RUNTIME_DIR, or pass --root DIR with a directory of your own",
			root, (st.st_mode & S_IWOTH) ? "others" : "its group",
			(unsigned)(st.st_mode & 07777), root);
	return 0;
}

int ar_state_root_open(const char *root, bool create, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	struct stat lst;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && create && errno == ENOENT) {
		if (ar_mkdir_p(root, 0700) < 0)
			return ar_error_set(err, errno,
					    "create state directory `%s`",
					    root);
		fd = open(root,
			  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0 && (errno == ELOOP || errno == ENOTDIR) &&
	    lstat(root, &lst) == 0 && S_ISLNK(lst.st_mode))
		return ar_error_set_plain(
			err, ELOOP,
			"state directory `%s` is a symbolic link: whoever made it decides where container state is read from; remove it, or pass --root with the real directory",
			root);
	if (fd < 0)
		return ar_error_set(err, errno, "open state directory `%s`",
				    root);
	if (check_root_trusted(fd, root, err) < 0)
		return -1;
	return ar_steal_fd(&fd);
}

/*
 * renameat2(RENAME_NOREPLACE) of TMP to ID in the state root, or, where the
 * filesystem does not support the flag (9p, some NFS and FUSE: EINVAL),
 * the same under an exclusive flock of the state root: check that ID is
 * free, then a plain rename. Every creator on such a filesystem takes that
 * path, so no two of them can both find ID free. 0, or -1 with errno
 * (EEXIST when ID exists; *no_flag set when the flag was refused and the
 * fallback could not lock the root either).
 */
static int rename_noreplace(int rootfd, const char *tmp, const char *id,
			    bool *no_flag)
{
	_cleanup_close_ int lockfd = -1;
	struct stat st;
	int r;

	*no_flag = false;
	if (renameat2(rootfd, tmp, rootfd, id, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	lockfd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lockfd < 0)
		return -1;
	do
		r = flock(lockfd, LOCK_EX);
	while (r < 0 && errno == EINTR);
	if (r < 0) {
		*no_flag = true;
		return -1;
	}
	if (fstatat(rootfd, id, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		errno = EEXIST;
		return -1;
	}
	if (errno != ENOENT)
		return -1;
	/* closing lockfd on return unlocks the root */
	return renameat(rootfd, tmp, rootfd, id);
}

/*
 * The directory appears under its id already locked (LOCK_EX) by its
 * creator: it is made and locked under a temporary name that no valid id
 * can have ('~' is not allowed in ids), then renamed into place without
 * replacing anything (rename_noreplace). So `state`, `list`, `delete` and
 * friends, which take the lock before reading, never see a container
 * directory without its state.json while a create is still on its way to
 * writing it.
 */
int ar_state_dir_create(int rootfd, const char *id, struct ar_error *err)
{
	bool no_flag;
	_cleanup_close_ int fd = -1;
	char tmp[AR_ID_MAX + 32];
	struct timespec ts;

	if (ar_state_validate_id(id, err) < 0)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(tmp, sizeof(tmp), ".new~%d~%ld", (int)getpid(),
		 (long)ts.tv_nsec);
	if (mkdirat(rootfd, tmp, 0700) < 0)
		return ar_error_set(err, errno,
				    "create state directory for `%s`", id);
	fd = openat(rootfd, tmp,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || flock(fd, LOCK_EX) < 0) {
		int saved = errno;

		unlinkat(rootfd, tmp, AT_REMOVEDIR);
		return ar_error_set(err, saved, "open state directory for `%s`",
				    id);
	}
	if (rename_noreplace(rootfd, tmp, id, &no_flag) < 0) {
		int saved = errno;
		char link[64];
		char root[512] = "?";
		ssize_t n;

		unlinkat(rootfd, tmp, AT_REMOVEDIR);
		if (saved == EEXIST || saved == ENOTEMPTY)
			return ar_error_set_plain(
				err, EEXIST, "container `%s` already exists",
				id);
		snprintf(link, sizeof(link), "/proc/self/fd/%d", rootfd);
		n = readlink(link, root, sizeof(root) - 1);
		root[n > 0 ? n : 1] = '\0';
		if (no_flag)
			return ar_error_set(
				err, saved,
				"state directory `%s`: its filesystem supports neither renameat2(RENAME_NOREPLACE) nor flock, which creating a container safely needs: use a --root on a local filesystem",
				root);
		return ar_error_set(err, saved,
				    "create state directory for `%s` in `%s`",
				    id, root);
	}
	ar_crash_point("create-state-dir");
	return ar_steal_fd(&fd);
}

int ar_state_dir_open(int rootfd, const char *id, struct ar_error *err)
{
	int fd;

	if (ar_state_validate_id(id, err) < 0)
		return -1;
	fd = openat(rootfd, id,
		    O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		if (errno == ENOENT)
			return ar_error_set_plain(
				err, ENOENT, "container `%s` does not exist",
				id);
		return ar_error_set(err, errno, "open state directory for `%s`",
				    id);
	}
	return fd;
}

int ar_state_lock(int dirfd, bool exclusive, struct ar_error *err)
{
	int r;

	do
		r = flock(dirfd, exclusive ? LOCK_EX : LOCK_SH);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return ar_error_set(err, errno, "lock container state");
	return 0;
}

int ar_state_write(int dirfd, const struct ar_state *st, struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	size_t len;

	if (ar_state_json_generate(st, NULL, true, true, &json, &len, err) < 0)
		return -1;
	/* Atomic (temp + rename) but not synced: the state describes live
	 * processes, which a machine crash ends anyway. */
	return ar_write_file_replace_at(dirfd, AR_STATE_FILE, json, len, 0600,
					err);
}

int ar_state_read(int dirfd, const char *id, struct ar_state **out,
		  struct ar_error *err)
{
	_cleanup_free_ char *json = NULL;
	_cleanup_free_ char *name = NULL;

	if (ar_read_file_at(dirfd, AR_STATE_FILE, STATE_MAX_SIZE, &json, NULL,
			    err) < 0) {
		if (err->code == ENOENT)
			return ar_error_set_plain(
				err, ENOENT,
				"container `%s` has no state (still being created, or a create was interrupted)",
				id);
		return ar_error_wrap(err, "container `%s`", id);
	}
	name = ar_xasprintf("state of container `%s`", id);
	return ar_state_json_parse(json, name, out, err);
}

unsigned long long ar_proc_start_time(pid_t pid)
{
	struct ar_proc_stat ps;

	return ar_proc_stat_read(pid, &ps) < 0 ? 0 : ps.start;
}

/* Alive and still our container process; fills *ps. */
static bool pid_alive(const struct ar_state *st, struct ar_proc_stat *ps)
{
	if (st->pid <= 0)
		return false;
	if (ar_proc_stat_read(st->pid, ps) < 0 || ps->start == 0 ||
	    (st->pid_start && ps->start != st->pid_start))
		return false;
	/* An exited process that nobody reaped yet has stopped too. */
	return ps->state != 'Z' && ps->state != 'X';
}

bool ar_state_pid_alive(const struct ar_state *st)
{
	struct ar_proc_stat ps;

	return pid_alive(st, &ps);
}

static bool cgroup_frozen(const char *cgroup_path)
{
	char path[4096], buf[64];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if (!cgroup_path)
		return false;
	if (snprintf(path, sizeof(path), "%s/cgroup.events", cgroup_path) >=
	    (int)sizeof(path))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = ar_read_all(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "frozen 1") != NULL;
}

enum ar_status ar_state_status(int dirfd, const struct ar_state *st)
{
	struct ar_proc_stat ps;
	struct stat sb;

	if (!pid_alive(st, &ps))
		return AR_STATUS_STOPPED;
	if (st->creating &&
	    fstatat(dirfd, AR_STATE_READY, &sb, AT_SYMLINK_NOFOLLOW) < 0)
		return AR_STATUS_CREATING;
	/* A fifo left by a `start` killed after it let the process go: the
	 * process has exec'd (or is about to), it is running. */
	if (fstatat(dirfd, AR_EXEC_FIFO, &sb, AT_SYMLINK_NOFOLLOW) == 0 &&
	    strcmp(ps.comm, AR_INIT_COMM) == 0)
		return AR_STATUS_CREATED;
	if (cgroup_frozen(st->cgroup_path))
		return AR_STATUS_PAUSED;
	return AR_STATUS_RUNNING;
}

int ar_state_oci_json(const struct ar_state *st, enum ar_status status,
		      char **out, size_t *len, struct ar_error *err)
{
	return ar_state_json_generate(st, ar_status_name(status),
				      status != AR_STATUS_STOPPED, false, out,
				      len, err);
}

int ar_state_mark_ready(int dirfd, struct ar_error *err)
{
	if (mknodat(dirfd, AR_STATE_READY, S_IFREG | 0600, 0) < 0 &&
	    errno != EEXIST)
		return ar_error_set(err, errno, "create `%s` in the state",
				    AR_STATE_READY);
	return 0;
}

/* name under dfd and everything below it, never following a link
 * (a bounded depth: the notify directory holds one socket). */
static int remove_tree_at(int dfd, const char *name, int depth)
{
	int fd, r = 0;
	DIR *d;
	struct dirent *de;

	if (depth > 16) {
		errno = ELOOP;
		return -1;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	while (r == 0 && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		r = unlinkat(dirfd(d), de->d_name, 0);
		if (r < 0 && errno == EISDIR)
			r = remove_tree_at(dirfd(d), de->d_name, depth + 1);
		if (r < 0 && errno == ENOENT)
			r = 0;
	}
	closedir(d);
	if (r < 0)
		return -1;
	return unlinkat(dfd, name, AT_REMOVEDIR);
}

int ar_state_remove(int rootfd, const char *id, struct ar_error *err)
{
	_cleanup_close_ int dfd = -1;
	DIR *d;
	struct dirent *de;

	if (ar_state_validate_id(id, err) < 0)
		return -1;
	dfd = openat(rootfd, id,
		     O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dfd < 0) {
		if (errno == ENOENT)
			return 0;
		return ar_error_set(err, errno, "open state of `%s`", id);
	}
	d = fdopendir(dfd);
	if (!d)
		return ar_error_set(err, errno, "read state of `%s`", id);
	dfd = -1; /* owned by d now */
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, AR_STATE_FILE) == 0)
			continue;
		/* The state directory holds plain files and fifos, and the
		 * NOTIFY_SOCKET directory (sd_notify.h), whose content a
		 * container whose root is the runtime's user may have
		 * changed. */
		int r = unlinkat(dirfd(d), de->d_name, 0);

		if (r < 0 && errno == EISDIR)
			r = remove_tree_at(dirfd(d), de->d_name, 0);
		if (r < 0 && errno != ENOENT) {
			int e = errno;
			closedir(d);
			return ar_error_set(err, e, "remove `%s` of `%s`",
					    de->d_name, id);
		}
	}
	ar_crash_point("delete-state-partial");
	if (unlinkat(dirfd(d), AR_STATE_FILE, 0) < 0 && errno != ENOENT) {
		int e = errno;

		closedir(d);
		return ar_error_set(err, e, "remove `%s` of `%s`",
				    AR_STATE_FILE, id);
	}
	closedir(d);
	ar_crash_point("delete-state-removed");
	if (unlinkat(rootfd, id, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return ar_error_set(err, errno, "remove state of `%s`", id);
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ar_state_list_ids(int rootfd, char ***ids_out, struct ar_error *err)
{
	int fd = fcntl(rootfd, F_DUPFD_CLOEXEC, 3);
	_cleanup_strv_ char **ids = NULL;
	size_t n = 0, cap = 16;
	struct dirent *de;
	DIR *d;

	if (fd < 0)
		return ar_error_set(err, errno, "list containers");
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return ar_error_set(err, errno, "list containers");
	}
	rewinddir(d);
	ids = ar_xcalloc(cap, sizeof(char *));
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (n + 2 > cap) {
			cap *= 2;
			ids = ar_xrealloc(ids, cap * sizeof(char *));
		}
		ids[n++] = ar_xstrdup(de->d_name);
		ids[n] = NULL;
	}
	closedir(d);
	qsort(ids, n, sizeof(char *), cmp_str);
	*ids_out = ar_steal_ptr(&ids);
	return 0;
}

char *ar_rfc3339_now(void)
{
	struct timespec ts;
	struct tm tm;
	char buf[64];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
	return ar_xasprintf("%s.%09ldZ", buf, ts.tv_nsec);
}

int ar_write_pid_file(const char *path, pid_t pid, struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(path);
	_cleanup_close_ int dfd = -1;
	char *slash = strrchr(copy, '/');
	const char *dir = ".", *name = copy;
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%d", (int)pid);

	if (slash) {
		*slash = '\0';
		dir = slash == copy ? "/" : copy;
		name = slash + 1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "--pid-file `%s`", path);
	if (ar_write_file_atomic_at(dfd, name, buf, (size_t)len, 0644, err) < 0)
		return ar_error_wrap(err, "--pid-file `%s`", path);
	return 0;
}

void ar_existing_release(struct ar_existing *e)
{
	if (e->st)
		ar_state_free(e->st);
	if (e->dirfd >= 0)
		close(e->dirfd);
	if (e->rootfd >= 0)
		close(e->rootfd);
	e->st = NULL;
	e->rootfd = e->dirfd = -1;
}

/* state.json is missing although its directory was there and its lock
 * is ours: either a `run` that ended is removing the directory (it gave
 * the lock up once the container ran: the file goes first, the directory
 * a moment later), or a create was interrupted before its first state
 * write (the directory stays). Wait up to 100 ms for the first, so that
 * a command racing a removal says "does not exist", as one a moment later
 * would. */
static bool state_dir_goes_away(int rootfd, const char *id)
{
	struct stat st;

	for (int i = 0; i < 20; i++) {
		if (fstatat(rootfd, id, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
		    errno == ENOENT)
			return true;
		usleep(5000);
	}
	return false;
}

int ar_state_open_existing(const char *root, const char *id, bool exclusive,
			   struct ar_existing *e, struct ar_error *err)
{
	e->rootfd = e->dirfd = -1;
	e->st = NULL;
	if (ar_state_validate_id(id, err) < 0)
		return -1;
	e->rootfd = ar_state_root_open(root, false, err);
	if (e->rootfd < 0) {
		if (err->code == ENOENT)
			ar_error_set_plain(err, ENOENT,
					   "container `%s` does not exist", id);
		return -1;
	}
	e->dirfd = ar_state_dir_open(e->rootfd, id, err);
	if (e->dirfd < 0)
		return -1;
	if (ar_state_lock(e->dirfd, exclusive, err) < 0)
		return -1;
	if (ar_state_read(e->dirfd, id, &e->st, err) < 0) {
		if (err->code == ENOENT && state_dir_goes_away(e->rootfd, id))
			return ar_error_set_plain(
				err, ENOENT, "container `%s` does not exist",
				id);
		return -1;
	}
	e->status = ar_state_status(e->dirfd, e->st);
	return 0;
}
