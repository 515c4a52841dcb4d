/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What `create` and `run` are asked to do: the options of the CLI (and of
 * `agentrun sandbox`), read by container.c, launch.c and the container
 * process (container_init.c).
 */
#ifndef AGENTRUN_CREATE_OPTS_H
#define AGENTRUN_CREATE_OPTS_H

#include <stdbool.h>
#include <sys/types.h>

#include "error.h"
#include "seccomp_refusal.h"
#include "watch_fd.h"

struct ar_landlock_rules;
struct ar_rootfs_content;
struct oci_config;

struct ar_create_opts {
	const char *root; /* state root (--root) */
	const char *id;
	const char *bundle; /* NULL: current directory */
	/* --config: NULL or "config.json": BUNDLE/config.json; any other
	 * relative path is relative to the current directory (as crun) */
	const char *config_file;
	const char *pid_file; /* NULL: none */
	const char *console_socket; /* NULL: none */
	bool no_pivot;
	bool no_new_keyring;
	int preserve_fds;
	/* agentrun sandbox: when > 2, this fd (O_CLOEXEC in the runtime)
	 * becomes fd 3 of the container's process, inherited by its program
	 * (the agent channel: control/control_channel.h); counts as one
	 * preserved fd. 0: none. */
	int pass_fd;
	/* with pass_fd: NAME=3 in the program's environment (only there:
	 * not in the config, so a process joined by exec, which has no fd 3
	 * of it, is not told of one); an inherited NAME is dropped */
	const char *pass_fd_env;
	bool detach; /* run --detach */
	bool keep; /* run --keep: keep the stopped container's state */
	bool cgroups_disabled; /* --cgroup-manager disabled */
	bool systemd_cgroup;
	/* the caller's NOTIFY_SOCKET (sd_notify.h: ar_notify_caller()), proxied
	 * into the container; NULL: none */
	const char *notify_socket;
	int rootless; /* -1 auto, 0 no, 1 yes */
	/* agentrun sandbox (run only): the config in memory, used instead
	 * of BUNDLE/config.json, which need not exist (lent, not freed: the
	 * launch changes it as it would its own copy, e.g. the agent
	 * hooks add their mounts; NULL: read the file; config_file then
	 * names a copy of it on disk, an absolute path recorded in the
	 * state for exec) ... */
	struct oci_config *config;
	/* Overlap the container process's setup with the runtime's
	 * state.json (container.c: overlap_setup) when nothing of the
	 * config needs the runtime between the two. Set by the sandbox,
	 * whose configs are known; off for bundles (every step in order,
	 * as crun). */
	bool overlap;
	/* ... and a root filesystem that is a fresh tmpfs mounted over
	 * root.path in the container's mount namespace, holding these
	 * entries (rootfs_fill.h: made by the container process before the
	 * mounts). Mount points are then made in memory and vanish with
	 * the namespace. NULL: root.path as it is. */
	const struct ar_rootfs_content *tmpfs_root;
	/* Called once BUNDLE/config.json is read and checked, with the
	 * agent hooks' additions (the workspace's mount), never for
	 * `config`: it may rewrite the config in place
	 * (allocating from its arena) and give a root as tmpfs_root does
	 * (*tmpfs_root; left NULL: none). The CLI's create and run: the
	 * vm handler of a plain bundle (runtime/sandbox/vm/vm_bundle.c).
	 * NULL: none. */
	int (*on_config)(struct oci_config *cfg, const char *bundle,
			 const char *state_root,
			 const struct ar_rootfs_content **tmpfs_root,
			 struct ar_error *err);
	/* Called by the runtime once the container process exists in its
	 * namespaces (its final pid), before the createRuntime hooks and
	 * before anything of the config runs: the sandbox opens its egress
	 * proxy's socket in the container's netns here. NULL: none. */
	int (*on_spawn)(pid_t pid, void *arg, struct ar_error *err);
	void *on_spawn_arg;
	/* Something of the caller's that the foreground run watches
	 * (watch_fd.h: the sandbox's control socket): opened once the
	 * container process was let go, beside its setup; its fd polled
	 * while the runtime supervises. NULL: none. */
	struct ar_watch *watch;
	/* agentrun sandbox: the config has no linux.seccomp and the
	 * embedded agent profile is loaded instead, from the compiled
	 * filter cache keyed by its JSON text: parsed only on a miss
	 * (ar_seccomp_compile_default_cached). */
	bool seccomp_default;
	/* agentrun sandbox: the Landlock rules the container process
	 * applies before execve (landlock.h), instead of the config's
	 * run.agentrun.landlock annotation. NULL: the annotation's. */
	const struct ar_landlock_rules *landlock;
	/* agentrun sandbox without --nested, `run` in the foreground: the
	 * agent profile's refusals of namespace creation (clone/unshare
	 * with namespace flags, setns) go to a seccomp user notification
	 * that the runtime answers EPERM while it supervises, calling this
	 * for each (seccomp_refusal.h). Only for a profile that refuses
	 * them and has no listener of its own (then: plain EPERM). NULL:
	 * nothing observed. */
	ar_refusal_fn on_refusal;
	void *on_refusal_arg;
	/* agentrun sandbox: the container process stays as pid 1 of the
	 * pid namespace, an init (init.h) that forks the program, reaps
	 * orphans, forwards signals and hands the program's job-control
	 * stops to a foreground `run` (ar_launch.init_fd). Only with a new
	 * pid namespace. */
	bool init;
};

#endif
