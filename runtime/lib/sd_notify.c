/* SPDX-License-Identifier: GPL-2.0-or-later */
/* NOTIFY_SOCKET proxied as crun does; see sd_notify.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sd_notify.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "oci_config.h"
#include "utils.h"

#define READY "READY=1"
#define BARRIER_MS 30000 /* crun: sd_notify_barrier(0, 30 s) */

const char *ar_notify_caller(void)
{
	const char *s = getenv("NOTIFY_SOCKET");

	if (!s || !*s)
		return NULL;
	if (s[0] != '/') {
		ar_warn("NOTIFY_SOCKET `%s` is not an absolute path: the container's readiness is not proxied",
			s);
		return NULL;
	}
	return s;
}

static int set_env(struct oci_config *cfg, const char *entry)
{
	struct oci_strv *env = &cfg->process.env;
	size_t klen = strcspn(entry, "=") + 1;
	char **v;

	for (size_t i = 0; i < env->n; i++) {
		if (strncmp(env->v[i], entry, klen) == 0) {
			env->v[i] = oci_arena_strdup(&cfg->arena, entry);
			return 0;
		}
	}
	v = oci_arena_calloc(&cfg->arena, env->n + 2, sizeof(*v));
	if (env->n)
		memcpy(v, env->v, env->n * sizeof(*v));
	v[env->n] = oci_arena_strdup(&cfg->arena, entry);
	env->v = v;
	env->n++;
	return 0;
}

int ar_notify_plan(struct oci_config *cfg, const char *path, int *mount_idx,
		   struct ar_error *err)
{
	static const char *const opts[] = { "rbind", "rprivate" };
	struct oci_mount *v, *mt;

	if (strlen(path) + sizeof("/" AR_NOTIFY_SOCK) >
	    sizeof(((struct sockaddr_un *)0)->sun_path))
		return ar_error_set_plain(
			err, ENAMETOOLONG,
			"NOTIFY_SOCKET `%s`: too long for a socket path with `/" AR_NOTIFY_SOCK
			"` added",
			path);
	v = oci_arena_calloc(&cfg->arena, cfg->n_mounts + 1, sizeof(*v));
	if (cfg->n_mounts)
		memcpy(v, cfg->mounts, cfg->n_mounts * sizeof(*v));
	mt = &v[cfg->n_mounts];
	mt->destination = oci_arena_strdup(&cfg->arena, path);
	mt->type = oci_arena_strdup(&cfg->arena, "bind");
	mt->source = NULL; /* ar_notify_dir_make */
	mt->options.v = oci_arena_calloc(&cfg->arena, 3, sizeof(char *));
	for (size_t i = 0; i < 2; i++)
		mt->options.v[i] = oci_arena_strdup(&cfg->arena, opts[i]);
	mt->options.n = 2;
	cfg->mounts = v;
	*mount_idx = (int)cfg->n_mounts++;
	return set_env(cfg, oci_arena_printf(&cfg->arena,
					     "NOTIFY_SOCKET=%s/" AR_NOTIFY_SOCK,
					     path));
}

int ar_notify_dir_make(int state_dirfd, char **host_dir, struct ar_error *err)
{
	char link[64], dir[4096];
	ssize_t n;

	if (mkdirat(state_dirfd, AR_NOTIFY_DIR, 0755) < 0 ||
	    fchmodat(state_dirfd, AR_NOTIFY_DIR, 0755, 0) < 0)
		return ar_error_set(err, errno,
				    "NOTIFY_SOCKET: make `" AR_NOTIFY_DIR
				    "` in the state directory");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", state_dirfd);
	n = readlink(link, dir, sizeof(dir) - 1);
	if (n <= 0)
		return ar_error_set(
			err, n < 0 ? errno : EINVAL,
			"NOTIFY_SOCKET: the state directory's path");
	dir[n] = '\0';
	*host_dir = ar_xasprintf("%s/" AR_NOTIFY_DIR, dir);
	return 0;
}

bool ar_notify_dir_exists(int state_dirfd)
{
	struct stat st;

	return fstatat(state_dirfd, AR_NOTIFY_DIR, &st, AT_SYMLINK_NOFOLLOW) ==
		       0 &&
	       S_ISDIR(st.st_mode);
}

int ar_notify_listen(int state_dirfd, struct ar_error *err)
{
	_cleanup_close_ int dfd = -1, fd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int r;

	dfd = openat(state_dirfd, AR_NOTIFY_DIR,
		     O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno,
				    "NOTIFY_SOCKET: open `" AR_NOTIFY_DIR
				    "` in the state directory");
	/* a socket left by a previous start, or anything else there: the
	 * last component is never followed (unlinkat, bind) */
	if (unlinkat(dfd, AR_NOTIFY_SOCK, 0) < 0 && errno != ENOENT)
		return ar_error_set(err, errno,
				    "NOTIFY_SOCKET: remove the old socket");
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "NOTIFY_SOCKET: socket");
	snprintf(sa.sun_path, sizeof(sa.sun_path),
		 "/proc/self/fd/%d/" AR_NOTIFY_SOCK, dfd);
	/* 0777 from the start (no chmod by path afterwards) */
	old = umask(0);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0)
		return ar_error_set(
			err, errno,
			"NOTIFY_SOCKET: bind the container's socket");
	return ar_steal_fd(&fd);
}

static int addr_of(const char *to, struct sockaddr_un *sa, socklen_t *len,
		   struct ar_error *err)
{
	size_t n = strlen(to);

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (n == 0 || n >= sizeof(sa->sun_path))
		return ar_error_set_plain(
			err, EINVAL, "NOTIFY_SOCKET `%s`: not a socket path",
			to);
	memcpy(sa->sun_path, to, n);
	if (to[0] == '@') {
		sa->sun_path[0] = '\0';
		*len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
	} else {
		*len = (socklen_t)sizeof(*sa);
	}
	return 0;
}

/* sd_notify_barrier: BARRIER=1 with the write end of a pipe; the receiver
 * closing it (or discarding the message) says everything before was
 * read. */
static void barrier(int sfd)
{
	_cleanup_close_ int rd = -1, wr = -1;
	int p[2];
	char buf[CMSG_SPACE(sizeof(int))] = { 0 };
	char msg[] = "BARRIER=1";
	struct iovec iov = { .iov_base = msg, .iov_len = sizeof(msg) - 1 };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = buf,
			     .msg_controllen = sizeof(buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	struct pollfd pfd;

	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	rd = p[0];
	wr = p[1];
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &wr, sizeof(int));
	if (sendmsg(sfd, &mh, MSG_NOSIGNAL) < 0) {
		ar_debug("NOTIFY_SOCKET: barrier: %m");
		return;
	}
	close(ar_steal_fd(&wr));
	pfd = (struct pollfd){ .fd = rd, .events = POLLIN };
	if (poll(&pfd, 1, BARRIER_MS) <= 0)
		ar_debug(
			"NOTIFY_SOCKET: the receiver did not read READY=1 within %d s",
			BARRIER_MS / 1000);
}

int ar_notify_send_ready(const char *to, struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	struct sockaddr_un sa;
	socklen_t len = 0;

	if (addr_of(to, &sa, &len, err) < 0)
		return -1;
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "NOTIFY_SOCKET: socket");
	if (connect(fd, (struct sockaddr *)&sa, len) < 0)
		return ar_error_set(err, errno, "NOTIFY_SOCKET `%s`: connect",
				    to);
	if (send(fd, READY, sizeof(READY) - 1, MSG_NOSIGNAL) < 0)
		return ar_error_set(err, errno,
				    "NOTIFY_SOCKET `%s`: send READY=1", to);
	barrier(fd);
	return 0;
}

int ar_notify_pump(int fd, const char *to, struct ar_error *err)
{
	bool ready = false;

	for (;;) {
		char buf[4096];
		ssize_t n = recv(fd, buf, sizeof(buf) - 1, MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			break;
		if (n < 0)
			return ar_error_set(
				err, errno,
				"NOTIFY_SOCKET: read the container's socket");
		buf[n] = '\0';
		/* as crun: READY=1 anywhere in the datagram */
		if (memmem(buf, (size_t)n, READY, sizeof(READY) - 1))
			ready = true;
	}
	if (!ready)
		return 0;
	if (ar_notify_send_ready(to, err) < 0)
		return -1;
	return 1;
}

int ar_notify_wait_ready(int fd, pid_t pid, int pidfd, const char *to,
			 struct ar_error *err)
{
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = fd, .events = POLLIN },
			{ .fd = pidfd, .events = POLLIN },
		};
		int n = poll(pfd, pidfd >= 0 ? 2 : 1, pidfd >= 0 ? -1 : 100);
		int r;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return ar_error_set(err, errno,
					    "NOTIFY_SOCKET: wait for READY=1");
		if (pfd[0].revents) {
			r = ar_notify_pump(fd, to, err);
			if (r != 0)
				return r < 0 ? -1 : 0;
		}
		/* the container exited without READY=1: nothing to wait for
		 * (as crun) */
		if (pidfd >= 0 ? (pfd[1].revents != 0) :
				 (kill(pid, 0) < 0 && errno == ESRCH))
			return 0;
	}
}
