/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Passing one file descriptor over a unix socket (SCM_RIGHTS): the
 * console socket, the seccomp listener, the sandbox's egress listener and
 * its audit listener all use these two.
 */
#ifndef AGENTRUN_FD_PASSING_H
#define AGENTRUN_FD_PASSING_H

#include <stddef.h>
#include <sys/types.h>

/* Send len bytes of data (len >= 1) with fd attached, or with no fd when
 * fd < 0; retried on EINTR, MSG_NOSIGNAL. Returns the bytes sent (the fd
 * travels with the first byte; a stream socket may take fewer than len),
 * or -1 with errno set. */
ssize_t ar_sendmsg_fd(int sock, const void *data, size_t len, int fd);

/* Receive up to size bytes into buf and at most one fd, O_CLOEXEC:
 * *fd = -1 when the message carried none (any further fds are closed).
 * Retried on EINTR. Returns the bytes received (0: the peer closed), or -1
 * with errno set. */
ssize_t ar_recvmsg_fd(int sock, void *buf, size_t size, int *fd);

#endif
