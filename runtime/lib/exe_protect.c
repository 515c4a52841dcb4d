/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * CVE-2019-5736: keep the runtime binary out of a container's reach.
 *
 * agentrun does not re-execute itself to start a container: the
 * container's init (and the joining process of `exec`) is a clone of the
 * command's process, and execve's the container's program directly.
 * Until that execve, it is non-dumpable (container_init.c, exec.c), so
 * no other process can open its /proc/PID/exe. But the execve itself is
 * resolved inside the container: a program path `/proc/self/exe`, or a
 * script `#!/proc/self/exe`, runs the runtime's own image in the
 * container, as an ordinary (dumpable) container process. Any process of
 * the container can then open /proc/PID/exe of it and, once it has
 * exited, reopen that for writing: the host binary is overwritten.
 *
 * The cure is that the runtime's image is never a file that the
 * container can write, checked once per command that starts a container
 * process, before anything else:
 *
 *  - already safe: /proc/self/exe is a sealed memfd, or on a read-only
 *    mount (an image-based /usr, or our own re-exec below), or, when we
 *    are not root, a file that this user can neither write nor chmod
 *    (every id a rootless container has is this user's or a subordinate
 *    one). Cost: open + fstatvfs (+ fstat) + close.
 *  - otherwise re-execute from a detached read-only bind mount of the
 *    binary: open_tree(OPEN_TREE_CLONE) + mount_setattr(RDONLY) +
 *    execveat. The mount is in no mount namespace (nobody can remount
 *    it), writes through it fail with EROFS, and nothing is copied: the
 *    page cache is the binary's. This is what runc >= 1.2 does with an
 *    overlayfs for the same reason; a file bind is enough for us because
 *    we never need to write or re-open the file.
 *  - without the new mount API (old kernel, or no CAP_SYS_ADMIN for it):
 *    copy the binary into a memfd, seal it, execveat that (crun's and
 *    runc 1.1's approach; ~1.6 MB copied per start).
 *
 * An environment marker stops a loop if the re-executed image is still
 * found unsafe (it is removed again at once, nothing else sees it).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "exe_protect.h"
#include "log.h"
#include "mount_syscalls.h"
#include "utils.h"

#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE 0x0010
#endif
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

#define REEXEC_ENV "_AGENTRUN_EXE_PROTECTED"
#define MEMFD_SEALS (F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE)

extern char **environ;

bool ar_exe_protect_needed_for(const char *command)
{
	static const char *const cmds[] = { "run", "create", "exec",
					    "sandbox" };

	for (size_t i = 0; i < AR_ARRAY_SIZE(cmds); i++)
		if (strcmp(command, cmds[i]) == 0)
			return true;
	return false;
}

/* Can a process with our credentials (or fewer) write or chmod it? */
static bool unprivileged_can_modify(const struct stat *st)
{
	if (st->st_uid == geteuid())
		return true; /* the owner can chmod it */
	if (st->st_mode & S_IWOTH)
		return true;
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0)
		return true; /* a group of ours, or a subordinate gid */
	return false;
}

static bool exe_is_safe(int fd, const char **why)
{
	struct statvfs sv;
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);

	if (seals >= 0 && (seals & MEMFD_SEALS) == MEMFD_SEALS) {
		*why = "a sealed memfd";
		return true;
	}
	if (fstatvfs(fd, &sv) == 0 && (sv.f_flag & ST_RDONLY)) {
		*why = "on a read-only mount";
		return true;
	}
	if (geteuid() != 0 && fstat(fd, &st) == 0 &&
	    !unprivileged_can_modify(&st)) {
		*why = "not writable by this user";
		return true;
	}
	return false;
}

static int sys_execveat(int dirfd, const char *path, char **argv, char **envp,
			int flags)
{
	return (int)syscall(SYS_execveat, dirfd, path, argv, envp, flags);
}

/* A read-only bind mount of the binary, attached to no mount
 * namespace. Returns its O_PATH fd, or -1 (errno set). */
static int readonly_bind(void)
{
	struct ar_mount_attr attr = {
		.attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NODEV |
			    MOUNT_ATTR_NOSUID,
	};
	_cleanup_close_ int fd =
		(int)syscall(__NR_open_tree, AT_FDCWD, "/proc/self/exe",
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);

	if (fd < 0)
		return -1;
	if (syscall(__NR_mount_setattr, fd, "", AT_EMPTY_PATH, &attr,
		    sizeof(attr)) < 0)
		return -1;
	return ar_steal_fd(&fd);
}

/* A sealed memfd copy of the binary, or -1 (errno set). */
static int sealed_copy(int exe_fd)
{
	_cleanup_close_ int mfd = -1;
	struct stat st;
	off_t off = 0;

	mfd = memfd_create("agentrun",
			   MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	if (mfd < 0 && errno == EINVAL)
		mfd = memfd_create("agentrun", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (mfd < 0 || fstat(exe_fd, &st) < 0)
		return -1;
	while (off < st.st_size) {
		ssize_t n =
			sendfile(mfd, exe_fd, &off, (size_t)(st.st_size - off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			return -1;
		}
	}
	if (fchmod(mfd, 0555) < 0 || fcntl(mfd, F_ADD_SEALS, MEMFD_SEALS) < 0)
		return -1;
	return ar_steal_fd(&mfd);
}

/* the binary's path before a re-exec (the marker's value): a detached
 * mount or a memfd has no path of its own */
static char *original_path;

char *ar_exe_path(void)
{
	char buf[PATH_MAX];
	ssize_t n;

	if (original_path)
		return ar_xstrdup(original_path);
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0 || buf[0] != '/')
		return NULL;
	buf[n] = '\0';
	/* a deleted or replaced file, a detached mount ("/") */
	if (strcmp(buf, "/") == 0 || access(buf, X_OK) < 0)
		return NULL;
	return ar_xstrdup(buf);
}

int ar_exe_protect(char **argv, struct ar_error *err)
{
	_cleanup_close_ int exe_fd = -1, new_fd = -1;
	const char *marker = getenv(REEXEC_ENV);
	bool reexecuted = marker != NULL;
	_cleanup_free_ char *path = NULL;
	const char *why = NULL;

	if (reexecuted) {
		if (marker[0] == '/')
			original_path = ar_xstrdup(marker);
		unsetenv(REEXEC_ENV);
	}
	exe_fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	if (exe_fd < 0)
		return ar_error_set(
			err, errno,
			"open /proc/self/exe (needed to protect the runtime binary, CVE-2019-5736; is /proc mounted?)");
	if (exe_is_safe(exe_fd, &why)) {
		ar_debug("runtime binary is %s: no re-exec needed", why);
		return 0;
	}
	if (reexecuted)
		return ar_error_set_plain(
			err, 0,
			"the runtime binary is still writable after re-executing from a protected copy (CVE-2019-5736)");
	new_fd = readonly_bind();
	if (new_fd < 0) {
		ar_debug(
			"read-only bind of the runtime binary: %m; using a sealed memfd copy");
		new_fd = sealed_copy(exe_fd);
		if (new_fd < 0)
			return ar_error_set(
				err, errno,
				"protect the runtime binary (CVE-2019-5736): neither a read-only bind mount nor a sealed memfd copy of /proc/self/exe");
	}
	path = ar_exe_path();
	if (setenv(REEXEC_ENV, path ? path : "1", 1) < 0)
		return ar_error_set(err, errno, "setenv");
	sys_execveat(new_fd, "", argv, environ, AT_EMPTY_PATH);
	unsetenv(REEXEC_ENV);
	return ar_error_set(
		err, errno,
		"re-execute the runtime from its protected copy (CVE-2019-5736)");
}
