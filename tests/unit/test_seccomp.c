/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Seccomp: compile (checked through libseccomp's PFC dump) and real
 * enforcement in forked children, including user notification through
 * listenerPath. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <libseccomp.h>
#include <linux/seccomp.h>
#include <dirent.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci_config.h"
#include "profile.h"
#include "seccomp.h"
#include "seccomp_refusal.h"
#include "seccomp_bpf.h"
#include "seccomp_internal.h"
#include "unit.h"
#include "utils.h"

static void closedirp(DIR **d)
{
	if (*d)
		closedir(*d);
}

/* ---- building configs by hand ---- */

#define STRV(...)                                                              \
	((struct oci_strv){                                                    \
		.v = (char *[]){ __VA_ARGS__, NULL },                          \
		.n = sizeof((char *[]){ __VA_ARGS__ }) / sizeof(char *),       \
	})

static struct oci_seccomp base(enum oci_seccomp_action def)
{
	return (struct oci_seccomp){ .default_action = def };
}

static struct oci_seccomp_syscall rule(struct oci_strv names,
				       enum oci_seccomp_action act, int err)
{
	struct oci_seccomp_syscall s = { .names = names, .action = act };

	if (err >= 0) {
		s.errno_ret.set = true;
		s.errno_ret.v = (uint32_t)err;
	}
	return s;
}

/* The PFC text of a compiled filter (malloc'ed), NULL on error. */
static char *pfc_of(struct ar_seccomp_filter *f)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_close_ int fd = memfd_create("pfc", MFD_CLOEXEC);
	char *buf;
	off_t size;

	if (fd < 0 || ar_seccomp_filter_export_pfc(f, fd, &err) < 0)
		return NULL;
	size = lseek(fd, 0, SEEK_END);
	buf = calloc(1, (size_t)size + 1);
	if (pread(fd, buf, (size_t)size, 0) != size) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *compile_pfc(const struct oci_seccomp *sc, struct ar_error *err)
{
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;

	if (ar_seccomp_compile(sc, &f, err) < 0)
		return NULL;
	return pfc_of(f);
}

/* Run fn in a forked child; returns the raw wait status. */
static int in_child(int (*fn)(void *), void *arg)
{
	pid_t pid;
	int st = 0;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn(arg));
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	return st;
}

/* Exit codes of children: 0 ok, otherwise the line of the failed check. */
#define CHILD_CHECK(cond)                                                      \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "child: %s:%d: %s (errno %d)\n",       \
				__FILE__, __LINE__, #cond, errno);             \
			return __LINE__ % 250 + 1;                             \
		}                                                              \
	} while (0)

static int load(const struct oci_seccomp *sc, int *nfd)
{
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;
	struct ar_error err = AR_ERROR_INIT;
	int dummy;

	if (ar_seccomp_compile(sc, &f, &err) < 0 ||
	    ar_seccomp_load(f, nfd ? nfd : &dummy, &err) < 0) {
		fprintf(stderr, "child: %s\n", err.msg);
		return -1;
	}
	return 0;
}

/* ---- compile ---- */

UNIT_TEST(compile_rule_appears_in_pfc)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_ERRNO, EACCES),
		rule(STRV("getpgrp"), OCI_SCMP_ACT_KILL_PROCESS, -1),
		rule(STRV("getsid"), OCI_SCMP_ACT_ERRNO, -1),
	};
	_cleanup_free_ char *pfc = NULL;

	sc.syscalls = rules;
	sc.n_syscalls = AR_ARRAY_SIZE(rules);
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
	CHECK_STR_CONTAINS(pfc, "getppid");
	CHECK_STR_CONTAINS(pfc, "ERRNO(13)");
	CHECK_STR_CONTAINS(pfc, "getpgrp");
	CHECK_STR_CONTAINS(pfc, "KILL_PROCESS");
	/* errnoRet absent: EPERM */
	CHECK_STR_CONTAINS(pfc, "ERRNO(1)");
	CHECK_STR_CONTAINS(pfc, "action ALLOW");
}

UNIT_TEST(compile_default_errno_ret)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ERRNO);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("read", "write"), OCI_SCMP_ACT_ALLOW, -1),
	};
	_cleanup_free_ char *pfc = NULL;

	sc.default_errno_ret.set = true;
	sc.default_errno_ret.v = ENOSYS;
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
	CHECK_STR_CONTAINS(pfc, "action ERRNO(38)");
	CHECK_STR_CONTAINS(pfc, "\"read\"");
	CHECK_STR_CONTAINS(pfc, "\"write\"");
}

UNIT_TEST(compile_unknown_syscall_is_skipped)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("no_such_syscall_agentrun", "getppid"),
		     OCI_SCMP_ACT_ERRNO, EPERM),
	};
	_cleanup_free_ char *pfc = NULL;

	sc.syscalls = rules;
	sc.n_syscalls = 1;
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
	CHECK_STR_CONTAINS(pfc, "getppid");
	CHECK(!pfc || !strstr(pfc, "no_such_syscall"));
}

UNIT_TEST(compile_rule_with_default_action_is_skipped)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ERRNO);
	struct oci_seccomp_syscall rules[] = {
		/* same as the default (ERRNO EPERM): must be skipped */
		rule(STRV("getppid"), OCI_SCMP_ACT_ERRNO, EPERM),
		/* different errno: kept */
		rule(STRV("getpgrp"), OCI_SCMP_ACT_ERRNO, EACCES),
	};
	_cleanup_free_ char *pfc = NULL;

	sc.syscalls = rules;
	sc.n_syscalls = AR_ARRAY_SIZE(rules);
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
	CHECK(pfc && !strstr(pfc, "getppid"));
	CHECK_STR_CONTAINS(pfc, "getpgrp");
}

UNIT_TEST(compile_bad_flag_is_an_error)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct ar_seccomp_filter *f = NULL;

	sc.flags = STRV("SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_BOGUS");
	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), -1);
	CHECK(f == NULL);
	CHECK_STR_CONTAINS(err.msg, "unknown flag `SECCOMP_FILTER_FLAG_BOGUS`");
	CHECK_STR_CONTAINS(err.msg, "flags[1]");
}

UNIT_TEST(compile_known_flags)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;

	sc.flags = STRV("SECCOMP_FILTER_FLAG_LOG",
			"SECCOMP_FILTER_FLAG_SPEC_ALLOW",
			"SECCOMP_FILTER_FLAG_TSYNC",
			"SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), 0);
}

UNIT_TEST(compile_unknown_arch_is_an_error)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct ar_seccomp_filter *f = NULL;

	sc.architectures = STRV("SCMP_ARCH_X86", "SCMP_ARCH_VAX");
	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), -1);
	CHECK_STR_CONTAINS(err.msg, "unknown architecture `SCMP_ARCH_VAX`");
}

UNIT_TEST(compile_architectures)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("socketcall", "getppid"), OCI_SCMP_ACT_ERRNO, EPERM),
	};
	_cleanup_free_ char *pfc = NULL;

	/* The native arch listed too (EEXIST is fine); socketcall only
	 * exists on x86. */
	sc.architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86",
				"SCMP_ARCH_X32", "SCMP_ARCH_AARCH64",
				"SCMP_ARCH_ARM");
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
#if defined(__x86_64__)
	CHECK_STR_CONTAINS(pfc, "arch x86_64");
	CHECK_STR_CONTAINS(pfc, "filter for arch x86 (");
	/* x32 only when this kernel runs x32 syscalls */
	if (ar_seccomp_x32_runs())
		CHECK_STR_CONTAINS(pfc, "filter for arch x32 (");
	else
		CHECK(pfc && !strstr(pfc, "filter for arch x32 ("));
	CHECK_STR_CONTAINS(pfc, "socketcall");
	/* foreign architectures cannot occur here: left out */
	CHECK(pfc && !strstr(pfc, "aarch64"));
	CHECK(pfc && !strstr(pfc, "arch arm"));
#endif
}

UNIT_TEST(compile_args_and_masked_eq)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_arg args[] = {
		{ .index = 0,
		  .op = OCI_SCMP_CMP_MASKED_EQ,
		  .value = 0x7e020000,
		  .value_two = 0x10000000 },
		{ .index = 2, .op = OCI_SCMP_CMP_GT, .value = 5 },
	};
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("clone"), OCI_SCMP_ACT_ERRNO, EPERM),
	};
	_cleanup_free_ char *pfc = NULL;

	rules[0].args = args;
	rules[0].n_args = 2;
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	pfc = compile_pfc(&sc, &err);
	CHECK(pfc != NULL);
	/* value is the mask, valueTwo the datum */
	CHECK_STR_CONTAINS(pfc, "& 0x7e020000");
	CHECK_STR_CONTAINS(pfc, "== 268435456");
	CHECK_STR_CONTAINS(pfc, "$a2");
}

UNIT_TEST(compile_bad_arg_index)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_arg args[] = {
		{ .index = 6, .op = OCI_SCMP_CMP_EQ, .value = 1 },
	};
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_ERRNO, EPERM),
	};
	struct ar_seccomp_filter *f = NULL;

	rules[0].args = args;
	rules[0].n_args = 1;
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), -1);
	CHECK_STR_CONTAINS(err.msg, "syscalls[0].args[0]: index 6");
}

UNIT_TEST(compile_default_notify_refused)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_NOTIFY);
	struct ar_seccomp_filter *f = NULL;

	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), -1);
	CHECK_STR_CONTAINS(err.msg, "SCMP_ACT_NOTIFY");
}

UNIT_TEST(compile_needs_notify)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_NOTIFY, -1),
	};
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *f = NULL;
	_cleanup_seccomp_filter_ struct ar_seccomp_filter *g = NULL;
	size_t len = 0;

	CHECK_INT_EQ(ar_seccomp_compile(&sc, &g, &err), 0);
	CHECK(!ar_seccomp_filter_needs_notify(g));
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	CHECK_INT_EQ(ar_seccomp_compile(&sc, &f, &err), 0);
	CHECK(ar_seccomp_filter_needs_notify(f));
	CHECK(ar_seccomp_filter_bpf(f, &len) != NULL);
	CHECK(len > 0 && len % 8 == 0);
}

/* ---- enforcement ---- */

static int child_errno_rule(void *arg)
{
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_ERRNO, EACCES),
		rule(STRV("getpgrp"), OCI_SCMP_ACT_ERRNO, -1),
	};
	long r;

	(void)arg;
	sc.syscalls = rules;
	sc.n_syscalls = AR_ARRAY_SIZE(rules);
	CHILD_CHECK(load(&sc, NULL) == 0);
	errno = 0;
	r = syscall(SYS_getppid);
	CHILD_CHECK(r == -1 && errno == EACCES);
	errno = 0;
	r = syscall(SYS_getpgrp);
	CHILD_CHECK(r == -1 && errno == EPERM);
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	CHILD_CHECK(write(STDERR_FILENO, "", 0) == 0);
	return 0;
}

UNIT_TEST(enforce_errno)
{
	int st = in_child(child_errno_rule, NULL);

	CHECK(WIFEXITED(st));
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
}

static int child_args(void *arg)
{
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	/* getpgid(pid): EXDEV when (pid & 0xff00) == 0x1200;
	 * getsid(pid): ENOTDIR when pid == 111111 or pid == 222222 (two
	 * conditions on one index: one rule each, i.e. ORed). */
	struct oci_seccomp_arg masked[] = {
		{ .index = 0,
		  .op = OCI_SCMP_CMP_MASKED_EQ,
		  .value = 0xff00,
		  .value_two = 0x1200 },
	};
	struct oci_seccomp_arg same_index[] = {
		{ .index = 0, .op = OCI_SCMP_CMP_EQ, .value = 111111 },
		{ .index = 0, .op = OCI_SCMP_CMP_EQ, .value = 222222 },
	};
	/* kill(pid, sig): EOWNERDEAD when pid == 999999 AND sig == 0 (two
	 * different indexes in one rule: ANDed). */
	struct oci_seccomp_arg both[] = {
		{ .index = 0, .op = OCI_SCMP_CMP_EQ, .value = 999999 },
		{ .index = 1, .op = OCI_SCMP_CMP_EQ, .value = 0 },
	};
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getpgid"), OCI_SCMP_ACT_ERRNO, EXDEV),
		rule(STRV("getsid"), OCI_SCMP_ACT_ERRNO, ENOTDIR),
		rule(STRV("kill"), OCI_SCMP_ACT_ERRNO, EOWNERDEAD),
	};
	long r;

	(void)arg;
	rules[0].args = masked;
	rules[0].n_args = 1;
	rules[1].args = same_index;
	rules[1].n_args = 2;
	rules[2].args = both;
	rules[2].n_args = 2;
	sc.syscalls = rules;
	sc.n_syscalls = AR_ARRAY_SIZE(rules);
	CHILD_CHECK(load(&sc, NULL) == 0);

	r = syscall(SYS_getpgid, 0x1234);
	CHILD_CHECK(r == -1 && errno == EXDEV);
	r = syscall(SYS_getpgid, 0);
	CHILD_CHECK(r >= 0);
	r = syscall(SYS_getsid, 111111);
	CHILD_CHECK(r == -1 && errno == ENOTDIR);
	r = syscall(SYS_getsid, 222222);
	CHILD_CHECK(r == -1 && errno == ENOTDIR);
	r = syscall(SYS_getsid, 0);
	CHILD_CHECK(r >= 0);
	r = syscall(SYS_kill, 999999, 0);
	CHILD_CHECK(r == -1 && errno == EOWNERDEAD);
	/* only one of the two conditions: not matched (ESRCH from the
	 * kernel, no such pid) */
	r = syscall(SYS_kill, 999999, SIGCONT);
	CHILD_CHECK(r == -1 && errno == ESRCH);
	r = syscall(SYS_kill, getpid(), 0);
	CHILD_CHECK(r == 0);
	return 0;
}

UNIT_TEST(enforce_args)
{
	int st = in_child(child_args, NULL);

	CHECK(WIFEXITED(st));
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
}

static int child_kill(void *arg)
{
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), *(enum oci_seccomp_action *)arg, -1),
	};

	sc.syscalls = rules;
	sc.n_syscalls = 1;
	CHILD_CHECK(load(&sc, NULL) == 0);
	syscall(SYS_getppid);
	return 0;
}

UNIT_TEST(enforce_kill_process_and_thread)
{
	enum oci_seccomp_action a = OCI_SCMP_ACT_KILL_PROCESS;
	int st = in_child(child_kill, &a);

	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	a = OCI_SCMP_ACT_KILL;
	st = in_child(child_kill, &a);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	a = OCI_SCMP_ACT_TRAP;
	st = in_child(child_kill, &a);
	CHECK(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS);
	a = OCI_SCMP_ACT_LOG;
	st = in_child(child_kill, &a);
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static int child_default_errno(void *arg)
{
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ERRNO);
	/* What this child needs to go on after the load (generous, so
	 * that sanitizer runtimes keep working too). */
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("exit_group", "exit", "write", "writev", "read",
			  "getpid", "gettid", "tgkill", "rt_sigreturn",
			  "rt_sigaction", "rt_sigprocmask", "sigaltstack",
			  "mmap", "munmap", "mprotect", "madvise", "futex",
			  "sched_yield", "prctl", "openat", "close", "fstat",
			  "newfstatat", "readlink", "lseek", "getrlimit",
			  "prlimit64"),
		     OCI_SCMP_ACT_ALLOW, -1),
	};
	long r;

	(void)arg;
	sc.default_errno_ret.set = true;
	sc.default_errno_ret.v = ENOSYS;
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	sc.flags = STRV("SECCOMP_FILTER_FLAG_LOG");
	CHILD_CHECK(load(&sc, NULL) == 0);
	r = syscall(SYS_getppid);
	CHILD_CHECK(r == -1 && errno == ENOSYS);
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	return 0;
}

UNIT_TEST(enforce_default_errno_and_log_flag)
{
	int st = in_child(child_default_errno, NULL);

	CHECK(WIFEXITED(st));
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
}

/* ---- user notification through listenerPath ---- */

struct notify_arg {
	const char *path;
	const char *flag; /* extra flag or NULL */
};

static int child_notify(void *p)
{
	struct notify_arg *a = p;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_NOTIFY, -1),
	};
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *state = NULL;
	int nfd = -1;
	long r;

	char *flags[] = { (char *)a->flag, NULL };

	sc.syscalls = rules;
	sc.n_syscalls = 1;
	if (a->flag)
		sc.flags = (struct oci_strv){ .v = flags, .n = 1 };
	CHILD_CHECK(load(&sc, &nfd) == 0);
	CHILD_CHECK(nfd >= 0);
	CHILD_CHECK((fcntl(nfd, F_GETFD) & FD_CLOEXEC) != 0);
	state = ar_xasprintf(
		"{\"ociVersion\":\"1.2.0\",\"id\":\"c1\","
		"\"status\":\"creating\",\"pid\":%d,"
		"\"bundle\":\"/b\",\"annotations\":{\"a/b\":\"1\"}}",
		(int)getpid());
	if (ar_seccomp_send_notify_fd(a->path, nfd, "meta\"data", state, &err) <
	    0) {
		fprintf(stderr, "child: %s\n", err.msg);
		return 2;
	}
	close(nfd);
	/* Answered by the parent. */
	r = syscall(SYS_getppid);
	CHILD_CHECK(r == 4242);
	return 0;
}

static int recv_fd(int sock, char *buf, size_t len, int *fd)
{
	union {
		char b[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = { .iov_base = buf, .iov_len = len - 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.b,
		.msg_controllen = sizeof(u.b),
	};
	struct cmsghdr *c;
	ssize_t n, total;

	*fd = -1;
	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -1;
	c = CMSG_FIRSTHDR(&msg);
	if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
		memcpy(fd, CMSG_DATA(c), sizeof(int));
	total = n;
	/* the rest until EOF */
	while (n > 0 && (size_t)total < len - 1) {
		n = read(sock, buf + total, len - 1 - (size_t)total);
		if (n > 0)
			total += n;
	}
	buf[total] = '\0';
	return 0;
}

static void run_notify(const char *flag)
{
	char path[] = "/tmp/agentrun-test-seccomp-XXXXXX";
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct notify_arg a;
	_cleanup_close_ int lsock = -1, conn = -1, nfd = -1;
	struct seccomp_notif *req = NULL;
	struct seccomp_notif_resp *resp = NULL;
	char buf[4096], sock_path[128], expect[64];
	pid_t pid;
	int st = 0;

	CHECK(mkdtemp(path) != NULL);
	snprintf(sock_path, sizeof(sock_path), "%s/listener.sock", path);
	memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
	lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(lsock >= 0);
	CHECK(bind(lsock, (struct sockaddr *)&addr, sizeof(addr)) == 0);
	CHECK(listen(lsock, 1) == 0);

	a.path = sock_path;
	a.flag = flag;
	fflush(stdout);
	pid = fork();
	if (pid == 0)
		_exit(child_notify(&a));
	CHECK(pid > 0);

	/* Never block forever: a child that fails early never connects. */
	{
		struct pollfd lp = { .fd = lsock, .events = POLLIN };

		if (poll(&lp, 1, 10000) != 1) {
			CHECK(!"the child connected to the listener");
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			printf("# child status 0x%x\n", st);
			unlink(sock_path);
			rmdir(path);
			return;
		}
	}
	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	CHECK(conn >= 0);
	CHECK(recv_fd(conn, buf, sizeof(buf), &nfd) == 0);
	CHECK(nfd >= 0);
	CHECK_STR_CONTAINS(buf, "\"ociVersion\":\"1.2.0\"");
	CHECK_STR_CONTAINS(buf, "\"fds\":[\"seccompFd\"]");
	snprintf(expect, sizeof(expect), "\"pid\":%d,", (int)pid);
	CHECK_STR_CONTAINS(buf, expect);
	CHECK_STR_CONTAINS(buf, "\"metadata\":\"meta\\\"data\"");
	CHECK_STR_CONTAINS(buf,
			   "\"state\":{\"ociVersion\":\"1.2.0\",\"id\":\"c1\"");
	CHECK(strlen(buf) > 0 && buf[strlen(buf) - 1] == '}');

	if (nfd >= 0) {
		struct pollfd pfd = { .fd = nfd, .events = POLLIN };

		CHECK(seccomp_notify_alloc(&req, &resp) == 0);
		CHECK(poll(&pfd, 1, 10000) == 1);
		CHECK(seccomp_notify_receive(nfd, req) == 0);
		CHECK_INT_EQ(req->pid, pid);
		CHECK_INT_EQ(req->data.nr, SYS_getppid);
		resp->id = req->id;
		resp->val = 4242;
		resp->error = 0;
		resp->flags = 0;
		CHECK(seccomp_notify_respond(nfd, resp) == 0);
		seccomp_notify_free(req, resp);
	} else {
		kill(pid, SIGKILL);
	}
	CHECK(waitpid(pid, &st, 0) == pid);
	CHECK(WIFEXITED(st));
	CHECK_INT_EQ(WEXITSTATUS(st), 0);
	unlink(sock_path);
	rmdir(path);
}

UNIT_TEST(notify_via_listener_path)
{
	run_notify(NULL);
}

UNIT_TEST(notify_with_wait_killable_recv)
{
	if (!ar_seccomp_flag_supported(
		    "SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV"))
		UNIT_SKIP(
			"kernel without SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
	run_notify("SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV");
}

UNIT_TEST(notify_with_tsync)
{
	run_notify("SECCOMP_FILTER_FLAG_TSYNC");
}

UNIT_TEST(send_notify_fd_errors)
{
	struct ar_error err = AR_ERROR_INIT;
	char longp[200];

	memset(longp, 'a', sizeof(longp) - 1);
	longp[0] = '/';
	longp[sizeof(longp) - 1] = '\0';
	CHECK_INT_EQ(ar_seccomp_send_notify_fd(longp, 0, NULL, "{}", &err), -1);
	CHECK_STR_CONTAINS(err.msg, "too long");
	ar_error_clear(&err);
	CHECK_INT_EQ(ar_seccomp_send_notify_fd("/nonexistent/agentrun.sock", 0,
					       NULL, "{\"pid\":1}", &err),
		     -1);
	CHECK_STR_CONTAINS(err.msg, "/nonexistent/agentrun.sock");
	ar_error_clear(&err);
	CHECK_INT_EQ(ar_seccomp_send_notify_fd("/tmp/x.sock", 0, NULL,
					       "{not json", &err),
		     -1);
	CHECK_STR_CONTAINS(err.msg, "invalid container state");
}

/* ---- cache of compiled programs ---- */

static char *only_file(const char *dir)
{
	_cleanup_(closedirp) DIR *d = opendir(dir);
	struct dirent *e;
	char *found = NULL;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		free(found);
		found = ar_xasprintf("%s/%s", dir, e->d_name);
	}
	return found;
}

/* The test's cache directory and every entry in it removed (a test
 * that left one kept /tmp/agentrun-test-sccache-* behind each run);
 * whether it is all gone. */
static bool remove_cache(const char *dir, const char *cdir)
{
	_cleanup_(closedirp) DIR *d = opendir(cdir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	return rmdir(cdir) == 0 && rmdir(dir) == 0;
}

static int child_cached(void *arg)
{
	struct ar_seccomp_filter *f = arg;
	struct ar_error err = AR_ERROR_INIT;
	int nfd;

	CHILD_CHECK(ar_seccomp_load(f, &nfd, &err) == 0);
	errno = 0;
	CHILD_CHECK(syscall(SYS_getppid) == -1 && errno == EACCES);
	CHILD_CHECK(syscall(SYS_getpid) > 0);
	return 0;
}

UNIT_TEST(cache_hit_miss_and_tamper)
{
	char dir[] = "/tmp/agentrun-test-sccache-XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	struct oci_seccomp sc = base(OCI_SCMP_ACT_ALLOW);
	struct oci_seccomp_syscall rules[] = {
		rule(STRV("getppid"), OCI_SCMP_ACT_ERRNO, EACCES),
	};
	struct ar_seccomp_filter *a = NULL, *b = NULL, *c = NULL;
	_cleanup_free_ char *file = NULL, *cdir = NULL;
	const void *pa, *pb;
	size_t la = 0, lb = 0;
	struct stat st;
	int fd, st_child;

	sc.architectures = STRV("SCMP_ARCH_X86_64", "SCMP_ARCH_X86");
	sc.syscalls = rules;
	sc.n_syscalls = 1;
	CHECK(mkdtemp(dir) != NULL);
	cdir = ar_xasprintf("%s/cache", dir);

	/* miss: compiled, stored (directory created 0700) */
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &a, &err), 0);
	CHECK(a && !ar_seccomp_filter_from_cache(a));
	CHECK(stat(cdir, &st) == 0 && (st.st_mode & 07777) == 0700);
	file = only_file(cdir);
	CHECK(file != NULL);
	CHECK(file && stat(file, &st) == 0 && (st.st_mode & 07777) == 0600);

	/* hit: the same program */
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &b, &err), 0);
	CHECK(b && ar_seccomp_filter_from_cache(b));
	if (a && b) {
		pa = ar_seccomp_filter_bpf(a, &la);
		pb = ar_seccomp_filter_bpf(b, &lb);
		CHECK(la == lb && la > 0 && memcmp(pa, pb, la) == 0);
		st_child = in_child(child_cached, b);
		CHECK(WIFEXITED(st_child) && WEXITSTATUS(st_child) == 0);
	}
	ar_seccomp_filter_free(b);
	b = NULL;

	/* a different profile does not hit */
	rules[0].errno_ret.v = EXDEV;
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &c, &err), 0);
	CHECK(c && !ar_seccomp_filter_from_cache(c));
	ar_seccomp_filter_free(c);
	c = NULL;
	rules[0].errno_ret.v = EACCES;

	/* tampered entry (a byte of the key): ignored and rewritten */
	fd = file ? open(file, O_RDWR | O_CLOEXEC) : -1;
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(pwrite(fd, "X", 1, 40) == 1);
		close(fd);
	}
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &b, &err), 0);
	CHECK(b && !ar_seccomp_filter_from_cache(b));
	ar_seccomp_filter_free(b);
	b = NULL;
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &b, &err), 0);
	CHECK(b && ar_seccomp_filter_from_cache(b));
	ar_seccomp_filter_free(b);
	b = NULL;

	/* a directory others can write is not trusted */
	CHECK(chmod(cdir, 0777) == 0);
	CHECK_INT_EQ(ar_seccomp_compile_cached(&sc, cdir, &b, &err), 0);
	CHECK(b && !ar_seccomp_filter_from_cache(b));
	ar_seccomp_filter_free(b);

	ar_seccomp_filter_free(a);
	CHECK(remove_cache(dir, cdir));
}

/* The embedded agent profile, keyed by its JSON text: the same program
 * as the parsed profile compiled the usual way, from the cache on the
 * second call, and a tampered entry is not used. */
UNIT_TEST(cache_embedded_default_profile)
{
	char dir[] = "/tmp/agentrun-test-sccache-XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	struct ar_arena arena = { 0 };
	struct oci_seccomp *sc = NULL;
	struct ar_seccomp_filter *a = NULL, *b = NULL, *ref = NULL;
	_cleanup_free_ char *file = NULL, *cdir = NULL;
	const void *pa, *pb, *pr;
	size_t la = 0, lb = 0, lr = 0;
	int fd;

	CHECK(mkdtemp(dir) != NULL);
	cdir = ar_xasprintf("%s/cache", dir);
	CHECK_INT_EQ(oci_seccomp_default(&arena, &sc, &err), 0);
	CHECK_INT_EQ(ar_seccomp_compile_cached(sc, NULL, &ref, &err), 0);

	/* miss: parsed, compiled, stored */
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(cdir, false, &a, &err),
		     0);
	CHECK(a && !ar_seccomp_filter_from_cache(a));
	file = only_file(cdir);
	CHECK(file != NULL);
	/* the key names the BPF generator and whether x32 is in the
	 * program (a boot with x32 must not reuse a program without it) */
	if (file) {
		_cleanup_free_ char *data = NULL;
		bool no_x32 = seccomp_arch_native() == SCMP_ARCH_X86_64 &&
			      !ar_seccomp_x32_runs();
		const char *want =
			no_x32 ? "\nbpfgen " AR_SBPF_VERSION "\nx32 0" :
				 "\nbpfgen " AR_SBPF_VERSION "\nx32 1";
		size_t dlen = 0;

		CHECK_INT_EQ(ar_read_file_at(AT_FDCWD, file, 1 << 20, &data,
					     &dlen, &err),
			     0);
		CHECK(data && memmem(data, dlen, want, strlen(want)));
	}
	/* hit */
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(cdir, false, &b, &err),
		     0);
	CHECK(b && ar_seccomp_filter_from_cache(b));
	if (a && b && ref) {
		pa = ar_seccomp_filter_bpf(a, &la);
		pb = ar_seccomp_filter_bpf(b, &lb);
		pr = ar_seccomp_filter_bpf(ref, &lr);
		CHECK(la == lr && la > 0 && memcmp(pa, pr, la) == 0);
		CHECK(lb == lr && memcmp(pb, pr, lb) == 0);
	}
	ar_seccomp_filter_free(b);
	b = NULL;
	/* a byte of the key (the JSON text) changed: not used */
	fd = file ? open(file, O_RDWR | O_CLOEXEC) : -1;
	CHECK(fd >= 0);
	if (fd >= 0) {
		CHECK(pwrite(fd, "X", 1, 200) == 1);
		close(fd);
	}
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(cdir, false, &b, &err),
		     0);
	CHECK(b && !ar_seccomp_filter_from_cache(b));
	/* no cache directory: compiled */
	ar_seccomp_filter_free(b);
	b = NULL;
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(NULL, false, &b, &err),
		     0);
	CHECK(b && !ar_seccomp_filter_from_cache(b));
	CHECK(b && !ar_seccomp_filter_needs_notify(b));
	/* the namespace refusals notified: an entry of its own, with a
	 * listener */
	ar_seccomp_filter_free(b);
	b = NULL;
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(cdir, true, &b, &err),
		     0);
	CHECK(b && !ar_seccomp_filter_from_cache(b) &&
	      ar_seccomp_filter_needs_notify(b));
	ar_seccomp_filter_free(b);
	b = NULL;
	CHECK_INT_EQ(ar_seccomp_compile_default_cached(cdir, true, &b, &err),
		     0);
	CHECK(b && ar_seccomp_filter_from_cache(b) &&
	      ar_seccomp_filter_needs_notify(b));

	ar_seccomp_filter_free(a);
	ar_seccomp_filter_free(b);
	ar_seccomp_filter_free(ref);
	oci_arena_free(&arena);
	CHECK(remove_cache(dir, cdir));
}

/* ---- tables for `features` ---- */

UNIT_TEST(arch_and_flag_tables)
{
	CHECK(ar_seccomp_arch_known("SCMP_ARCH_X86_64"));
	CHECK(ar_seccomp_arch_known("SCMP_ARCH_AARCH64"));
	CHECK(!ar_seccomp_arch_known("SCMP_ARCH_VAX"));
	CHECK(ar_seccomp_flag_supported("SECCOMP_FILTER_FLAG_LOG"));
	CHECK(!ar_seccomp_flag_supported("SECCOMP_FILTER_FLAG_NOPE"));
	CHECK_STR_CONTAINS(ar_seccomp_lib_version(), ".");
}

UNIT_TEST(ns_flags_str)
{
	char buf[200];

	ar_seccomp_ns_flags_str(0x10020011, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "CLONE_NEWUSER|CLONE_NEWNS");
	ar_seccomp_ns_flags_str(0x80, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "CLONE_NEWTIME");
	ar_seccomp_ns_flags_str(0x11, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "");
}

UNIT_MAIN()
