/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The dashboard's port: --listen parsed, its port file ROOT/.ui/port
 * ("PORT PID\n"), and the check a sandbox start makes with it (ui.h): a
 * host-loopback `--net allow=` rule may not show the dashboard inside a
 * sandbox.
 */
#define _GNU_SOURCE
#include "ui.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "utils.h"

int ar_ui_parse_listen(const char *s, uint16_t *port, struct ar_error *err)
{
	const char *colon = strrchr(s, ':');
	unsigned long long p;

	if (!colon)
		return ar_error_set_plain(
			err, EINVAL,
			"ui: --listen `%s`: expected 127.0.0.1:PORT or localhost:PORT",
			s);
	if ((size_t)(colon - s) != strlen("127.0.0.1") &&
	    (size_t)(colon - s) != strlen("localhost"))
		goto not_loopback;
	if (strncmp(s, "127.0.0.1:", 10) != 0 &&
	    strncmp(s, "localhost:", 10) != 0)
		goto not_loopback;
	if (ar_parse_u64(colon + 1, &p) < 0 || p > 65535)
		return ar_error_set_plain(
			err, EINVAL, "ui: --listen `%s`: `%s` is not a port", s,
			colon + 1);
	*port = (uint16_t)p;
	return 0;
not_loopback:
	return ar_error_set_plain(
		err, EINVAL,
		"ui: --listen `%s`: the dashboard listens on 127.0.0.1 only (127.0.0.1:PORT or localhost:PORT)",
		s);
}

uint16_t ar_ui_port(const char *root)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/.ui/port", root);
	_cleanup_close_ int fd = -1;
	char buf[64];
	unsigned port = 0;
	int pid = 0;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if (sscanf(buf, "%u %d", &port, &pid) != 2 || port == 0 ||
	    port > 65535 || pid <= 0)
		return 0;
	/* a dashboard that was killed left its file: is it still there?
	 * (EPERM: alive, another user's) */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	return (uint16_t)port;
}

static int check_port(const struct ar_egress_policy *p, uint16_t port,
		      struct ar_error *err)
{
	for (size_t i = 0; port && i < p->n_rules; i++) {
		const struct ar_egress_rule *r = &p->rules[i];

		if (!r->family ||
		    ar_egress_addr_class(AF_INET6, r->addr) != AR_ADDR_LOOPBACK)
			continue;
		if (r->port == port || r->port == 0)
			return ar_error_set_plain(
				err, EPERM,
				"sandbox: --net allow=%s: port %u of the host's loopback is the web dashboard's (agentrun ui): it is never shown inside a sandbox",
				r->text, (unsigned)port);
	}
	return 0;
}

int ar_ui_check_policy(const char *root, const struct ar_egress_policy *p,
		       struct ar_error *err)
{
	if (!p || !p->n_rules)
		return 0;
	if (check_port(p, ar_ui_port(root), err) < 0)
		return -1;
	/* root's dashboard shows root's sandboxes, on the same loopback */
	if (strcmp(root, "/run/agentrun") != 0 &&
	    check_port(p, ar_ui_port("/run/agentrun"), err) < 0)
		return -1;
	return 0;
}
