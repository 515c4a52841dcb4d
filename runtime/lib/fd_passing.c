/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "config.h"

#include "fd_passing.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 4 /* room to receive (and close) a few unexpected ones */

ssize_t ar_sendmsg_fd(int sock, const void *data, size_t len, int fd)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = (void *)data, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *c;

		memset(&u, 0, sizeof(u));
		msg.msg_control = u.buf;
		msg.msg_controllen = sizeof(u.buf);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t ar_recvmsg_fd(int sock, void *buf, size_t size, int *fd)
{
	union {
		char buf[CMSG_SPACE(MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = u.buf,
			      .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	for (c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
		size_t nfds, i;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		nfds = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (i = 0; i < nfds; i++) {
			int got;

			memcpy(&got, CMSG_DATA(c) + i * sizeof(int),
			       sizeof(int));
			if (*fd < 0)
				*fd = got;
			else
				close(got);
		}
	}
	return n;
}
