/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The OCI lifecycle: create, start, run, kill, delete, state, list.
 *
 * create: the runtime clones the container process into its namespaces,
 *   writes the user namespace maps, (hook point: cgroup), lets it set up
 *   its root and process, and leaves it blocked opening the exec fifo of
 *   the state directory for writing; state.json is written, the runtime
 *   exits. start opens the fifo for reading, the container process goes on
 *   to execve, start removes the fifo (status: running).
 * run: the same in one process without the fifo (the fast path); in the
 *   foreground the runtime forwards signals, relays the terminal when it
 *   owns it, passes the exit status through (128+N for a signal) and
 *   deletes the container at the end (unless --keep).
 */
#ifndef AGENTRUN_CONTAINER_H
#define AGENTRUN_CONTAINER_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"
#include "seccomp_refusal.h"

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
	bool detach; /* run --detach */
	bool keep; /* run --keep: keep the stopped container's state */
	bool cgroups_disabled; /* --cgroup-manager disabled */
	bool systemd_cgroup;
	int rootless; /* -1 auto, 0 no, 1 yes */
	/* agentrun sandbox (run only): the config in memory, used instead
	 * of BUNDLE/config.json, which need not exist (borrowed; NULL:
	 * read the file; config_file then names a copy of it on disk, an
	 * absolute path recorded in the state for exec) ... */
	const struct oci_config *config;
	/* ... and a root filesystem that is a fresh tmpfs mounted over
	 * root.path in the container's mount namespace, holding these
	 * entries (rootfs_fill.h: made by the container process before the
	 * mounts). Mount points are then made in memory and vanish with
	 * the namespace. NULL: root.path as it is. */
	const struct ar_rootfs_content *tmpfs_root;
	/* Called by the runtime once the container process exists in its
	 * namespaces (its final pid), before the createRuntime hooks and
	 * before anything of the config runs: the sandbox opens its egress
	 * proxy's socket in the container's netns here. NULL: none. */
	int (*on_spawn)(pid_t pid, void *arg, struct ar_error *err);
	void *on_spawn_arg;
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
};

int ar_container_create(const struct ar_create_opts *o, struct ar_error *err);

/* run: *exit_status gets the status the CLI exits with (the container
 * process's, 128+signal, or 0 with --detach). */
int ar_container_run(const struct ar_create_opts *o, int *exit_status,
		     struct ar_error *err);

int ar_container_start(const char *root, const char *id, struct ar_error *err);

/* Signal the container process (all of its processes with `all`).
 * Error when the container is stopped. */
int ar_container_kill(const char *root, const char *id, int sig, bool all,
		      struct ar_error *err);

/* Remove a stopped container (with `force`: kill it first with SIGKILL
 * and wait for it). */
int ar_container_delete(const char *root, const char *id, bool force,
			struct ar_error *err);

/* The OCI state JSON (malloc'ed, compact, no trailing newline). */
int ar_container_state(const char *root, const char *id, char **json,
		       size_t *len, struct ar_error *err);

enum ar_list_format { AR_LIST_TABLE = 0, AR_LIST_JSON };

int ar_container_list(const char *root, enum ar_list_format format, bool quiet,
		      FILE *out, struct ar_error *err);

#endif
