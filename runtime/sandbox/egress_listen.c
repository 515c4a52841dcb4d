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

static int child_main(int userfd, int netfd, uint16_t port, int sock)
{
	struct ar_error err = AR_ERROR_INIT;
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	char msg[512];
	int one = 1, fd;

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
	if (ar_net_loopback_up(&err) < 0) {
		send_result(sock, -1, err.msg);
		return 1;
	}
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    listen(fd, 128) < 0) {
		snprintf(msg, sizeof(msg), "listen on 127.0.0.1:%u: %s",
			 (unsigned)port, strerror(errno));
		send_result(sock, -1, msg);
		return 1;
	}
	send_result(sock, fd, "");
	return 0;
}

static int recv_result(int sock, int *fd, char *msg, size_t size)
{
	ssize_t n = ar_recvmsg_fd(sock, msg, size - 1, fd);

	if (n <= 0) {
		snprintf(msg, size, "the helper process exited");
		return -1;
	}
	msg[n] = '\0';
	return *fd >= 0 ? 0 : -1;
}

int ar_egress_listen_in(pid_t pid, uint16_t port, int *out,
			struct ar_error *err)
{
	_cleanup_close_ int userfd = -1, netfd = -1, sock = -1;
	char path[64], msg[512];
	int sv[2], st, r;
	pid_t child;

	*out = -1;
	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	userfd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/ns/net", (int)pid);
	netfd = open(path, O_RDONLY | O_CLOEXEC);
	if (userfd < 0 || netfd < 0)
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
		_exit(child_main(userfd, netfd, port, sv[1]));
	}
	close(sv[1]);
	r = recv_result(sock, out, msg, sizeof(msg));
	while (waitpid(child, &st, 0) < 0 && errno == EINTR)
		;
	if (r < 0)
		return ar_error_set_plain(
			err, EPERM,
			"egress proxy: listening socket in the sandbox's network namespace: %s",
			msg);
	return 0;
}
