/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

/* run.oci.hooks.stdout / run.oci.hooks.stderr, opened once per process
 * (ar_hooks_output_open); -1: the log file or stderr. A container
 * process inherits them from the runtime that cloned it. */
static struct {
	bool opened;
	int out, err;
} hook_output = { false, -1, -1 };

static int open_output(const struct oci_config *cfg, const char *key, int *fd,
		       struct ar_error *err)
{
	const char *path = oci_config_annotation(cfg, key);

	if (!path)
		return 0;
	*fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY,
		   0600);
	if (*fd < 0)
		return ar_error_set(err, errno,
				    "annotations[\"%s\"]: open `%s`", key,
				    path);
	return 0;
}

int ar_hooks_output_open(const struct oci_config *cfg, struct ar_error *err)
{
	if (hook_output.opened)
		return 0;
	if (open_output(cfg, AR_ANNOTATION_HOOKS_STDOUT, &hook_output.out,
			err) < 0 ||
	    open_output(cfg, AR_ANNOTATION_HOOKS_STDERR, &hook_output.err,
			err) < 0) {
		ar_hooks_output_close();
		return -1;
	}
	hook_output.opened = true;
	return 0;
}

void ar_hooks_output_close(void)
{
	if (hook_output.out >= 0)
		close(hook_output.out);
	if (hook_output.err >= 0)
		close(hook_output.err);
	hook_output.out = hook_output.err = -1;
	hook_output.opened = false;
}

static int pidfd_open_compat(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* stdin of the hook: a memfd holding the state, so writing it can never
 * block on a hook that does not read its stdin. */
static int state_memfd(const char *json, size_t len, struct ar_error *err)
{
	_cleanup_close_ int fd =
		memfd_create("agentrun-hook-state", MFD_CLOEXEC);

	if (fd < 0)
		return ar_error_set(err, errno, "memfd_create");
	if (ar_write_all(fd, json, len) < 0 || lseek(fd, 0, SEEK_SET) < 0)
		return ar_error_set(err, errno, "write hook state");
	return ar_steal_fd(&fd);
}

/* Wait for pid with an optional timeout in seconds (<= 0: none). Returns
 * the wait status, or -1 with errno ETIMEDOUT after killing it. */
static int wait_with_timeout(pid_t pid, int timeout_s)
{
	_cleanup_close_ int pfd = -1;
	int status;

	if (timeout_s > 0) {
		long long deadline = ar_now_ms() + (long long)timeout_s * 1000;

		pfd = pidfd_open_compat(pid);
		while (pfd >= 0) {
			struct pollfd p = { .fd = pfd, .events = POLLIN };
			long long left = deadline - ar_now_ms();
			int r;

			if (left <= 0) {
				/* the hook and what it started (its own
				 * process group: a child left holding the
				 * caller's pipe would hold the caller) */
				kill(-pid, SIGKILL);
				kill(pid, SIGKILL);
				while (waitpid(pid, &status, 0) < 0 &&
				       errno == EINTR)
					;
				errno = ETIMEDOUT;
				return -1;
			}
			r = poll(&p, 1, (int)left);
			if (r > 0)
				break;
			if (r < 0 && errno != EINTR)
				break;
		}
	}
	while (waitpid(pid, &status, 0) < 0) {
		if (errno != EINTR)
			return -1;
	}
	return status;
}

/* ---- the timeout's supervisor ----
 *
 * A hook with a timeout runs under a supervisor: a child of the runtime
 * that is a child subreaper (PR_SET_CHILD_SUBREAPER), so every process
 * the hook starts stays its descendant however it detaches: setsid, a
 * double fork, a new process group: an orphan is reparented to the
 * supervisor, not to init. At the timeout the supervisor kills the
 * hook's process group, then every child it has (found in /proc by
 * their parent pid) and each one's process group, reaping, until it has
 * no child left. A fork of a process that may be multi-threaded: only
 * system calls and stack buffers here, no allocation. Without /proc (a
 * startContainer hook in a container without it) only the hook's group
 * is killed. */

struct hook_result {
	int timed_out;
	int status; /* the hook's wait status */
	int killed; /* processes killed outside the hook's group */
};

/* the parent pid in /proc/PID/stat's text: after the last ')', the state
 * then the ppid */
static pid_t stat_ppid(const char *buf, ssize_t n)
{
	const char *p = NULL;
	long v = 0;

	for (ssize_t i = n - 1; i >= 0; i--)
		if (buf[i] == ')') {
			p = buf + i;
			break;
		}
	if (!p || p + 4 >= buf + n)
		return -1;
	p += 2; /* ") " */
	while (p < buf + n && *p != ' ')
		p++; /* the state */
	if (p >= buf + n)
		return -1;
	for (p++; p < buf + n && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (*p - '0');
	return (pid_t)v;
}

#define SEEN_MAX 256

struct seen {
	pid_t v[SEEN_MAX];
	int n; /* distinct pids killed (the first SEEN_MAX remembered) */
};

static void seen_add(struct seen *s, pid_t pid)
{
	int k = s->n < SEEN_MAX ? s->n : SEEN_MAX;

	for (int i = 0; i < k; i++)
		if (s->v[i] == pid)
			return;
	if (s->n < SEEN_MAX)
		s->v[s->n] = pid;
	s->n++;
}

/* Kill each child of this process and its process group (never this
 * process's own group); returns how many children were found, and
 * remembers those not of the hook's group (`hook_pgrp`). */
static int kill_children(pid_t own_pgrp, pid_t hook_pgrp, struct seen *seen)
{
	pid_t self;
	char dbuf[4096];
	int n = 0;
	int proc = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (proc < 0)
		return -1;
	/* that /proc must be of this process's pid namespace (a
	 * createContainer hook may see the host's /proc from the
	 * container's namespace): its pids are the ones kill(2) takes */
	{
		char link[32];
		ssize_t k = readlinkat(proc, "self", link, sizeof(link) - 1);

		self = 0;
		for (ssize_t i = 0; i < k && link[i] >= '0' && link[i] <= '9';
		     i++)
			self = self * 10 + (link[i] - '0');
		if (k <= 0 || self <= 0 || self != getpid()) {
			close(proc);
			return -1;
		}
	}
	for (;;) {
		long got = syscall(SYS_getdents64, proc, dbuf, sizeof(dbuf));

		if (got <= 0)
			break;
		for (long off = 0; off < got;) {
			struct {
				unsigned long long ino;
				long long off;
				unsigned short reclen;
				unsigned char type;
				char name[];
			} *d = (void *)(dbuf + off);
			char path[64], sbuf[512];
			pid_t pid = 0, ppid, pg;
			const char *c = d->name;
			size_t k = 0;
			int fd;
			ssize_t r;

			off += d->reclen;
			for (; *c >= '0' && *c <= '9'; c++)
				pid = pid * 10 + (*c - '0');
			if (*c || pid <= 0 || pid == self)
				continue;
			for (const char *q = d->name; *q && k < 40; q++)
				path[k++] = *q;
			for (const char *q = "/stat"; *q; q++)
				path[k++] = *q;
			path[k] = '\0';
			fd = openat(proc, path, O_RDONLY | O_CLOEXEC);
			if (fd < 0)
				continue;
			r = read(fd, sbuf, sizeof(sbuf));
			close(fd);
			if (r <= 0 || (ppid = stat_ppid(sbuf, r)) != self)
				continue;
			n++;
			pg = getpgid(pid);
			/* counted: one that had left the hook's group */
			if (pg != hook_pgrp)
				seen_add(seen, pid);
			kill(pid, SIGKILL);
			if (pg > 1 && pg != own_pgrp)
				kill(-pg, SIGKILL);
		}
	}
	close(proc);
	return n;
}

/* Everything the hook left, killed and reaped (bounded: a process stuck
 * in the kernel cannot be waited for forever). */
static int kill_descendants(pid_t hook)
{
	pid_t own = getpgrp();
	long long deadline = ar_now_ms() + 5000;
	struct seen seen;

	seen.n = 0;
	while (ar_now_ms() < deadline) {
		int n = kill_children(own, hook, &seen);
		pid_t r;

		while ((r = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (r < 0 && errno == ECHILD)
			break;
		if (n < 0)
			break; /* no /proc: nothing more can be found */
		{
			struct timespec ts = { 0, 5 * 1000000L };

			nanosleep(&ts, NULL);
		}
	}
	return seen.n;
}

/* The supervisor (a fork of the runtime): runs the hook `pid` to its end
 * or its timeout, writes the result to `res_fd`, exits. */
static _Noreturn void supervise(pid_t pid, int timeout_s, int res_fd)
{
	struct hook_result res = { 0, 0, 0 };
	int status = wait_with_timeout(pid, timeout_s);

	if (status < 0 && errno == ETIMEDOUT) {
		res.timed_out = 1;
		res.killed = kill_descendants(pid);
	}
	res.status = status;
	(void)!write(res_fd, &res, sizeof(res));
	_exit(0);
}

int ar_hook_run_one(const struct oci_hook *hook, const char *what,
		    const char *state_json, size_t len, struct ar_error *err)
{
	_cleanup_close_ int in = -1;
	char *fallback_argv[2];
	char *const *argv;
	int log_fd = ar_log_fd() >= 0 ? ar_log_fd() : STDERR_FILENO;
	int out_fd = hook_output.out >= 0 ? hook_output.out : log_fd;
	int err_fd = hook_output.err >= 0 ? hook_output.err : log_fd;
	pid_t pid, sup;
	int status, res_pipe[2] = { -1, -1 };
	sigset_t ignored; /* the supervisor's, set back in the hook */
	bool timed;

	if (!hook->path || hook->path[0] != '/')
		return ar_error_set_plain(err, EINVAL,
					  "%s: path `%s` is not absolute", what,
					  hook->path ? hook->path : "");
	in = state_memfd(state_json, len, err);
	if (in < 0)
		return ar_error_wrap(err, "%s", what);
	if (hook->args.n > 0) {
		argv = hook->args.v;
	} else {
		fallback_argv[0] = hook->path;
		fallback_argv[1] = NULL;
		argv = fallback_argv;
	}
	ar_debug("running %s: %s", what, hook->path);
	timed = hook->timeout.set && hook->timeout.v > 0;
	sigemptyset(&ignored);
	if (timed) {
		/* the supervisor (above): it forks the hook below */
		if (pipe2(res_pipe, O_CLOEXEC) < 0)
			return ar_error_set(err, errno, "%s: pipe", what);
		sup = fork();
		if (sup < 0) {
			close(res_pipe[0]);
			close(res_pipe[1]);
			return ar_error_set(err, errno, "%s: fork", what);
		}
		if (sup > 0) {
			struct hook_result res = { 0, -1, 0 };
			ssize_t n;

			close(res_pipe[1]);
			while ((n = read(res_pipe[0], &res, sizeof(res))) < 0 &&
			       errno == EINTR)
				;
			close(res_pipe[0]);
			while (waitpid(sup, NULL, 0) < 0 && errno == EINTR)
				;
			if (n != (ssize_t)sizeof(res))
				return ar_error_set_plain(
					err, ECHILD,
					"%s (`%s`): its supervisor died", what,
					hook->path);
			if (res.timed_out) {
				if (res.killed > 0)
					return ar_error_set_plain(
						err, ETIMEDOUT,
						"%s (`%s`) timed out after %d seconds (killed, with %d process%s it had moved to another process group or session)",
						what, hook->path,
						hook->timeout.v, res.killed,
						res.killed == 1 ? "" : "es");
				return ar_error_set_plain(
					err, ETIMEDOUT,
					"%s (`%s`) timed out after %d seconds",
					what, hook->path, hook->timeout.v);
			}
			status = res.status;
			goto done;
		}
		close(res_pipe[0]);
		/* none of the runtime's handlers runs here: what the runtime
		 * handles (^C, SIGTERM: forwarded to the container) the
		 * supervisor ignores, and ends at the hook's end or timeout
		 * all the same; SIGCHLD stays default (waitpid needs it) */
		for (int sig = 1; sig < NSIG; sig++) {
			struct sigaction sa;

			if (sigaction(sig, NULL, &sa) == 0 &&
			    sa.sa_handler != SIG_DFL &&
			    sa.sa_handler != SIG_IGN) {
				signal(sig, sig == SIGCHLD ? SIG_DFL : SIG_IGN);
				sigaddset(&ignored, sig);
			}
		}
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
	}
	pid = fork();
	if (pid < 0) {
		if (timed)
			_exit(127);
		return ar_error_set(err, errno, "%s: fork", what);
	}
	if (pid == 0) {
		sigset_t none;

		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		/* as the runtime's exec would leave them: default */
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&ignored, sig) == 1)
				signal(sig, SIG_DFL);
		/* a timeout ends the whole group (wait_with_timeout) */
		if (timed)
			(void)setpgid(0, 0);
		if (dup2(in, STDIN_FILENO) < 0 ||
		    dup2(out_fd, STDOUT_FILENO) < 0 ||
		    dup2(err_fd, STDERR_FILENO) < 0)
			_exit(127);
		/* no env: the runtime's own (crun; runc gives none) */
		execve(hook->path, argv, hook->env.n ? hook->env.v : environ);
		{
			char msg[512];
			int n = snprintf(msg, sizeof(msg),
					 "agentrun: %s: exec `%s`: %s\n", what,
					 hook->path, strerror(errno));
			if (n > 0)
				(void)ar_write_all(STDERR_FILENO, msg,
						   (size_t)n);
		}
		_exit(127);
	}
	if (timed) {
		(void)setpgid(pid, pid); /* as the child does: no race */
		supervise(pid, hook->timeout.v, res_pipe[1]);
	}
	status = wait_with_timeout(pid, 0);
done:
	if (status < 0) {
		if (errno == ETIMEDOUT)
			return ar_error_set_plain(
				err, ETIMEDOUT,
				"%s (`%s`) timed out after %d seconds", what,
				hook->path, hook->timeout.v);
		return ar_error_set(err, errno, "%s: wait", what);
	}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status))
		return ar_error_set_plain(err, ECHILD,
					  "%s (`%s`) exited with status %d",
					  what, hook->path,
					  WEXITSTATUS(status));
	return ar_error_set_plain(err, ECHILD, "%s (`%s`) killed by signal %d",
				  what, hook->path, WTERMSIG(status));
}

int ar_hooks_run(const struct oci_config *cfg, enum oci_hook_stage stage,
		 const char *state_json, size_t len, struct ar_error *err)
{
	const struct oci_hook_list *list = &cfg->hooks[stage];
	/* runtime-spec: a failing poststart or poststop hook is logged as a
	 * warning and the remaining hooks and the lifecycle continue */
	bool warn_only = stage == OCI_HOOK_POSTSTART ||
			 stage == OCI_HOOK_POSTSTOP;

	if (list->n && ar_hooks_output_open(cfg, err) < 0) {
		if (!warn_only)
			return ar_error_wrap(err, "hooks.%s",
					     oci_hook_stage_name(stage));
		ar_warn("hooks.%s: %s (their output goes to the log)",
			oci_hook_stage_name(stage), err->msg);
		ar_error_clear(err);
	}

	for (size_t i = 0; i < list->n; i++) {
		char what[96];

		snprintf(what, sizeof(what), "hooks.%s[%zu]",
			 oci_hook_stage_name(stage), i);
		if (ar_hook_run_one(&list->items[i], what, state_json, len,
				    err) < 0) {
			if (!warn_only)
				return -1;
			ar_warn("%s", err->msg);
			ar_error_clear(err);
		}
	}
	return 0;
}

int ar_hooks_run_state(const struct oci_config *cfg, enum oci_hook_stage stage,
		       const char *id, pid_t pid, const char *bundle,
		       enum ar_status status, struct ar_error *err)
{
	struct ar_state st = {
		.id = (char *)id,
		.pid = pid,
		.bundle = (char *)bundle,
		.annotations = cfg->annotations.items,
		.n_annotations = cfg->annotations.n,
	};
	_cleanup_free_ char *json = NULL;
	size_t len;

	if (cfg->hooks[stage].n == 0)
		return 0;
	if (ar_state_oci_json(&st, status, &json, &len, err) < 0)
		return -1;
	return ar_hooks_run(cfg, stage, json, len, err);
}

bool ar_hooks_need_host_pid(const struct oci_config *cfg)
{
	return cfg->hooks[OCI_HOOK_CREATE_CONTAINER].n > 0 ||
	       cfg->hooks[OCI_HOOK_START_CONTAINER].n > 0;
}
