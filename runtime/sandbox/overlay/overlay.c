/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: reading the upper layer of an overlayfs
 * (mounted with userxattr in the sandbox's user namespace) and applying it
 * to the real workspace. See overlay.h.
 *
 * Upper layer format (Documentation/filesystems/overlayfs.rst): a
 * whiteout (deleted entry) is a character device 0/0; a directory that
 * replaced a lower one has the xattr user.overlay.opaque = "y"; anything
 * else is a new or copied-up entry. Copy-up also happens for a file that
 * was only opened for writing, so regular files and symlinks are compared
 * with the lower layer before being reported as modified.
 *
 * Both trees are read through file descriptors: every path component is
 * opened with O_NOFOLLOW relative to its parent (what openat2's
 * RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS does, on every kernel), "." and
 * ".." are refused, a leaf is looked at with fstatat(AT_SYMLINK_NOFOLLOW)
 * before anything opens it and only regular files are opened (O_NOFOLLOW
 * | O_NONBLOCK, the type checked again with fstat on the open file). A
 * process that swaps a directory of the upper layer for a symlink while
 * a commit runs makes that entry fail; it cannot make the commit read or
 * write anything outside the two trees.
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

/* ---- the sandbox directory ---- */

char *ar_overlay_base_dir(void)
{
	const char *x = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (x && x[0] == '/')
		return ar_xasprintf("%s/agentrun/sandboxes", x);
	return ar_xasprintf("%s/.local/share/agentrun/sandboxes",
			    home && *home ? home : "/tmp");
}

static bool valid_name(const char *n)
{
	if (!*n || strlen(n) > 64 || n[0] == '.')
		return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' ||
		      *n == '.'))
			return false;
	return true;
}

static void fill(struct ar_overlay *ov, const char *name, const char *dir)
{
	ov->name = ar_xstrdup(name);
	ov->dir = ar_xstrdup(dir);
	ov->upper = ar_xasprintf("%s/upper", dir);
	ov->work = ar_xasprintf("%s/work", dir);
}

/* The lock file's pid, 0 when unreadable. */
static pid_t lock_pid(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	long long v;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ar_parse_i64(buf, &v) == 0 && v > 0 && v <= INT32_MAX ?
		       (pid_t)v :
		       0;
}

static int open_lock(const struct ar_overlay *ov)
{
	_cleanup_free_ char *p = ar_xasprintf("%s/lock", ov->dir);

	return open(p, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
}

int ar_overlay_lock(struct ar_overlay *ov, const char *what,
		    struct ar_error *err)
{
	_cleanup_close_ int fd = -1;

	if (ov->lock_fd >= 0)
		return 0;
	fd = open_lock(ov);
	if (fd < 0)
		return ar_error_set(err, errno, "sandbox `%s`: open %s/lock",
				    ov->name, ov->dir);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		pid_t pid;

		if (errno != EWOULDBLOCK)
			return ar_error_set(err, errno,
					    "sandbox `%s`: lock %s/lock",
					    ov->name, ov->dir);
		pid = lock_pid(fd);
		return ar_error_set_plain(
			err, EBUSY,
			"sandbox `%s` is running (pid %d): %s it after it exits",
			ov->name, (int)pid, what);
	}
	ov->lock_fd = ar_steal_fd(&fd);
	return 0;
}

static void write_pid(int fd)
{
	char pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, pid, strlen(pid), 0);
}

void ar_overlay_lock_owner(const struct ar_overlay *ov)
{
	if (ov->lock_fd >= 0)
		write_pid(ov->lock_fd);
}

pid_t ar_overlay_running(const struct ar_overlay *ov)
{
	_cleanup_close_ int fd = -1;
	pid_t pid;

	if (ov->lock_fd >= 0)
		return 0;
	fd = open_lock(ov);
	if (fd < 0 || flock(fd, LOCK_SH | LOCK_NB) == 0)
		return 0;
	pid = lock_pid(fd);
	return pid ? pid : 1;
}

/* mkdir NAME (a fresh default name when NULL) in base. */
static int make_dir(const char *base, const char *name, char **out_name,
		    char **out_dir, struct ar_error *err)
{
	char def[64];
	time_t now = time(NULL);
	struct tm tm;

	if (name) {
		*out_dir = ar_xasprintf("%s/%s", base, name);
		if (mkdir(*out_dir, 0700) < 0)
			return ar_error_set(
				err, errno, "--overlay: sandbox `%s` (%s)",
				name,
				errno == EEXIST ?
					"exists: commit or discard it, or pick another --name" :
					*out_dir);
		*out_name = ar_xstrdup(name);
		return 0;
	}
	localtime_r(&now, &tm);
	strftime(def, sizeof(def), "sandbox-%Y%m%d-%H%M%S", &tm);
	for (int i = 1; i < 1000; i++) {
		char *n = i == 1 ? ar_xstrdup(def) :
				   ar_xasprintf("%s-%d", def, i);

		*out_dir = ar_xasprintf("%s/%s", base, n);
		if (mkdir(*out_dir, 0700) == 0) {
			*out_name = n;
			return 0;
		}
		free(n);
		if (errno != EEXIST)
			return ar_error_set(err, errno, "--overlay: create %s",
					    *out_dir);
		free(*out_dir);
		*out_dir = NULL;
	}
	return ar_error_set_plain(
		err, EEXIST, "--overlay: no free name %s-N in %s", def, base);
}

int ar_overlay_create(const char *name, const char *workspace,
		      struct ar_overlay *out, struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_free_ char *dir = NULL, *meta = NULL, *nm = NULL;
	_cleanup_close_ int dfd = -1, sfd = -1;
	struct stat st;
	char stamp[64];

	memset(out, 0, sizeof(*out));
	out->lock_fd = -1;
	if (name && !valid_name(name))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox name `%s`: use letters, digits, '-', '_' and '.' (at most 64)",
			name);
	if (ar_mkdir_p(base, 0700) < 0)
		return ar_error_set(err, errno, "create `%s`", base);
	if (ar_path_under(base, workspace))
		return ar_error_set_plain(
			err, EINVAL,
			"--overlay: the sandbox directory `%s` would be inside the workspace `%s`; set XDG_DATA_HOME elsewhere",
			base, workspace);
	if (make_dir(base, name, &nm, &dir, err) < 0)
		return -1;
	fill(out, nm, dir);
	out->workspace = ar_xstrdup(workspace);
	if (ar_overlay_lock(out, "start", err) < 0)
		return ar_error_wrap(err, "sandbox `%s`", nm);
	write_pid(out->lock_fd);
	if (mkdir(out->upper, 0755) < 0 || mkdir(out->work, 0700) < 0)
		return ar_error_set(err, errno, "create `%s/{upper,work}`",
				    dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	meta = ar_xasprintf("%s\n", workspace);
	if (dfd < 0 || ar_write_file_atomic_at(dfd, "workspace", meta,
					       strlen(meta), 0600, err) < 0)
		return ar_error_wrap(err, "sandbox `%s`", nm);
	/* The start token is a ctime, taken from the clock the kernel
	 * stamps ctimes with. */
	sfd = openat(dfd, "started",
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (sfd < 0 || fstat(sfd, &st) < 0)
		return ar_error_set(err, errno, "sandbox `%s`: write started",
				    nm);
	snprintf(stamp, sizeof(stamp), "%lld.%09ld\n",
		 (long long)st.st_ctim.tv_sec, (long)st.st_ctim.tv_nsec);
	if (ar_write_all(sfd, stamp, strlen(stamp)) < 0 || fsync(sfd) < 0)
		return ar_error_set(err, errno, "sandbox `%s`: write started",
				    nm);
	out->started = st.st_ctim;
	out->has_started = true;
	return 0;
}

static void read_started(struct ar_overlay *ov, int dfd)
{
	_cleanup_free_ char *s = NULL;
	struct ar_error ignored = AR_ERROR_INIT;
	size_t len;
	long long sec, nsec;
	char *dot;

	if (ar_read_file_at(dfd, "started", 64, &s, &len, &ignored) < 0)
		return;
	s[strcspn(s, "\n")] = '\0';
	dot = strchr(s, '.');
	if (!dot)
		return;
	*dot = '\0';
	if (ar_parse_i64(s, &sec) < 0 || ar_parse_i64(dot + 1, &nsec) < 0 ||
	    nsec >= 1000000000)
		return;
	ov->started.tv_sec = (time_t)sec;
	ov->started.tv_nsec = (long)nsec;
	ov->has_started = true;
}

int ar_overlay_open(const char *name, struct ar_overlay *out,
		    struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_free_ char *dir = NULL, *meta = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len;

	memset(out, 0, sizeof(*out));
	out->lock_fd = -1;
	if (!valid_name(name))
		return ar_error_set_plain(err, EINVAL, "sandbox name `%s`",
					  name);
	dir = ar_xasprintf("%s/%s", base, name);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "sandbox `%s` (%s)", name, dir);
	if (ar_read_file_at(dfd, "workspace", PATH_MAX + 1, &meta, &len, err) <
	    0)
		return ar_error_wrap(err, "sandbox `%s`", name);
	meta[strcspn(meta, "\n")] = '\0';
	if (meta[0] != '/')
		return ar_error_set_plain(
			err, EINVAL, "sandbox `%s`: bad workspace file", name);
	fill(out, name, dir);
	out->workspace = ar_steal_ptr(&meta);
	read_started(out, dfd);
	return 0;
}

void ar_overlay_release(struct ar_overlay *ov)
{
	free(ov->name);
	free(ov->dir);
	free(ov->workspace);
	free(ov->upper);
	free(ov->work);
	if (ov->lock_fd >= 0)
		close(ov->lock_fd);
	memset(ov, 0, sizeof(*ov));
	ov->lock_fd = -1;
}

/* ---- discard, list ---- */

int ar_overlay_discard(struct ar_overlay *ov, struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_close_ int bfd = -1;

	if (ar_overlay_lock(ov, "discard", err) < 0)
		return -1;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0 || ov_remove_tree_at(bfd, ov->name) < 0)
		return ar_error_set(err, errno, "discard `%s`", ov->dir);
	return 0;
}

static void age(char *buf, size_t n, const struct ar_overlay *ov)
{
	long long s;

	if (!ov->has_started) {
		snprintf(buf, n, "?");
		return;
	}
	s = (long long)(time(NULL) - ov->started.tv_sec);
	if (s < 120)
		snprintf(buf, n, "%llds", s < 0 ? 0 : s);
	else if (s < 7200)
		snprintf(buf, n, "%lldm", s / 60);
	else if (s < 172800)
		snprintf(buf, n, "%lldh", s / 3600);
	else
		snprintf(buf, n, "%lldd", s / 86400);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ar_overlay_list(FILE *out, struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_strv_ char **names = NULL;
	size_t n = 0, cap = 0;
	DIR *d = opendir(base);
	struct dirent *de;

	if (!d && errno != ENOENT)
		return ar_error_set(err, errno, "read `%s`", base);
	while (d && (de = readdir(d))) {
		if (!valid_name(de->d_name))
			continue;
		if (n + 2 > cap) {
			cap = cap ? cap * 2 : 16;
			names = ar_xrealloc(names, cap * sizeof(char *));
		}
		names[n++] = ar_xstrdup(de->d_name);
		names[n] = NULL;
	}
	if (d)
		closedir(d);
	if (n)
		qsort(names, n, sizeof(char *), cmp_str);
	fprintf(out, "%-28s %-8s %-7s %-16s %s\n", "NAME", "AGE", "CHANGES",
		"STATE", "WORKSPACE");
	for (size_t i = 0; i < n; i++) {
		struct ar_overlay ov;
		struct ar_changes c;
		struct ar_error e = AR_ERROR_INIT;
		char a[32], cnt[32], st[32];
		pid_t pid;

		if (ar_overlay_open(names[i], &ov, &e) < 0)
			continue;
		age(a, sizeof(a), &ov);
		if (ar_overlay_changes(&ov, &c, &e) == 0) {
			size_t k = 0;

			ar_overlay_pair_renames(&ov, &c);
			for (size_t j = 0; j < c.n; j++)
				k += !c.v[j].dir && !c.v[j].renamed;
			snprintf(cnt, sizeof(cnt), "%zu", k);
			ar_changes_free(&c);
		} else {
			snprintf(cnt, sizeof(cnt), "?");
		}
		pid = ar_overlay_running(&ov);
		if (pid)
			snprintf(st, sizeof(st), "running (%d)", (int)pid);
		else
			snprintf(st, sizeof(st), "stopped");
		{
			_cleanup_free_ char *qw = ar_quote_path(ov.workspace);

			fprintf(out, "%-28s %-8s %-7s %-16s %s\n", ov.name, a,
				cnt, st, qw);
		}
		ar_overlay_release(&ov);
	}
	return 0;
}
