/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox`: run a command (an AI coding agent) rootless in a
 * container built on the fly from the host. The sandbox only produces an
 * ordinary struct oci_config (and a bundle directory holding it); running
 * it is the same ar_container_run() as `agentrun run`.
 *
 *   host /usr /bin /lib* /opt /sbin   read-only binds (rro)
 *   /etc                              generated passwd/group + an allowlist
 *                                     of host files, read-only
 *   $HOME                             tmpfs + allowlisted dotfiles; secret
 *                                     dirs (~/.ssh, ...) always hidden
 *   workspace                         git top-level of cwd (or cwd), rw,
 *                                     same path, same uid (keep-id map)
 *   /tmp /dev/shm                     fresh tmpfs
 *   network                           none (own netns, lo up), host, or
 *                                     allow=PATTERNS: own netns and an
 *                                     allowlist proxy (sandbox_egress.c)
 *   environment                       allowlist, secrets dropped
 *
 * See docs/sandbox.md for the lists and the reasoning.
 */
#ifndef AGENTRUN_SANDBOX_H
#define AGENTRUN_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

/* Write BUNDLE/config.json and BUNDLE/rootfs (the merged-/usr symlinks
 * of the host, etc/passwd, etc/group: `rootfs`). `dir` must be absent,
 * or a directory without a bundle in it. */
int ar_sandbox_bundle_write(const struct oci_config *cfg,
			    const struct ar_rootfs_content *rootfs,
			    const char *dir, struct ar_error *err);

/* --profile VALUE: a path as it is, or a profile name looked up as
 * NAME.json in ~/.config/agentrun/profiles, then the installed profiles
 * (profile_lookup.c). *path is malloc'd. */
int ar_sandbox_profile_resolve(const char *value, char **path,
			       struct ar_error *err);

/* Plan, build, check the protections this machine offers (doctor), run it in
 * the foreground through ar_container_run() with the config in memory
 * and a tmpfs root (nothing is written on the host; sandbox_rootfs.c).
 * *exit_status: the command's status. */
int ar_sandbox_run(const struct ar_sandbox_opts *o,
		   const struct ar_sandbox_run_opts *r, int *exit_status,
		   struct ar_error *err);

#endif
