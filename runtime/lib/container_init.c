/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The container process, from the clone to execve.
 *
 * Order (as runc's standard init and crun's container init):
 *   namespaces (slow path: join, unshare, fork) → wait for GO (maps,
 *   oom_score_adj and cgroup done by the runtime) → no dumpable, parent
 *   death signal → root of the user namespace → session keyring →
 *   hostname → root filesystem (pivot_root) → terminal → rlimits, I/O
 *   priority, scheduler → no_new_privs → cwd (chdir, getcwd check) →
 *   seccomp when it needs CAP_SYS_ADMIN (no NNP) → groups, gid, uid,
 *   capabilities, umask →
 *   executable lookup, environment → every other fd close-on-exec →
 *   READY, exec fifo (create) → seccomp (NNP) → execve.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "apparmor.h"
#include "capabilities.h"
#include "container_init.h"
#include "hooks.h"
#include "init.h"
#include "landlock.h"
#include "log.h"
#include "mounts.h"
#include "namespaces.h"
#include "net_loopback.h"
#include "parent_death.h"
#include "process.h"
#include "seccomp.h"
#include "selinux_label.h"
#include "signals.h"
#include "sync.h"
#include "terminal.h"
#include "utils.h"

#define KEYCTL_JOIN_SESSION_KEYRING_ 1

__attribute__((noreturn)) static void die(struct ar_launch *l,
					  struct ar_error *err)
{
	if (ar_sync_send_error(l->sync_fd, err) < 0)
		dprintf(STDERR_FILENO, "agentrun: %s\n", err->msg);
	_exit(1);
}

/* Slow path: join, new user namespace (maps by the runtime), the other new
 * namespaces, the extra fork. Returns in the container process. */
static int enter_namespaces(struct ar_launch *l, struct ar_error *err)
{
	struct ar_sync_msg m;
	long pid;

	if (ar_ns_join(&l->plan, err) < 0)
		return -1;
	if (l->plan.new_user) {
		if (unshare(CLONE_NEWUSER) < 0)
			return ar_error_set(err, errno,
					    "create the user namespace");
		if (ar_sync_send(l->sync_fd, AR_SYNC_USERNS, 0, err) < 0 ||
		    ar_sync_recv(l->sync_fd, &m, err) < 0)
			return -1;
		if (m.type != AR_SYNC_USERNS_DONE)
			_exit(1); /* the runtime failed and reports it */
	}
	if (ar_ns_unshare_rest(l->cfg, &l->plan, err) < 0)
		return -1;
	if (!l->plan.fork_again)
		return ar_sync_send(l->sync_fd, AR_SYNC_PID, getpid(), err);

	/* CLONE_PARENT: the container process is a child of the runtime,
	 * which can wait for it. */
	pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL,
		      NULL);
	if (pid < 0)
		return ar_error_set(err, errno,
				    "fork into the pid/time namespace");
	if (pid == 0)
		return 0;
	if (ar_sync_send(l->sync_fd, AR_SYNC_PID, (int)pid, err) < 0)
		die(l, err);
	_exit(0);
}

static int join_session_keyring(const char *id, struct ar_error *err)
{
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING_, id) >= 0)
		return 0;
	if (errno == ENOSYS || errno == EPERM || errno == EACCES ||
	    errno == EDQUOT) {
		ar_debug("session keyring not joined: %m");
		return 0;
	}
	return ar_error_set(err, errno, "join a new session keyring");
}

/* Block until `agentrun start` opens the exec fifo, write "0". Returns
 * the fifo's write end (O_CLOEXEC), or -1: start keeps reading it until
 * EOF, which our execve causes; an error written to it before we exit
 * (a failing startContainer hook) is what start reports. The O_PATH fd
 * is reopened through the runtime's /proc, opened before the root
 * changed (the root may have no /proc: no mount namespace), and closed
 * here: the container's program never holds a way out of its root. */
static int wait_for_start(struct ar_launch *l, struct ar_error *err)
{
	char path[64];
	_cleanup_close_ int fd = -1, proc = l->proc_fd;

	l->proc_fd = -1;
	/* The runtime that created us exits now: nothing to die with. */
	prctl(PR_SET_PDEATHSIG, 0);
	if (ar_sync_send(l->sync_fd, AR_SYNC_READY, 0, err) < 0)
		return -1;
	snprintf(path, sizeof(path), "self/fd/%d", l->fifo_fd);
	do
		fd = openat(proc, path, O_WRONLY | O_CLOEXEC);
	while (fd < 0 && errno == EINTR);
	if (fd < 0)
		return ar_error_set(err, errno,
				    "wait for start: open the exec fifo");
	if (write(fd, "0", 1) != 1)
		return ar_error_set(err, errno,
				    "wait for start: write the exec fifo");
	return ar_steal_fd(&fd);
}

static int load_seccomp(struct ar_launch *l, struct ar_error *err)
{
	_cleanup_close_ int notify_fd = -1;

	if (ar_seccomp_load(l->seccomp, &notify_fd, err) < 0)
		return -1;
	if (notify_fd >= 0) {
		if (ar_sync_send(l->sync_fd, AR_SYNC_NOTIFY_FD, 0, err) < 0 ||
		    ar_send_fd(l->sync_fd, notify_fd, "seccomp", err) < 0)
			return ar_error_wrap(err, "seccomp listener");
	}
	l->seccomp = NULL;
	return 0;
}

/* True unless the config's map leaves id 0 out (no map: a joined
 * namespace, assume it is there). */
static bool maps_id0(const struct oci_id_mappings *m)
{
	if (m->n == 0)
		return true;
	for (size_t i = 0; i < m->n; i++)
		if (m->items[i].container_id == 0 && m->items[i].size > 0)
			return true;
	return false;
}

/* createContainer: in the container's namespaces, after its mounts and
 * before pivot_root (runtime-spec), so the hook sees them and its path
 * still resolves in the runtime's filesystem. */
static int create_container_hooks(void *arg, struct ar_error *err)
{
	struct ar_launch *l = arg;

	return ar_hooks_run_state(l->cfg, OCI_HOOK_CREATE_CONTAINER, l->o->id,
				  l->host_pid, l->bundle, AR_STATUS_CREATED,
				  err);
}

static int setup(struct ar_launch *l, struct ar_error *err)
{
	const struct oci_config *cfg = l->cfg;
	const struct oci_process *p = &cfg->process;
	bool userns = l->plan.new_user || l->plan.join_fd[OCI_NS_USER] >= 0;
	bool nnp = p->no_new_privileges;
	bool cwd_done;
	_cleanup_free_ char *home = NULL;
	_cleanup_close_ int started_fd = -1;
	struct ar_rootfs_opts ro = {
		.rootfs = l->rootfs,
		.no_pivot = l->o->no_pivot,
		.userns = userns,
		.rootless = l->rootless,
		.new_netns = l->plan.new_net,
		.new_cgroupns = l->plan.new_cgroup,
		.new_mntns = l->plan.new_mnt,
		.console_path = NULL, /* bound by ar_terminal_setup */
		.bundle = l->bundle,
		.premade = l->premade_mounts,
		.premade_devices = l->premade_devices,
		.tmpfs_root = l->tmpfs_root,
		.after_mounts = create_container_hooks,
		.after_mounts_arg = l,
	};
	_cleanup_free_ char *exe = NULL;
	_cleanup_free_ char **env = NULL;

	ar_signals_reset_for_exec();
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    prctl(PR_SET_DUMPABLE, 0) < 0)
		return ar_error_set(err, errno, "prctl");
	/* A session of its own, as crun: out of the caller's process group
	 * (conmon's `podman run --timeout` kills its own group) and without
	 * the caller's controlling terminal (no TIOCSTI into it). */
	if (setsid() < 0)
		return ar_error_set(err, errno, "setsid");
	/* A keep-id map (agentrun sandbox: uid -> same uid) may leave 0
	 * unmapped: the process already holds every capability of the user
	 * namespace it created, and loses them at execve as a non-root
	 * user. */
	if (userns && maps_id0(&cfg->linux_.gid_mappings) &&
	    setresgid(0, 0, 0) < 0)
		return ar_error_set(
			err, errno,
			"become root of the user namespace (is gid 0 mapped?)");
	if (userns && maps_id0(&cfg->linux_.uid_mappings) &&
	    setresuid(0, 0, 0) < 0)
		return ar_error_set(
			err, errno,
			"become root of the user namespace (is 0 mapped?)");
	if (!l->o->no_new_keyring && join_session_keyring(l->o->id, err) < 0)
		return -1;
	if (ar_ns_unshare_cgroup(&l->plan, err) < 0)
		return -1;
	if (ar_ns_set_hostname(cfg, &l->plan, err) < 0)
		return -1;
	if (ar_net_loopback_apply(cfg, l->plan.new_net, err) < 0)
		return -1;
	if (ar_rootfs_setup(cfg, &ro, err) < 0)
		return -1;
	if (p->terminal) {
		int sock = l->console_fd;

		if (sock < 0) {
			sock = l->sync_fd;
			if (ar_sync_send(sock, AR_SYNC_TTY, 0, err) < 0)
				return -1;
		}
		/* /dev/console is a bind: only in a mount namespace of
		 * our own */
		if ((l->plan.new_mnt ?
			     ar_terminal_setup(sock, &p->console_size, err) :
			     ar_terminal_setup_exec(sock, &p->console_size,
						    err)) < 0)
			return -1;
		if (l->console_fd >= 0)
			close(l->console_fd);
	}
	if (ar_process_apply_limits(p, nnp, err) < 0)
		return -1;
	/* The runtime's own chdir and getcwd before any filter (a
	 * profile may deny them: the filter applies to the container's
	 * program). Without no_new_privileges the filter must be in
	 * before the capabilities go. */
	cwd_done = ar_process_chdir_early(p);
	home = ar_process_home(p);
	if (!p->terminal)
		ar_process_chown_stdio(p);
	/* as crun: before the exec fifo (a profile that is not loaded
	 * fails create), as root of the container still */
	if (ar_apparmor_apply(p->apparmor_profile, l->apparmor, nnp, err) < 0)
		return -1;
	if (l->seccomp && !nnp && load_seccomp(l, err) < 0)
		return -1;
	if (ar_process_enter_user(
		    p, l->setgroups_denied,
		    oci_config_annotation_on(cfg, AR_ANNOTATION_KEEP_GROUPS),
		    cwd_done, err) < 0)
		return -1;
	env = ar_process_build_env(p, l->listen_fds, getpid(), home);
	/* room: build_env leaves two slots for LISTEN_*, none with pass_fd */
	if (l->o->pass_fd > 2 && l->o->pass_fd_env) {
		size_t k = 0, n = strlen(l->o->pass_fd_env);

		for (size_t j = 0; env[j]; j++)
			if (strncmp(env[j], l->o->pass_fd_env, n) != 0 ||
			    env[j][n] != '=')
				env[k++] = env[j];
		env[k++] = ar_xasprintf("%s=3", l->o->pass_fd_env);
		env[k] = NULL;
	}
	/* execve() below needs args.v too (find_executable checks v[0]) */
	if (!p->args.v)
		return ar_error_set_plain(err, EINVAL, "process.args: empty");
	exe = ar_process_find_executable(p->args.v[0], env, err);
	if (!exe)
		return -1;
	/* the sandbox's agent channel: fd 3 of the program, nothing else
	 * (the slot was reserved before the launch opened its own fds) */
	if (l->o->pass_fd > 2 && l->o->pass_fd != 3 &&
	    dup2(l->o->pass_fd, 3) < 0)
		return ar_error_set(err, errno, "pass fd %d as fd 3",
				    l->o->pass_fd);
	if (ar_process_prepare_fds(l->preserve_fds, err) < 0)
		return -1;
	/* Overlapped with the runtime's state.json: nothing of the user's
	 * runs before it is written (container.c: overlap_setup). */
	if (l->overlap) {
		struct ar_sync_msg m;

		if (ar_sync_recv(l->sync_fd, &m, err) < 0 ||
		    m.type != AR_SYNC_EXEC)
			_exit(1); /* the runtime failed and reports it */
	}
	/* A listener fd must reach the runtime while it is still there. */
	if (l->seccomp && ar_seccomp_filter_needs_notify(l->seccomp) &&
	    !l->refusal_listener && load_seccomp(l, err) < 0)
		return -1;
	if (l->use_fifo) {
		started_fd = wait_for_start(l, err);
		if (started_fd < 0) {
			/* the runtime is gone: say it where we can */
			dprintf(STDERR_FILENO, "agentrun: %s\n", err->msg);
			_exit(1);
		}
	} else if (l->detached) {
		prctl(PR_SET_PDEATHSIG, 0);
	}
	/* After start, before the user's program, in the container. */
	if (ar_hooks_run_state(cfg, OCI_HOOK_START_CONTAINER, l->o->id,
			       l->host_pid, l->bundle, AR_STATUS_CREATED,
			       err) < 0)
		goto fail_late;
	if (ar_selinux_set_exec_label(p->selinux_label, l->selinux, err) < 0)
		goto fail_late;
	if (ar_landlock_apply(cfg, l->o->landlock, err) < 0)
		goto fail_late;
	if (!l->use_fifo && !l->detached &&
	    ar_die_with_runtime(l->sync_fd, err) < 0)
		goto fail_late;
	if (l->seccomp && load_seccomp(l, err) < 0)
		goto fail_late;
	if (l->o->init && l->plan.new_pid) {
		/* returns in the program's process, its execve failed */
		ar_init_exec(exe, p->args.v, env, p->terminal, l->init_fd, err);
		goto fail_late;
	}
	execve(exe, p->args.v, env);
	ar_selinux_exec_error(err, exe, p->selinux_label, l->selinux);
fail_late:
	if (l->use_fifo) {
		/* for `agentrun start`, which reads up to EOF */
		signal(SIGPIPE, SIG_IGN);
		if (started_fd >= 0)
			dprintf(started_fd, "%s", err->msg);
		dprintf(STDERR_FILENO, "agentrun: %s\n", err->msg);
		_exit(127);
	}
	return -1;
}

void ar_container_init(struct ar_launch *l)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_sync_msg m;

	for (int i = 0; i < 2; i++)
		if (l->state_fds[i] >= 0)
			close(l->state_fds[i]);
	/* Until execve: `state` tells a process waiting on the exec fifo
	 * from one that an interrupted `start` let go by this name. */
	prctl(PR_SET_NAME, AR_INIT_COMM);
	if (l->plan.slow && enter_namespaces(l, &err) < 0)
		die(l, &err);
	if (ar_sync_recv(l->sync_fd, &m, &err) < 0 || m.type != AR_SYNC_GO)
		_exit(1); /* the runtime failed and reports it */
	l->setgroups_denied = m.value != 0;
	if (ar_hooks_need_host_pid(l->cfg)) {
		if (ar_sync_recv(l->sync_fd, &m, &err) < 0 ||
		    m.type != AR_SYNC_HOST_PID)
			_exit(1);
		l->host_pid = m.value;
	}
	if (setup(l, &err) < 0)
		die(l, &err);
	_exit(1);
}
