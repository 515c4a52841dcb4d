/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A host path bound into a running sandbox (control_mount.h).
 *
 * The work is done by a forked child, which may join namespaces (a
 * thread of the monitor may not: setns of a user or mount namespace
 * needs a single-threaded process with its own fs). The monitor has
 * threads, so the child only makes system calls (no allocation, no
 * stdio) and reports {errno, step} over a socketpair, with the new
 * mount's fd (SCM_RIGHTS) on success.
 */
#define _GNU_SOURCE
#include "control_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fd_passing.h"
#include "mount_syscalls.h"
#include "utils.h"

struct child_result {
	int e; /* 0: done */
	char what[200]; /* the step that failed */
};

/* ---- the child (system calls only) ---- */

static void put(struct child_result *r, int e, const char *what)
{
	size_t n = strlen(what);

	r->e = e ? e : EIO;
	if (n >= sizeof(r->what))
		n = sizeof(r->what) - 1;
	memcpy(r->what, what, n);
	r->what[n] = '\0';
}

/* One component below dfd, never through a symbolic link (ELOOP when
 * it is one), a directory unless !dir (ENOTDIR). */
static int openat2_dir(int dfd, const char *name, bool dir)
{
	struct open_how how = {
		.flags = (uint64_t)(O_PATH | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	struct stat st;
	int fd = ar_sys_openat2(dfd, name, &how), e = 0;

	if (fd < 0)
		return -1;
	/* O_PATH|O_NOFOLLOW opens a link itself */
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (S_ISLNK(st.st_mode))
		e = ELOOP;
	else if (dir && !S_ISDIR(st.st_mode))
		e = ENOTDIR;
	if (e) {
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* The mount point `path` (absolute) below root_fd, made when missing
 * (a directory, or an empty file for a file source), each component
 * opened on its own without following any symbolic link: an O_PATH
 * fd, or -1 with r filled. */
static int mount_point(int root_fd, const char *path, bool dir, bool create,
		       struct child_result *r)
{
	char buf[PATH_MAX];
	char *comp, *next;
	int cur, fd;
	size_t n = strlen(path);

	if (n >= sizeof(buf)) {
		put(r, ENAMETOOLONG, "the mount point");
		return -1;
	}
	memcpy(buf, path, n + 1);
	cur = dup(root_fd);
	if (cur < 0) {
		put(r, errno, "dup");
		return -1;
	}
	for (comp = buf; *comp == '/'; comp++)
		;
	while (*comp) {
		bool last;

		next = strchr(comp, '/');
		if (next)
			*next++ = '\0';
		while (next && *next == '/')
			next++;
		last = !next || !*next;
		fd = openat2_dir(cur, comp, !last || dir);
		if (fd < 0 && errno == ENOENT && create) {
			int made;

			if (!last || dir) {
				made = mkdirat(cur, comp, 0755);
			} else {
				made = openat(cur, comp,
					      O_WRONLY | O_CREAT | O_EXCL |
						      O_NOFOLLOW | O_CLOEXEC,
					      0600);
				if (made >= 0)
					made = close(made);
			}
			if (made < 0 && errno != EEXIST) {
				put(r, errno,
				    "create the mount point in the sandbox");
				close(cur);
				return -1;
			}
			fd = openat2_dir(cur, comp, !last || dir);
		}
		if (fd < 0) {
			put(r, errno,
			    errno == ELOOP ?
				    "the mount point: a symbolic link in the sandbox's tree on its way (refused: the agent may have planted it)" :
				    "open the mount point in the sandbox");
			close(cur);
			return -1;
		}
		close(cur);
		cur = fd;
		if (!next)
			break;
		comp = next;
	}
	return cur;
}

/* Join the user namespace of the sandbox when it is not ours. */
static int join_user(int userns_fd, struct child_result *r)
{
	struct stat a, b;

	if (fstat(userns_fd, &a) < 0 || stat("/proc/self/ns/user", &b) < 0) {
		put(r, errno, "stat the user namespaces");
		return -1;
	}
	if (a.st_ino == b.st_ino && a.st_dev == b.st_dev)
		return 0;
	if (setns(userns_fd, CLONE_NEWUSER) < 0) {
		put(r, errno, "join the sandbox's user namespace");
		return -1;
	}
	/* its root when mapped (files made there are then its), else
	 * keep the user's id (rootless keep-id) */
	if (setresgid(0, 0, 0) == 0)
		(void)!setresuid(0, 0, 0);
	return 0;
}

static int child_add(int userns_fd, int mntns_fd, int root_fd,
		     const struct stat *src, const char *path, bool rw,
		     const char *const *protect, struct child_result *r)
{
	struct ar_mount_attr attr = { 0 };
	struct stat st;
	int tree, mp;

	if (join_user(userns_fd, r) < 0)
		return -1;
	/* a copy of the host's mount namespace, ours, whose mounts do not
	 * propagate back to the host's */
	if (unshare(CLONE_NEWNS) < 0) {
		put(r, errno, "unshare a mount namespace");
		return -1;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) {
		put(r, errno, "make the copied mounts slaves");
		return -1;
	}
	/* the protected paths, read-only over themselves in the copy, and
	 * the directories on their way bound onto themselves (a mount
	 * point cannot be renamed: `mv .git x; mkdir .git` is EBUSY): the
	 * clone below carries them along */
	for (size_t i = 0; protect && protect[i]; i++) {
		const char *p = protect[i] + 1;
		/* 'h': a placeholder made for a missing one */
		bool ro = protect[i][0] == 'r' || protect[i][0] == 'h';
		int t;

		if (!ro && protect[i][0] != 'p')
			continue; /* missing: nothing to mount over */
		t = ar_sys_open_tree(AT_FDCWD, p,
				     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					     AT_RECURSIVE |
					     AT_SYMLINK_NOFOLLOW);

		attr = (struct ar_mount_attr){
			.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
				    (ro ? MOUNT_ATTR_RDONLY : 0),
		};
		if (t < 0 || lstat(p, &st) < 0 || S_ISLNK(st.st_mode) ||
		    ar_sys_mount_setattr(t, "", AT_EMPTY_PATH | AT_RECURSIVE,
					 &attr) < 0 ||
		    ar_sys_move_mount(t, "", AT_FDCWD, p,
				      MOVE_MOUNT_F_EMPTY_PATH) < 0) {
			put(r, errno,
			    ro ? "cover a protected path read-only" :
				 "pin a directory holding a protected path");
			return -1;
		}
		close(t);
	}
	tree = ar_sys_open_tree(AT_FDCWD, path,
				OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
					AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (tree < 0) {
		put(r, errno, "clone the host path (open_tree)");
		return -1;
	}
	/* what the monitor checked, not what a rename put there since */
	if (fstat(tree, &st) < 0 || st.st_dev != src->st_dev ||
	    st.st_ino != src->st_ino) {
		put(r, ESTALE, "the host path changed while it was granted");
		return -1;
	}
	attr = (struct ar_mount_attr){
		.attr_set = MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
			    (rw ? 0 : MOUNT_ATTR_RDONLY),
	};
	if (ar_sys_mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE,
				 &attr) < 0) {
		put(r, errno, "make the clone read-only, nosuid, nodev");
		return -1;
	}
	if (setns(mntns_fd, CLONE_NEWNS) < 0) {
		put(r, errno, "join the sandbox's mount namespace");
		return -1;
	}
	mp = mount_point(root_fd, path, S_ISDIR(src->st_mode), true, r);
	if (mp < 0)
		return -1;
	if (ar_sys_move_mount(tree, "", mp, "",
			      MOVE_MOUNT_F_EMPTY_PATH |
				      MOVE_MOUNT_T_EMPTY_PATH) < 0) {
		put(r, errno, "move the clone into the sandbox (move_mount)");
		return -1;
	}
	close(mp);
	return tree; /* now the root of the mount inside */
}

static int child_remove(int userns_fd, int mntns_fd, int mnt_fd,
			struct child_result *r)
{
	if (join_user(userns_fd, r) < 0)
		return -1;
	if (setns(mntns_fd, CLONE_NEWNS) < 0) {
		put(r, errno, "join the sandbox's mount namespace");
		return -1;
	}
	/* the mount whose root is our working directory: wherever its
	 * parent was moved to since */
	if (fchdir(mnt_fd) < 0 || umount2(".", MNT_DETACH) < 0) {
		put(r, errno, "detach the mount (umount2 MNT_DETACH)");
		return -1;
	}
	return 0;
}

/* ---- the monitor's side ---- */

struct ns_fds {
	int user, mnt, root;
};

static void ns_close(struct ns_fds *n)
{
	if (n->user >= 0)
		close(n->user);
	if (n->mnt >= 0)
		close(n->mnt);
	if (n->root >= 0)
		close(n->root);
}

static int ns_open(pid_t pid, int pidfd, struct ns_fds *n, struct ar_error *err)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	char p[64];

	n->user = n->mnt = n->root = -1;
	snprintf(p, sizeof(p), "/proc/%d/ns/user", (int)pid);
	n->user = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/ns/mnt", (int)pid);
	n->mnt = open(p, O_RDONLY | O_CLOEXEC);
	snprintf(p, sizeof(p), "/proc/%d/root", (int)pid);
	n->root = open(p, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (n->user < 0 || n->mnt < 0 || n->root < 0) {
		int e = errno;

		ns_close(n);
		return ar_error_set(err, e,
				    "the sandbox's process %d: its namespaces",
				    (int)pid);
	}
	/* still the sandbox's process once its namespaces are open: not a
	 * pid reused after it ended */
	if (pidfd >= 0 && poll(&pfd, 1, 0) != 0) {
		ns_close(n);
		return ar_error_set_plain(err, ESRCH,
					  "the sandbox's process has ended");
	}
	return 0;
}

/* Run fn in a child; its result (and fd, when it sends one). */
static int run_child(int (*fn)(void *, struct child_result *), void *arg,
		     int *fd_out, struct ar_error *err)
{
	int sv[2], st, got_fd = -1;
	struct child_result r = { 0 };
	ssize_t n;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "socketpair");
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return ar_error_set(err, e, "fork");
	}
	if (pid == 0) {
		int fd;

		close(sv[0]);
		fd = fn(arg, &r);
		ar_sendmsg_fd(sv[1], &r, sizeof(r), fd >= 0 ? fd : -1);
		_exit(0);
	}
	close(sv[1]);
	n = ar_recvmsg_fd(sv[0], &r, sizeof(r), &got_fd);
	close(sv[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(r)) {
		if (got_fd >= 0)
			close(got_fd);
		return ar_error_set_plain(
			err, EIO, "the mount helper ended without a result");
	}
	if (r.e) {
		if (got_fd >= 0)
			close(got_fd);
		r.what[sizeof(r.what) - 1] = '\0';
		/* the child's errno, as text: not this process's */
		return ar_error_set_plain(err, EIO, "%s: %s", r.what,
					  strerror(r.e));
	}
	if (fd_out)
		*fd_out = got_fd;
	else if (got_fd >= 0)
		close(got_fd);
	return 0;
}

struct add_args {
	struct ns_fds ns;
	struct stat src;
	const char *path;
	bool rw;
	const char *const *protect;
};

static int add_fn(void *p, struct child_result *r)
{
	struct add_args *a = p;
	int fd = child_add(a->ns.user, a->ns.mnt, a->ns.root, &a->src, a->path,
			   a->rw, a->protect, r);

	if (fd >= 0)
		r->e = 0;
	return fd;
}

int ctl_mount_add(pid_t pid, int pidfd, const char *path, bool rw,
		  const char *const *protect, int *mnt_fd, struct ar_error *err)
{
	struct add_args a = { .path = path, .rw = rw, .protect = protect };
	int r;

	*mnt_fd = -1;
	if (lstat(path, &a.src) < 0)
		return ar_error_set(err, errno, "`%s`", path);
	/* a file's mount could not be detached by its fd (fchdir) once the
	 * agent moved its parent: directories only */
	if (!S_ISDIR(a.src.st_mode))
		return ar_error_set_plain(
			err, EINVAL,
			"`%s`: expected a directory (a live grant of a single file is not supported; grant its directory)",
			path);
	if (ns_open(pid, pidfd, &a.ns, err) < 0)
		return -1;
	r = run_child(add_fn, &a, mnt_fd, err);
	ns_close(&a.ns);
	if (r == 0 && *mnt_fd < 0)
		return ar_error_set_plain(err, EIO,
					  "the mount helper sent no mount");
	return r;
}

struct remove_args {
	struct ns_fds ns;
	int mnt_fd;
};

static int remove_fn(void *p, struct child_result *r)
{
	struct remove_args *a = p;

	if (child_remove(a->ns.user, a->ns.mnt, a->mnt_fd, r) < 0)
		return -1;
	r->e = 0;
	return -1;
}

int ctl_mount_remove(pid_t pid, int pidfd, int mnt_fd, const char *path,
		     struct ar_error *err)
{
	struct remove_args a = { .mnt_fd = mnt_fd };
	int r;

	if (ns_open(pid, pidfd, &a.ns, err) < 0)
		return -1;
	r = run_child(remove_fn, &a, NULL, err);
	ns_close(&a.ns);
	if (r < 0)
		return ar_error_wrap(err, "`%s`", path);
	return 0;
}
