/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The OCI lifecycle, runtime side. See container.h; the launch (options,
 * config, what is made for it) is launch.c's, the container process
 * container_init.c's, the messages between the two sync.h's.
 *
 * create and run, one step after the other (do_create()):
 *   launch.c: prepare (config, namespace plan, seccomp, premade mounts)
 *   state.c: the container directory, locked (make_state_dir)
 *   the exec fifo (create), the clone (container_init.c from here on)
 *   userns.c: maps; oom_score_adj; cgroup.c: plan, state.json, make
 *   on_spawn (sandbox), state.json, prestart/createRuntime hooks
 *   GO over the sync socket; wait until READY (create) or the execve
 * Every failure returns -1 at once; ar_launch_release() undoes the rest.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "container.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <pwd.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup.h"
#include "cgroup_systemd.h"
#include "container_init.h"
#include "crash_point.h"
#include "hooks.h"
#include "json_gen.h"
#include "launch.h"
#include "log.h"
#include "mounts.h"
#include "namespaces.h"
#include "sd_notify.h"
#include "seccomp.h"
#include "signals.h"
#include "state.h"
#include "supervise.h"
#include "sync.h"
#include "terminal.h"
#include "userns.h"
#include "utils.h"

/* ---- hooks ---- */

/* poststart/poststop: a failure is only a warning (runtime-spec). */
static void run_hooks_warn(const struct oci_config *cfg,
			   enum oci_hook_stage stage, const char *id, pid_t pid,
			   const char *bundle, enum ar_status status)
{
	struct ar_error e = AR_ERROR_INIT;

	if (ar_hooks_run_state(cfg, stage, id, pid, bundle, status, &e) < 0)
		ar_warn("%s", e.msg);
}

/* poststart (start) and poststop (delete) of an existing container: its
 * config is read again (state.config_path, else the bundle's
 * config.json). */
static void run_state_hooks_warn(const struct ar_state *st,
				 enum oci_hook_stage stage,
				 enum ar_status status)
{
	struct ar_error e = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;

	if (oci_config_load_file(st->config_path ? st->config_path : st->bundle,
				 &cfg, &e) < 0) {
		ar_warn("hooks of `%s`: %s", st->id, e.msg);
		return;
	}
	run_hooks_warn(cfg, stage, st->id, st->pid, st->bundle, status);
}

static int pidfd_open_(pid_t pid);

/* ---- the steps of create and run ---- */

/* The container directory under --root, made (a duplicate id fails
 * atomically) and locked: l->state_fds. */
static int make_state_dir(struct ar_launch *l, struct ar_error *err)
{
	l->state_fds[0] = ar_state_root_open(l->o->root, true, err);
	if (l->state_fds[0] < 0)
		return -1;
	l->state_fds[1] = ar_state_dir_create(l->state_fds[0], l->o->id, err);
	if (l->state_fds[1] < 0)
		return -1;
	l->state_dir_made = true;
	return ar_state_lock(l->state_fds[1], true, err);
}

/* create: the fifo the container process blocks on until start. */
static int make_exec_fifo(struct ar_launch *l, struct ar_error *err)
{
	int dirfd = l->state_fds[1];

	/* 0622, umask notwithstanding: the container process opens it for
	 * writing after switching to process.user. */
	if (mkfifoat(dirfd, AR_EXEC_FIFO, 0622) < 0 ||
	    fchmodat(dirfd, AR_EXEC_FIFO, 0622, 0) < 0) {
		int e = errno;
		char link[64];
		char dir[512] = "?";
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		n = readlink(link, dir, sizeof(dir) - 1);
		dir[n > 0 ? n : 1] = '\0';
		errno = e;
		return ar_error_set(
			err, errno,
			"create the exec fifo in the state directory `%s` (`create` needs a filesystem that holds FIFOs; 9p shares do not: use a --root on a local filesystem, or `run`)",
			dir);
	}
	l->fifo_fd =
		openat(dirfd, AR_EXEC_FIFO, O_PATH | O_CLOEXEC | O_NOFOLLOW);
	if (l->fifo_fd < 0)
		return ar_error_set(err, errno, "open the exec fifo");
	/* An O_PATH fd is reopened through /proc only: the container
	 * process's root may have none by then. */
	l->proc_fd = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (l->proc_fd < 0)
		return ar_error_set(err, errno, "open /proc");
	ar_crash_point("create-fifo");
	return 0;
}

static int write_state(const struct ar_launch *l, struct ar_error *err)
{
	_cleanup_free_ char *created = ar_rfc3339_now();
	/* no pid yet: the cgroup's path recorded before the clone */
	pid_t pid = l->pid > 0 ? l->pid : 0;
	struct ar_state st = {
		.id = (char *)l->o->id,
		.pid = pid,
		.pid_start = pid ? ar_proc_start_time(pid) : 0,
		.bundle = l->bundle,
		.rootfs = l->bundle_rootfs ? l->bundle_rootfs : l->rootfs,
		.created = created,
		.owner = geteuid(),
		.cgroup_path = (char *)ar_cgroup_path(l->cgroup),
		.systemd_cgroup = l->o->systemd_cgroup,
		.rootless = l->rootless,
		.detached = l->detached,
		.creating = true, /* until ar_state_mark_ready() */
		.has_poststop_hooks = l->cfg->hooks[OCI_HOOK_POSTSTOP].n > 0,
		/* an in-memory config has no file (no hooks read it) */
		.config_path = l->config_path,
		.annotations = l->cfg->annotations.items,
		.n_annotations = l->cfg->annotations.n,
	};

	return ar_state_write(l->state_fds[1], &st, err);
}

static int write_oom_score_adj(pid_t pid, const struct oci_process *p,
			       struct ar_error *err)
{
	char path[64], buf[16];
	_cleanup_close_ int fd = -1;
	int len;

	if (!p->oom_score_adj.set)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)pid);
	len = snprintf(buf, sizeof(buf), "%d", p->oom_score_adj.v);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, buf, (size_t)len) != len)
		return ar_error_set(err, errno, "process.oomScoreAdj: set %d",
				    p->oom_score_adj.v);
	return 0;
}

static void cgroup_opts(const struct ar_launch *l, struct ar_cgroup_opts *co)
{
	*co = (struct ar_cgroup_opts){ 0 };
	ar_cgroup_opts_from_config(co, l->cfg, l->o->id);
	co->manager = l->o->cgroups_disabled ? AR_CGROUP_MGR_DISABLED :
		      l->o->systemd_cgroup   ? AR_CGROUP_MGR_SYSTEMD :
					       AR_CGROUP_MGR_CGROUPFS;
	co->rootless = l->rootless;
	co->pid = l->pid;
}

/* The container's cgroup; the container process is moved in when it
 * exists already (l->pid > 0), else it is born in it (cgroup_first). Its
 * path is in state.json before the mkdir (*recorded): a runtime killed
 * right after it leaves a cgroup that `delete --force` removes. */
static int make_cgroup(struct ar_launch *l, bool *recorded,
		       struct ar_error *err)
{
	struct ar_cgroup_opts co;

	cgroup_opts(l, &co);
	if (ar_cgroup_plan(&co, &l->cgroup, err) < 0)
		return -1;
	*recorded = ar_cgroup_path(l->cgroup) != NULL;
	if (*recorded && write_state(l, err) < 0)
		return -1;
	if (ar_cgroup_make(l->cgroup, &co, err) < 0)
		return -1;
	/* planned, then found unwritable: state.json names none */
	*recorded = *recorded && ar_cgroup_path(l->cgroup);
	return 0;
}

static int recv_error(struct ar_sync_msg *m, struct ar_error *err)
{
	ar_error_set_plain(err, m->err.code, "%s", m->err.msg);
	return -1;
}

/* The container process may set itself up while the runtime writes
 * state.json (it waits for EXEC before its execve): when nothing of the
 * runtime has to run between the two, i.e. no prestart/createRuntime/
 * createContainer/startContainer hooks, and no other message than an
 * error goes from the container process to the runtime before its
 * execve (no exec fifo, no terminal, no seccomp listener). The user
 * namespace's ids, oom_score_adj and the cgroup are still set before
 * GO. Only when the caller asks for it (ar_create_opts.overlap). */
static bool overlap_setup(const struct ar_launch *l)
{
	const struct oci_config *cfg = l->cfg;

	return l->o->overlap && !l->plan.slow && !l->use_fifo &&
	       !cfg->process.terminal && !ar_hooks_need_host_pid(cfg) &&
	       cfg->hooks[OCI_HOOK_PRESTART].n == 0 &&
	       cfg->hooks[OCI_HOOK_CREATE_RUNTIME].n == 0 &&
	       !(cfg->linux_.seccomp && cfg->linux_.seccomp->listener_path) &&
	       !(l->seccomp && ar_seccomp_filter_needs_notify(l->seccomp) &&
		 !l->refusal_listener);
}

/* The cgroup is made before the clone and the container process born in
 * it (clone3 CLONE_INTO_CGROUP, as crun): moving a process into a cgroup
 * takes the kernel's cgroup_threadgroup_rwsem for writing, which waits
 * for an RCU grace period (+8 ms of wall time per `run` as root here).
 * Not with systemd, which puts the pid into the scope it makes. */
static bool cgroup_first(const struct ar_launch *l)
{
	return !l->o->cgroups_disabled && !l->o->systemd_cgroup;
}

/* The clone: l->first_pid, in the new namespaces of the fast path (the
 * slow path enters them itself, container_init.c), born in the cgroup
 * of cgroup_fd when >= 0 and the kernel can (*in_cgroup). */
static int clone_container(struct ar_launch *l, int cgroup_fd, bool *in_cgroup,
			   struct ar_error *err)
{
	int sv[2], iv[2] = { -1, -1 };
	pid_t child;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return ar_error_set(err, errno, "socketpair");
	/* the init's channel: only a foreground run has a terminal to
	 * hand the program's stops to */
	if (l->o->init && !l->detached && !l->use_fifo &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, iv) < 0) {
		close(sv[0]);
		close(sv[1]);
		return ar_error_set(err, errno, "socketpair");
	}
	l->sync_fd = sv[1];
	l->init_fd = iv[1];
	l->overlap = overlap_setup(l);
	child = ar_ns_clone(l->plan.slow ? 0 : l->plan.clone_flags, cgroup_fd,
			    in_cgroup, err);
	if (child < 0) {
		for (int i = 0; i < 2; i++) {
			close(sv[i]);
			if (iv[i] >= 0)
				close(iv[i]);
		}
		l->sync_fd = l->init_fd = -1;
		return -1;
	}
	if (child == 0) {
		close(sv[0]);
		if (iv[0] >= 0)
			close(iv[0]);
		ar_container_init(l);
	}
	close(sv[1]);
	if (iv[1] >= 0)
		close(iv[1]);
	l->sync_fd = sv[0];
	l->init_fd = iv[0];
	l->first_pid = child;
	ar_premade_mounts_close(l->premade_mounts, l->cfg->n_mounts);
	l->premade_mounts = NULL;
	ar_premade_mounts_close(l->premade_devices, l->cfg->linux_.n_devices);
	l->premade_devices = NULL;
	ar_crash_point("create-cloned");
	return 0;
}

/* The user namespace's maps, and l->pid: the clone itself (fast path),
 * or the process it forks once in its namespaces (slow path, where the
 * maps are written when it asks). */
static int write_ids(struct ar_launch *l, struct ar_error *err)
{
	const struct oci_config *cfg = l->cfg;
	pid_t child = l->first_pid;
	struct ar_sync_msg m;

	if (!l->plan.slow) {
		l->pid = child;
		if (l->plan.new_user &&
		    ar_userns_write_maps(child, &cfg->linux_.uid_mappings,
					 &cfg->linux_.gid_mappings,
					 &l->setgroups_denied, err) < 0)
			return -1;
		return 0;
	}
	for (;;) {
		if (ar_sync_recv(l->sync_fd, &m, err) < 0)
			return -1;
		if (m.type == AR_SYNC_ERROR)
			return recv_error(&m, err);
		if (m.type == 0)
			return ar_error_set_plain(
				err, ECHILD,
				"the container process exited during setup");
		if (m.type == AR_SYNC_USERNS) {
			if (ar_userns_write_maps(child,
						 &cfg->linux_.uid_mappings,
						 &cfg->linux_.gid_mappings,
						 &l->setgroups_denied, err) < 0)
				return -1;
			if (ar_sync_send(l->sync_fd, AR_SYNC_USERNS_DONE, 0,
					 err) < 0)
				return -1;
			continue;
		}
		if (m.type == AR_SYNC_PID) {
			l->pid = m.value;
			break;
		}
		return ar_error_set_plain(
			err, EBADMSG, "sync: unexpected message %d", m.type);
	}
	if (l->pid != child) {
		int st;

		while (waitpid(child, &st, 0) < 0 && errno == EINTR)
			;
		l->first_pid = l->pid;
	}
	return 0;
}

/* Runtime namespace, container process created and waiting: prestart
 * (deprecated) then createRuntime. Their state says "created", as
 * crun's and as runtime-tools' hooks_stdin expects. */
static int runtime_hooks(const struct ar_launch *l, struct ar_error *err)
{
	if (ar_hooks_run_state(l->cfg, OCI_HOOK_PRESTART, l->o->id, l->pid,
			       l->bundle, AR_STATUS_CREATED, err) < 0)
		return -1;
	return ar_hooks_run_state(l->cfg, OCI_HOOK_CREATE_RUNTIME, l->o->id,
				  l->pid, l->bundle, AR_STATUS_CREATED, err);
}

/* GO (EXEC when overlapped), and the pid for the hooks that need it. */
static int let_go(const struct ar_launch *l, struct ar_error *err)
{
	if (ar_sync_send(l->sync_fd, l->overlap ? AR_SYNC_EXEC : AR_SYNC_GO,
			 l->setgroups_denied, err) < 0) {
		/* overlap: a container process that failed meanwhile has
		 * closed its end; its ERROR is read by wait_setup() */
		if (!l->overlap)
			return -1;
		ar_error_clear(err);
	}
	if (ar_hooks_need_host_pid(l->cfg) &&
	    ar_sync_send(l->sync_fd, AR_SYNC_HOST_PID, l->pid, err) < 0)
		return -1;
	return 0;
}

/* The seccomp listener fd from the container process: kept when it is
 * the runtime's own (l->refusal_fd, answered while `run` supervises),
 * else passed on to linux.seccomp.listenerPath with the container's
 * state. */
static int pass_notify_fd(struct ar_launch *l, struct ar_error *err)
{
	const struct oci_config *cfg = l->cfg;
	_cleanup_close_ int nfd = -1;
	/* The container's state, as `state` prints it ("creating": the
	 * process has not exec'd). */
	struct ar_state st = {
		.id = (char *)l->o->id,
		.pid = l->pid,
		.bundle = l->bundle,
		.annotations = cfg->annotations.items,
		.n_annotations = cfg->annotations.n,
	};
	_cleanup_free_ char *sj = NULL;

	if (ar_recv_fd(l->sync_fd, &nfd, err) < 0)
		return -1;
	if (l->refusal_listener) {
		if (l->refusal_fd >= 0)
			close(l->refusal_fd);
		l->refusal_fd = ar_steal_fd(&nfd);
		return 0;
	}
	if (!cfg->linux_.seccomp || !cfg->linux_.seccomp->listener_path)
		return 0;
	if (ar_state_oci_json(&st, AR_STATUS_CREATING, &sj, NULL, err) < 0)
		return -1;
	return ar_seccomp_send_notify_fd(cfg->linux_.seccomp->listener_path,
					 nfd,
					 cfg->linux_.seccomp->listener_metadata,
					 sj, err);
}

/* Until the container process is set up: READY (create: blocked on the
 * exec fifo) or the socket's EOF (its execve); the terminal's master
 * (*master) and the seccomp listener on the way. */
static int wait_setup(struct ar_launch *l, int *master, struct ar_error *err)
{
	struct ar_sync_msg m;

	for (;;) {
		if (ar_sync_recv(l->sync_fd, &m, err) < 0)
			return -1;
		switch (m.type) {
		case AR_SYNC_ERROR:
			return recv_error(&m, err);
		case AR_SYNC_TTY:
			if (ar_recv_fd(l->sync_fd, master, err) < 0)
				return -1;
			break;
		case AR_SYNC_NOTIFY_FD:
			if (pass_notify_fd(l, err) < 0)
				return -1;
			break;
		case AR_SYNC_READY:
			if (l->use_fifo)
				return 0;
			return ar_error_set_plain(err, EBADMSG,
						  "sync: unexpected READY");
		case 0:
			if (!l->use_fifo)
				return 0; /* exec'd: the socket closed */
			return ar_error_set_plain(
				err, ECHILD,
				"the container process exited during setup");
		default:
			return ar_error_set_plain(err, EBADMSG,
						  "sync: unexpected message %d",
						  m.type);
		}
	}
}

/* NOTIFY_SOCKET: the directory the container sees at the caller's path;
 * `run` listens from now on (create: `start` does). */
static int make_notify(struct ar_launch *l, struct ar_error *err)
{
	_cleanup_free_ char *dir = NULL;

	if (l->notify_mount < 0)
		return 0;
	if (ar_notify_dir_make(l->state_fds[1], &dir, err) < 0)
		return -1;
	l->cfg->mounts[l->notify_mount].source =
		oci_arena_strdup(&l->cfg->arena, dir);
	if (!l->use_fifo) {
		l->notify_fd = ar_notify_listen(l->state_fds[1], err);
		if (l->notify_fd < 0)
			return -1;
	}
	return 0;
}

/* create / run --detach / run: everything up to a container process that
 * is blocked on the fifo (use_fifo) or running the user's program; the
 * order of the runtime's side. A failure leaves the undoing to
 * ar_launch_release(). */
static int do_create(struct ar_launch *l, int *master, struct ar_error *err)
{
	bool recorded = false, in_cgroup = false, first = cgroup_first(l);

	if (l->use_fifo && make_exec_fifo(l, err) < 0)
		return -1;
	if (make_notify(l, err) < 0)
		return -1;
	if (first && make_cgroup(l, &recorded, err) < 0)
		return -1;
	if (clone_container(l, first ? ar_cgroup_dirfd(l->cgroup) : -1,
			    &in_cgroup, err) < 0)
		return -1;
	if (write_ids(l, err) < 0)
		return -1;
	ar_crash_point("create-maps");
	if (write_oom_score_adj(l->pid, &l->cfg->process, err) < 0)
		return -1;
	if (first) {
		/* a kernel without CLONE_INTO_CGROUP: moved in now */
		if (!in_cgroup && ar_cgroup_enter(l->cgroup, l->pid, err) < 0)
			return -1;
		/* state.json was written without the pid */
		recorded = false;
	} else if (make_cgroup(l, &recorded, err) < 0) {
		return -1;
	}
	if (l->o->on_spawn &&
	    l->o->on_spawn(l->pid, l->o->on_spawn_arg, err) < 0)
		return -1;
	if (l->overlap &&
	    ar_sync_send(l->sync_fd, AR_SYNC_GO, l->setgroups_denied, err) < 0)
		return -1;
	ar_crash_point("create-cgroup");
	/* From here on a runtime killed (kill -9) leaves a container that
	 * `state` reports as "creating" and `delete --force` cleans: its pid
	 * and cgroup are on disk. Before, the container process only waits
	 * for GO on the sync socket and exits when we are gone. */
	if (!recorded && write_state(l, err) < 0)
		return -1;
	ar_crash_point("create-state-creating");
	if (runtime_hooks(l, err) < 0)
		return -1;
	if (let_go(l, err) < 0)
		return -1;
	/* while the container process sets up and execs: the runtime
	 * would only wait for it */
	if (l->o->watch && l->o->watch->open)
		l->o->watch->fd = l->o->watch->open(l->o->watch->arg);
	if (wait_setup(l, master, err) < 0)
		return -1;
	ar_crash_point("create-ready");
	/* state.json already holds everything (written "creating" above);
	 * only mark that the set-up is over. */
	if (ar_state_mark_ready(l->state_fds[1], err) < 0)
		return -1;
	ar_crash_point("create-state-written");
	if (l->o->pid_file &&
	    ar_write_pid_file(l->o->pid_file, l->pid, err) < 0)
		return -1;
	l->committed = true;
	return 0;
}

int ar_container_create(const struct ar_create_opts *o, struct ar_error *err)
{
	_cleanup_launch_ struct ar_launch l = { 0 };
	_cleanup_close_ int master = -1;

	if (ar_launch_prepare(o, false, &l, err) < 0)
		return -1;
	l.use_fifo = true;
	l.detached = true;
	if (make_state_dir(&l, err) < 0)
		return -1;
	if (do_create(&l, &master, err) < 0)
		return -1;
	return 0;
}

/* ---- run ---- */

/* The signals `run` forwards, blocked from before the clone (none is
 * lost; the container process restores its mask) until the container has
 * stopped. */
struct blocked_signals {
	bool blocked;
	sigset_t mask, old;
};

static void block_signals(struct blocked_signals *b)
{
	ar_signal_forward_set(&b->mask);
	sigaddset(&b->mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &b->mask, &b->old);
	b->blocked = true;
}

static void unblock_signals(struct blocked_signals *b)
{
	if (b->blocked)
		sigprocmask(SIG_SETMASK, &b->old, NULL);
	b->blocked = false;
}

int ar_container_run(const struct ar_create_opts *o, int *exit_status,
		     struct ar_error *err)
{
	/* declared before the launch: restored after its undoing */
	_cleanup_(unblock_signals) struct blocked_signals sig = { 0 };
	_cleanup_launch_ struct ar_launch l = { 0 };
	_cleanup_close_ int master = -1;

	*exit_status = 1;
	if (ar_launch_prepare(o, !o->detach, &l, err) < 0)
		return -1;
	l.detached = o->detach;
	if (make_state_dir(&l, err) < 0)
		return -1;
	if (!o->detach)
		block_signals(&sig);
	if (do_create(&l, &master, err) < 0)
		return -1;
	/* The user's program was exec'd: the sync socket's work is done
	 * (the supervisor keeps no socket). */
	if (l.sync_fd >= 0)
		close(ar_steal_fd(&l.sync_fd));
	if (o->detach && l.notify_fd >= 0) {
		/* as crun: --detach returns once the container is ready (or
		 * gone); others may use the container meanwhile */
		_cleanup_close_ int pidfd = pidfd_open_(l.pid);

		close(ar_steal_fd(&l.state_fds[1]));
		if (ar_notify_wait_ready(l.notify_fd, l.pid, pidfd,
					 o->notify_socket, err) < 0)
			return -1;
	}
	run_hooks_warn(l.cfg, OCI_HOOK_POSTSTART, o->id, l.pid, l.bundle,
		       AR_STATUS_RUNNING);
	if (o->detach) {
		*exit_status = 0;
		return 0;
	}
	/* Let `state`/`kill`/`delete` of other commands in. */
	close(l.state_fds[1]);
	l.state_fds[1] = -1;

	*exit_status = ar_supervise(l.pid, master, &sig.mask,
				    ar_steal_fd(&l.refusal_fd), o->on_refusal,
				    o->on_refusal_arg, ar_steal_fd(&l.init_fd),
				    ar_steal_fd(&l.notify_fd), o->notify_socket,
				    o->watch);
	if (master >= 0)
		close(ar_steal_fd(&master));
	unblock_signals(&sig);
	run_hooks_warn(l.cfg, OCI_HOOK_POSTSTOP, o->id, l.pid, l.bundle,
		       AR_STATUS_STOPPED);
	if (o->keep)
		return 0;
	if (ar_cgroup_destroy(ar_cgroup_path(l.cgroup), err) < 0)
		return -1;
	if (o->systemd_cgroup)
		ar_systemd_forget(ar_cgroup_path(l.cgroup), l.rootless);
	return ar_state_remove(l.state_fds[0], o->id, err);
}

/* ---- operations on an existing container ---- */

static int pidfd_open_(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* After the "0": the container process keeps its end of the exec fifo
 * open (O_CLOEXEC) until its execve closes it. What it writes before EOF
 * is why it gave up instead (a failing startContainer hook, Landlock,
 * seccomp): start fails with it, and the container process, which exits,
 * is stopped for sure, as crun leaves it. */
static int wait_exec(int fifo, pid_t pid, int pidfd, const char *id,
		     struct ar_error *err)
{
	char msg[AR_ERROR_MSG_MAX];
	size_t len = 0;
	struct pollfd pfd = { .fd = fifo, .events = POLLIN };

	while (len < sizeof(msg) - 1) {
		ssize_t n;

		if (poll(&pfd, 1, -1) < 0 && errno != EINTR)
			return ar_error_set(err, errno,
					    "start `%s`: wait for the exec",
					    id);
		n = read(fifo, msg + len, sizeof(msg) - 1 - len);
		if (n == 0)
			break;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			continue;
		if (n < 0)
			return ar_error_set(err, errno,
					    "start `%s`: read the exec fifo",
					    id);
		len += (size_t)n;
	}
	if (len == 0)
		return 0;
	msg[len] = '\0';
	pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	if (pidfd < 0 || poll(&pfd, 1, 5000) <= 0)
		kill(pid, SIGKILL);
	return ar_error_set_plain(err, ECANCELED, "start `%s`: %s", id, msg);
}

int ar_container_start(const char *root, const char *id, struct ar_error *err)
{
	struct ar_existing e;
	_cleanup_close_ int fifo = -1, pidfd = -1, notify = -1;
	const char *notify_to = ar_notify_caller();
	struct pollfd pfd[2];
	char c;
	int r = -1;

	if (ar_state_open_existing(root, id, true, &e, err) < 0)
		goto out;
	if (e.status != AR_STATUS_CREATED) {
		ar_error_set_plain(
			err, EINVAL,
			"container `%s` is not in created state (status: %s)",
			id, ar_status_name(e.status));
		goto out;
	}
	pidfd = pidfd_open_(e.st->pid);
	ar_crash_point("start-begin");
	/* as crun: with NOTIFY_SOCKET, start returns once the container
	 * said READY=1 (forwarded) or exited; the socket is bound before
	 * the container is let go */
	if (notify_to && ar_notify_dir_exists(e.dirfd)) {
		notify = ar_notify_listen(e.dirfd, err);
		if (notify < 0)
			goto out;
	}
	fifo = openat(e.dirfd, AR_EXEC_FIFO,
		      O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOFOLLOW);
	if (fifo < 0) {
		ar_error_set(err, errno, "open the exec fifo of `%s`", id);
		goto out;
	}
	ar_crash_point("start-fifo-opened");
	pfd[0] = (struct pollfd){ .fd = fifo, .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = pidfd, .events = POLLIN };
	for (;;) {
		/* The timeout only matters after an interrupted start: a
		 * process already let go never writes again, it execs. */
		int n = poll(pfd, pidfd >= 0 ? 2 : 1, 200);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ar_error_set(err, errno,
				     "wait for the container process");
			goto out;
		}
		if (n == 0) {
			enum ar_status now = ar_state_status(e.dirfd, e.st);

			if (now == AR_STATUS_CREATED)
				continue;
			if (now == AR_STATUS_STOPPED)
				ar_error_set_plain(
					err, ECHILD,
					"container `%s`: the container process exited before start",
					id);
			else
				ar_error_set_plain(
					err, EINVAL,
					"container `%s` was started already (status: %s)",
					id, ar_status_name(now));
			goto out;
		}
		if (pfd[0].revents & POLLIN)
			break;
		if (pidfd >= 0 && pfd[1].revents) {
			ar_error_set_plain(
				err, ECHILD,
				"container `%s`: the container process exited before start",
				id);
			goto out;
		}
	}
	if (read(fifo, &c, 1) != 1) {
		ar_error_set(err, errno ? errno : EPIPE,
			     "start `%s`: read the exec fifo", id);
		goto out;
	}
	ar_crash_point("start-fifo-read");
	if (unlinkat(e.dirfd, AR_EXEC_FIFO, 0) < 0) {
		ar_error_set(err, errno, "remove the exec fifo of `%s`", id);
		goto out;
	}
	ar_crash_point("start-fifo-removed");
	if (wait_exec(fifo, e.st->pid, pidfd, id, err) < 0)
		goto out;
	if (notify >= 0) {
		/* running now: state, kill, delete may come in meanwhile */
		flock(e.dirfd, LOCK_UN);
		if (ar_notify_wait_ready(notify, e.st->pid, pidfd, notify_to,
					 err) < 0)
			goto out;
	}
	r = 0;
	run_state_hooks_warn(e.st, OCI_HOOK_POSTSTART, AR_STATUS_RUNNING);
out:
	ar_existing_release(&e);
	return r;
}

static bool same_pid_ns(pid_t pid)
{
	char path[64];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)pid);
	if (stat(path, &a) < 0 || stat("/proc/self/ns/pid", &b) < 0)
		return true;
	return a.st_ino == b.st_ino && a.st_dev == b.st_dev;
}

/* Every process of the container's pid namespace (no cgroup). */
static void signal_pid_ns(pid_t init, int sig)
{
	char path[300];
	struct stat ns, other;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)init);
	if (stat(path, &ns) < 0)
		return;
	kill(init, sig);
	d = opendir("/proc");
	if (!d)
		return;
	while ((de = readdir(d))) {
		unsigned long long pid;

		if (ar_parse_u64(de->d_name, &pid) < 0 || (pid_t)pid == init)
			continue;
		snprintf(path, sizeof(path), "/proc/%llu/ns/pid", pid);
		if (stat(path, &other) == 0 && other.st_ino == ns.st_ino &&
		    other.st_dev == ns.st_dev)
			kill((pid_t)pid, sig);
	}
	closedir(d);
}

static int signal_container(const struct ar_state *st, int sig, bool all,
			    struct ar_error *err)
{
	if (all) {
		if (st->cgroup_path)
			return ar_cgroup_kill_all(st->cgroup_path, sig, err);
		if (!same_pid_ns(st->pid)) {
			signal_pid_ns(st->pid, sig);
			return 0;
		}
	}
	if (kill(st->pid, sig) < 0)
		return ar_error_set(err, errno,
				    "signal %d to the container process %d",
				    sig, (int)st->pid);
	return 0;
}

int ar_container_kill(const char *root, const char *id, int sig, bool all,
		      struct ar_error *err)
{
	struct ar_existing e;
	int r = -1;

	if (ar_state_open_existing(root, id, false, &e, err) < 0)
		goto out;
	if (e.status == AR_STATUS_STOPPED) {
		ar_error_set_plain(
			err, ESRCH,
			"container `%s` is not running (status: stopped)", id);
		goto out;
	}
	r = signal_container(e.st, sig, all, err);
out:
	ar_existing_release(&e);
	return r;
}

/* Wait until pid is gone (it is not our child). */
static void wait_gone(const struct ar_state *st)
{
	_cleanup_close_ int pidfd = pidfd_open_(st->pid);
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	if (pidfd >= 0) {
		while (poll(&pfd, 1, 10000) < 0 && errno == EINTR)
			;
		return;
	}
	for (int i = 0; i < 1000 && ar_state_pid_alive(st); i++)
		usleep(10000);
}

int ar_container_delete(const char *root, const char *id, bool force,
			struct ar_error *err)
{
	struct ar_existing e;
	int r = -1;

	if (ar_state_open_existing(root, id, true, &e, err) < 0) {
		/* --force: a container that does not exist is deleted
		 * already (crun and runc exit 0; podman relies on it after a
		 * failed create and when it races conmon's cleanup). A
		 * directory without state is an interrupted create. */
		if (force && err->code == ENOENT) {
			ar_error_clear(err);
			r = e.dirfd >= 0 ? ar_state_remove(e.rootfd, id, err) :
					   0;
		}
		goto out;
	}
	if (e.status != AR_STATUS_STOPPED) {
		if (!force) {
			ar_error_set_plain(
				err, EBUSY,
				"container `%s` is not stopped (status: %s): stop it first or use --force",
				id, ar_status_name(e.status));
			goto out;
		}
		if (signal_container(e.st, SIGKILL, true, err) < 0 &&
		    err->code != ESRCH)
			goto out;
		ar_error_clear(err);
		wait_gone(e.st);
		ar_crash_point("delete-killed");
	}
	if (e.st->cgroup_path && ar_cgroup_destroy(e.st->cgroup_path, err) < 0)
		goto out;
	if (e.st->systemd_cgroup)
		ar_systemd_forget(e.st->cgroup_path, e.st->rootless);
	ar_crash_point("delete-cgroup-removed");
	r = ar_state_remove(e.rootfd, id, err);
	if (r == 0 && e.st->has_poststop_hooks)
		run_state_hooks_warn(e.st, OCI_HOOK_POSTSTOP,
				     AR_STATUS_STOPPED);
out:
	ar_existing_release(&e);
	return r;
}

/* Each container of `root` whose id the POSIX ERE `pattern` matches, by
 * fn (crun's --regex of delete and kill): one that fails is warned
 * about and the others go on; the error counts them. No match is no
 * error. */
static int each_matching(const char *root, const char *pattern,
			 const char *what, const char *done,
			 int (*fn)(const char *root, const char *id,
				   const void *arg, struct ar_error *err),
			 const void *arg, struct ar_error *err)
{
	_cleanup_close_ int rootfd = -1;
	_cleanup_strv_ char **ids = NULL;
	regex_t re;
	size_t failed = 0, matched = 0;
	int rc, r = -1;

	rc = regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB);
	if (rc != 0) {
		char why[128];

		regerror(rc, &re, why, sizeof(why));
		return ar_error_set_plain(
			err, EINVAL,
			"%s --regex: invalid regular expression `%s`: %s", what,
			pattern, why);
	}
	rootfd = ar_state_root_open(root, false, err);
	if (rootfd < 0 && err->code == ENOENT)
		ar_error_clear(err); /* no state root: nothing matches */
	else if (rootfd < 0 || ar_state_list_ids(rootfd, &ids, err) < 0)
		goto out;
	r = 0;
	for (char **id = ids; id && *id; id++) {
		struct ar_error e = AR_ERROR_INIT;

		if (regexec(&re, *id, 0, NULL, 0) != 0)
			continue;
		matched++;
		if (fn(root, *id, arg, &e) < 0) {
			ar_warn("%s", e.msg);
			failed++;
		}
	}
	if (failed)
		r = ar_error_set_plain(
			err, EBUSY,
			"%s --regex `%s`: %zu of %zu matching containers not %s",
			what, pattern, failed, matched, done);
out:
	regfree(&re);
	return r;
}

static int delete_one(const char *root, const char *id, const void *arg,
		      struct ar_error *err)
{
	return ar_container_delete(root, id, *(const bool *)arg, err);
}

int ar_container_delete_matching(const char *root, const char *pattern,
				 bool force, struct ar_error *err)
{
	return each_matching(root, pattern, "delete", "deleted", delete_one,
			     &force, err);
}

struct kill_args {
	int sig;
	bool all;
};

static int kill_one(const char *root, const char *id, const void *arg,
		    struct ar_error *err)
{
	const struct kill_args *k = arg;

	return ar_container_kill(root, id, k->sig, k->all, err);
}

int ar_container_kill_matching(const char *root, const char *pattern, int sig,
			       bool all, struct ar_error *err)
{
	struct kill_args k = { .sig = sig, .all = all };

	return each_matching(root, pattern, "kill", "signalled", kill_one, &k,
			     err);
}

int ar_container_state(const char *root, const char *id, char **json,
		       size_t *len, struct ar_error *err)
{
	struct ar_existing e;
	int r = -1;

	if (ar_state_open_existing(root, id, false, &e, err) < 0)
		goto out;
	r = ar_state_oci_json(e.st, e.status, json, len, err);
out:
	ar_existing_release(&e);
	return r;
}

/* ---- list ---- */

static const char *owner_name(uid_t uid, char *buf, size_t size)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		return pw->pw_name;
	snprintf(buf, size, "%u", (unsigned)uid);
	return buf;
}

int ar_container_list(const char *root, enum ar_list_format format, bool quiet,
		      FILE *out, struct ar_error *err)
{
	_cleanup_close_ int rootfd = -1;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_jgen_ struct jgen g = { 0 };
	char obuf[32];

	rootfd = ar_state_root_open(root, false, err);
	if (rootfd < 0 && err->code != ENOENT)
		return -1;
	ar_error_clear(err); /* none yet: an empty list */
	if (rootfd >= 0 && ar_state_list_ids(rootfd, &ids, err) < 0)
		return -1;
	if (format == AR_LIST_JSON) {
		if (jg_init_compact(&g, err) < 0)
			return -1;
		jg_array_open(&g);
	} else if (!quiet)
		fprintf(out, "%-20s %-8s %-10s %-40s %-31s %s\n", "ID", "PID",
			"STATUS", "BUNDLE", "CREATED", "OWNER");
	for (char **id = ids; id && *id; id++) {
		_cleanup_close_ int dfd = -1;
		struct ar_state *st = NULL;
		struct ar_error e2 = AR_ERROR_INIT;
		enum ar_status status;
		int pid;

		if (quiet && format == AR_LIST_TABLE) {
			fprintf(out, "%s\n", *id);
			continue;
		}
		dfd = openat(rootfd, *id, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dfd < 0)
			continue;
		if (ar_state_read(dfd, *id, &st, &e2) < 0)
			continue; /* being created */
		status = ar_state_status(dfd, st);
		pid = status == AR_STATUS_STOPPED ? 0 : (int)st->pid;
		if (format == AR_LIST_JSON) {
			jg_map_open(&g);
			jg_key_str(&g, "ociVersion", "1.2.0");
			jg_key_str(&g, "id", st->id);
			jg_key_i64(&g, "pid", pid);
			jg_key_str(&g, "status", ar_status_name(status));
			jg_key_str(&g, "bundle", st->bundle ? st->bundle : "");
			jg_key_str(&g, "rootfs", st->rootfs ? st->rootfs : "");
			jg_key_str(&g, "created",
				   st->created ? st->created : "");
			jg_key_str(&g, "owner",
				   owner_name(st->owner, obuf, sizeof(obuf)));
			jg_map_close(&g);
		} else {
			fprintf(out, "%-20s %-8d %-10s %-40s %-31s %s\n",
				st->id, pid, ar_status_name(status), st->bundle,
				st->created,
				owner_name(st->owner, obuf, sizeof(obuf)));
		}
		ar_state_free(st);
	}
	if (format == AR_LIST_JSON) {
		_cleanup_free_ char *json = NULL;
		size_t len;

		jg_array_close(&g);
		if (jg_finish(&g, "list", &json, &len, err) < 0)
			return -1;
		fputs(json, out);
	}
	return 0;
}
