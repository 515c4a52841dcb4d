/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress proxy's listening socket, created inside the sandbox's
 * network namespace: a forked child joins the container's user namespace
 * (which owns the netns; setns of a user namespace needs a single-thread
 * process, hence the child), then its netns, brings lo up, binds
 * 127.0.0.1:PORT and passes the socket back over SCM_RIGHTS. A socket
 * stays in the namespace it was created in, so agentrun accepts on it
 * from outside without running anything inside the sandbox.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "egress_proxy.h"
#include "fd_passing.h"
#include "net_loopback.h"
#include "utils.h"

/* "" + the fd on success, an error text without fd on failure. */
static void send_result(int sock, int fd, const char *msg)
{
	(void)ar_sendmsg_fd(sock, msg, strlen(msg) + 1, fd);
}

static bool same_ns(int fd, const char *self)
{
	struct stat a, b;

	return fstat(fd, &a) == 0 && stat(self, &b) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Listen on each of addrs[0..n) (inside the namespaces now joined); one
 * message per address: "" + the fd, "-" without fd for an optional one
 * the namespace has no address for, or an error text. */
static int child_listen(const struct ar_egress_addr *addrs, size_t n, int sock)
{
	char msg[512], text[INET6_ADDRSTRLEN];
	int one = 1;

	for (size_t i = 0; i < n; i++) {
		const struct ar_egress_addr *a = &addrs[i];
		struct sockaddr_storage ss;
		socklen_t len;
		int fd;

		len = ar_egress_sockaddr(a->family, a->addr, a->port, &ss);
		fd = socket(a->family,
			    (a->udp ? SOCK_DGRAM : SOCK_STREAM) | SOCK_CLOEXEC |
				    SOCK_NONBLOCK,
			    0);
		if (fd >= 0 && a->family == AF_INET6)
			setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one,
				   sizeof(one));
		if (fd < 0 ||
		    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one,
			       sizeof(one)) < 0 ||
		    bind(fd, (struct sockaddr *)&ss, len) < 0 ||
		    (!a->udp && listen(fd, 128) < 0)) {
			int e = errno;

			if (fd >= 0)
				close(fd);
			if (a->optional &&
			    (e == EADDRNOTAVAIL || e == EAFNOSUPPORT)) {
				send_result(sock, -1, "-");
				continue;
			}
			inet_ntop(a->family, a->addr, text, sizeof(text));
			snprintf(msg, sizeof(msg), "listen on %s%s%s:%u: %s",
				 a->family == AF_INET6 ? "[" : "", text,
				 a->family == AF_INET6 ? "]" : "",
				 (unsigned)a->port, strerror(e));
			send_result(sock, -1, msg);
			return 1;
		}
		send_result(sock, fd, "");
		close(fd);
	}
	return 0;
}

static int child_main(int userfd, int netfd, const struct ar_egress_addr *addrs,
		      size_t n, uint16_t capture_port, int sock)
{
	struct ar_error err = AR_ERROR_INIT;
	char msg[512];

	if (!same_ns(userfd, "/proc/self/ns/user") &&
	    setns(userfd, CLONE_NEWUSER) < 0) {
		snprintf(msg, sizeof(msg), "join the user namespace: %s",
			 strerror(errno));
		send_result(sock, -1, msg);
		return 1;
	}
	if (setns(netfd, CLONE_NEWNET) < 0) {
		snprintf(msg, sizeof(msg), "join the network namespace: %s",
			 strerror(errno));
		send_result(sock, -1, msg);
		return 1;
	}
	if (ar_net_loopback_up(&err) < 0 ||
	    (capture_port && ar_egress_capture_setup(capture_port, &err) < 0)) {
		send_result(sock, -1, err.msg);
		return 1;
	}
	return child_listen(addrs, n, sock);
}

/* 0 and *fd (-1 for a skipped optional address), or -1 and msg. */
static int recv_result(int sock, int *fd, char *msg, size_t size)
{
	ssize_t n = ar_recvmsg_fd(sock, msg, size - 1, fd);

	if (n <= 0) {
		snprintf(msg, size, "the helper process exited");
		return -1;
	}
	msg[n] = '\0';
	if (*fd >= 0 || strcmp(msg, "-") == 0)
		return 0;
	return -1;
}

socklen_t ar_egress_sockaddr(int family, const uint8_t *addr, uint16_t port,
			     struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, addr, 4);
		return sizeof(*sin);
	}
	{
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, addr, 16);
		return sizeof(*sin6);
	}
}

/* The user and network namespaces of pid as O_CLOEXEC fds (both set, or
 * -1 with errno and nothing left open by this call). */
static int open_namespaces(pid_t pid, int *userfd, int *netfd)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	*userfd = open(path, O_RDONLY | O_CLOEXEC);
	if (*userfd < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	*netfd = open(path, O_RDONLY | O_CLOEXEC);
	if (*netfd < 0) {
		int saved = errno;

		close(*userfd);
		*userfd = -1;
		errno = saved;
		return -1;
	}
	return 0;
}

int ar_egress_listen_in(pid_t pid, const struct ar_egress_addr *addrs, size_t n,
			uint16_t capture_port, int *fds, struct ar_error *err)
{
	_cleanup_close_ int userfd = -1, netfd = -1, sock = -1;
	char msg[512];
	int sv[2], st, r = 0;
	size_t got = 0;
	pid_t child;

	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	if (open_namespaces(pid, &userfd, &netfd) < 0)
		return ar_error_set(err, errno,
				    "egress proxy: namespaces of process %d",
				    (int)pid);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "egress proxy: socketpair");
	sock = sv[0];
	child = fork();
	if (child < 0) {
		close(sv[1]);
		return ar_error_set(err, errno, "egress proxy: fork");
	}
	if (child == 0) {
		close(sv[0]);
		_exit(child_main(userfd, netfd, addrs, n, capture_port, sv[1]));
	}
	close(sv[1]);
	while (got < n && r == 0) {
		r = recv_result(sock, &fds[got], msg, sizeof(msg));
		if (r == 0)
			got++;
	}
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (r < 0) {
		for (size_t i = 0; i < got; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
		}
		return ar_error_set_plain(
			err, EPERM,
			"egress proxy: listening socket in the sandbox's network namespace: %s",
			msg);
	}
	return 0;
}

/* ---- the socket maker (--publish) ---- */

struct ar_egress_sockmaker {
	pid_t pid;
	int sock;
	pthread_mutex_t lock;
};

/* The helper: joins, then for each request (an int: the family) sends
 * back a fresh socket, until its channel closes. */
static int maker_main(int userfd, int netfd, int sock)
{
	int family;

	if ((!same_ns(userfd, "/proc/self/ns/user") &&
	     setns(userfd, CLONE_NEWUSER) < 0) ||
	    setns(netfd, CLONE_NEWNET) < 0) {
		send_result(sock, -1, strerror(errno));
		return 1;
	}
	/* keep nothing of agentrun's open (host sockets of --publish) */
	if (sock > 3)
		close_range(3, (unsigned)sock - 1, 0);
	close_range((unsigned)sock + 1, ~0U, 0);
	send_result(sock, -1, "-"); /* ready */
	while (recv(sock, &family, sizeof(family), 0) == sizeof(family)) {
		int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);

		send_result(sock, fd, fd < 0 ? strerror(errno) : "");
		if (fd >= 0)
			close(fd);
	}
	return 0;
}

int ar_egress_sockmaker_start(pid_t pid, struct ar_egress_sockmaker **out,
			      struct ar_error *err)
{
	_cleanup_close_ int userfd = -1, netfd = -1;
	struct ar_egress_sockmaker *m;
	char msg[512];
	int sv[2], fd = -1, st;
	pid_t child;

	*out = NULL;
	if (open_namespaces(pid, &userfd, &netfd) < 0)
		return ar_error_set(err, errno,
				    "--publish: namespaces of process %d",
				    (int)pid);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "--publish: socketpair");
	child = fork();
	if (child < 0) {
		close(sv[0]);
		close(sv[1]);
		return ar_error_set(err, errno, "--publish: fork");
	}
	if (child == 0) {
		close(sv[0]);
		_exit(maker_main(userfd, netfd, sv[1]));
	}
	close(sv[1]);
	if (recv_result(sv[0], &fd, msg, sizeof(msg)) < 0) {
		close(sv[0]);
		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		return ar_error_set_plain(
			err, EPERM,
			"--publish: a helper in the sandbox's network namespace: %s",
			msg);
	}
	m = ar_xcalloc(1, sizeof(*m));
	m->pid = child;
	m->sock = sv[0];
	pthread_mutex_init(&m->lock, NULL);
	*out = m;
	return 0;
}

int ar_egress_sockmaker_socket(struct ar_egress_sockmaker *m, int family)
{
	char msg[256];
	int fd = -1, r;

	pthread_mutex_lock(&m->lock);
	r = send(m->sock, &family, sizeof(family), MSG_NOSIGNAL) ==
			    sizeof(family) ?
		    recv_result(m->sock, &fd, msg, sizeof(msg)) :
		    -1;
	pthread_mutex_unlock(&m->lock);
	if (r < 0 || fd < 0) {
		errno = EIO;
		return -1;
	}
	return fd;
}

void ar_egress_sockmaker_stop(struct ar_egress_sockmaker *m)
{
	int st;

	if (!m)
		return;
	close(m->sock);
	while (waitpid(m->pid, &st, 0) < 0 && errno == EINTR)
		;
	pthread_mutex_destroy(&m->lock);
	free(m);
}
