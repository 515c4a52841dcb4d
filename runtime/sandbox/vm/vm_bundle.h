/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The vm handler of plain OCI bundles (vm_bundle.c, docs/vm.md "Plain
 * bundles"): the annotation run.agentrun.handler=vm.
 */
#ifndef AGENTRUN_SANDBOX_VM_BUNDLE_H
#define AGENTRUN_SANDBOX_VM_BUNDLE_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_config.h"
#include "rootfs_fill.h"

#define AR_VM_HANDLER_ANNOTATION "run.agentrun.handler"

/* create_opts.h's on_config: a config without the annotation is left as
 * it is; with it, rewritten into the VMM's (QEMU as the container's
 * process, the bundle's root and command in the guest) and its root's
 * tmpfs content into *tmpfs_root. Fails with the reason when the
 * annotation names another handler, the config cannot run in the guest
 * or the host has no usable QEMU or guest kernel. */
int ar_vm_bundle_config(struct oci_config *cfg, const char *bundle,
			const char *state_root,
			const struct ar_rootfs_content **tmpfs_root,
			struct ar_error *err);

/* Whether a container's config asks for the vm handler (exec runs its
 * command in the guest). */
bool ar_vm_bundle_wanted(const struct oci_config *cfg);

/* exec.h's on_process: in a container of the vm handler (cfg, its
 * config, has the annotation) the process becomes `agentrun vm-exec
 * --cwd CWD --user UID:GID -- ARGS` in QEMU's view, as the container's
 * user there, which runs ARGS in the guest as the exec's user in its
 * directory. Else nothing. */
int ar_vm_bundle_exec(struct oci_process *p, struct oci_config *cfg,
		      struct ar_error *err);

#endif
