/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One launch of a container process: preparing it (before any process
 * exists) and releasing what it holds; see launch.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "launch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent_hooks.h"
#include "apparmor.h"
#include "cgroup.h"
#include "hooks.h"
#include "log.h"
#include "mounts.h"
#include "sd_notify.h"
#include "seccomp.h"
#include "seccomp_refusal.h"
#include "selinux_label.h"
#include "state.h"
#include "terminal.h"
#include "userns.h"
#include "utils.h"

static bool detect_rootless(int flag)
{
	if (flag >= 0)
		return flag;
	if (geteuid() != 0)
		return true;
	/* root of a user namespace (inside rootless podman): no mknod, no
	 * real cgroups */
	return !ar_userns_is_initial();
}

/* A non-root caller's config without a user namespace (a default `crun
 * spec`, crun's own tests run rootless): nothing else can be created
 * without one, so one is added, with a warning, as crun does; root in it
 * is the caller unless the config maps ids (ar_userns_write_maps). runc
 * refuses such a config. */
static void add_rootless_userns(struct oci_config *cfg)
{
	struct oci_linux *l = &cfg->linux_;
	struct oci_namespace *v;

	if (geteuid() == 0)
		return;
	for (size_t i = 0; i < l->n_namespaces; i++)
		if (l->namespaces[i].type == OCI_NS_USER)
			return;
	ar_warn("%s: linux.namespaces: no user namespace, which a non-root user needs to create the others: one is added (as crun does)",
		cfg->filename ? cfg->filename : "config.json");
	v = oci_arena_alloc(&cfg->arena, (l->n_namespaces + 1) * sizeof(*v));
	if (l->n_namespaces)
		memcpy(v, l->namespaces, l->n_namespaces * sizeof(*v));
	v[l->n_namespaces] =
		(struct oci_namespace){ .type = OCI_NS_USER,
					.clone_flag = CLONE_NEWUSER };
	l->namespaces = v;
	l->n_namespaces++;
}

/* Make sure fds 3..3+n-1 are open before we open anything, so none of
 * our own fds lands in a slot that is passed to the container. */
static void reserve_preserved_fds(int n)
{
	for (int fd = 3; fd < 3 + n; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		int nul = open("/dev/null", O_RDWR);

		if (nul >= 0 && nul != fd) {
			dup2(nul, fd);
			close(nul);
		}
	}
}

static int listen_fds_from_env(void)
{
	const char *s = getenv("LISTEN_FDS");
	const char *p = getenv("LISTEN_PID");
	unsigned long long n, pid;

	if (!s || ar_parse_u64(s, &n) < 0 || n == 0 || n > 4096)
		return 0;
	if (p && (ar_parse_u64(p, &pid) < 0 || pid != (unsigned)getpid()))
		return 0;
	return (int)n;
}

/* Whether a rule of the profile (or its default) is SCMP_ACT_NOTIFY. */
static bool seccomp_notifies(const struct oci_seccomp *sc)
{
	if (sc->default_action == OCI_SCMP_ACT_NOTIFY)
		return true;
	for (size_t i = 0; i < sc->n_syscalls; i++)
		if (sc->syscalls[i].action == OCI_SCMP_ACT_NOTIFY)
			return true;
	return false;
}

int ar_launch_prepare(const struct ar_create_opts *o, bool run_fg,
		      struct ar_launch *l, struct ar_error *err)
{
	const char *bundle = o->bundle ? o->bundle : ".";
	struct oci_config *cfg;
	struct stat sb;

	memset(l, 0, sizeof(*l));
	l->o = o;
	l->sync_fd = l->console_fd = l->fifo_fd = l->proc_fd = l->refusal_fd =
		-1;
	l->init_fd = l->notify_fd = l->notify_mount = -1;
	l->state_fds[0] = l->state_fds[1] = -1;
	l->pid = l->first_pid = -1;
	for (int i = 0; i < OCI_NS_NTYPES; i++)
		l->plan.join_fd[i] = -1;

	l->listen_fds = listen_fds_from_env();
	l->preserve_fds =
		(o->preserve_fds > 0 ? o->preserve_fds : 0) + l->listen_fds;
	/* the passed fd is fd 3: nothing else is preserved with it */
	if (o->pass_fd > 2) {
		l->listen_fds = 0;
		l->preserve_fds = 1;
	}
	if (l->preserve_fds)
		reserve_preserved_fds(l->preserve_fds);

	if (ar_state_validate_id(o->id, err) < 0)
		return -1;
	l->bundle = realpath(bundle, NULL);
	if (!l->bundle)
		return ar_error_set(err, errno, "bundle `%s`", bundle);
	if (o->config) {
		l->cfg = o->config; /* lent: not freed */
		/* a copy on disk, for exec (agentrun sandbox --name) */
		if (o->config_file)
			l->config_path = ar_xstrdup(o->config_file);
	} else {
		if (o->config_file && strcmp(o->config_file, "config.json"))
			l->config_path = realpath(o->config_file, NULL);
		else
			l->config_path =
				ar_xasprintf("%s/config.json", l->bundle);
		if (!l->config_path)
			return ar_error_set(err, errno, "--config `%s`",
					    o->config_file);
		if (oci_config_load_file(l->config_path, &l->cfg, err) < 0)
			return -1;
	}
	l->tmpfs_root = o->tmpfs_root;
	cfg = l->cfg;
	if (!cfg->process.present || cfg->process.args.n == 0)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: process.args: the config has no process to run",
			cfg->filename ? cfg->filename : "config.json");
	if (!cfg->root.path)
		return ar_error_set_plain(
			err, EINVAL, "%s: root.path is missing",
			cfg->filename ? cfg->filename : "config.json");
	if (ar_selinux_check_labels(cfg->filename, cfg->process.selinux_label,
				    cfg->linux_.mount_label, err) < 0)
		return -1;
	l->rootfs = ar_rootfs_host_path(l->bundle, cfg->root.path);
	if (stat(l->rootfs, &sb) < 0)
		return ar_error_set(err, errno, "root.path: rootfs `%s`",
				    l->rootfs);
	if (!S_ISDIR(sb.st_mode))
		return ar_error_set_plain(
			err, ENOTDIR,
			"root.path: rootfs `%s` is not a directory", l->rootfs);
	if (cfg->linux_.intel_rdt_present)
		return ar_error_set_plain(err, ENOTSUP,
					  "linux.intelRdt is not supported");
	l->rootless = detect_rootless(o->rootless);
	add_rootless_userns(cfg);
	/* hooks/: the agent hooks (the workspace annotation adds a mount) */
	if (ar_hook_workspace(cfg, l->rootless, err) < 0)
		return -1;
	/* the caller's rewrite of a bundle's config (create_opts.h), once
	 * it is whole (the workspace's mount in it): a new root is one */
	if (!o->config && o->on_config) {
		if (o->on_config(cfg, l->bundle, o->root, &l->tmpfs_root, err) <
		    0)
			return -1;
		if (l->tmpfs_root) {
			l->bundle_rootfs = l->rootfs;
			l->rootfs =
				ar_rootfs_host_path(l->bundle, cfg->root.path);
		}
	}

	if (cfg->process.terminal) {
		if (o->console_socket) {
			l->console_fd = ar_console_socket_connect(
				o->console_socket, err);
			if (l->console_fd < 0)
				return -1;
		} else if (run_fg) {
			l->relay_tty = true;
		} else {
			return ar_error_set_plain(
				err, EINVAL,
				"process.terminal is true: --console-socket is required when the container is created or detached");
		}
	}
	if (ar_ns_plan_init(cfg, &l->plan, err) < 0)
		return -1;
	l->apparmor = cfg->process.apparmor_profile &&
		      *cfg->process.apparmor_profile && ar_apparmor_enabled();
	l->selinux = cfg->process.selinux_label &&
		     *cfg->process.selinux_label && ar_selinux_enabled();
	/* NOTIFY_SOCKET: bound into the container's own mount namespace
	 * (without one nothing is mounted: not proxied) */
	if (o->notify_socket && !o->config) {
		if (!l->plan.new_mnt)
			ar_debug(
				"NOTIFY_SOCKET: no mount namespace of its own: not proxied");
		else if (ar_notify_plan(cfg, o->notify_socket, &l->notify_mount,
					err) < 0)
			return -1;
	}
	/* before the clone: the container process's hooks write there too */
	for (int s = 0; s < OCI_HOOK_NSTAGES; s++)
		if (cfg->hooks[s].n && ar_hooks_output_open(cfg, err) < 0)
			return -1;
	if (cfg->linux_.seccomp || o->seccomp_default) {
		/* Compiling a profile costs tens of milliseconds; the
		 * compiled program is cached under the state root, keyed by
		 * the whole profile. */
		_cleanup_free_ char *cache =
			o->root ? ar_xasprintf("%s/.seccomp-cache", o->root) :
				  NULL;
		const struct oci_seccomp *sc = cfg->linux_.seccomp;
		struct oci_seccomp with_refusals;
		struct ar_arena tmp = { 0 };
		int r;

		if (cfg->linux_.seccomp && o->seccomp_default)
			return ar_error_set_plain(
				err, EINVAL,
				"linux.seccomp: the config has a profile and the embedded one was asked for");
		/* before the cache: a hit does not look at the names */
		if (sc &&
		    oci_config_annotation_on(
			    cfg, AR_ANNOTATION_SECCOMP_FAIL_UNKNOWN) &&
		    ar_seccomp_check_names(sc, err) < 0)
			return ar_error_wrap(err, "%s",
					     cfg->filename ? cfg->filename :
							     "config.json");
		/* A profile with a listener of its own keeps it (the kernel
		 * allows one per process) and its refusals unobserved. */
		l->refusal_listener =
			o->on_refusal && run_fg &&
			!(sc && (sc->listener_path || seccomp_notifies(sc)));
		if (sc && l->refusal_listener) {
			with_refusals = *sc;
			ar_seccomp_refusal_rules(&with_refusals, &tmp);
			sc = &with_refusals;
		}
		r = sc ? ar_seccomp_compile_cached(sc, cache, &l->seccomp,
						   err) :
			 ar_seccomp_compile_default_cached(
				 cache, l->refusal_listener, &l->seccomp, err);
		oci_arena_free(&tmp);
		if (r < 0)
			return -1;
		if (sc && sc->listener_path && *sc->listener_path)
			ar_seccomp_filter_want_listener(l->seccomp);
	}
	if (ar_premade_mounts_open(cfg, l->bundle, &l->premade_mounts, err) < 0)
		return -1;
	return ar_premade_devices_open(cfg, l->plan.new_user, l->rootless,
				       &l->premade_devices, err);
}

static void kill_and_reap(pid_t pid)
{
	int st;

	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
}

void ar_launch_release(struct ar_launch *l)
{
	if (!l->o)
		return; /* never prepared */
	if (!l->committed) {
		struct ar_error ignored = AR_ERROR_INIT;

		kill_and_reap(l->pid);
		if (l->first_pid != l->pid)
			kill_and_reap(l->first_pid);
		if (ar_cgroup_path(l->cgroup))
			ar_cgroup_destroy(ar_cgroup_path(l->cgroup), &ignored);
		if (l->state_dir_made)
			ar_state_remove(l->state_fds[0], l->o->id, &ignored);
	}
	ar_ns_plan_release(&l->plan);
	for (int i = 0; i < 2; i++)
		if (l->state_fds[i] >= 0)
			close(l->state_fds[i]);
	if (l->sync_fd >= 0)
		close(l->sync_fd);
	if (l->console_fd >= 0)
		close(l->console_fd);
	if (l->fifo_fd >= 0)
		close(l->fifo_fd);
	if (l->proc_fd >= 0)
		close(l->proc_fd);
	if (l->seccomp)
		ar_seccomp_filter_free(l->seccomp);
	if (l->refusal_fd >= 0)
		close(l->refusal_fd);
	if (l->init_fd >= 0)
		close(l->init_fd);
	if (l->notify_fd >= 0)
		close(l->notify_fd);
	ar_cgroup_free(l->cgroup);
	if (l->cfg) {
		ar_premade_mounts_close(l->premade_mounts, l->cfg->n_mounts);
		ar_premade_mounts_close(l->premade_devices,
					l->cfg->linux_.n_devices);
	}
	if (l->cfg && l->cfg != l->o->config)
		oci_config_free(l->cfg);
	free(l->bundle);
	free(l->config_path);
	free(l->rootfs);
	free(l->bundle_rootfs);
	memset(l, 0, sizeof(*l));
}
