/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sandbox sessions: --name/--detach, exec, list, stop (session.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config_write.h"
#include "container.h"
#include "exec.h"
#include "log.h"
#include "oci_config.h"
#include "session.h"
#include "state.h"
#include "utils.h"
#include "vm/vm.h"

#define SESSIONS ".sandboxes"

static char *session_dir(const char *root, const char *name)
{
	return ar_xasprintf("%s/" SESSIONS "/%s", root, name);
}

static pid_t read_monitor(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_free_ char *s = NULL;
	struct ar_error e = AR_ERROR_INIT;
	long long v;

	if (fd < 0 || ar_read_file_at(fd, "monitor", 64, &s, NULL, &e) < 0)
		return -1;
	s[strcspn(s, "\n")] = '\0';
	if (ar_parse_i64(s, &v) < 0 || v <= 0)
		return -1;
	return (pid_t)v;
}

static bool monitor_alive(const char *dir)
{
	pid_t pid = read_monitor(dir);

	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

static void remove_dir(const char *dir)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd >= 0) {
		unlinkat(fd, "config.json", 0);
		unlinkat(fd, "monitor", 0);
		unlinkat(fd, "output", 0);
		unlinkat(fd, "observed", 0);
		unlinkat(fd, "vm", 0);
	}
	rmdir(dir);
}

static int write_monitor(const char *dir, struct ar_error *err)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (fd < 0)
		return ar_error_set(err, errno, "sandbox: open `%s`", dir);
	return ar_write_file_replace_at(fd, "monitor", buf, (size_t)n, 0600,
					err);
}

/* an empty file `name` in the session directory: what exec must know */
static int mark(const char *dir, const char *name, struct ar_error *err)
{
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return ar_error_set(err, errno, "sandbox: open `%s`", dir);
	return ar_write_file_replace_at(fd, name, "", 0, 0600, err);
}

int sb_session_begin(struct sb_session *s, const char *root, const char *name,
		     const struct oci_config *cfg, bool observed, bool vm,
		     struct ar_error *err)
{
	_cleanup_free_ char *top = ar_xasprintf("%s/" SESSIONS, root);
	char *dir;
	int r;

	s->ready_fd = -1;
	if (ar_state_validate_id(name, err) < 0)
		return ar_error_wrap(err, "sandbox --name");
	if (ar_mkdir_p(top, 0700) < 0)
		return ar_error_set(err, errno, "sandbox: create `%s`", top);
	dir = session_dir(root, name);
	r = mkdir(dir, 0700) < 0 ? errno : 0;
	if (r == EEXIST && !monitor_alive(dir)) {
		struct ar_error ignored = AR_ERROR_INIT;

		/* its monitor died (SIGKILL): its container may be left */
		ar_container_delete(root, name, true, &ignored);
		remove_dir(dir);
		r = mkdir(dir, 0700) < 0 ? errno : 0;
	}
	if (r != 0) {
		int e = r;

		free(dir);
		if (e == EEXIST)
			return ar_error_set_plain(
				err, EEXIST,
				"sandbox: a sandbox named `%s` is running (`agentrun sandbox list`; `agentrun sandbox exec %s -- CMD` joins it, `agentrun sandbox stop %s` ends it)",
				name, name, name);
		return ar_error_set(
			err, e,
			"sandbox: create the session directory under `%s`",
			top);
	}
	s->dir = dir;
	if (write_monitor(dir, err) < 0 ||
	    oci_config_write_file(cfg, dir, err) < 0 ||
	    (observed && mark(dir, "observed", err) < 0) ||
	    (vm && mark(dir, "vm", err) < 0)) {
		remove_dir(dir);
		free(s->dir);
		s->dir = NULL;
		return -1;
	}
	return 0;
}

/* ---- --detach ---- */

/* The caller: until the container runs, or the monitor reports its end. */
static int wait_started(int fd, const char *root, const char *name,
			int *exit_status, struct ar_error *err)
{
	for (int i = 0; i < 600; i++) { /* 60 s */
		struct pollfd p = { fd, POLLIN, 0 };
		_cleanup_free_ char *json = NULL;
		struct ar_error e = AR_ERROR_INIT;

		if (poll(&p, 1, 100) > 0) {
			char msg[sizeof(err->msg) + 2];
			ssize_t n = recv(fd, msg, sizeof(msg) - 1, 0);

			if (n <= 0)
				return ar_error_set_plain(
					err, ECHILD,
					"sandbox `%s`: the monitor process ended before the sandbox ran",
					name);
			msg[n] = '\0';
			if (msg[0] == 'X') {
				*exit_status = (int)strtol(msg + 1, NULL, 10);
				ar_log(AR_LOG_INFO,
				       "sandbox `%s`: the command already exited with status %d",
				       name, *exit_status);
				return 0;
			}
			return ar_error_set_plain(err, EIO, "%s", msg + 1);
		}
		if (ar_container_state(root, name, &json, NULL, &e) == 0 &&
		    strstr(json, "\"status\":\"running\"")) {
			*exit_status = 0;
			return 0;
		}
	}
	return ar_error_set_plain(err, ETIMEDOUT,
				  "sandbox `%s`: not running after 60 s", name);
}

int sb_session_detach(struct sb_session *s, const char *root, const char *name,
		      int *exit_status, struct ar_error *err)
{
	_cleanup_free_ char *out = ar_xasprintf("%s/output", s->dir);
	int sv[2], fd;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "socketpair");
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return ar_error_set(err, errno, "fork");
	}
	if (pid > 0) {
		int r;

		close(sv[1]);
		r = wait_started(sv[0], root, name, exit_status, err);
		close(sv[0]);
		return r < 0 ? -1 : 1;
	}
	close(sv[0]);
	s->ready_fd = sv[1];
	setsid();
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		close(fd);
	}
	fd = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
		close(fd);
	}
	if (write_monitor(s->dir, err) < 0)
		return -1;
	return 0;
}

void sb_session_end(struct sb_session *s, int r, int exit_status,
		    const struct ar_error *err)
{
	if (s->ready_fd >= 0) {
		char msg[sizeof(err->msg) + 2];
		int n = r < 0 ? snprintf(msg, sizeof(msg), "E%s", err->msg) :
				snprintf(msg, sizeof(msg), "X%d", exit_status);

		/* the caller may be gone (it returned once the sandbox ran) */
		send(s->ready_fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
		close(s->ready_fd);
		s->ready_fd = -1;
	}
	if (s->dir) {
		remove_dir(s->dir);
		free(s->dir);
		s->dir = NULL;
	}
}

/* ---- exec ---- */

int ar_sandbox_session_exec(const char *root, const char *name, char **argv,
			    int tty, int *exit_status, struct ar_error *err)
{
	_cleanup_free_ char *dir = NULL, *obs = NULL, *vm = NULL;
	_cleanup_free_ char **vm_argv = NULL;
	struct ar_exec_opts eo = { 0 };

	*exit_status = 1;
	if (ar_state_validate_id(name, err) < 0)
		return -1;
	dir = session_dir(root, name);
	if (access(dir, F_OK) < 0 || !monitor_alive(dir))
		return ar_error_set_plain(
			err, ENOENT,
			"sandbox exec: no sandbox named `%s` is running (`agentrun sandbox list`; start one with `agentrun sandbox --name %s [--detach] -- CMD`)",
			name, name);
	obs = ar_xasprintf("%s/observed", dir);
	if (access(obs, F_OK) == 0)
		return ar_error_set_plain(
			err, ENOTSUP,
			"sandbox exec: `%s` runs with --audit or --learn, whose listener observes the sandbox's first process only; a process joining it would go unobserved, so exec into it is refused",
			name);
	eo.root = root;
	eo.id = name;
	eo.args = argv;
	vm = ar_xasprintf("%s/vm", dir);
	if (access(vm, F_OK) == 0) {
		/* --vm: the command runs in the guest, through the guest
		 * agent (vm/vm_agent.h), as a session of its own */
		size_t n = 0;

		while (argv[n])
			n++;
		vm_argv = ar_xcalloc(n + 4, sizeof(char *));
		vm_argv[0] = (char *)AR_VM_AGENT_DEST;
		vm_argv[1] = (char *)"vm-exec";
		vm_argv[2] = (char *)"--";
		memcpy(vm_argv + 3, argv, n * sizeof(char *));
		eo.args = vm_argv;
	}
	eo.tty = tty > 0 ||
		 (tty < 0 && isatty(STDIN_FILENO) && isatty(STDOUT_FILENO));
	return ar_container_exec(&eo, exit_status, err);
}

/* ---- list ---- */

static const char *annotation(const struct ar_state *st, const char *key)
{
	for (size_t i = 0; i < st->n_annotations; i++)
		if (strcmp(st->annotations[i].key, key) == 0)
			return st->annotations[i].value;
	return "";
}

int ar_sandbox_session_list(const char *root, FILE *out, struct ar_error *err)
{
	_cleanup_free_ char *top = ar_xasprintf("%s/" SESSIONS, root);
	_cleanup_close_ int rootfd = -1;
	struct dirent **names = NULL;
	int n;

	(void)err;
	fprintf(out, "%-20s %-8s %-8s %-20s %s\n", "NAME", "STATUS", "PID",
		"CREATED", "WORKSPACE");
	n = scandir(top, &names, NULL, alphasort);
	if (n < 0)
		return 0; /* no session yet */
	rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < n; i++) {
		const char *name = names[i]->d_name;
		_cleanup_free_ char *dir = session_dir(root, name);
		_cleanup_state_ struct ar_state *st = NULL;
		_cleanup_close_ int dfd = -1;
		struct ar_error e = AR_ERROR_INIT;

		if (name[0] == '.' || !monitor_alive(dir))
			goto next;
		if (rootfd >= 0)
			dfd = ar_state_dir_open(rootfd, name, &e);
		if (dfd < 0 || ar_state_read(dfd, name, &st, &e) < 0) {
			fprintf(out, "%-20s %-8s %-8s %-20s %s\n", name,
				"starting", "-", "-", "-");
			goto next;
		}
		fprintf(out, "%-20s %-8s %-8d %-20.19s %s\n", name,
			ar_status_name(ar_state_status(dfd, st)), (int)st->pid,
			st->created ? st->created : "-",
			annotation(st, "run.agentrun.sandbox.workspace"));
next:
		free(names[i]);
	}
	free(names);
	return 0;
}

/* ---- stop ---- */

static bool gone(const char *dir)
{
	return access(dir, F_OK) < 0 && errno == ENOENT;
}

static bool wait_gone(const char *dir, int ms)
{
	for (int t = 0; t < ms; t += 20) {
		if (gone(dir))
			return true;
		usleep(20 * 1000);
	}
	return gone(dir);
}

/* Whether the sandbox's pid 1 takes SIGTERM: the kernel drops signals
 * that pid 1 of a pid namespace does not handle, so SIGTERM to a pid 1
 * that leaves it at its default would only cost the wait. The sandbox's
 * init (init.h) blocks it and reads it from a signalfd, and forwards it
 * to the command. */
static bool catches_sigterm(const char *root, const char *name)
{
	_cleanup_free_ char *json = NULL, *path = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	struct ar_error e = AR_ERROR_INIT;
	char line[256], *p;
	long pid;

	if (ar_container_state(root, name, &json, NULL, &e) < 0)
		return true;
	p = strstr(json, "\"pid\":");
	if (!p)
		return true;
	pid = strtol(p + 6, NULL, 10);
	if (pid <= 0)
		return true;
	path = ar_xasprintf("/proc/%ld/status", pid);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "SigBlk:", 7) == 0 ||
		    strncmp(line, "SigCgt:", 7) == 0) {
			if (strtoull(line + 7, NULL, 16) &
			    (1ULL << (SIGTERM - 1)))
				return true;
			if (line[3] == 'C')
				return false; /* SigCgt comes last */
		}
	return true;
}

int ar_sandbox_session_stop(const char *root, const char *name, int timeout,
			    struct ar_error *err)
{
	_cleanup_free_ char *dir = NULL;
	struct ar_error e = AR_ERROR_INIT;

	if (ar_state_validate_id(name, err) < 0)
		return -1;
	dir = session_dir(root, name);
	if (gone(dir))
		return ar_error_set_plain(
			err, ENOENT,
			"sandbox stop: no sandbox named `%s` (`agentrun sandbox list`)",
			name);
	if (!monitor_alive(dir)) {
		/* its monitor died: clean up after it */
		ar_container_delete(root, name, true, &e);
		remove_dir(dir);
		return 0;
	}
	/* SIGTERM to the command when it handles it (pid 1 of the
	 * sandbox), then SIGKILL, which ends every process of
	 * the sandbox's pid namespace. The monitor then deletes the
	 * container, stops the proxy and removes the session directory. */
	if (catches_sigterm(root, name) &&
	    ar_container_kill(root, name, SIGTERM, false, &e) == 0 &&
	    wait_gone(dir, timeout * 1000))
		return 0;
	ar_error_clear(&e);
	ar_container_kill(root, name, SIGKILL, false, &e);
	if (wait_gone(dir, 10 * 1000))
		return 0;
	return ar_error_set_plain(
		err, ETIMEDOUT,
		"sandbox stop `%s`: the sandbox's monitor (pid %d) did not end within %d s after SIGKILL",
		name, (int)read_monitor(dir), 10);
}
