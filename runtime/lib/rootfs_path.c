/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Safe resolution of paths inside a container root filesystem.
 *
 * Fast path: openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS), where the
 * kernel resolves the path as if rootfd were "/".
 *
 * Fallback (kernels without openat2, and whenever something has to be
 * created along the way): a walk that opens one component at a time with
 * O_PATH | O_NOFOLLOW relative to the directory reached so far.  Symlinks
 * are read and their target spliced into the rest of the path (an absolute
 * target restarts at the root); ".." pops a stack of the directories
 * walked through and never goes above the root.  The kernel never follows
 * a symlink on our behalf, so nothing outside the root is reachable.
 */
#define _GNU_SOURCE
#include "rootfs_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mount_syscalls.h"
#include "utils.h"

#define AR_MAX_SYMLINKS 40
#define AR_OPENAT2_RETRIES 32

static int force_fallback = -1; /* -1: not decided yet (environment) */
static bool openat2_missing;

void ar_rootfs_path_force_fallback(bool on)
{
	force_fallback = on;
}

static bool use_openat2(void)
{
	if (force_fallback < 0) {
		const char *e = getenv("AGENTRUN_RESOLVE_FALLBACK");

		force_fallback = e && *e && strcmp(e, "0") != 0;
	}
	return !force_fallback && !openat2_missing;
}

/* openat2 in the root; -1 with errno on failure.  Notes when the syscall
 * does not exist so later calls go straight to the walk. */
static int openat2_in_root(int rootfd, const char *path, int flags, mode_t mode)
{
	bool creat = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE;
	struct open_how how = {
		.flags = (uint64_t)(unsigned int)(flags | O_CLOEXEC),
		.mode = creat ? mode : 0,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	for (int i = 0; i < AR_OPENAT2_RETRIES; i++) {
		int fd = ar_sys_openat2(rootfd, path, &how);

		if (fd >= 0)
			return fd;
		/* EAGAIN: a concurrent rename made the kernel give up on
		 * proving the walk safe; just try again. */
		if (errno == EAGAIN || errno == EINTR)
			continue;
		if (errno == ENOSYS || errno == E2BIG)
			openat2_missing = true;
		return -1;
	}
	return -1;
}

/* ---- the fallback walk ---- */

struct walker {
	int rootfd; /* borrowed */
	int cur; /* owned: the directory reached so far */
	int *stack; /* owned: ancestors of cur, root first */
	size_t depth;
	size_t cap;
};

static void walker_clear_stack(struct walker *w)
{
	while (w->depth > 0)
		close(w->stack[--w->depth]);
}

static void walker_free(struct walker *w)
{
	walker_clear_stack(w);
	free(w->stack);
	w->stack = NULL;
	if (w->cur >= 0)
		close(w->cur);
	w->cur = -1;
}

static int walker_to_root(struct walker *w)
{
	int fd = fcntl(w->rootfd, F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return -1;
	walker_clear_stack(w);
	if (w->cur >= 0)
		close(w->cur);
	w->cur = fd;
	return 0;
}

static void walker_push(struct walker *w, int fd)
{
	if (w->depth == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 16;
		w->stack = ar_xrealloc(w->stack, w->cap * sizeof(int));
	}
	w->stack[w->depth++] = w->cur;
	w->cur = fd;
}

/* "..": back to the directory we came from; at the root it stays put. */
static void walker_pop(struct walker *w)
{
	if (w->depth == 0)
		return;
	close(w->cur);
	w->cur = w->stack[--w->depth];
}

/* Replace `*rest` by "target/" + *rest. */
static void splice_symlink(char **rest, const char *target)
{
	char *n = ar_xasprintf("%s/%s", target, *rest);

	free(*rest);
	*rest = n;
}

/*
 * Walk `path` inside the root.  Every component but the last is resolved
 * (symlinks followed and clamped to the root); the last one is followed too
 * when it is a symlink and follow_last is set.  With mkdirs, missing
 * directories on the way are created with `mode` (never the last
 * component: callers decide what it becomes).
 *
 * On success *dirfd_out is an O_PATH fd of the directory that holds the
 * last component and *name_out its name (malloc'd), "." when the path names
 * that directory itself.  Returns 0, or -1 with errno set.
 */
static int walk(int rootfd, const char *path, bool follow_last, bool mkdirs,
		mode_t mode, int *dirfd_out, char **name_out)
{
	struct walker w = { .rootfd = rootfd, .cur = -1 };
	_cleanup_free_ char *rest = ar_xstrdup(path);
	char comp[NAME_MAX + 1];
	const char *name = NULL;
	int nlinks = 0;
	int saved;

	if (walker_to_root(&w) < 0)
		return -1;

	while (!name) {
		char *p = rest, *end, *after;
		struct stat st;
		size_t len;
		bool last;
		int fd;

		while (*p == '/')
			p++;
		if (!*p) {
			name = ".";
			break;
		}
		end = strchrnul(p, '/');
		len = (size_t)(end - p);
		if (len > NAME_MAX) {
			errno = ENAMETOOLONG;
			goto fail;
		}
		memcpy(comp, p, len);
		comp[len] = '\0';
		after = end;
		while (*after == '/')
			after++;
		last = *after == '\0';
		memmove(rest, after, strlen(after) + 1);

		if (strcmp(comp, ".") == 0) {
			if (last)
				name = ".";
			continue;
		}
		if (strcmp(comp, "..") == 0) {
			walker_pop(&w);
			if (last)
				name = ".";
			continue;
		}

		fd = openat(w.cur, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT)
				goto fail;
			if (last) {
				name = comp;
				break;
			}
			if (!mkdirs)
				goto fail;
			if (mkdirat(w.cur, comp, mode) < 0 && errno != EEXIST)
				goto fail;
			/* Whatever is there now (even a symlink raced in)
			 * is handled like any existing entry below. */
			fd = openat(w.cur, comp,
				    O_PATH | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				goto fail;
		}
		if (fstat(fd, &st) < 0) {
			saved = errno;
			close(fd);
			errno = saved;
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n;

			if (last && !follow_last) {
				close(fd);
				name = comp;
				break;
			}
			if (++nlinks > AR_MAX_SYMLINKS) {
				close(fd);
				errno = ELOOP;
				goto fail;
			}
			n = readlinkat(fd, "", target, sizeof(target));
			saved = errno;
			close(fd);
			if (n < 0) {
				errno = saved;
				goto fail;
			}
			if ((size_t)n >= sizeof(target)) {
				errno = ENAMETOOLONG;
				goto fail;
			}
			target[n] = '\0';
			if (target[0] == '/' && walker_to_root(&w) < 0)
				goto fail;
			splice_symlink(&rest, target);
			continue;
		}
		if (last) {
			close(fd);
			name = comp;
			break;
		}
		if (!S_ISDIR(st.st_mode)) {
			close(fd);
			errno = ENOTDIR;
			goto fail;
		}
		walker_push(&w, fd);
	}

	*name_out = ar_xstrdup(name);
	*dirfd_out = ar_steal_fd(&w.cur);
	walker_free(&w);
	return 0;
fail:
	saved = errno;
	walker_free(&w);
	errno = saved;
	return -1;
}

static bool fd_is_symlink(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISLNK(st.st_mode);
}

static int walk_open(int rootfd, const char *path, int flags, mode_t mode)
{
	bool follow = !(flags & O_NOFOLLOW);
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *name = NULL;
	int fd;

	if (walk(rootfd, path, follow, false, 0, &dirfd, &name) < 0)
		return -1;
	if (strcmp(name, ".") == 0)
		return openat(dirfd, ".",
			      (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) |
				      O_CLOEXEC);
	/* The walk already followed a final symlink; anything that is a
	 * symlink now was swapped in behind our back: refuse it. */
	fd = openat(dirfd, name, flags | O_CLOEXEC | (follow ? O_NOFOLLOW : 0),
		    mode);
	if (fd >= 0 && follow && (flags & O_PATH) && fd_is_symlink(fd)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	return fd;
}

int ar_open_in_root(int rootfd, const char *path, int flags, mode_t mode,
		    struct ar_error *err)
{
	int fd;

	if (use_openat2()) {
		fd = openat2_in_root(rootfd, path, flags, mode);
		if (fd >= 0)
			return fd;
		if (!openat2_missing)
			return ar_error_set(err, errno, "open \"%s\" in root",
					    path);
	}
	fd = walk_open(rootfd, path, flags, mode);
	if (fd < 0)
		return ar_error_set(err, errno, "open \"%s\" in root", path);
	return fd;
}

int ar_mkdir_p_in_root(int rootfd, const char *path, mode_t mode,
		       struct ar_error *err)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *name = NULL;
	int fd;

	if (use_openat2()) {
		fd = openat2_in_root(rootfd, path, O_PATH | O_DIRECTORY, 0);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT && !openat2_missing)
			return ar_error_set(err, errno, "open \"%s\" in root",
					    path);
	}
	if (walk(rootfd, path, true, true, mode, &dirfd, &name) < 0)
		return ar_error_set(err, errno, "mkdir \"%s\" in root", path);
	if (strcmp(name, ".") == 0)
		return ar_steal_fd(&dirfd);
	if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
		return ar_error_set(err, errno, "mkdir \"%s\" in root", path);
	fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "mkdir \"%s\" in root", path);
	return fd;
}

int ar_mount_target_in_root(int rootfd, const char *path, bool is_dir,
			    struct ar_error *err)
{
	_cleanup_close_ int dirfd = -1;
	_cleanup_free_ char *name = NULL;
	int fd;

	if (is_dir)
		return ar_mkdir_p_in_root(rootfd, path, 0755, err);

	if (use_openat2()) {
		fd = openat2_in_root(rootfd, path, O_PATH, 0);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT && !openat2_missing)
			return ar_error_set(err, errno, "open \"%s\" in root",
					    path);
	}
	if (walk(rootfd, path, true, true, 0755, &dirfd, &name) < 0)
		return ar_error_set(err, errno, "create \"%s\" in root", path);
	if (strcmp(name, ".") == 0)
		return ar_steal_fd(&dirfd);
	fd = openat(dirfd, name,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd >= 0)
		close(fd);
	else if (errno != EEXIST)
		return ar_error_set(err, errno, "create \"%s\" in root", path);
	fd = openat(dirfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return ar_error_set(err, errno, "open \"%s\" in root", path);
	if (fd_is_symlink(fd)) {
		close(fd);
		return ar_error_set_plain(
			err, ELOOP, "open \"%s\" in root: a symbolic link",
			path);
	}
	return fd;
}
