/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The host's kernel interfaces are never bound into the sandbox
 * (sandbox_kernfs.h). The sandbox mounts its own /proc (its pid
 * namespace; /proc/sys, /proc/sysrq-trigger, /proc/irq, /proc/bus,
 * /proc/fs read-only) and its own /sys (read-only). A --rw, --ro,
 * --workspace or profile path that is, or holds, a mount of the host's
 * procfs, sysfs, cgroup hierarchies, debugfs, ... would bypass that:
 * run by root, the sandbox's root is the host's root, which /proc/sys,
 * /sys/power/state or a cgroup v1 release_agent obey without asking for
 * a capability. Refused with a clear error before anything starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>

#include "sandbox_kernfs.h"
#include "utils.h"

/* f_type of statfs(2) (linux/magic.h) */
static const struct {
	long magic;
	const char *name;
} kernfs_magics[] = {
	{ 0x9fa0, "proc" },	      { 0x62656572, "sysfs" },
	{ 0x27e0eb, "cgroup" },	      { 0x63677270, "cgroup2" },
	{ 0x64626720, "debugfs" },    { 0x74726163, "tracefs" },
	{ 0x73636673, "securityfs" }, { 0x62656570, "configfs" },
	{ 0xcafe4a11, "bpf" },	      { 0xde5e81e4, "efivarfs" },
	{ 0x6165676c, "pstore" },     { 0x42494e4d, "binfmt_misc" },
	{ 0x65735543, "fusectl" },
};

/* The type names of /proc/self/mountinfo (devtmpfs is not one: every
 * bind of the host is nodev, its nodes open nothing) */
static const char *const kernfs_types[] = {
	"proc",	   "sysfs",	  "cgroup",   "cgroup2", "debugfs",
	"tracefs", "securityfs",  "configfs", "bpf",	 "efivarfs",
	"pstore",  "binfmt_misc", "fusectl",  NULL,
};

const char *sb_kernfs_magic_name(long f_type)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(kernfs_magics); i++)
		if ((unsigned long)kernfs_magics[i].magic ==
		    ((unsigned long)f_type & 0xffffffffUL))
			return kernfs_magics[i].name;
	return NULL;
}

bool sb_kernfs_type(const char *fstype)
{
	for (const char *const *t = kernfs_types; *t; t++)
		if (strcmp(fstype, *t) == 0)
			return true;
	return false;
}

/* mountinfo's octal escapes (\040 for a space, \011, \012, \134) */
static void unescape(char *s)
{
	char *w = s;

	for (char *r = s; *r;) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' &&
		    r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 +
				      (r[3] - '0'));
			r += 4;
		} else
			*w++ = *r++;
	}
	*w = '\0';
}

bool sb_kernfs_below(const char *mountinfo, const char *path, char **mnt_out,
		     char **type_out)
{
	const char *line = mountinfo;

	while (line && *line) {
		size_t len = strcspn(line, "\n");
		_cleanup_free_ char *l = strndup(line, len);
		char *save = NULL, *f[5] = { NULL }, *sep, *type;
		size_t n = 0;

		line += len;
		if (*line == '\n')
			line++;
		if (!l)
			continue;
		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE SOURCE ... */
		sep = strstr(l, " - ");
		if (!sep)
			continue;
		*sep = '\0';
		type = sep + 3;
		type[strcspn(type, " ")] = '\0';
		for (char *t = strtok_r(l, " ", &save); t && n < 5;
		     t = strtok_r(NULL, " ", &save))
			f[n++] = t;
		if (n < 5 || !sb_kernfs_type(type))
			continue;
		unescape(f[4]);
		if (!ar_path_under(f[4], path))
			continue;
		if (mnt_out)
			*mnt_out = ar_xstrdup(f[4]);
		if (type_out)
			*type_out = ar_xstrdup(type);
		return true;
	}
	return false;
}

int sb_kernfs_refuse(const char *what, const char *given, const char *real,
		     struct ar_error *err)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_free_ char *mnt = NULL;
	_cleanup_free_ char *type = NULL;
	struct ar_error ignored = AR_ERROR_INIT;
	struct statfs sfs;
	const char *name;
	size_t len;

	if (ar_path_under(real, "/proc") || ar_path_under(real, "/sys") ||
	    (statfs(real, &sfs) == 0 &&
	     (name = sb_kernfs_magic_name((long)sfs.f_type)) != NULL))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s`: `%s` is a kernel interface of the host; the sandbox has its own /proc and /sys (read-only where they reach the whole host), and binding the host's would let the sandbox's root (the host's, when run by root) write kernel settings: refused",
			what, given, real);
	if (ar_read_file_at(AT_FDCWD, "/proc/self/mountinfo", 16 << 20, &text,
			    &len, &ignored) < 0)
		return 0; /* no procfs: nothing of it to bind either */
	if (sb_kernfs_below(text, real, &mnt, &type))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s`: it holds `%s`, a %s mount (a kernel interface of the host: its processes, its kernel settings), which the bind would bring along: refused; name a directory without it",
			what, given, mnt, type);
	return 0;
}
