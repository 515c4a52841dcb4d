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
	/* both names are 9 characters: the colon is the 10th */
	if (colon - s != 9)
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

int ar_ui_port_file(const char *root, uint16_t *port, pid_t *pid)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/.ui/port", root);
	_cleanup_close_ int fd = -1;
	unsigned long long p, q;
	char buf[64], *sp, *nl;
	ssize_t n;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	sp = strchr(buf, ' ');
	nl = strchr(buf, '\n');
	if (!sp || !nl || nl < sp)
		return -1;
	*sp = *nl = '\0';
	if (ar_parse_u64(buf, &p) < 0 || p == 0 || p > 65535 ||
	    ar_parse_u64(sp + 1, &q) < 0 || q == 0 || q > INT32_MAX)
		return -1;
	*port = (uint16_t)p;
	*pid = (pid_t)q;
	return 0;
}

uint16_t ar_ui_port(const char *root)
{
	uint16_t port;
	pid_t pid;

	if (ar_ui_port_file(root, &port, &pid) < 0)
		return 0;
	/* a dashboard that was killed left its file: is it still there?
	 * (EPERM: alive, another user's) */
	if (kill(pid, 0) < 0 && errno == ESRCH)
		return 0;
	return port;
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
