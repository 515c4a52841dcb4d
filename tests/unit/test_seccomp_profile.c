/* SPDX-License-Identifier: GPL-2.0-or-later */
/* contrib/seccomp/agent-default.json: parses as linux.seccomp, compiles,
 * and, loaded in a child, denies what it promises to deny while ordinary
 * programs (fork, threads, exec of a shell) keep working. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci_config.h"
#include "seccomp.h"
#include "unit.h"
#include "utils.h"

#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif

static struct oci_config *load_profile(struct ar_error *err)
{
	const char *top = getenv("TOP_SRCDIR");
	_cleanup_free_ char *path = NULL, *profile = NULL, *json = NULL;
	struct oci_config *cfg = NULL;

	path = ar_xasprintf("%s/contrib/seccomp/agent-default.json",
			    top ? top : AGENTRUN_TOP_SRCDIR);
	if (ar_read_file_at(AT_FDCWD, path, 1 << 20, &profile, NULL, err) < 0)
		return NULL;
	json = ar_xasprintf(
		"{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":%s}}",
		profile);
	if (oci_config_parse(json, strlen(json), path, &cfg, err) < 0)
		return NULL;
	return cfg;
}

UNIT_TEST(profile_parses_and_compiles)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = load_profile(&err);
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;
	const struct oci_seccomp *sc;
	size_t len = 0;

	if (!cfg)
		printf("# %s\n", err.msg);
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	sc = cfg->linux_.seccomp;
	CHECK(sc != NULL);
	if (!sc)
		return;
	CHECK_INT_EQ(sc->default_action, OCI_SCMP_ACT_ERRNO);
	CHECK(sc->default_errno_ret.set && sc->default_errno_ret.v == EPERM);
	/* no 32-bit x86: its socketcall(2) hides the socket family */
	CHECK_INT_EQ(sc->architectures.n, 4);
	CHECK_INT_EQ(ar_seccomp_compile(sc, &f, &err), 0);
	if (!f)
		printf("# %s\n", err.msg);
	CHECK(f && !ar_seccomp_filter_needs_notify(f));
	CHECK(f && ar_seccomp_filter_bpf(f, &len) && len > 0);
	/* BPF_MAXINSNS is 4096 instructions of 8 bytes */
	CHECK(len <= 4096 * 8);
}

#define CHILD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "child: %s:%d: %s (errno %d)\n",       \
				__FILE__, __LINE__, #cond, errno);             \
			_exit(__LINE__ % 250 + 1);                             \
		}                                                              \
	} while (0)

#define DENIED(call, e)                                                        \
	do {                                                                   \
		long _r;                                                       \
		errno = 0;                                                     \
		_r = (call);                                                   \
		CHILD_CHECK(_r == -1 && errno == (e));                         \
	} while (0)

static void *thread_fn(void *arg)
{
	return arg;
}

static int child_checks(void)
{
	int tty_fd, st;
	char c = 'x';
	pthread_t th;
	void *ret = NULL;
	pid_t pid;

	/* denied for agents */
	DENIED(syscall(SYS_keyctl, 0, 0, 0, 0, 0), EPERM);
	DENIED(syscall(SYS_add_key, "user", "x", "y", 1, 0), EPERM);
	DENIED(syscall(SYS_bpf, 0, NULL, 0), EPERM);
	DENIED(syscall(SYS_userfaultfd, 0), EPERM);
	DENIED(syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0), EPERM);
	DENIED(unshare(CLONE_NEWUSER), EPERM);
	DENIED(unshare(CLONE_NEWNS), EPERM);
	DENIED(syscall(SYS_unshare, CLONE_NEWTIME), EPERM);
	DENIED(syscall(SYS_setns, 0, 0), EPERM);
	DENIED(mount("none", "/tmp", "tmpfs", 0, NULL), EPERM);
	DENIED(umount2("/tmp", MNT_DETACH), EPERM);
	DENIED(syscall(SYS_kcmp, 0, 0, 0, 0, 0), EPERM);
	DENIED(syscall(SYS_io_uring_setup, 1, NULL), EPERM);
	DENIED(syscall(SYS_open_by_handle_at, -1, NULL, 0), EPERM);
	DENIED(syscall(SYS_syslog, 3, NULL, 0), EPERM);
	DENIED(syscall(SYS_clock_settime, 0, NULL), EPERM);
	DENIED(syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, 0, 0, 0, 0), EPERM);
	DENIED(syscall(SYS_clone, CLONE_NEWNET | SIGCHLD, 0, 0, 0, 0), EPERM);
	DENIED(personality(PER_BSD), EPERM);
	/* clone3 says ENOSYS so that libc falls back to clone */
	DENIED(syscall(SYS_clone3, NULL, 0), ENOSYS);

	/* families that are not network-namespaced; the others work */
	DENIED(socket(AF_VSOCK, SOCK_STREAM, 0), EPERM);
	DENIED(socket(AF_BLUETOOTH, SOCK_STREAM, 0), EPERM);
	DENIED(socket(AF_ALG, SOCK_SEQPACKET, 0), EPERM);
	DENIED(socket(AF_PACKET, SOCK_DGRAM, 0), EPERM);
	DENIED(syscall(SYS_socket, 0x100000000L | AF_VSOCK, SOCK_STREAM, 0),
	       EPERM);
	{
		int fds[4] = {
			socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
			socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0),
			socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0),
			socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, 0),
		};

		for (int i = 0; i < 4; i++) {
			CHILD_CHECK(fds[i] >= 0 || errno == EAFNOSUPPORT);
			if (fds[i] >= 0)
				close(fds[i]);
		}
	}
	/* no setuid/setgid bit set or created (it would outlive the run) */
	{
		char dir[] = "/tmp/ar-seccomp-XXXXXX", path[64];
		int fd;

		CHILD_CHECK(mkdtemp(dir) != NULL);
		snprintf(path, sizeof(path), "%s/f", dir);
		fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0755);
		CHILD_CHECK(fd >= 0);
		DENIED(chmod(path, 04755), EPERM);
		DENIED(chmod(path, 02755), EPERM);
		DENIED(fchmod(fd, 04755), EPERM);
		DENIED(fchmodat(AT_FDCWD, path, 06755, 0), EPERM);
		CHILD_CHECK(chmod(path, 0700) == 0 && fchmod(fd, 0644) == 0);
		close(fd);
		unlink(path);
		DENIED(open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 04755),
		       EPERM);
		DENIED(openat(AT_FDCWD, path, O_CREAT | O_WRONLY | O_CLOEXEC,
			      02755),
		       EPERM);
		DENIED(creat(path, 04755), EPERM);
		DENIED(mknod(path, S_IFREG | 04755, 0), EPERM);
		DENIED(syscall(SYS_openat2, AT_FDCWD, path, NULL, 0), ENOSYS);
		CHILD_CHECK(access(path, F_OK) < 0);
		fd = open(path, O_RDONLY | O_CLOEXEC | O_CREAT, 0600);
		CHILD_CHECK(fd >= 0);
		close(fd);
		unlink(path);
		rmdir(dir);
	}

	/* TIOCSTI and TIOCLINUX, also with garbage in the upper 32 bits
	 * (the kernel truncates the command to unsigned int) */
	tty_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	CHILD_CHECK(tty_fd >= 0);
	DENIED(ioctl(tty_fd, TIOCSTI, &c), EPERM);
	DENIED(ioctl(tty_fd, TIOCLINUX, &c), EPERM);
	DENIED(syscall(SYS_ioctl, tty_fd, 0x100005412UL, &c), EPERM);
	DENIED(syscall(SYS_ioctl, tty_fd, 0xffffffff0000541cUL, &c), EPERM);
	/* other ioctls reach the kernel (ENOTTY from /dev/null) */
	{
		struct winsize ws;

		DENIED(ioctl(tty_fd, TIOCGWINSZ, &ws), ENOTTY);
		DENIED(ioctl(tty_fd, 0x5413 + 1, &ws), ENOTTY);
		DENIED(ioctl(tty_fd, 0x5410, &ws), ENOTTY);
	}

	/* debuggers: ptrace and process_vm_readv reach the kernel (the
	 * pid namespace bounds what they can reach); pid 0 is no process */
	DENIED(syscall(SYS_ptrace, PTRACE_DETACH, 0, 0, 0), ESRCH);
	{
		char buf[1];
		struct iovec iov = { .iov_base = buf, .iov_len = 1 };

		DENIED(syscall(SYS_process_vm_readv, 0, &iov, 1, &iov, 1, 0),
		       ESRCH);
	}

	/* ordinary work */
	CHILD_CHECK(write(STDERR_FILENO, "", 0) == 0);
	CHILD_CHECK(getpid() > 0);
	CHILD_CHECK(personality(0xffffffff) >= 0);
	CHILD_CHECK(unshare(CLONE_FS) == 0);
	CHILD_CHECK(pthread_create(&th, NULL, thread_fn, &c) == 0);
	CHILD_CHECK(pthread_join(th, &ret) == 0 && ret == &c);
	pid = fork();
	CHILD_CHECK(pid >= 0);
	if (pid == 0) {
		execl("/bin/sh", "sh", "-c", "x=$(echo hi); test \"$x\" = hi",
		      (char *)NULL);
		_exit(127);
	}
	CHILD_CHECK(waitpid(pid, &st, 0) == pid);
	CHILD_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	return 0;
}

UNIT_TEST(profile_enforced)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = load_profile(&err);
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;
	pid_t pid;
	int st = 0;

	CHECK(cfg && cfg->linux_.seccomp);
	if (!cfg || !cfg->linux_.seccomp)
		return;
	CHECK_INT_EQ(ar_seccomp_compile(cfg->linux_.seccomp, &f, &err), 0);
	if (!f)
		return;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int nfd;

		if (ar_seccomp_load(f, &nfd, &err) < 0) {
			fprintf(stderr, "child: %s\n", err.msg);
			_exit(200);
		}
		_exit(child_checks());
	}
	CHECK(pid > 0);
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
}

UNIT_MAIN()
