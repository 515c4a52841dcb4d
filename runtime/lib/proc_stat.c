/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proc_stat.h"
#include "utils.h"

int ar_proc_stat_parse(const char *text, struct ar_proc_stat *ps)
{
	struct ar_proc_stat r = { 0 };
	const char *open_paren = strchr(text, '('), *close_paren, *p;
	char *end;
	size_t clen;
	long ppid;
	int field;

	close_paren = strrchr(text, ')');
	/* ") S PPID ...": a space, the state, a space, the parent */
	if (!open_paren || !close_paren || close_paren < open_paren ||
	    close_paren[1] != ' ' || !close_paren[2] || close_paren[3] != ' ')
		return -1;
	clen = (size_t)(close_paren - open_paren - 1);
	if (clen >= sizeof(r.comm))
		clen = sizeof(r.comm) - 1;
	memcpy(r.comm, open_paren + 1, clen);
	r.state = close_paren[2];
	errno = 0;
	ppid = strtol(close_paren + 4, &end, 10);
	if (end == close_paren + 4 || errno || ppid < 0 || ppid > INT_MAX)
		return -1;
	r.ppid = (pid_t)ppid;
	/* field 3 is the state; the start time is field 22 */
	p = close_paren + 2;
	for (field = 3; field < 22 && *p; p++)
		if (*p == ' ')
			field++;
	if (field < 22 || *p < '0' || *p > '9')
		return -1;
	r.start = strtoull(p, NULL, 10);
	*ps = r;
	return 0;
}

int ar_proc_stat_read(pid_t pid, struct ar_proc_stat *ps)
{
	char path[64], buf[1024];
	_cleanup_close_ int fd = -1;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = ar_read_all(fd, buf, sizeof(buf) - 1);
	if (n <= 0) {
		if (n == 0)
			errno = EINVAL;
		return -1;
	}
	buf[n] = '\0';
	if (ar_proc_stat_parse(buf, ps) < 0) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}
