/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The placeholders' mount points on the host, shared by every sandbox
 * on a workspace (placeholder.h): made and marked, locked shared for the
 * container's life, removed by the last one out, never a directory of
 * the user's.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "fd_passing.h"
#include "log.h"
#include "placeholder.h"
#include "utils.h"

/* How long a start waits for a placeholder locked exclusively (by a
 * sandbox removing it: microseconds), and the end for the keeper. */
#define LOCK_WAIT_MS 3000
#define KEEPER_WAIT_MS 5000
#define TRIES 20

/* The keeper's socket: the main thread's (keep_pid, the release) and the
 * control thread's (a live grant, its revoke). */
static pthread_mutex_t keeper_lock = PTHREAD_MUTEX_INITIALIZER;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void mark_value(char *buf, size_t size, const struct stat *st)
{
	snprintf(buf, size, "%llu:%llu", (unsigned long long)st->st_dev,
		 (unsigned long long)st->st_ino);
}

static bool empty_dir(int fd);

/* Marked as a placeholder, by a mark naming this very directory (a copy
 * of the workspace carries the mark to another inode: not ours). */
static bool marked(int fd, const struct stat *st)
{
	char want[64], got[64];
	ssize_t n = fgetxattr(fd, SB_PLACEHOLDER_XATTR, got, sizeof(got) - 1);

	if (n <= 0)
		return false;
	got[n] = '\0';
	mark_value(want, sizeof(want), st);
	return strcmp(got, want) == 0;
}

bool sb_placeholder_marked(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 &&
	       (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) && marked(fd, &st);
}

/* A file placeholder's content: none (the host's writes make it the
 * user's file). */
static bool empty_file(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0;
}

/* A placeholder's emptiness, directory or file. */
static bool empty_at(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return false;
	return S_ISREG(st.st_mode) ? st.st_size == 0 : empty_dir(fd);
}

static bool empty_dir(int fd)
{
	int d = openat(fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir;
	struct dirent *e;
	bool empty = true;

	if (d < 0)
		return false;
	dir = fdopendir(d);
	if (!dir) {
		close(d);
		return false;
	}
	while ((e = readdir(dir)))
		if (strcmp(e->d_name, ".") != 0 &&
		    strcmp(e->d_name, "..") != 0) {
			empty = false;
			break;
		}
	closedir(dir);
	return empty;
}

/* Another open file holds a lock on the directory or file (a running
 * sandbox's shared lock): tested on an open file of our own, then let
 * go. */
static bool locked_by_other(int fd)
{
	char proc[64];
	_cleanup_close_ int d = -1;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	d = open(proc, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (d < 0)
		return false;
	if (flock(d, LOCK_EX | LOCK_NB) == 0)
		return false;
	return errno == EWOULDBLOCK;
}

static int open_dir(const char *path)
{
	return open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/* A directory or a regular file at `path` (never a link, a FIFO's or a
 * device's open), -1 otherwise. */
static int open_dir_or_file(const char *path)
{
	struct stat st;
	int fd;

	if (lstat(path, &st) < 0 ||
	    !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))
		return -1;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0 && (fstat(fd, &st) < 0 ||
			!(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)))) {
		close(fd);
		return -1;
	}
	return fd;
}

bool sb_placeholder_is(const char *path)
{
	_cleanup_close_ int fd = open_dir_or_file(path);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0)
		return false;
	/* the mark: ours even with files the host wrote into it (hidden
	 * for this run too; the last one out unmarks it) */
	if (marked(fd, &st))
		return true;
	/* no mark (a filesystem without user xattrs): an empty directory
	 * or file a running sandbox holds */
	return empty_at(fd) && locked_by_other(fd);
}

/* The directory at `path` is still the one open as `fd`. */
static bool still_there(int fd, const char *path)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && a.st_nlink > 0 && lstat(path, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Made by root in another user's directory: owned like its parent, as
 * the container would have made it through the workspace's mapping. */
static void own_like_parent(int fd, const char *path)
{
	_cleanup_free_ char *parent = ar_xstrdup(path);
	char *slash = strrchr(parent, '/');
	struct stat st;

	if (geteuid() != 0 || !slash || slash == parent)
		return;
	*slash = '\0';
	if (lstat(parent, &st) == 0 && (st.st_uid != 0 || st.st_gid != 0))
		(void)!fchown(fd, st.st_uid, st.st_gid);
}

static int lock_shared(int fd, const char *path, struct ar_error *err)
{
	for (long waited = 0;; waited += 10) {
		if (flock(fd, LOCK_SH | LOCK_NB) == 0)
			return 0;
		if (errno != EWOULDBLOCK)
			return ar_error_set(err, errno,
					    "sandbox: lock placeholder `%s`",
					    path);
		if (waited >= LOCK_WAIT_MS)
			return ar_error_set_plain(
				err, EWOULDBLOCK,
				"sandbox: placeholder `%s` stays locked exclusively by another process; nothing agentrun does holds that lock for long (find the holder with `fuser -v %s`)",
				path, path);
		sleep_ms(10);
	}
}

static void add(struct sb_placeholders *ph, const char *path, int fd, bool ours)
{
	struct stat st;

	fstat(fd, &st);
	ph->v = ar_xrealloc(ph->v, (ph->n + 1) * sizeof(*ph->v));
	ph->v[ph->n++] =
		(struct sb_placeholder){ ar_xstrdup(path), fd,	 st.st_dev,
					 st.st_ino,	   ours, NULL };
}

/* Made: an empty directory, or an empty regular file (`file`); -1 with
 * errno. */
static int make_one(const char *path, bool file)
{
	int fd;

	if (!file)
		return mkdir(path, 0755) == 0 ? 0 : -1;
	fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* One placeholder: made (and marked) or joined, locked shared. */
static int take_one(struct sb_placeholders *ph, const char *path, bool file,
		    struct ar_error *err)
{
	for (int i = 0; i < TRIES; i++) {
		bool created = make_one(path, file) == 0;
		int fd;
		bool ours;
		struct stat st;

		if (!created && errno != EEXIST)
			return 0; /* the container makes it, as before */
		fd = file ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
					       O_CLOEXEC) :
			    open_dir(path);
		if (fd < 0) {
			if (errno == ENOENT)
				continue; /* removed by a sandbox leaving */
			return 0; /* not a directory: the mount will say */
		}
		if (fstat(fd, &st) < 0) {
			close(fd);
			return ar_error_set(err, errno, "sandbox: `%s`", path);
		}
		if (file && !S_ISREG(st.st_mode)) {
			close(fd);
			return 0; /* not a file: the mount will say */
		}
		if (created) {
			char v[64];

			/* whatever the umask: every sandbox on the
			 * workspace (of any user) opens it to lock it */
			(void)fchmod(fd, file ? 0644 : 0755);
			own_like_parent(fd, path);
			mark_value(v, sizeof(v), &st);
			/* a filesystem without user xattrs: the lock alone
			 * tells the other sandboxes */
			(void)fsetxattr(fd, SB_PLACEHOLDER_XATTR, v, strlen(v),
					0);
			ours = true;
		} else {
			ours = marked(fd, &st) ||
			       (empty_at(fd) && locked_by_other(fd));
		}
		if (lock_shared(fd, path, err) < 0) {
			close(fd);
			return -1;
		}
		/* every removal is made under an exclusive lock: holding
		 * ours, the directory at the path stays this one */
		if (!still_there(fd, path)) {
			close(fd);
			continue;
		}
		add(ph, path, fd, ours);
		return 0;
	}
	return ar_error_set_plain(
		err, EAGAIN,
		"sandbox: placeholder `%s` keeps being removed and made again",
		path);
}

/* Remove the placeholder open as `fd` if nobody else holds it (the
 * caller's own lock is converted: a failure lets go of it). A file
 * placeholder is removed while empty; written into on the host (in
 * place: a file renamed over it is another inode, the user's), it is
 * the user's file now. */
static void remove_if_last(int fd, const char *path)
{
	struct stat st;

	if (flock(fd, LOCK_EX | LOCK_NB) < 0 || !still_there(fd, path) ||
	    fstat(fd, &st) < 0)
		return;
	if (S_ISREG(st.st_mode)) {
		if (empty_file(fd)) {
			(void)unlink(path);
			return;
		}
		(void)fremovexattr(fd, SB_PLACEHOLDER_XATTR);
		ar_log(AR_LOG_INFO,
		       "sandbox: `%s` was an empty placeholder file and now holds what the host wrote; left in place",
		       path);
		return;
	}
	if (rmdir(path) == 0)
		return;
	if (errno == ENOTEMPTY || errno == EEXIST) {
		/* written into on the host: the user's directory now */
		(void)fremovexattr(fd, SB_PLACEHOLDER_XATTR);
		ar_log(AR_LOG_INFO,
		       "sandbox: `%s` was an empty placeholder and now holds files written on the host; left in place",
		       path);
	}
}

/* A placeholder left by an earlier run (its sandbox killed): marked,
 * held by nobody. */
static void remove_stale(const char *path)
{
	_cleanup_close_ int fd = open_dir_or_file(path);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !marked(fd, &st))
		return;
	remove_if_last(fd, path);
}

int sb_placeholder_take(struct sb_placeholders *ph, const char *path,
			bool mount, bool file, struct ar_error *err)
{
	if (!mount) {
		remove_stale(path);
		return 0;
	}
	return take_one(ph, path, file, err);
}

/* The keeper's fds: the locks and its socket; all else closed, the
 * standard ones on /dev/null (nobody waits for its output). */
static void keeper_fds(const struct sb_placeholders *ph, int sock, int err)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	unsigned int from = 3;
	int max = sock > err ? sock : err;

	for (size_t i = 0; i < ph->n; i++)
		if (ph->v[i].fd > max)
			max = ph->v[i].fd;
	for (size_t i = 0; i < ph->n_orphan_fds; i++)
		if (ph->orphan_fds[i] > max)
			max = ph->orphan_fds[i];
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
	}
	for (int fd = 3; fd <= max; fd++) {
		bool keep = fd == sock || fd == err;

		for (size_t i = 0; !keep && i < ph->n; i++)
			keep = ph->v[i].fd == fd;
		for (size_t i = 0; !keep && i < ph->n_orphan_fds; i++)
			keep = ph->orphan_fds[i] == fd;
		if (!keep)
			continue;
		if ((unsigned int)fd > from)
			syscall(SYS_close_range, from, (unsigned int)fd - 1, 0);
		from = (unsigned int)fd + 1;
	}
	syscall(SYS_close_range, from, ~0U, 0);
}

/* One message of agentrun's (sb_placeholders_keep_grant, _revoke, the
 * release): 1 for the release ('n'), 0 for any other, -1 when agentrun
 * is gone (end of file). */
static int keeper_msg(struct sb_placeholders *ph, int sock)
{
	char buf[2 * PATH_MAX + 64];
	int fd = -1;
	ssize_t n = ar_recvmsg_fd(sock, buf, sizeof(buf) - 2, &fd);

	if (n < 0 && errno == EAGAIN)
		return 0;
	if (n <= 0)
		return -1;
	buf[n] = buf[n + 1] = '\0';
	switch (buf[0]) {
	case 'n':
		if (fd >= 0)
			close(fd);
		return 1;
	case 'g': { /* a live --rw grant: g, since, dir */
		struct sb_hostexec_dir d = { 0 };

		if (fd >= 0)
			close(fd);
		if ((size_t)n < 1 + sizeof(d.since) + 2)
			return 0;
		memcpy(&d.since, buf + 1, sizeof(d.since));
		d.dir = ar_xstrdup(buf + 1 + sizeof(d.since));
		ph->grants = ar_xrealloc(
			ph->grants, (ph->n_grants + 1) * sizeof(*ph->grants));
		ph->grants[ph->n_grants++] = d;
		return 0;
	}
	case 'h': { /* one of its placeholders: h, ours, dir, path + fd */
		const char *dir = buf + 2, *path = dir + strlen(dir) + 1;
		struct stat st;

		if (fd < 0)
			return 0;
		if (fstat(fd, &st) < 0 || !*path) {
			close(fd);
			return 0;
		}
		ph->v = ar_xrealloc(ph->v, (ph->n + 1) * sizeof(*ph->v));
		ph->v[ph->n++] = (struct sb_placeholder){
			ar_xstrdup(path), fd,
			st.st_dev,	  st.st_ino,
			buf[1] == 'o',	  ar_xstrdup(dir)
		};
		return 0;
	}
	case 'r': { /* revoked: its placeholders are agentrun's to remove */
		size_t kept = 0;

		if (fd >= 0)
			close(fd);
		for (size_t i = 0; i < ph->n; i++) {
			if (ph->v[i].grant &&
			    strcmp(ph->v[i].grant, buf + 1) == 0) {
				close(ph->v[i].fd);
				free(ph->v[i].path);
				free(ph->v[i].grant);
				continue;
			}
			ph->v[kept++] = ph->v[i];
		}
		ph->n = kept;
		return 0;
	}
	default:
		if (fd >= 0)
			close(fd);
		return 0;
	}
}

static void keeper(struct sb_placeholders *ph, int sock, pid_t parent)
{
	static const int ignored[] = { SIGINT,	SIGQUIT, SIGHUP,
				       SIGTERM, SIGTSTP, SIGPIPE };
	struct pollfd pfd[2] = { { .events = POLLIN },
				 { .fd = sock, .events = POLLIN } };
	/* the orphan function's warnings go where agentrun's went */
	int err = ph->orphan ? fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3) : -1;
	bool released = false, gone = false;
	char c;

	for (size_t i = 0; i < AR_ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	/* a session of its own: what kills agentrun's process group or
	 * session (`kill -9 -PGID`, a closed terminal's SIGHUP, a shell's
	 * job control) misses it. It still ends right after the container:
	 * nothing here waits for anything else. */
	(void)setsid();
	keeper_fds(ph, sock, err);
	prctl(PR_SET_NAME, "agentrun-keep");
	/* the container's pidfd, or nothing (agentrun gone before it
	 * existed, or the start failed) */
	if (ar_recvmsg_fd(sock, &c, 1, &pfd[0].fd) <= 0 || pfd[0].fd < 0)
		_exit(0);
	/* until the container ends: agentrun's live grants (their walk,
	 * their placeholders' locks), its release, or its end of file */
	for (;;) {
		int n = poll(pfd, gone || released ? 1 : 2, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || pfd[0].revents)
			break;
		if (pfd[1].revents) {
			int m = keeper_msg(ph, sock);

			released = released || m == 1;
			gone = gone || m < 0;
		}
	}
	/* the container has ended. agentrun alive sends a byte when it
	 * releases the placeholders; the socket's end of file means it is
	 * gone, all its threads (its parent pid is no sign: the pid stays
	 * while a thread of it lives, and a dying main thread fires the
	 * container's PDEATHSIG first). The last one out is this process
	 * then, and what agentrun would have done after the exit is done
	 * here. */
	while (!released && !gone) {
		int m = keeper_msg(ph, sock);

		released = m == 1;
		gone = m < 0;
	}
	if (released)
		_exit(0);
	for (size_t i = 0; i < ph->n; i++)
		if (ph->v[i].ours)
			remove_if_last(ph->v[i].fd, ph->v[i].path);
	if (ph->orphan) {
		if (err >= 0)
			dup2(err, STDERR_FILENO);
		ar_warn("sandbox: agentrun (pid %d) ended before its sandbox: its keeper (pid %d) runs the end-of-run check (docs/sandbox.md, \"A killed sandbox\")",
			(int)parent, (int)getpid());
		ph->orphan(ph->orphan_arg);
	}
	_exit(0);
}

void sb_placeholders_keep(struct sb_placeholders *ph)
{
	int sv[2];
	pid_t pid, self = getpid();

	if ((ph->n == 0 && !ph->orphan) ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		close(sv[0]);
		keeper(ph, sv[1], self);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return;
	}
	ph->keeper = pid;
	ph->keeper_sock = sv[0];
}

void sb_placeholders_keep_pid(struct sb_placeholders *ph, pid_t pid)
{
	int pidfd;

	pthread_mutex_lock(&keeper_lock);
	if (ph->keeper_sock < 0) {
		pthread_mutex_unlock(&keeper_lock);
		return;
	}
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd >= 0) {
		(void)ar_sendmsg_fd(ph->keeper_sock, "p", 1, pidfd);
		close(pidfd);
	} else {
		close(ph->keeper_sock);
		ph->keeper_sock = -1;
	}
	pthread_mutex_unlock(&keeper_lock);
	/* else kept open: its end of file tells the keeper agentrun is
	 * gone (keeper_gone sends a byte instead) */
}

void sb_placeholders_keep_grant(struct sb_placeholders *ph, const char *dir,
				const struct timespec *since,
				const struct sb_placeholders *gph)
{
	char buf[2 * PATH_MAX + 64];
	size_t dl = strlen(dir);

	if (dl >= PATH_MAX)
		return;
	pthread_mutex_lock(&keeper_lock);
	if (ph->keeper_sock < 0)
		goto out;
	buf[0] = 'g';
	memcpy(buf + 1, since, sizeof(*since));
	memcpy(buf + 1 + sizeof(*since), dir, dl + 1);
	(void)ar_sendmsg_fd(ph->keeper_sock, buf, 1 + sizeof(*since) + dl + 1,
			    -1);
	for (size_t i = 0; gph && i < gph->n; i++) {
		size_t pl = strlen(gph->v[i].path);

		if (pl >= PATH_MAX)
			continue;
		buf[0] = 'h';
		buf[1] = gph->v[i].ours ? 'o' : '-';
		memcpy(buf + 2, dir, dl + 1);
		memcpy(buf + 2 + dl + 1, gph->v[i].path, pl + 1);
		(void)ar_sendmsg_fd(ph->keeper_sock, buf, 2 + dl + 1 + pl + 1,
				    gph->v[i].fd);
	}
out:
	pthread_mutex_unlock(&keeper_lock);
}

void sb_placeholders_keep_revoke(struct sb_placeholders *ph, const char *dir)
{
	char buf[PATH_MAX + 2];
	size_t dl = strlen(dir);

	if (dl >= PATH_MAX)
		return;
	pthread_mutex_lock(&keeper_lock);
	if (ph->keeper_sock >= 0) {
		buf[0] = 'r';
		memcpy(buf + 1, dir, dl + 1);
		(void)ar_sendmsg_fd(ph->keeper_sock, buf, dl + 2, -1);
	}
	pthread_mutex_unlock(&keeper_lock);
}

/* The keeper gone: the container's first process has exited (or never
 * existed). False when it still runs after KEEPER_WAIT_MS. */
static bool keeper_gone(struct sb_placeholders *ph)
{
	struct pollfd pfd = { .events = POLLIN };

	pthread_mutex_lock(&keeper_lock);
	if (ph->keeper_sock >= 0) {
		/* alive: the keeper leaves the rest to this process */
		(void)!send(ph->keeper_sock, "n", 1, MSG_NOSIGNAL);
		close(ph->keeper_sock);
		ph->keeper_sock = -1;
	}
	pthread_mutex_unlock(&keeper_lock);
	if (ph->keeper <= 0)
		return true;
	/* the run's supervision may have reaped it already (ESRCH) */
	pfd.fd = (int)syscall(SYS_pidfd_open, ph->keeper, 0);
	if (pfd.fd >= 0) {
		int n;

		while ((n = poll(&pfd, 1, KEEPER_WAIT_MS)) < 0 &&
		       errno == EINTR)
			;
		close(pfd.fd);
		if (n == 0)
			return false;
	}
	while (waitpid(ph->keeper, NULL, 0) < 0 && errno == EINTR)
		;
	ph->keeper = -1;
	return true;
}

static void release(struct sb_placeholders *ph, bool gone)
{
	for (size_t i = 0; i < ph->n; i++) {
		if (gone && ph->v[i].ours)
			remove_if_last(ph->v[i].fd, ph->v[i].path);
		close(ph->v[i].fd);
		free(ph->v[i].path);
		free(ph->v[i].grant);
	}
	free(ph->v);
	ph->v = NULL;
	ph->n = 0;
	for (size_t i = 0; i < ph->n_grants; i++)
		free(ph->grants[i].dir);
	free(ph->grants);
	ph->grants = NULL;
	ph->n_grants = 0;
}

void sb_placeholders_release(struct sb_placeholders *ph)
{
	bool gone = keeper_gone(ph);

	if (!gone)
		ar_warn("sandbox: the sandbox's first process still runs; its placeholders stay until it ends (the next start removes them)");
	release(ph, gone);
}

void sb_placeholders_forget(struct sb_placeholders *ph)
{
	release(ph, false);
}
