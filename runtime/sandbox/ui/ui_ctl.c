/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dashboard's control-socket client (ui_ctl.h). */
#define _GNU_SOURCE
#include "ui_ctl.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "state.h"
#include "utils.h"

#define REPLY_MAX (1 << 20)
#define REPLY_TIMEOUT_MS 5000

char **ui_ctl_names(const char *root, size_t *n)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.control", root);
	struct dirent **ents = NULL;
	char **v;
	int k;

	*n = 0;
	k = scandir(dir, &ents, NULL, alphasort);
	if (k < 0)
		return ar_xcalloc(1, sizeof(char *));
	v = ar_xcalloc((size_t)k + 1, sizeof(char *));
	for (int i = 0; i < k; i++) {
		size_t l = strlen(ents[i]->d_name);
		struct ar_error e = AR_ERROR_INIT;
		_cleanup_free_ char *name = NULL;

		if (ents[i]->d_name[0] != '.' && l > 5 &&
		    strcmp(ents[i]->d_name + l - 5, ".sock") == 0) {
			name = ar_xasprintf("%.*s", (int)(l - 5),
					    ents[i]->d_name);
			if (ar_state_validate_id(name, &e) == 0)
				v[(*n)++] = ar_steal_ptr(&name);
		}
		free(ents[i]);
	}
	free(ents);
	return v;
}

int ui_ctl_connect(const char *root, const char *name, struct ar_error *err)
{
	_cleanup_free_ char *dir = ar_xasprintf("%s/.control", root);
	_cleanup_close_ int dfd = -1;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (ar_state_validate_id(name, err) < 0)
		return -1;
	dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "control plane: `%s`", dir);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s.sock",
		 dfd, name);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return ar_error_set(err, errno, "control plane: socket");
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;

		close(fd);
		return ar_error_set(err, e, "no sandbox named `%s` is running",
				    name);
	}
	return fd;
}

int ui_ctl_call(int fd, const char *req, char **out, struct ar_error *err)
{
	size_t got = 0, cap = 4096;
	_cleanup_free_ char *buf = NULL;

	*out = NULL;
	if (ar_write_all(fd, req, strlen(req)) < 0)
		return ar_error_set(err, errno, "control plane: send");
	buf = ar_xmalloc(cap);
	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		char *nl;
		ssize_t n;

		if (poll(&p, 1, REPLY_TIMEOUT_MS) <= 0)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"control plane: no reply within %d ms",
				REPLY_TIMEOUT_MS);
		if (got + 1 >= cap) {
			if (cap >= REPLY_MAX)
				return ar_error_set_plain(
					err, EMSGSIZE,
					"control plane: reply too large");
			cap *= 2;
			buf = ar_xrealloc(buf, cap);
		}
		n = read(fd, buf + got, cap - got - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return ar_error_set_plain(
				err, EPIPE,
				"control plane: the sandbox closed the connection without a reply");
		got += (size_t)n;
		buf[got] = '\0';
		nl = memchr(buf, '\n', got);
		if (nl) {
			*nl = '\0';
			*out = ar_steal_ptr(&buf);
			return 0;
		}
	}
}
