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

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#define FILE_FLAGS (O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)

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

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

static void fill(struct ar_overlay *ov, const char *name, const char *dir)
{
	ov->name = ar_xstrdup(name);
	ov->dir = ar_xstrdup(dir);
	ov->upper = ar_xasprintf("%s/upper", dir);
	ov->work = ar_xasprintf("%s/work", dir);
}

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
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
	if (under(base, workspace))
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

/* ---- file descriptors ---- */

/* The directory `rel` ("" for root itself) under root, every component
 * opened without following symlinks. */
static int open_dir_beneath(int root, const char *rel)
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

/* The parent directory of `rel` under the workspace (*leaf points into
 * rel). With up >= 0, missing components that are directories in the
 * upper layer are created (their mode without setuid/setgid). */
static int open_parent(int wsfd, int up, const char *rel, const char **leaf)
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

/* A regular file at dirfd/name, opened without following a symlink and
 * without blocking on a fifo; -1 with ESTALE if it is not (or no longer)
 * a regular file. */
static int open_regular(int dirfd, const char *name, struct stat *st)
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

/* A DIR stream on a duplicate of fd (fd stays open). */
static DIR *dir_of(int fd)
{
	int d = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	DIR *r = d >= 0 ? fdopendir(d) : NULL;

	if (!r && d >= 0)
		close(d);
	return r;
}

/* Remove dirfd/name and, for a directory, everything below it, without
 * following symlinks. */
static int remove_tree_at(int dirfd, const char *name)
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
	d = dir_of(fd);
	if (!d)
		return -1;
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		r = remove_tree_at(fd, de->d_name);
	}
	closedir(d);
	if (r < 0)
		return -1;
	return unlinkat(dirfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT ? -1 :
									    0;
}

/* The directory part of rel ("" for none), malloc'd. */
static char *parent_of(const char *rel)
{
	const char *slash = strrchr(rel, '/');

	return slash ? ar_xasprintf("%.*s", (int)(slash - rel), rel) :
		       ar_xstrdup("");
}

/* ---- reading the upper layer ---- */

struct walk {
	struct ar_changes *c;
	size_t cap;
	const struct ar_overlay *ov;
};

static bool special_mode(mode_t m)
{
	return m && !S_ISREG(m) && !S_ISLNK(m) && !S_ISDIR(m);
}

static size_t add(struct walk *w, enum ar_change_kind k, const char *rel,
		  bool dir, mode_t up, mode_t lo, bool conflict)
{
	if (w->c->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 32;
		w->c->v = ar_xrealloc(w->c->v, w->cap * sizeof(*w->c->v));
	}
	w->c->v[w->c->n] = (struct ar_change){
		.kind = k,
		.path = ar_xstrdup(rel),
		.dir = dir,
		.conflict = conflict,
		.special = k != AR_CHANGE_DELETED && special_mode(up),
		.up_mode = up,
		.lo_mode = lo,
	};
	return w->c->n++;
}

/* The host changed this entry after the sandbox started (a ctime is
 * updated by every write, chmod, rename and link count change). */
static bool host_changed(const struct walk *w, const struct stat *sl)
{
	return w->ov->has_started && !S_ISDIR(sl->st_mode) &&
	       ts_after(&sl->st_ctim, &w->ov->started);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static char *join(const char *rel, const char *name)
{
	return rel[0] ? ar_xasprintf("%s/%s", rel, name) : ar_xstrdup(name);
}

/* lofd/name (at rel) is gone: list it, and everything below it. Returns
 * whether any of it conflicts. */
static bool add_deleted(struct walk *w, int lofd, const char *name,
			const char *rel, const struct stat *sl)
{
	_cleanup_close_ int fd = -1;
	bool conflict = false;
	size_t i;
	DIR *d;
	struct dirent *de;

	if (!S_ISDIR(sl->st_mode)) {
		conflict = host_changed(w, sl);
		i = add(w, AR_CHANGE_DELETED, rel, false, 0, sl->st_mode,
			conflict);
		w->c->v[i].size = sl->st_size;
		return conflict;
	}
	i = add(w, AR_CHANGE_DELETED, rel, true, 0, sl->st_mode, false);
	fd = openat(lofd, name, DIR_FLAGS);
	d = fd >= 0 ? dir_of(fd) : NULL;
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *r = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = join(rel, de->d_name);
		conflict |= add_deleted(w, fd, de->d_name, r, &st);
	}
	if (d)
		closedir(d);
	w->c->v[i].conflict = conflict;
	return conflict;
}

static bool same_content(int a, int b)
{
	char ba[65536], bb[65536];

	for (;;) {
		ssize_t na = ar_read_all(a, ba, sizeof(ba));
		ssize_t nb = ar_read_all(b, bb, sizeof(bb));

		if (na != nb || na < 0)
			return false;
		if (na == 0)
			return true;
		if (memcmp(ba, bb, (size_t)na) != 0)
			return false;
	}
}

static bool same_entry(int upfd, int lofd, const char *name,
		       const struct stat *su, const struct stat *sl)
{
	_cleanup_close_ int fa = -1, fb = -1;
	struct stat a, b;

	/* setuid/setgid bits are never committed: not a change */
	if ((su->st_mode ^ sl->st_mode) & (S_IFMT | 01777))
		return false;
	if (special_mode(su->st_mode))
		return su->st_rdev == sl->st_rdev;
	if (su->st_size != sl->st_size)
		return false;
	if (S_ISLNK(su->st_mode)) {
		char ba[PATH_MAX], bb[PATH_MAX];
		ssize_t na = readlinkat(upfd, name, ba, sizeof(ba));
		ssize_t nb = readlinkat(lofd, name, bb, sizeof(bb));

		return na == nb && na >= 0 && memcmp(ba, bb, (size_t)na) == 0;
	}
	fa = open_regular(upfd, name, &a);
	fb = open_regular(lofd, name, &b);
	if (fa < 0 || fb < 0)
		return false;
	return same_content(fa, fb);
}

static int walk_dir(struct walk *w, int upfd, int lofd, const char *rel);

static int walk_entry(struct walk *w, int upfd, int lofd, const char *name,
		      const char *rel)
{
	struct stat su, sl;
	bool lower = lofd >= 0 &&
		     fstatat(lofd, name, &sl, AT_SYMLINK_NOFOLLOW) == 0;
	_cleanup_close_ int sub = -1, sublo = -1;
	char v[4];

	if (fstatat(upfd, name, &su, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (is_whiteout(&su)) {
		if (lower)
			add_deleted(w, lofd, name, rel, &sl);
		return 0;
	}
	if (!S_ISDIR(su.st_mode)) {
		if (!lower) {
			size_t i = add(w, AR_CHANGE_ADDED, rel, false,
				       su.st_mode, 0, false);

			w->c->v[i].size = su.st_size;
		} else if (S_ISDIR(sl.st_mode)) {
			bool c = add_deleted(w, lofd, name, rel, &sl);

			add(w, AR_CHANGE_ADDED, rel, false, su.st_mode, 0, c);
		} else if (!same_entry(upfd, lofd, name, &su, &sl)) {
			add(w, AR_CHANGE_MODIFIED, rel, false, su.st_mode,
			    sl.st_mode, host_changed(w, &sl));
		}
		return 0;
	}
	sub = openat(upfd, name, DIR_FLAGS);
	if (sub < 0)
		return -1; /* it was a directory a moment ago */
	if (!lower || !S_ISDIR(sl.st_mode)) {
		bool c = lower && add_deleted(w, lofd, name, rel, &sl);

		add(w, AR_CHANGE_ADDED, rel, true, su.st_mode, 0, c);
		return walk_dir(w, sub, -1, rel);
	}
	sublo = openat(lofd, name, DIR_FLAGS);
	if (sublo >= 0 &&
	    fgetxattr(sub, "user.overlay.opaque", v, sizeof(v)) == 1 &&
	    v[0] == 'y') {
		/* the lower directory's entries are gone, except those the
		 * upper one has again */
		DIR *d = dir_of(sublo);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			_cleanup_free_ char *r = NULL;
			struct stat st, sl2;

			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, "..") ||
			    fstatat(sub, de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) == 0 ||
			    fstatat(sublo, de->d_name, &sl2,
				    AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			r = join(rel, de->d_name);
			add_deleted(w, sublo, de->d_name, r, &sl2);
		}
		if (d)
			closedir(d);
	}
	if ((su.st_mode ^ sl.st_mode) & 01777)
		add(w, AR_CHANGE_MODIFIED, rel, true, su.st_mode, sl.st_mode,
		    false);
	return walk_dir(w, sub, sublo, rel);
}

static int walk_dir(struct walk *w, int upfd, int lofd, const char *rel)
{
	DIR *d = dir_of(upfd);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -1;
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *child = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = join(rel, de->d_name);
		r = walk_entry(w, upfd, lofd, de->d_name, child);
	}
	closedir(d);
	return r;
}

static int cmp_change(const void *a, const void *b)
{
	const struct ar_change *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	/* a deletion before the addition that replaces it */
	return (x->kind != AR_CHANGE_DELETED) - (y->kind != AR_CHANGE_DELETED);
}

int ar_overlay_changes(const struct ar_overlay *ov, struct ar_changes *out,
		       struct ar_error *err)
{
	struct walk w = { .c = out, .ov = ov };
	_cleanup_close_ int up = -1, lo = -1;

	memset(out, 0, sizeof(*out));
	up = open(ov->upper, DIR_FLAGS);
	if (up < 0)
		return ar_error_set(err, errno, "read `%s`", ov->upper);
	lo = open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lo < 0)
		return ar_error_set(err, errno, "workspace `%s`",
				    ov->workspace);
	if (walk_dir(&w, up, lo, "") < 0) {
		ar_changes_free(out);
		return ar_error_set(
			err, errno,
			"read `%s` (an entry changed while it was read)",
			ov->upper);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	return 0;
}

void ar_changes_free(struct ar_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].from);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Open rel under root as a regular file (never following a symlink). */
static int open_rel(int root, const char *rel)
{
	_cleanup_free_ char *dir = parent_of(rel);
	_cleanup_close_ int pfd = open_dir_beneath(root, dir);
	const char *leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct stat st;

	return pfd < 0 ? -1 : open_regular(pfd, leaf, &st);
}

void ar_overlay_pair_renames(const struct ar_overlay *ov, struct ar_changes *c)
{
	_cleanup_close_ int up = open(ov->upper, DIR_FLAGS);
	_cleanup_close_ int lo =
		open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (up < 0 || lo < 0)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct ar_change *a = &c->v[i];

		if (a->kind != AR_CHANGE_ADDED || a->dir || a->special ||
		    !S_ISREG(a->up_mode) || a->size == 0)
			continue;
		for (size_t j = 0; j < c->n; j++) {
			struct ar_change *d = &c->v[j];
			_cleanup_close_ int fa = -1, fb = -1;

			if (d->kind != AR_CHANGE_DELETED || d->dir ||
			    d->renamed || !S_ISREG(d->lo_mode) ||
			    d->size != a->size)
				continue;
			fa = open_rel(up, a->path);
			fb = open_rel(lo, d->path);
			if (fa < 0 || fb < 0 || !same_content(fa, fb))
				continue;
			a->kind = AR_CHANGE_RENAMED;
			a->from = ar_xstrdup(d->path);
			a->lo_mode = d->lo_mode;
			a->conflict |= d->conflict;
			a->pair = j;
			d->renamed = true;
			d->pair = i;
			break;
		}
	}
}

/* ---- names ---- */

static bool needs_quote(const char *p)
{
	for (const unsigned char *s = (const unsigned char *)p; *s; s++)
		if (*s < 0x20 || *s >= 0x7f || *s == '"' || *s == '\\')
			return true;
	return false;
}

static char *quote_prefixed(const char *prefix, const char *path)
{
	_cleanup_free_ char *raw = ar_xasprintf("%s%s", prefix, path);
	char *out, *o;

	if (!needs_quote(raw))
		return ar_steal_ptr(&raw);
	out = ar_xmalloc(strlen(raw) * 4 + 3);
	o = out;
	*o++ = '"';
	for (const unsigned char *s = (const unsigned char *)raw; *s; s++) {
		static const char esc[] = "\a\b\t\n\v\f\r";
		static const char let[] = "abtnvfr";
		const char *e = *s ? strchr(esc, *s) : NULL;

		if (*s == '"' || *s == '\\') {
			*o++ = '\\';
			*o++ = (char)*s;
		} else if (e) {
			*o++ = '\\';
			*o++ = let[e - esc];
		} else if (*s < 0x20 || *s >= 0x7f) {
			o += sprintf(o, "\\%03o", *s);
		} else {
			*o++ = (char)*s;
		}
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

char *ar_quote_path(const char *path)
{
	return quote_prefixed("", path);
}

/* ---- path selection ---- */

static char *relative_arg(const struct ar_overlay *ov, const char *p)
{
	size_t n = strlen(ov->workspace);

	if (p[0] == '/') {
		if (!under(p, ov->workspace))
			return NULL;
		p += n;
		while (*p == '/')
			p++;
	}
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	_cleanup_free_ char *r = ar_xstrdup(strcmp(p, ".") ? p : "");
	size_t l = strlen(r);

	while (l > 0 && r[l - 1] == '/')
		r[--l] = '\0';
	return ar_steal_ptr(&r);
}

static bool matches(const char *path, const char *rel)
{
	return !rel[0] || under(path, rel);
}

/* rels: the PATHS relative to the workspace; every one must select at
 * least one change. sel[i]: change i is selected. */
static int select_changes(const struct ar_overlay *ov, char *const *paths,
			  size_t n, const struct ar_changes *c, bool **sel,
			  struct ar_error *err)
{
	_cleanup_free_ bool *s = ar_xcalloc(c->n + 1, sizeof(bool));

	for (size_t i = 0; i < c->n && n == 0; i++)
		s[i] = true;
	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *r = relative_arg(ov, paths[k]);
		bool any = false;

		if (!r)
			return ar_error_set_plain(
				err, EINVAL,
				"`%s` is not inside the workspace `%s`",
				paths[k], ov->workspace);
		for (size_t i = 0; i < c->n; i++)
			if (matches(c->v[i].path, r))
				s[i] = any = true;
		if (!any) {
			_cleanup_free_ char *q = ar_quote_path(paths[k]);

			return ar_error_set_plain(
				err, ENOENT,
				"%s: no change of sandbox `%s` under this path",
				q, ov->name);
		}
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == AR_CHANGE_RENAMED &&
		    (s[i] || s[c->v[i].pair]))
			s[i] = s[c->v[i].pair] = true;
	*sel = ar_steal_ptr(&s);
	return 0;
}

/* ---- changes ---- */

static const char *kind_name(mode_t m)
{
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	return "special file";
}

/* git's mode numbers: 100644, 100755, 120000, 040000. */
static unsigned git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return 0120000;
	if (S_ISDIR(m))
		return 040000;
	return (m & 0111) ? 0100755 : 0100644;
}

static void print_change(FILE *out, const struct ar_change *ch)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);
	mode_t up = ch->up_mode, lo = ch->lo_mode;

	if (ch->kind == AR_CHANGE_RENAMED) {
		_cleanup_free_ char *f = ar_quote_path(ch->from);

		fprintf(out, "R%c %s -> %s", ch->conflict ? 'U' : ' ', f, q);
	} else {
		fprintf(out, "%c%c %s%s", (char)ch->kind,
			ch->conflict ? 'U' : ' ', q, ch->dir ? "/" : "");
	}
	if (ch->special)
		fprintf(out, " (%s: not committed)", kind_name(up));
	else if (ch->kind == AR_CHANGE_MODIFIED && ((up ^ lo) & S_IFMT))
		fprintf(out, " (type %06o -> %06o)", git_mode(lo),
			git_mode(up));
	else if ((ch->kind == AR_CHANGE_MODIFIED ||
		  ch->kind == AR_CHANGE_RENAMED) &&
		 ((up ^ lo) & 01777))
		fprintf(out, " (mode %04o -> %04o)", lo & 01777, up & 01777);
	if (ch->kind != AR_CHANGE_DELETED && !ch->special &&
	    (up & (S_ISUID | S_ISGID)))
		fputs(" (setuid/setgid: dropped on commit)", out);
	if (ch->conflict && !ch->dir)
		fputs(" (conflict: changed on the host since the sandbox started)",
		      out);
	fputc('\n', out);
}

int ar_overlay_print_changes(const struct ar_overlay *ov, char *const *paths,
			     size_t n_paths, FILE *out, struct ar_error *err)
{
	struct ar_changes c;
	_cleanup_free_ bool *sel = NULL;

	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	if (select_changes(ov, paths, n_paths, &c, &sel, err) < 0) {
		ar_changes_free(&c);
		return -1;
	}
	for (size_t i = 0; i < c.n; i++)
		if (sel[i] && !c.v[i].renamed)
			print_change(out, &c.v[i]);
	ar_changes_free(&c);
	return 0;
}

/* ---- diff ---- */

struct diffstat {
	char *path;
	size_t add, del;
	bool binary;
};

/* diff(1) -u of two open files (-1: empty), its output in *out. */
static int run_diff(int a, int b, const char *la, const char *lb, char **out,
		    size_t *len, struct ar_error *err)
{
	_cleanup_free_ char *pa = a >= 0 ? ar_xasprintf("/proc/self/fd/%d", a) :
					   ar_xstrdup("/dev/null");
	_cleanup_free_ char *pb = b >= 0 ? ar_xasprintf("/proc/self/fd/%d", b) :
					   ar_xstrdup("/dev/null");
	char *argv[] = { "diff",     "-u", "--label", (char *)la, "--label",
			 (char *)lb, pa,   pb,	      NULL };
	extern char **environ;
	posix_spawn_file_actions_t fa;
	int p[2], st, r;
	pid_t pid;
	size_t cap = 0;
	char buf[65536];
	ssize_t n;

	*out = NULL;
	*len = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return ar_error_set(err, errno, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	/* the child reads a and b through /proc/self/fd: keep them open */
	if (a >= 0)
		posix_spawn_file_actions_adddup2(&fa, a, a);
	if (b >= 0)
		posix_spawn_file_actions_adddup2(&fa, b, b);
	r = posix_spawnp(&pid, "diff", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		return ar_error_set(err, r, "run diff(1)");
	}
	while ((n = read(p[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (*len + (size_t)n + 1 > cap) {
			cap = (*len + (size_t)n + 1) * 2;
			*out = ar_xrealloc(*out, cap);
		}
		memcpy(*out + *len, buf, (size_t)n);
		*len += (size_t)n;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return ar_error_set(err, errno, "wait for diff");
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return ar_error_set_plain(err, EIO, "diff(1) failed on `%s`",
					  lb);
	if (*out)
		(*out)[*len] = '\0';
	return 0;
}

/* The body of a symlink's diff: its target, no final newline. */
static int link_body(int dirfd, const char *name, char **out)
{
	char t[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, t, sizeof(t) - 1);

	if (n < 0)
		return -1;
	t[n] = '\0';
	*out = ar_xstrdup(t);
	return 0;
}

/* One side of a file diff: an open regular file or a symlink target. */
struct side {
	mode_t mode; /* 0: absent */
	int fd;
	char *link;
};

static void side_release(struct side *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->link);
	s->fd = -1;
	s->link = NULL;
}

static int side_open(int root, const char *rel, mode_t mode, struct side *s)
{
	_cleanup_close_ int pfd = -1;
	const char *leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	_cleanup_free_ char *dir = parent_of(rel);
	struct stat st;

	s->mode = mode;
	s->fd = -1;
	s->link = NULL;
	if (!mode)
		return 0;
	pfd = open_dir_beneath(root, dir);
	if (pfd < 0)
		return -1;
	if (S_ISLNK(mode))
		return link_body(pfd, leaf, &s->link);
	s->fd = open_regular(pfd, leaf, &st);
	if (s->fd >= 0)
		s->mode = st.st_mode;
	return s->fd < 0 ? -1 : 0;
}

static void count_lines(const char *body, struct diffstat *ds)
{
	const char *l = body;
	int header = 2;

	if (!body)
		return;
	if (strncmp(body, "Binary files ", 13) == 0) {
		ds->binary = true;
		return;
	}
	while (*l) {
		const char *nl = strchr(l, '\n');

		if (header > 0 &&
		    (strncmp(l, "--- ", 4) == 0 || strncmp(l, "+++ ", 4) == 0))
			header--;
		else if (l[0] == '+')
			ds->add++;
		else if (l[0] == '-')
			ds->del++;
		if (!nl)
			break;
		l = nl + 1;
	}
}

static char *link_diff(const char *la, const char *lb, const char *a,
		       const char *b)
{
	return ar_xasprintf("--- %s\n+++ %s\n@@ -%s +%s @@\n%s%s%s%s%s%s", la,
			    lb, a ? "1" : "0,0", b ? "1" : "0,0", a ? "-" : "",
			    a ? a : "",
			    a ? "\n\\ No newline at end of file\n" : "",
			    b ? "+" : "", b ? b : "",
			    b ? "\n\\ No newline at end of file\n" : "");
}

/* The diff of one path between two sides (same type or one absent). */
static int diff_sides(const char *path, struct side *a, struct side *b,
		      FILE *out, struct diffstat *ds, struct ar_error *err)
{
	_cleanup_free_ char *qa = quote_prefixed("a/", path);
	_cleanup_free_ char *qb = quote_prefixed("b/", path);
	_cleanup_free_ char *body = NULL;
	const char *la = a->mode ? qa : "/dev/null";
	const char *lb = b->mode ? qb : "/dev/null";
	size_t len = 0;

	if (out) {
		fprintf(out, "diff --git %s %s\n", qa, qb);
		if (!a->mode)
			fprintf(out, "new file mode %06o\n", git_mode(b->mode));
		else if (!b->mode)
			fprintf(out, "deleted file mode %06o\n",
				git_mode(a->mode));
		else if (git_mode(a->mode) != git_mode(b->mode))
			fprintf(out, "old mode %06o\nnew mode %06o\n",
				git_mode(a->mode), git_mode(b->mode));
	}
	if (S_ISLNK(a->mode) || S_ISLNK(b->mode)) {
		if (!a->link || !b->link || strcmp(a->link, b->link))
			body = link_diff(la, lb, a->link, b->link);
	} else if (run_diff(a->fd, b->fd, la, lb, &body, &len, err) < 0) {
		return -1;
	}
	if (body && strncmp(body, "Binary files ", 13) == 0) {
		free(body);
		body = ar_xasprintf("Binary files %s and %s differ\n", la, lb);
	}
	count_lines(body, ds);
	if (out && body)
		fputs(body, out);
	return 0;
}

/* An exact rename, as git writes it (the content is the same). */
static int diff_rename(const struct ar_change *ch, FILE *out)
{
	_cleanup_free_ char *qa = quote_prefixed("a/", ch->from);
	_cleanup_free_ char *qb = quote_prefixed("b/", ch->path);
	_cleanup_free_ char *f = ar_quote_path(ch->from);
	_cleanup_free_ char *t = ar_quote_path(ch->path);

	if (!out)
		return 0;
	fprintf(out, "diff --git %s %s\n", qa, qb);
	if (git_mode(ch->lo_mode) != git_mode(ch->up_mode))
		fprintf(out, "old mode %06o\nnew mode %06o\n",
			git_mode(ch->lo_mode), git_mode(ch->up_mode));
	fprintf(out, "similarity index 100%%\nrename from %s\nrename to %s\n",
		f, t);
	return 0;
}

static int diff_change(int up, int lo, const struct ar_change *ch, FILE *out,
		       struct diffstat *ds, struct ar_error *err)
{
	struct side a = { 0, -1, NULL }, b = { 0, -1, NULL };
	mode_t am = ch->kind == AR_CHANGE_ADDED ? 0 : ch->lo_mode;
	mode_t bm = ch->kind == AR_CHANGE_DELETED ? 0 : ch->up_mode;
	int r = 0;

	if (ch->dir || ch->special || ch->renamed)
		return 0;
	if (ch->kind == AR_CHANGE_RENAMED)
		return diff_rename(ch, out);
	if (side_open(lo, ch->path, am, &a) < 0 ||
	    side_open(up, ch->path, bm, &b) < 0) {
		r = ar_error_set(err, errno, "diff: read `%s`", ch->path);
	} else if (am && bm && ((am ^ bm) & S_IFMT)) {
		/* a type change is a deletion and an addition, as git has it */
		struct side none = { 0, -1, NULL };

		r = diff_sides(ch->path, &a, &none, out, ds, err);
		if (r == 0)
			r = diff_sides(ch->path, &none, &b, out, ds, err);
	} else {
		r = diff_sides(ch->path, &a, &b, out, ds, err);
	}
	side_release(&a);
	side_release(&b);
	return r;
}

static void print_stat(FILE *out, struct diffstat *v, size_t n)
{
	size_t width = 0, most = 0, adds = 0, dels = 0, files = 0;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i].path);

		width = l > width ? l : width;
		most = v[i].add + v[i].del > most ? v[i].add + v[i].del : most;
	}
	for (size_t i = 0; i < n; i++) {
		size_t a = v[i].add, d = v[i].del;

		files++;
		adds += a;
		dels += d;
		if (v[i].binary) {
			fprintf(out, " %-*s | Bin\n", (int)width, v[i].path);
			continue;
		}
		if (most > 50) { /* scale the bar as git does */
			a = a ? (a * 50 + most - 1) / most : 0;
			d = d ? (d * 50 + most - 1) / most : 0;
		}
		fprintf(out, " %-*s | %5zu%s", (int)width, v[i].path,
			v[i].add + v[i].del, a + d ? " " : "");
		for (size_t k = 0; k < a; k++)
			fputc('+', out);
		for (size_t k = 0; k < d; k++)
			fputc('-', out);
		fputc('\n', out);
	}
	fprintf(out, " %zu file%s changed", files, files == 1 ? "" : "s");
	if (adds || !dels)
		fprintf(out, ", %zu insertion%s(+)", adds,
			adds == 1 ? "" : "s");
	if (dels || !adds)
		fprintf(out, ", %zu deletion%s(-)", dels, dels == 1 ? "" : "s");
	fputc('\n', out);
}

static int diff_selected(const struct ar_overlay *ov,
			 const struct ar_changes *c, const bool *sel, bool stat,
			 FILE *out, struct ar_error *err)
{
	_cleanup_close_ int up = open(ov->upper, DIR_FLAGS);
	_cleanup_close_ int lo =
		open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct diffstat *ds = ar_xcalloc(c->n + 1, sizeof(*ds));
	size_t nds = 0;
	int r = 0;

	if (up < 0 || lo < 0)
		r = ar_error_set(err, errno, "sandbox `%s`: open the layers",
				 ov->name);
	for (size_t i = 0; i < c->n && r == 0; i++) {
		const struct ar_change *ch = &c->v[i];

		if (!sel[i] || (ch->dir && !ch->special))
			continue;
		if (ch->special) {
			_cleanup_free_ char *q = ar_quote_path(ch->path);

			if (!stat)
				fprintf(out,
					"Only in sandbox: %s (%s: not committed)\n",
					q, kind_name(ch->up_mode));
			continue;
		}
		if (ch->renamed)
			continue;
		if (ch->kind == AR_CHANGE_RENAMED) {
			_cleanup_free_ char *f = ar_quote_path(ch->from);
			_cleanup_free_ char *t = ar_quote_path(ch->path);

			ds[nds].path = ar_xasprintf("%s => %s", f, t);
		} else {
			ds[nds].path = ar_quote_path(ch->path);
		}
		r = diff_change(up, lo, ch, stat ? NULL : out, &ds[nds], err);
		nds++;
	}
	if (r == 0 && stat && nds)
		print_stat(out, ds, nds);
	for (size_t i = 0; i < nds; i++)
		free(ds[i].path);
	free(ds);
	return r;
}

int ar_overlay_diff(const struct ar_overlay *ov, char *const *paths,
		    size_t n_paths, bool stat, FILE *out, struct ar_error *err)
{
	_cleanup_free_ bool *sel = NULL;
	struct ar_changes c;
	int r;

	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	r = select_changes(ov, paths, n_paths, &c, &sel, err);
	if (r == 0)
		r = diff_selected(ov, &c, sel, stat, out, err);
	ar_changes_free(&c);
	fflush(out);
	return r;
}

/* ---- commit ---- */

struct commit {
	struct ar_overlay *ov;
	const struct ar_commit_opts *o;
	FILE *out;
	int ws, up;
	unsigned long seq;
	size_t conflicts, failed;
	struct ar_error first; /* the first failure */
};

static void failed(struct commit *cc, const struct ar_change *ch,
		   const char *what, int e)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);

	fprintf(cc->out, "error: %s: %s: %s\n", q, what, strerror(e));
	if (!cc->failed++)
		ar_error_set(&cc->first, e, "commit: %s: %s", q, what);
}

/* Move the host's version of leaf aside as leaf.orig (or .orig.N). */
static int keep_orig(struct commit *cc, int pfd, const char *leaf,
		     const struct ar_change *ch)
{
	for (int i = 1; i < 100; i++) {
		_cleanup_free_ char *n =
			i == 1 ? ar_xasprintf("%s.orig", leaf) :
				 ar_xasprintf("%s.orig.%d", leaf, i);

		if (renameat2(pfd, leaf, pfd, n, RENAME_NOREPLACE) == 0) {
			_cleanup_free_ char *q = ar_quote_path(ch->path);
			_cleanup_free_ char *full = ar_xasprintf(
				"%.*s%s", (int)(leaf - ch->path), ch->path, n);
			_cleanup_free_ char *qn = ar_quote_path(full);

			fprintf(cc->out,
				"note: %s: the host's version is kept as %s\n",
				q, qn);
			return 0;
		}
		if (errno == ENOENT)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

static void temp_name(struct commit *cc, char *buf, size_t n)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, n, ".agentrun-commit-%d-%lx-%lu", (int)getpid(),
		 (unsigned long)ts.tv_nsec, cc->seq++);
}

static int copy_range(int in, int out, off_t off, off_t len)
{
	char buf[65536];

	while (len > 0) {
		loff_t i = off, o = off;
		ssize_t n = copy_file_range(in, &i, out, &o, (size_t)len, 0);

		if (n == 0)
			return 0; /* the file shrank */
		if (n < 0) {
			if (errno != EXDEV && errno != EINVAL &&
			    errno != ENOSYS && errno != EOPNOTSUPP)
				return -1;
			n = pread(in, buf,
				  (size_t)(len < (off_t)sizeof(buf) ?
						   len :
						   (off_t)sizeof(buf)),
				  off);
			if (n < 0)
				return -1;
			if (n == 0)
				return 0;
			for (ssize_t w = 0; w < n;) {
				ssize_t k = pwrite(out, buf + w,
						   (size_t)(n - w), off + w);

				if (k < 0)
					return -1;
				w += k;
			}
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* Copy the data of `in` to `out`, leaving its holes holes. */
static int copy_sparse(int in, int out, off_t size)
{
	off_t off = 0;

	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		if (data < 0) /* no SEEK_DATA here: all data */
			data = off, hole = size;
		else if ((hole = lseek(in, data, SEEK_HOLE)) < 0 || hole > size)
			hole = size;
		if (data >= size)
			break;
		if (copy_range(in, out, data, hole - data) < 0)
			return -1;
		off = hole;
	}
	return ftruncate(out, size);
}

static void owner_like(int fd, int pfd, const char *leaf)
{
	struct stat st;

	/* root commits keep the files the user's: the owner of the file
	 * replaced, or of its directory */
	if (geteuid() != 0)
		return;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    fstat(pfd, &st) < 0)
		return;
	if (fd >= 0)
		(void)!fchown(fd, st.st_uid, st.st_gid);
}

static void owner_like_at(int pfd, const char *name, const char *leaf)
{
	struct stat st;

	if (geteuid() != 0)
		return;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    fstat(pfd, &st) < 0)
		return;
	(void)!fchownat(pfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
}

static void note(struct commit *cc, const struct ar_change *ch,
		 const char *what)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);

	fprintf(cc->out, "note: %s: %s\n", q, what);
}

/* A conflict is applied only with --force; it is reported either way. */
static bool conflict_stops(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_free_ char *q = NULL;

	if (!ch->conflict || ch->dir)
		return false;
	if (cc->o->force)
		return false;
	q = ar_quote_path(ch->path);
	fprintf(cc->out,
		"conflict: %s: changed on the host since the sandbox started; not applied\n",
		q);
	cc->conflicts++;
	return true;
}

static int apply_delete(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_close_ int pfd = -1;
	const char *leaf;
	struct stat st;

	if (conflict_stops(cc, ch))
		return 0;
	pfd = open_parent(cc->ws, -1, ch->path, &leaf);
	if (pfd < 0 && errno == ENOENT)
		return 0;
	if (pfd < 0)
		return failed(cc, ch, "open its directory", errno), -1;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
					 (failed(cc, ch, "stat", errno), -1);
	if (ch->dir) {
		if (unlinkat(pfd, leaf, AT_REMOVEDIR) < 0) {
			if (errno != ENOTEMPTY && errno != EEXIST)
				return failed(cc, ch, "remove", errno), -1;
			note(cc, ch, "directory kept: it is not empty");
			return 0;
		}
	} else if (ch->conflict) {
		if (keep_orig(cc, pfd, leaf, ch) < 0)
			return failed(cc, ch, "keep the host's version", errno),
			       -1;
	} else if (unlinkat(pfd, leaf, 0) < 0 && errno != ENOENT) {
		return failed(cc, ch, "remove", errno), -1;
	}
	if (!ch->renamed) /* shown with its R */
		print_change(cc->out, ch);
	return 0;
}

static int put_dir(struct commit *cc, const struct ar_change *ch, int pfd,
		   const char *leaf, const struct stat *su)
{
	struct stat st;
	mode_t m = su->st_mode & 01777;

	if (su->st_mode & (S_ISUID | S_ISGID))
		note(cc, ch, "setuid/setgid bit dropped");
	_cleanup_close_ int fd = -1;

	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (mkdirat(pfd, leaf, 0700) < 0)
			return failed(cc, ch, "mkdir", errno), -1;
		owner_like_at(pfd, leaf, "");
	} else if (!S_ISDIR(st.st_mode)) {
		return failed(cc, ch, "mkdir", EEXIST), -1;
	}
	fd = openat(pfd, leaf, DIR_FLAGS);
	if (fd < 0 || fchmod(fd, m) < 0)
		return failed(cc, ch, "chmod", errno), -1;
	return 0;
}

static int put_entry(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_free_ char *dir = parent_of(ch->path);
	_cleanup_close_ int upp = -1, pfd = -1, in = -1, out = -1;
	const char *leaf;
	struct stat su;
	char tmp[96];

	if (ch->special) {
		_cleanup_free_ char *w = ar_xasprintf(
			"%s in the sandbox: skipped (never opened)",
			kind_name(ch->up_mode));

		note(cc, ch, w);
		return 0;
	}
	if (conflict_stops(cc, ch))
		return 0;
	upp = open_dir_beneath(cc->up, dir);
	if (upp < 0)
		return failed(cc, ch, "open it in the upper layer", errno), -1;
	pfd = open_parent(cc->ws, cc->up, ch->path, &leaf);
	if (pfd < 0)
		return failed(cc, ch, "open its directory in the workspace",
			      errno),
		       -1;
	if (fstatat(upp, leaf, &su, AT_SYMLINK_NOFOLLOW) < 0)
		return failed(cc, ch, "stat it in the upper layer", errno), -1;
	if (ch->dir != !!S_ISDIR(su.st_mode))
		return failed(cc, ch, "changed since it was listed", ESTALE),
		       -1;
	if (ch->dir) {
		if (put_dir(cc, ch, pfd, leaf, &su) < 0)
			return -1;
		print_change(cc->out, ch);
		return 0;
	}
	temp_name(cc, tmp, sizeof(tmp));
	if (S_ISLNK(su.st_mode)) {
		char target[PATH_MAX];
		ssize_t l = readlinkat(upp, leaf, target, sizeof(target) - 1);

		if (l < 0)
			return failed(cc, ch, "readlink", errno), -1;
		target[l] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return failed(cc, ch, "symlink", errno), -1;
		owner_like_at(pfd, tmp, leaf);
	} else if (S_ISREG(su.st_mode)) {
		in = open_regular(upp, leaf, &su);
		if (in < 0)
			return failed(cc, ch, "open it in the upper layer",
				      errno),
			       -1;
		out = openat(pfd, tmp,
			     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				     O_CLOEXEC,
			     0600);
		if (out < 0)
			return failed(cc, ch, "create a temporary file", errno),
			       -1;
		owner_like(out, pfd, leaf);
		if (copy_sparse(in, out, su.st_size) < 0 ||
		    fchmod(out, su.st_mode & 0777) < 0 || fsync(out) < 0) {
			int e = errno;

			unlinkat(pfd, tmp, 0);
			return failed(cc, ch, "write", e), -1;
		}
		if (su.st_mode & (S_ISUID | S_ISGID))
			note(cc, ch, "setuid/setgid bit dropped");
	} else {
		_cleanup_free_ char *w = ar_xasprintf(
			"%s in the sandbox: skipped (never opened)",
			kind_name(su.st_mode));

		note(cc, ch, w);
		return 0;
	}
	if ((ch->conflict && keep_orig(cc, pfd, leaf, ch) < 0) ||
	    renameat(pfd, tmp, pfd, leaf) < 0) {
		int e = errno;

		unlinkat(pfd, tmp, 0);
		return failed(cc, ch, "rename into place", e), -1;
	}
	print_change(cc->out, ch);
	return 0;
}

/* Interactive selection: y/n/d/q per change. */
static int ask(struct commit *cc, const struct ar_changes *c, bool *sel,
	       struct ar_error *err)
{
	FILE *in = cc->o->in ? cc->o->in : stdin;
	bool quit = false;

	for (size_t i = 0; i < c->n; i++) {
		const struct ar_change *ch = &c->v[i];
		char line[64];

		if (!sel[i] || ch->renamed)
			continue;
		if (quit) {
			sel[i] = false;
			continue;
		}
		for (;;) {
			fputs("\n", cc->out);
			print_change(cc->out, ch);
			fputs("Commit this change [y,n,d,q,?]? ", cc->out);
			fflush(cc->out);
			if (!fgets(line, sizeof(line), in)) {
				quit = true;
				sel[i] = false;
				fputc('\n', cc->out);
				break;
			}
			if (line[0] == 'y') {
				break;
			} else if (line[0] == 'n') {
				sel[i] = false;
				break;
			} else if (line[0] == 'q') {
				quit = true;
				sel[i] = false;
				break;
			} else if (line[0] == 'd') {
				bool *one = ar_xcalloc(c->n, sizeof(bool));
				int r;

				one[i] = true;
				r = diff_selected(cc->ov, c, one, false,
						  cc->out, err);
				free(one);
				if (r < 0)
					return -1;
			} else {
				fputs("y - commit this change\n"
				      "n - do not commit this change\n"
				      "d - show its diff\n"
				      "q - quit; do not commit this change or any of the remaining ones\n",
				      cc->out);
			}
		}
	}
	fputc('\n', cc->out);
	for (size_t i = 0; i < c->n; i++) /* an R takes its D along */
		if (c->v[i].kind == AR_CHANGE_RENAMED)
			sel[c->v[i].pair] = sel[i];
	return 0;
}

int ar_overlay_commit(struct ar_overlay *ov, char *const *paths, size_t n_paths,
		      const struct ar_commit_opts *o, struct ar_error *err)
{
	static const struct ar_commit_opts none = { 0 };
	_cleanup_free_ bool *sel = NULL;
	_cleanup_close_ int ws = -1, up = -1;
	struct commit cc = { .ov = ov, .o = o ? o : &none };
	struct ar_changes c;
	int r = 0;

	cc.out = cc.o->out ? cc.o->out : stdout;
	if (ar_overlay_lock(ov, "commit", err) < 0)
		return -1;
	if (!ov->has_started)
		ar_warn("sandbox `%s` has no start token (made by an older agentrun): host edits since it started are not detected as conflicts",
			ov->name);
	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	if (select_changes(ov, paths, n_paths, &c, &sel, err) < 0) {
		ar_changes_free(&c);
		return -1;
	}
	ws = open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	up = open(ov->upper, DIR_FLAGS);
	if (ws < 0 || up < 0) {
		r = ar_error_set(err, errno, "sandbox `%s`: open %s", ov->name,
				 ws < 0 ? ov->workspace : ov->upper);
		goto out;
	}
	cc.ws = ws;
	cc.up = up;
	if (cc.o->interactive && ask(&cc, &c, sel, err) < 0) {
		r = -1;
		goto out;
	}
	/* deletions first, deepest first; then the rest, parents first */
	for (size_t i = c.n; i-- > 0;)
		if (sel[i] && c.v[i].kind == AR_CHANGE_DELETED)
			apply_delete(&cc, &c.v[i]);
	for (size_t i = 0; i < c.n; i++)
		if (sel[i] && c.v[i].kind != AR_CHANGE_DELETED)
			put_entry(&cc, &c.v[i]);
	if (cc.failed) {
		r = -1;
		*err = cc.first;
		ar_error_wrap(err,
			      "%zu change(s) failed, the others were applied",
			      cc.failed);
	} else if (cc.conflicts) {
		r = ar_error_set_plain(
			err, EEXIST,
			"commit: %zu conflict(s) not applied (the host changed them after the sandbox started): review with `agentrun diff %s PATH`; `agentrun commit --force %s PATH` applies them and keeps the host's version as PATH.orig",
			cc.conflicts, ov->name, ov->name);
	}
out:
	fflush(cc.out);
	ar_changes_free(&c);
	return r;
}

/* ---- discard, list ---- */

int ar_overlay_discard(struct ar_overlay *ov, struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_close_ int bfd = -1;

	if (ar_overlay_lock(ov, "discard", err) < 0)
		return -1;
	bfd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (bfd < 0 || remove_tree_at(bfd, ov->name) < 0)
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
