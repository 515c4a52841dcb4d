/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sync protocol over the runtime's socketpair; see sync.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "sync.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

int ar_sync_send(int fd, int type, int value, struct ar_error *err)
{
	struct ar_sync_msg m = { .type = type, .value = value };
	ssize_t n;

	do
		n = send(fd, &m, offsetof(struct ar_sync_msg, err),
			 MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ar_error_set(
			err, errno, "sync with the %s",
			type == AR_SYNC_GO || type == AR_SYNC_USERNS_DONE ?
				"container process" :
				"runtime");
	return 0;
}

int ar_sync_send_error(int fd, const struct ar_error *e)
{
	struct ar_sync_msg m = { .type = AR_SYNC_ERROR, .value = 0 };
	size_t len = strnlen(e->msg, sizeof(e->msg) - 1);

	m.err.code = e->code;
	memcpy(m.err.msg, e->msg, len);
	m.err.msg[len] = '\0';
	return send(fd, &m, offsetof(struct ar_sync_msg, err.msg) + len + 1,
		    MSG_NOSIGNAL) < 0 ?
		       -1 :
		       0;
}

int ar_sync_recv(int fd, struct ar_sync_msg *m, struct ar_error *err)
{
	ssize_t n;

	memset(m, 0, sizeof(*m));
	do
		n = recv(fd, m, sizeof(*m), 0);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return ar_error_set(err, errno, "sync");
	if (n == 0) {
		m->type = 0;
		return 0;
	}
	if ((size_t)n < offsetof(struct ar_sync_msg, err))
		return ar_error_set_plain(err, EBADMSG, "sync: short message");
	m->err.msg[sizeof(m->err.msg) - 1] = '\0';
	return 0;
}
