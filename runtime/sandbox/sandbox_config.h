/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox as an ordinary OCI config (sandbox_config.c): the host
 * facts, and the config built from a plan (sandbox_plan.h).
 */
#ifndef AGENTRUN_SANDBOX_CONFIG_H
#define AGENTRUN_SANDBOX_CONFIG_H

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

int ar_sandbox_host_detect(struct ar_sandbox_host *h, struct ar_error *err);
void ar_sandbox_host_release(struct ar_sandbox_host *h);

/* What the sandbox's protections are, in its config: the plan's line,
 * and with --nested what sandbox_nested.c made of the host. */
#define SB_ANNOTATION_PROTECTIONS "run.agentrun.sandbox.protections"

/* The config of a plan (root.path "rootfs"): everything it holds is
 * copied into the config's arena. */
int ar_sandbox_build_config(const struct sb_plan *p, struct oci_config **out,
			    struct ar_error *err);

#endif
