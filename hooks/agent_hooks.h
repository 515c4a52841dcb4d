/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * hooks/: the agent hooks, built into the binary. Annotations that give a
 * plain OCI bundle (or a podman container, `podman run --annotation`) what
 * `agentrun sandbox` does for its own command. The runtime calls them
 * while it prepares a launch (runtime/lib/container.c), before anything
 * is created; each one turns its annotation into ordinary config (a
 * mount, ...) that the runtime library then sets up like any other.
 *
 * (Named agent_hooks.h: runtime/lib/hooks.h is the OCI hooks.)
 */
#ifndef AGENTRUN_AGENT_HOOKS_H
#define AGENTRUN_AGENT_HOOKS_H

#include <stdbool.h>

#include "error.h"
#include "oci_config.h"

/*
 * run.agentrun.workspace=HOSTPATH[:CTRPATH]: bind the host directory
 * HOSTPATH read-write at CTRPATH (default: the same path) so that what
 * the container's process creates there is owned by HOSTPATH's owner on
 * the host, and nothing is re-owned:
 *  - when the process's uid and gid (process.user through
 *    linux.uidMappings/gidMappings) already are the owner's (rootless
 *    with a keep-id mapping, or root on a root-owned directory): a plain
 *    bind;
 *  - else, when the runtime is root on the host: an idmapped bind that
 *    maps the owner's ids to the process's (it writes as the owner; made
 *    by the runtime, see runtime/lib/mount_premade.c);
 *  - else: an error (an unprivileged runtime cannot make idmapped mounts
 *    of host filesystems).
 * The bind is non-recursive, rw, nosuid, nodev. Bad values (relative
 * paths, "..", a missing HOSTPATH or one that is not a directory, "/" or
 * a system directory on either side, a CTRPATH another mount already
 * uses) are errors naming annotations["run.agentrun.workspace"].
 */
#define AR_ANNOTATION_WORKSPACE "run.agentrun.workspace"

struct ar_workspace_spec {
	char *host; /* as given, malloc'd */
	char *ctr; /* cleaned: one leading '/', no "//", no trailing '/' */
};

/* The syntax only (no file system access): absolute paths without ".."
 * components, neither "/" nor a system directory. Pure; unit-tested. */
int ar_workspace_parse(const char *value, struct ar_workspace_spec *out,
		       struct ar_error *err);
void ar_workspace_spec_free(struct ar_workspace_spec *s);

/* Apply the annotation when cfg has it (appends one entry to cfg->mounts).
 * `rootless`: the runtime is not root on the host. */
int ar_hook_workspace(struct oci_config *cfg, bool rootless,
		      struct ar_error *err);

#endif
