/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * SELinux labels without libselinux on the start path.
 *
 * libselinux runs a constructor in every process that links it (statfs of
 * selinuxfs, a read of /proc/filesystems: docs/performance.md), even when
 * no label is ever used. What agentrun needs from it is two kernel writes,
 * done here directly, like crun does:
 *   - setexeccon_raw(label)  = write label to /proc/thread-self/attr/exec
 *   - security_check_context = write label to <selinuxfs>/context
 * and is_selinux_enabled() = selinuxfs is mounted and a policy is loaded.
 * On a host without SELinux, and in a build configured --without-selinux,
 * labels are ignored, as crun and runc do.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "log.h"
#include "selinux_label.h"
#include "utils.h"

#ifndef SELINUX_MAGIC
#define SELINUX_MAGIC 0xf97cff8c
#endif

#define SELINUXFS "/sys/fs/selinux"

static bool is_set(const char *s)
{
	return s && *s;
}

bool ar_selinux_enabled(void)
{
#ifdef HAVE_SELINUX
	struct statfs sf;

	/* mounted selinuxfs, and a loaded policy (policyvers exists then) */
	return statfs(SELINUXFS, &sf) == 0 &&
	       (unsigned long)sf.f_type == (unsigned long)SELINUX_MAGIC &&
	       access(SELINUXFS "/policyvers", F_OK) == 0;
#else
	return false;
#endif
}

/* The loaded policy accepts `label` (security_check_context). */
static int check_context(const char *what, const char *path, const char *label,
			 struct ar_error *err)
{
	_cleanup_close_ int fd = open(SELINUXFS "/context", O_RDWR | O_CLOEXEC);
	size_t len = strlen(label) + 1; /* the kernel takes the NUL too */

	if (fd < 0)
		return ar_error_set(err, errno, "%s: %s: check `%s`: open %s",
				    what, path, label, SELINUXFS "/context");
	if (write(fd, label, len) < 0)
		return ar_error_set(
			err, errno,
			"%s: %s: `%s` is not a valid SELinux context for the loaded policy",
			what, path, label);
	return 0;
}

int ar_selinux_check_labels(const char *what, const char *process_label,
			    const char *mount_label, struct ar_error *err)
{
	if (!is_set(process_label) && !is_set(mount_label))
		return 0;
	if (!what)
		what = "config.json";
	if (!ar_selinux_enabled()) {
		/* crun and runc ignore labels on a host without SELinux (a
		 * spec written for SELinux hosts runs everywhere) */
		ar_debug("%s: SELinux is not enabled here: labels ignored",
			 what);
		return 0;
	}
	if (is_set(process_label) &&
	    check_context(what, "process.selinuxLabel", process_label, err) < 0)
		return -1;
	if (is_set(mount_label) &&
	    check_context(what, "linux.mountLabel", mount_label, err) < 0)
		return -1;
	return 0;
}

#ifdef HAVE_SELINUX
static int write_exec_attr(const char *label, struct ar_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;
	size_t len = strlen(label);

	fd = open("/proc/thread-self/attr/exec", O_WRONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		/* kernels before 3.17 have no /proc/thread-self */
		snprintf(path, sizeof(path), "/proc/self/task/%ld/attr/exec",
			 (long)syscall(SYS_gettid));
		fd = open(path, O_WRONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return ar_error_set(err, errno,
				    "process.selinuxLabel: open attr/exec");
	if (write(fd, label, len) != (ssize_t)len)
		return ar_error_set(
			err, errno,
			"process.selinuxLabel: set the exec context `%s`",
			label);
	return 0;
}
#endif

int ar_selinux_set_exec_label(const char *label, bool enabled,
			      struct ar_error *err)
{
	if (!is_set(label))
		return 0;
	/* `enabled` is what the runtime saw before the clone: here, in the
	 * container, its selinuxfs is not mounted (asking here ignored every
	 * label on SELinux hosts) */
	if (!enabled)
		return 0; /* ignored without SELinux, as crun and runc */
#ifdef HAVE_SELINUX
	return write_exec_attr(label, err);
#else
	(void)err;
	return 0;
#endif
}

int ar_selinux_exec_error(struct ar_error *err, const char *exe,
			  const char *label, bool enabled)
{
	int errnum = errno; /* of the failed execve, just before */

	if (is_set(label) && enabled && (errnum == EACCES || errnum == EPERM))
		return ar_error_set(
			err, errnum,
			"exec `%s` into process.selinuxLabel `%s` (does the SELinux policy allow this transition, and with noNewPrivileges nnp_transition? the kernel log has the AVC denial)",
			exe, label);
	return ar_error_set(err, errnum, "exec `%s`", exe);
}

char *ar_selinux_mount_data(const char *data, const char *type,
			    const char *label)
{
	/* mqueue: its superblock is the IPC namespace's, set up with the
	 * namespace, so a context= that differs from it fails the mount with
	 * EINVAL ("same superblock, different security settings"); its root
	 * is relabelled after the mount instead (ar_selinux_relabel_mount) */
	static const char *const no_context[] = { "proc",    "sysfs", "cgroup",
						  "cgroup2", "bind",  "none",
						  "mqueue" };
	char *out;

	if (!is_set(label) || !type)
		return NULL;
	for (size_t i = 0; i < AR_ARRAY_SIZE(no_context); i++)
		if (strcmp(type, no_context[i]) == 0)
			return NULL;
	if (data && strstr(data, "context="))
		return NULL; /* the config's own context= wins */
	if (asprintf(&out, "%s%scontext=\"%s\"", is_set(data) ? data : "",
		     is_set(data) ? "," : "", label) < 0)
		return NULL;
	return out;
}

bool ar_selinux_relabel_after_mount(const char *type)
{
	return type && strcmp(type, "mqueue") == 0;
}

int ar_selinux_relabel_fd(int fd, const char *what, const char *label,
			  struct ar_error *err)
{
	if (!is_set(label) || !ar_selinux_enabled())
		return 0;
	/* the label as a file label (go-selinux's SetFileLabel): the kernel
	 * checks relabelfrom/relabelto against the loaded policy */
	if (fsetxattr(fd, "security.selinux", label, strlen(label), 0) < 0)
		return ar_error_set(
			err, errno,
			"linux.mountLabel: relabel %s to `%s` (security.selinux)",
			what, label);
	return 0;
}
