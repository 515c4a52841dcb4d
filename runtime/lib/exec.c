/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `exec` into a running container. See exec.h.
 *
 *   runtime                        joiner (fork)          process (clone)
 *   read state, config, seccomp
 *   fork ───────────────────────►  enter the cgroup
 *                                  setns(pidfd, all)
 *                                  clone(CLONE_PARENT) ─► chroot /proc/PID/root
 *                   ◄────────────  PID, exit              terminal, rlimits,
 *   pid file                                              nnp, seccomp, cwd,
 *                   ◄─────────────────────────────────── user, caps, env,
 *                                                         TTY | ERROR | exec
 *   detach: return; else supervise (signals, pty relay, exit status)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "exec.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apparmor.h"
#include "capabilities.h"
#include "cgroup.h"
#include "cgroup_file.h"
#include "landlock.h"
#include "log.h"
#include "namespaces.h"
#include "parent_death.h"
#include "process.h"
#include "seccomp.h"
#include "selinux_label.h"
#include "signals.h"
#include "state.h"
#include "supervise.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif

static const struct {
	const char *name;
	int flag;
} ns_files[] = {
	/* user first: the order for the per-file fallback */
	{ "user", CLONE_NEWUSER }, { "ipc", CLONE_NEWIPC },
	{ "uts", CLONE_NEWUTS },   { "net", CLONE_NEWNET },
	{ "pid", CLONE_NEWPID },   { "cgroup", CLONE_NEWCGROUP },
	{ "time", CLONE_NEWTIME }, { "mnt", CLONE_NEWNS },
};

#define N_NS (sizeof(ns_files) / sizeof(ns_files[0]))

struct exec_ctx {
	const struct ar_exec_opts *o;
	struct ar_state *st;
	struct oci_config *cfg; /* the container's */
	struct oci_config *pcfg; /* --process FILE */
	struct oci_process proc; /* what runs (shallow, may point in cfg) */
	char **env_v; /* owned vectors of proc (strings not owned) */
	char **extra_names; /* cap names added (owned vectors) */
	struct ar_seccomp_filter *seccomp;
	int ns_fds[N_NS]; /* per-file fallback; -1 */
	int ns_flags; /* the namespaces that differ from ours */
	int pidfd;
	int root_fd; /* O_PATH /proc/PID/root */
	int console_fd;
	int sync_fd;
	bool relay_tty;
	bool setgroups_denied;
	bool apparmor; /* AppArmor enabled on the host (apparmor.h) */
	bool selinux; /* SELinux enabled on the host (selinux_label.h) */
	bool in_cgroup; /* the joiner was born in the container's cgroup */
	char *cgroup_path; /* the container's, or its --cgroup sub-cgroup */
};

static void ctx_release(struct exec_ctx *c)
{
	free(c->cgroup_path);
	for (size_t i = 0; i < N_NS; i++)
		if (c->ns_fds[i] >= 0)
			close(c->ns_fds[i]);
	if (c->pidfd >= 0)
		close(c->pidfd);
	if (c->root_fd >= 0)
		close(c->root_fd);
	if (c->console_fd >= 0)
		close(c->console_fd);
	if (c->sync_fd >= 0)
		close(c->sync_fd);
	if (c->seccomp)
		ar_seccomp_filter_free(c->seccomp);
	free(c->env_v);
	for (int i = 0; i < OCI_CAP_NSETS; i++)
		if (c->extra_names)
			free(c->proc.capabilities.names[i].v);
	free(c->extra_names);
	if (c->pcfg)
		oci_config_free(c->pcfg);
	if (c->cfg)
		oci_config_free(c->cfg);
	if (c->st)
		ar_state_free(c->st);
}

static int read_state(struct exec_ctx *c, struct ar_error *err)
{
	_cleanup_existing_ struct ar_existing e;
	enum ar_status status;

	if (ar_state_open_existing(c->o->root, c->o->id, false, &e, err) < 0)
		return -1;
	c->st = ar_steal_ptr(&e.st);
	status = e.status;
	if (status == AR_STATUS_PAUSED && !c->o->ignore_paused)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` is paused (--ignore-paused: the process starts frozen and runs once the container is resumed)",
			c->o->id);
	if (status != AR_STATUS_RUNNING && status != AR_STATUS_PAUSED)
		return ar_error_set_plain(
			err, EINVAL,
			"container `%s` is not running (status: %s)", c->o->id,
			ar_status_name(status));
	return 0;
}

/* "UID[:GID]" */
static int parse_user(const char *s, struct oci_user *u, struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(s);
	char *colon = strchr(copy, ':');
	unsigned long long v;

	if (colon)
		*colon = '\0';
	if (ar_parse_u64(copy, &v) < 0 || v > UINT32_MAX)
		return ar_error_set_plain(err, EINVAL,
					  "--user `%s`: expected UID[:GID]", s);
	u->uid = (uint32_t)v;
	if (colon) {
		if (ar_parse_u64(colon + 1, &v) < 0 || v > UINT32_MAX)
			return ar_error_set_plain(
				err, EINVAL, "--user `%s`: expected UID[:GID]",
				s);
		u->gid = (uint32_t)v;
	}
	u->additional_gids = NULL;
	u->n_additional_gids = 0;
	return 0;
}

static size_t strv_len(char **v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

/* The container's env with the --env entries replacing the same names. */
static void merge_env(struct exec_ctx *c)
{
	const struct oci_strv *base = &c->proc.env;
	char **add = c->o->env;
	size_t n_add = strv_len(add), n = 0;

	c->env_v = ar_xcalloc(base->n + n_add + 1, sizeof(char *));
	for (size_t i = 0; i < base->n; i++) {
		const char *eq = strchr(base->v[i], '=');
		size_t klen = eq ? (size_t)(eq - base->v[i]) :
				   strlen(base->v[i]);
		bool replaced = false;

		for (size_t j = 0; j < n_add; j++)
			if (strncmp(add[j], base->v[i], klen) == 0 &&
			    add[j][klen] == '=')
				replaced = true;
		if (!replaced)
			c->env_v[n++] = base->v[i];
	}
	for (size_t j = 0; j < n_add; j++)
		c->env_v[n++] = add[j];
	c->env_v[n] = NULL;
	c->proc.env.v = c->env_v;
	c->proc.env.n = n;
}

/* --cap: added to the bounding, effective and permitted sets. */
static int add_caps(struct exec_ctx *c, struct ar_error *err)
{
	static const int sets[] = { OCI_CAP_BOUNDING, OCI_CAP_EFFECTIVE,
				    OCI_CAP_PERMITTED };
	struct oci_capabilities *caps = &c->proc.capabilities;
	size_t n_add = strv_len(c->o->caps);

	if (n_add == 0)
		return 0;
	/* own every names vector so ctx_release frees them uniformly */
	c->extra_names = ar_xcalloc(1, sizeof(char *));
	for (int s = 0; s < OCI_CAP_NSETS; s++) {
		struct oci_strv *names = &caps->names[s];
		char **v = ar_xcalloc(names->n + n_add + 1, sizeof(char *));

		if (names->n)
			memcpy(v, names->v, names->n * sizeof(char *));
		names->v = v;
	}
	caps->present = true;
	for (size_t j = 0; j < n_add; j++) {
		int cap;

		if (ar_cap_parse(c->o->caps[j], &cap, err) < 0)
			return ar_error_wrap(err, "--cap");
		for (size_t k = 0; k < sizeof(sets) / sizeof(sets[0]); k++) {
			struct oci_strv *names = &caps->names[sets[k]];

			caps->set_present[sets[k]] = true;
			if (caps->mask[sets[k]] & (1ULL << cap))
				continue;
			caps->mask[sets[k]] |= 1ULL << cap;
			names->v[names->n++] = c->o->caps[j];
			names->v[names->n] = NULL;
		}
	}
	return 0;
}

/* --additional-gids after the process's own (runc), each once */
static void add_gids(struct exec_ctx *c)
{
	struct oci_user *u = &c->proc.user;
	uint32_t *g = oci_arena_calloc(
		&c->cfg->arena, u->n_additional_gids + c->o->n_additional_gids,
		sizeof(*g));
	size_t n = u->n_additional_gids;

	if (n)
		memcpy(g, u->additional_gids, n * sizeof(*g));
	for (size_t i = 0; i < c->o->n_additional_gids; i++) {
		size_t j = 0;

		while (j < n && g[j] != c->o->additional_gids[i])
			j++;
		if (j == n)
			g[n++] = c->o->additional_gids[i];
	}
	u->additional_gids = g;
	u->n_additional_gids = n;
}

static int build_process(struct exec_ctx *c, struct ar_error *err)
{
	const struct ar_exec_opts *o = c->o;

	if (o->process_file) {
		_cleanup_free_ char *json = NULL;
		size_t len;

		if (ar_read_file_at(AT_FDCWD, o->process_file, 16 << 20, &json,
				    &len, err) < 0)
			return ar_error_wrap(err, "--process");
		if (oci_process_parse(json, len, o->process_file, &c->pcfg,
				      err) < 0)
			return -1;
		c->proc = c->pcfg->process;
		/* as crun: the container's profile unless the file names
		 * one */
		if (!c->proc.apparmor_profile)
			c->proc.apparmor_profile =
				c->cfg->process.apparmor_profile;
	} else {
		if (!o->args || !o->args[0])
			return ar_error_set_plain(
				err, EINVAL,
				"exec: no command (give ARGS or --process FILE)");
		c->proc = c->cfg->process;
		c->proc.args.v = o->args;
		c->proc.args.n = strv_len(o->args);
		c->proc.terminal = o->tty;
		c->proc.console_size.set = false;
	}
	if (o->cwd)
		c->proc.cwd = (char *)o->cwd;
	if (!c->proc.cwd)
		c->proc.cwd = "/";
	if (o->user && parse_user(o->user, &c->proc.user, err) < 0)
		return -1;
	if (o->n_additional_gids)
		add_gids(c);
	if (o->process_label)
		c->proc.selinux_label = (char *)o->process_label;
	if (o->apparmor)
		c->proc.apparmor_profile = (char *)o->apparmor;
	if (o->no_new_privs)
		c->proc.no_new_privileges = true;
	merge_env(c);
	if (add_caps(c, err) < 0)
		return -1;
	if (c->proc.args.n == 0)
		return ar_error_set_plain(err, EINVAL,
					  "exec: process.args is empty");
	if (o->on_process && o->on_process(&c->proc, c->cfg, err) < 0)
		return -1;
	return 0;
}

/* Which namespaces to join; open them for the fallback path too (before
 * the pid could be reused: the pidfd pins the process). */
static int open_namespaces(struct exec_ctx *c, struct ar_error *err)
{
	pid_t pid = c->st->pid;
	char path[64];

	c->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (c->pidfd < 0 && errno != ENOSYS)
		return ar_error_set(err, errno, "pidfd_open %d", (int)pid);
	if (!ar_state_pid_alive(c->st))
		return ar_error_set_plain(
			err, ESRCH, "container `%s` is not running", c->o->id);
	for (size_t i = 0; i < N_NS; i++) {
		if (ar_ns_same_as_self(pid, ns_files[i].name) != 0)
			continue;
		c->ns_flags |= ns_files[i].flag;
		snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid,
			 ns_files[i].name);
		c->ns_fds[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (c->ns_fds[i] < 0)
			return ar_error_set(err, errno, "open %s", path);
	}
	snprintf(path, sizeof(path), "/proc/%d/root", (int)pid);
	c->root_fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (c->root_fd < 0)
		return ar_error_set(err, errno, "open %s", path);
	return 0;
}

static int join_namespaces(struct exec_ctx *c, struct ar_error *err)
{
	if (c->ns_flags == 0)
		return 0;
	/* Linux >= 5.8: every namespace at once, atomically. */
	if (c->pidfd >= 0 && setns(c->pidfd, c->ns_flags) == 0)
		return 0;
	if (c->pidfd >= 0 && errno != EINVAL)
		ar_debug("setns(pidfd): %m: joining one by one");
	for (size_t i = 0; i < N_NS; i++) {
		if (c->ns_fds[i] < 0)
			continue;
		if (setns(c->ns_fds[i], ns_files[i].flag) < 0)
			return ar_error_set(err, errno,
					    "join the %s namespace of `%s`",
					    ns_files[i].name, c->o->id);
	}
	return 0;
}

static bool read_setgroups_denied(void)
{
	char buf[16] = "";
	_cleanup_close_ int fd =
		open("/proc/self/setgroups", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, buf, sizeof(buf) - 1) <= 0)
		return false;
	return strncmp(buf, "deny", 4) == 0;
}

static int load_seccomp(struct exec_ctx *c, struct ar_error *err)
{
	_cleanup_close_ int notify_fd = -1;

	if (ar_seccomp_load(c->seccomp, &notify_fd, err) < 0)
		return -1;
	/* The listener belongs to the container's agent; exec'd processes
	 * get the same filter, and their notifications go nowhere. */
	c->seccomp = NULL;
	return 0;
}

/* In the container's namespaces; returns only on error. */
static int exec_setup(struct exec_ctx *c, struct ar_error *err)
{
	const struct oci_process *p = &c->proc;
	bool nnp = p->no_new_privileges;
	bool cwd_done;
	_cleanup_free_ char *home = NULL;
	_cleanup_free_ char *exe = NULL;
	_cleanup_free_ char **env = NULL;

	ar_signals_reset_for_exec();
	if (!c->o->detach)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	/* Visible in the container's pid namespace from now on: until our
	 * execve, no container process may ptrace us or open our
	 * /proc/PID/{exe,mem,fd} (CVE-2016-9962, CVE-2019-5736). */
	if (prctl(PR_SET_DUMPABLE, 0) < 0)
		return ar_error_set(err, errno, "prctl(PR_SET_DUMPABLE)");
	if (fchdir(c->root_fd) < 0 || chroot(".") < 0 || chdir("/") < 0)
		return ar_error_set(err, errno,
				    "enter the root of container `%s`",
				    c->o->id);
	if (p->terminal) {
		int sock = c->console_fd;

		if (sock < 0) {
			sock = c->sync_fd;
			if (ar_sync_send(sock, AR_SYNC_TTY, 0, err) < 0)
				return -1;
		}
		if (ar_terminal_setup_exec(sock, &p->console_size, err) < 0)
			return -1;
	}
	if (ar_process_apply_limits(p, nnp, err) < 0)
		return -1;
	/* The runtime's own chdir and getcwd before any filter (a
	 * profile may deny them: the filter applies to the container's
	 * program). Without no_new_privileges the filter must be in
	 * before the capabilities go. */
	cwd_done = ar_process_chdir_early(p);
	home = ar_process_home(p);
	if (ar_apparmor_apply(p->apparmor_profile, c->apparmor, nnp, err) < 0)
		return -1;
	if (c->seccomp && !nnp && load_seccomp(c, err) < 0)
		return -1;
	if (ar_process_enter_user(
		    p, c->setgroups_denied,
		    oci_config_annotation_on(c->cfg, AR_ANNOTATION_KEEP_GROUPS),
		    cwd_done, err) < 0)
		return -1;
	env = ar_process_build_env(p, 0, getpid(), home);
	exe = ar_process_find_executable(p->args.v[0], env, err);
	if (!exe)
		return -1;
	if (ar_process_prepare_fds(c->o->preserve_fds, err) < 0)
		return -1;
	if (ar_selinux_set_exec_label(p->selinux_label, c->selinux, err) < 0)
		return -1;
	if (!c->o->detach && ar_die_with_runtime(c->sync_fd, err) < 0)
		return -1;
	/* the container's Landlock rules (agentrun sandbox), as its init */
	if (ar_landlock_apply(c->cfg, NULL, err) < 0)
		return -1;
	if (c->seccomp && load_seccomp(c, err) < 0)
		return -1;
	execve(exe, p->args.v, env);
	return ar_selinux_exec_error(err, exe, p->selinux_label, c->selinux);
}

/* The cgroup the process joins: the container's, or with --cgroup SUB
 * (runc, crun) its existing sub-cgroup SUB, a path below it (a leading
 * "/" is the container's cgroup, as crun joins them; no ".."). */
static int exec_cgroup(struct exec_ctx *c, struct ar_error *err)
{
	const char *sub = c->o->cgroup;
	_cleanup_close_ int fd = -1;

	if (!sub) {
		c->cgroup_path = c->st->cgroup_path ?
					 ar_xstrdup(c->st->cgroup_path) :
					 NULL;
		return 0;
	}
	if (!c->st->cgroup_path)
		return ar_error_set_plain(
			err, EINVAL,
			"exec --cgroup `%s`: container `%s` has no cgroup of its own",
			sub, c->o->id);
	if (strchr(sub, ':'))
		return ar_error_set_plain(
			err, EINVAL,
			"exec --cgroup `%s`: a controller:path form is for cgroup v1; give the sub-cgroup's path",
			sub);
	while (*sub == '/')
		sub++;
	if (!*sub)
		return ar_error_set_plain(err, EINVAL,
					  "exec --cgroup: empty sub-cgroup");
	c->cgroup_path = ar_xasprintf("%s/%s", c->st->cgroup_path, sub);
	/* no "..", a cgroup2 directory that exists */
	fd = ar_cg_open(c->cgroup_path, err);
	if (fd < 0)
		return ar_error_wrap(err, "exec --cgroup `%s`", c->o->cgroup);
	return 0;
}

/* The first child: joins, then clones the process (a child of the
 * runtime, in the container's pid namespace). Never returns. */
__attribute__((noreturn)) static void joiner(struct exec_ctx *c)
{
	struct ar_error err = AR_ERROR_INIT;
	int go[2];
	long pid;

	/* The process we clone into the container's pid namespace inherits
	 * this: not even its first instructions are ptrace-able there. */
	prctl(PR_SET_DUMPABLE, 0);
	if (c->cgroup_path && !c->in_cgroup &&
	    ar_cgroup_enter_path(c->cgroup_path, getpid(), &err) < 0) {
		if (!c->st->rootless || c->o->cgroup)
			goto fail;
		ar_debug("exec: %s (rootless: ignored)", err.msg);
		ar_error_clear(&err);
	}
	if (join_namespaces(c, &err) < 0)
		goto fail;
	c->setgroups_denied = read_setgroups_denied();
	/* The process waits until its PID went out, so the runtime sees PID
	 * before any TTY message and its fd. */
	if (pipe2(go, O_CLOEXEC) < 0) {
		ar_error_set(&err, errno, "pipe");
		goto fail;
	}
	pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL,
		      NULL);
	if (pid < 0) {
		ar_error_set(&err, errno, "fork into the container");
		goto fail;
	}
	if (pid == 0) {
		char b;

		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1); /* the joiner failed and reports it */
		close(go[0]);
		exec_setup(c, &err);
		goto fail;
	}
	close(go[0]);
	if (ar_sync_send(c->sync_fd, AR_SYNC_PID, (int)pid, &err) < 0)
		_exit(1);
	if (write(go[1], "g", 1) != 1)
		_exit(1);
	_exit(0);
fail:
	if (ar_sync_send_error(c->sync_fd, &err) < 0)
		dprintf(STDERR_FILENO, "agentrun: %s\n", err.msg);
	_exit(1);
}

static void reap(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

/* Runtime side after the fork: the pid, then TTY | ERROR | EOF (exec'd). */
static int follow(struct exec_ctx *c, pid_t joiner_pid, pid_t *pid, int *master,
		  struct ar_error *err)
{
	struct ar_sync_msg m;

	*pid = -1;
	for (;;) {
		if (ar_sync_recv(c->sync_fd, &m, err) < 0)
			return -1;
		if (m.type == AR_SYNC_ERROR) {
			ar_error_set_plain(err, m.err.code, "%s", m.err.msg);
			return -1;
		}
		if (m.type == AR_SYNC_PID && *pid < 0) {
			*pid = m.value;
			reap(joiner_pid);
			if (c->o->pid_file &&
			    ar_write_pid_file(c->o->pid_file, *pid, err) < 0)
				return -1;
			continue;
		}
		if (m.type == AR_SYNC_TTY && *master < 0) {
			if (ar_recv_fd(c->sync_fd, master, err) < 0)
				return -1;
			continue;
		}
		if (m.type == 0) {
			if (*pid < 0)
				return ar_error_set_plain(
					err, ECHILD,
					"exec: the process exited during setup");
			return 0; /* exec'd: the socket closed */
		}
		return ar_error_set_plain(err, EBADMSG,
					  "exec: sync: unexpected message %d",
					  m.type);
	}
}

int ar_container_exec(const struct ar_exec_opts *o, int *exit_status,
		      struct ar_error *err)
{
	struct exec_ctx c = { .o = o,
			      .pidfd = -1,
			      .root_fd = -1,
			      .console_fd = -1,
			      .sync_fd = -1 };
	sigset_t mask, old;
	int sv[2], master = -1, r = -1;
	_cleanup_close_ int cgfd = -1;
	pid_t jpid, pid = -1;

	*exit_status = 1;
	for (size_t i = 0; i < N_NS; i++)
		c.ns_fds[i] = -1;
	if (read_state(&c, err) < 0)
		goto out;
	if (oci_config_load_file(c.st->config_path ? c.st->config_path :
						     c.st->bundle,
				 &c.cfg, err) < 0) {
		/* `agentrun sandbox` hands its config over in memory */
		for (size_t i = 0; i < c.st->n_annotations; i++)
			if (strcmp(c.st->annotations[i].key,
				   "run.agentrun.sandbox") == 0)
				ar_error_wrap(
					err,
					"`%s` is an `agentrun sandbox`, whose config is not on disk: exec into it is not supported",
					o->id);
		goto out;
	}
	c.apparmor = ar_apparmor_enabled();
	c.selinux = ar_selinux_enabled();
	if (build_process(&c, err) < 0)
		goto out;
	if (exec_cgroup(&c, err) < 0)
		goto out;
	if (ar_selinux_check_labels(o->process_file ? o->process_file :
						      c.cfg->filename,
				    c.proc.selinux_label, NULL, err) < 0)
		goto out;
	if (c.cfg->linux_.seccomp) {
		_cleanup_free_ char *cache =
			ar_xasprintf("%s/.seccomp-cache", o->root);

		if (ar_seccomp_compile_cached(c.cfg->linux_.seccomp, cache,
					      &c.seccomp, err) < 0)
			goto out;
	}
	if (c.proc.terminal) {
		if (o->console_socket) {
			c.console_fd = ar_console_socket_connect(
				o->console_socket, err);
			if (c.console_fd < 0)
				goto out;
		} else if (!o->detach) {
			c.relay_tty = true;
		} else {
			ar_error_set_plain(
				err, EINVAL,
				"exec --tty --detach needs --console-socket");
			goto out;
		}
	}
	if (open_namespaces(&c, err) < 0)
		goto out;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		ar_error_set(err, errno, "socketpair");
		goto out;
	}
	if (!o->detach) {
		ar_signal_forward_set(&mask);
		sigaddset(&mask, SIGCHLD);
		sigprocmask(SIG_BLOCK, &mask, &old);
	}
	/* The joiner (and the process it clones) is born in the container's
	 * cgroup where the kernel can: a move waits for an RCU grace period
	 * (container.c: cgroup_first). Else the joiner moves itself. */
	if (c.cgroup_path) {
		struct ar_error ignored = AR_ERROR_INIT;

		cgfd = ar_cg_open(c.cgroup_path, &ignored);
		ar_error_clear(&ignored);
	}
	if (cgfd >= 0)
		jpid = ar_ns_clone(0, cgfd, &c.in_cgroup, err);
	else if ((jpid = fork()) < 0)
		ar_error_set(err, errno, "fork");
	if (jpid < 0) {
		close(sv[0]);
		close(sv[1]);
		goto out_mask;
	}
	if (jpid == 0) {
		if (cgfd >= 0)
			close(ar_steal_fd(&cgfd));
		close(sv[0]);
		c.sync_fd = sv[1];
		joiner(&c);
	}
	close(sv[1]);
	c.sync_fd = sv[0];
	if (follow(&c, jpid, &pid, &master, err) < 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			reap(pid);
		} else {
			reap(jpid);
		}
		goto out_mask;
	}
	if (o->detach) {
		*exit_status = 0;
		r = 0;
		goto out;
	}
	*exit_status = ar_supervise(pid, master, &mask, -1, NULL, NULL, -1, -1,
				    NULL, NULL);
	r = 0;
out_mask:
	if (!o->detach)
		sigprocmask(SIG_SETMASK, &old, NULL);
out:
	if (master >= 0)
		close(master);
	ctx_release(&c);
	return r;
}
