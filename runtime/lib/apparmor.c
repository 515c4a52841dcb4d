/* SPDX-License-Identifier: GPL-2.0-or-later */
/* process.apparmorProfile; see apparmor.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "apparmor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "utils.h"

#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif

bool ar_apparmor_enabled(void)
{
	static int enabled = -1;
	_cleanup_close_ int fd = -1;
	char c = 0;

	if (enabled >= 0)
		return enabled;
	fd = open("/sys/module/apparmor/parameters/enabled",
		  O_RDONLY | O_CLOEXEC);
	enabled = fd >= 0 && read(fd, &c, 1) == 1 && c == 'Y';
	return enabled;
}

/* /proc/thread-self/attr/apparmor/NAME, else attr/NAME (kernels before
 * 5.8 have no per-LSM directory); on procfs, or an error */
static int open_attr(const char *name, int flags, struct ar_error *err)
{
	char path[96];
	struct statfs sfs;
	int fd;

	snprintf(path, sizeof(path), "/proc/thread-self/attr/apparmor/%s",
		 name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		snprintf(path, sizeof(path), "/proc/thread-self/attr/%s", name);
		fd = open(path, flags | O_CLOEXEC);
	}
	if (fd < 0 && errno == ENOENT) {
		/* kernels before 3.17 have no /proc/thread-self */
		snprintf(path, sizeof(path), "/proc/self/task/%ld/attr/%s",
			 (long)syscall(SYS_gettid), name);
		fd = open(path, flags | O_CLOEXEC);
	}
	if (fd < 0)
		return ar_error_set(
			err, errno,
			"process.apparmorProfile: open `%s` (the container's /proc)",
			path);
	/* a /proc the container's mounts replaced is not the kernel's */
	if (fstatfs(fd, &sfs) < 0 || sfs.f_type != PROC_SUPER_MAGIC) {
		close(fd);
		return ar_error_set_plain(
			err, EPERM,
			"process.apparmorProfile: `%s` is not on procfs", path);
	}
	return fd;
}

/* The runtime (this process) runs under a profile: anything but exactly
 * "unconfined"; in doubt, confined. */
static int confined(struct ar_error *err)
{
	_cleanup_close_ int fd = open_attr("current", O_RDONLY, err);
	char buf[16];
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return ar_error_set(
			err, errno,
			"process.apparmorProfile: read attr/current");
	buf[n] = '\0';
	return !(strncmp(buf, "unconfined", 10) == 0 &&
		 (buf[10] == '\0' || buf[10] == '\n' || buf[10] == ' '));
}

int ar_apparmor_apply(const char *profile, bool enabled, bool nnp,
		      struct ar_error *err)
{
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *cmd = NULL;
	int c = 0;
	size_t len;

	if (!profile || !*profile || !enabled)
		return 0;
	if (nnp) {
		c = confined(err);
		if (c < 0)
			return -1;
	}
	cmd = ar_xasprintf("%s %s", c ? "stack" : "exec", profile);
	len = strlen(cmd);
	fd = open_attr("exec", O_WRONLY, err);
	if (fd < 0)
		return -1;
	if (write(fd, cmd, len) != (ssize_t)len) {
		if (errno == ENOENT)
			return ar_error_set(
				err, errno,
				"process.apparmorProfile: the profile `%s` is not loaded (load it with apparmor_parser -r FILE)",
				profile);
		return ar_error_set(
			err, errno,
			"process.apparmorProfile: apply the profile `%s`",
			profile);
	}
	return 0;
}
