/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The process behind a proxied connection (control_peer.h). */
#define _GNU_SOURCE
#include "control_peer.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utils.h"

#define TABLE_MAX (4 << 20) /* a tcp table read: at most 4 MiB */

/* A hex word of the table: the bytes of a u32 as the kernel printed it
 * (%08X of the value in memory) */
static bool hex_u32(const char *s, uint32_t *v)
{
	char buf[9], *end;

	memcpy(buf, s, 8);
	buf[8] = '\0';
	*v = (uint32_t)strtoul(buf, &end, 16);
	return end == buf + 8;
}

/* After a line's local address: "lport rem:rport st tx:rx tr:tm retr uid
 * timeout inode"; the local port (hex) and the inode (decimal). */
static bool tcp_fields(const char *s, unsigned long *lport,
		       unsigned long *inode)
{
	char *end;

	errno = 0;
	*lport = strtoul(s, &end, 16);
	if (errno || end == s || *end != ' ')
		return false;
	s = end;
	/* rem:rport, st, tx:rx, tr:tm, retr, uid, timeout: 7 fields */
	for (int f = 0; f < 7; f++) {
		while (*s == ' ')
			s++;
		if (!*s || *s == '\n')
			return false;
		while (*s && *s != ' ' && *s != '\n')
			s++;
	}
	while (*s == ' ')
		s++;
	*inode = strtoul(s, &end, 10);
	return !errno && end != s;
}

unsigned long ctl_peer_tcp_inode(const char *table, const unsigned char *addr,
				 size_t alen, unsigned port)
{
	const char *l = strchr(table, '\n'); /* the header */

	while (l && *++l) {
		const char *p = l, *colon;
		unsigned char a[16];
		unsigned long lport, inode;
		bool match = true;

		while (*p == ' ')
			p++;
		p = strchr(p, ':'); /* "sl:" */
		if (!p)
			break;
		p++;
		while (*p == ' ')
			p++;
		colon = strchr(p, ':');
		if (!colon || (size_t)(colon - p) != alen * 2)
			goto next;
		for (size_t w = 0; w < alen / 4; w++) {
			uint32_t v;

			if (!hex_u32(p + 8 * w, &v))
				goto next;
			memcpy(a + 4 * w, &v, 4);
		}
		match = memcmp(a, addr, alen) == 0;
		/* lport rem:rport st tx:rx tr:tm retr uid timeout inode */
		if (match && tcp_fields(colon + 1, &lport, &inode) &&
		    lport == port && inode)
			return inode;
next:
		l = strchr(l, '\n');
	}
	return 0;
}

static char *read_small(const char *path, size_t max, size_t *len)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char *buf;
	size_t got = 0, cap = 16384;

	if (fd < 0)
		return NULL;
	buf = ar_xmalloc(cap + 1);
	for (;;) {
		ssize_t n;

		if (got == cap) {
			if (cap >= max)
				break;
			cap *= 2;
			buf = ar_xrealloc(buf, cap + 1);
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	buf[got] = '\0';
	if (len)
		*len = got;
	return buf;
}

/* whether PID holds the socket `want` ("socket:[INODE]") */
static bool holds(const char *pid, const char *want)
{
	char path[300], link[64];
	struct dirent *e;
	DIR *d;
	int n = 0;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%s/fd", pid);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (e = readdir(d)) && n++ < CTL_PEER_MAX_FDS) {
		ssize_t l;

		if (e->d_name[0] == '.')
			continue;
		l = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (l <= 0)
			continue;
		link[l] = '\0';
		found = strcmp(link, want) == 0;
	}
	closedir(d);
	return found;
}

static void describe(struct ctl_peer *out)
{
	char path[64], link[4096];
	size_t len = 0, o = 0;
	ssize_t l;
	char *cmd, *status, *ns;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)out->pid);
	l = readlink(path, link, sizeof(link) - 1);
	if (l > 0)
		ar_quote_to(out->exe, sizeof(out->exe), link, (size_t)l);
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)out->pid);
	cmd = read_small(path, 4096, &len);
	for (size_t i = 0; cmd && i < len && o + 2 < sizeof(out->cmdline);) {
		size_t w = strnlen(cmd + i, len - i);

		if (o)
			out->cmdline[o++] = ' ';
		o += ar_quote_to(out->cmdline + o, sizeof(out->cmdline) - o,
				 cmd + i, w);
		i += w + 1;
	}
	free(cmd);
	/* NSpid: the host's, ..., the innermost */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)out->pid);
	status = read_small(path, 65536, NULL);
	ns = status ? strstr(status, "\nNSpid:") : NULL;
	if (ns) {
		char *eol = strchr(ns + 1, '\n'), *last = NULL, *save = NULL;
		unsigned long long v;

		if (eol)
			*eol = '\0';
		for (char *t = strtok_r(ns + 7, " \t", &save); t;
		     t = strtok_r(NULL, " \t", &save))
			last = t;
		out->ns_pid = 0;
		if (last && ar_parse_u64(last, &v) == 0 && v <= INT_MAX)
			out->ns_pid = (pid_t)v;
	}
	free(status);
}

bool ctl_peer_find(pid_t sandbox_pid, int client, struct ctl_peer *out)
{
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	const unsigned char *addr;
	size_t alen;
	unsigned port;
	char path[300], want[48];
	_cleanup_free_ char *table = NULL;
	unsigned long inode;
	struct stat pidns, st;
	struct dirent *e;
	DIR *d;
	int n = 0;

	memset(out, 0, sizeof(*out));
	if (sandbox_pid <= 0 || client < 0 ||
	    getpeername(client, (struct sockaddr *)&ss, &sl) < 0)
		return false;
	if (ss.ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)&ss;

		addr = (const unsigned char *)&s4->sin_addr;
		alen = 4;
		port = ntohs(s4->sin_port);
	} else if (ss.ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)&ss;

		addr = s6->sin6_addr.s6_addr;
		alen = 16;
		port = ntohs(s6->sin6_port);
	} else {
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/net/tcp%s", (int)sandbox_pid,
		 alen == 16 ? "6" : "");
	table = read_small(path, TABLE_MAX, NULL);
	inode = table ? ctl_peer_tcp_inode(table, addr, alen, port) : 0;
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)sandbox_pid);
	if (!inode || stat(path, &pidns) < 0)
		return false;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	d = opendir("/proc");
	if (!d)
		return false;
	while ((e = readdir(d)) && n < CTL_PEER_MAX_PROCS) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", e->d_name);
		if (stat(path, &st) < 0 || st.st_ino != pidns.st_ino ||
		    st.st_dev != pidns.st_dev)
			continue;
		n++;
		if (holds(e->d_name, want)) {
			unsigned long long v;

			out->pid = ar_parse_u64(e->d_name, &v) == 0 &&
						   v <= INT_MAX ?
					   (pid_t)v :
					   0;
			break;
		}
	}
	closedir(d);
	if (!out->pid)
		return false;
	describe(out);
	return true;
}
