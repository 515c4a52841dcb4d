/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox as an ordinary OCI config, built from the host
 * (sandbox_config.c): the host facts, the workspace, the config.
 */
#ifndef AGENTRUN_SANDBOX_CONFIG_H
#define AGENTRUN_SANDBOX_CONFIG_H

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

int ar_sandbox_host_detect(struct ar_sandbox_host *h, struct ar_error *err);
void ar_sandbox_host_release(struct ar_sandbox_host *h);

/*
 * Build the config (root.path "rootfs"). Fails naming the offending
 * option for paths that do not exist or that are on the never-share list.
 */
int ar_sandbox_build_config(const struct ar_sandbox_opts *o,
			    const struct ar_sandbox_host *h,
			    struct oci_config **out,
			    struct ar_sandbox_info *info, struct ar_error *err);
void ar_sandbox_info_release(struct ar_sandbox_info *info);

/* The workspace the options select (--workspace, the profile's, else
 * ar_sandbox_find_workspace of the cwd), a real path; malloc'd. */
int ar_sandbox_workspace(const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, char **out,
			 struct ar_error *err);

/* Workspace of a directory: the nearest ancestor (or itself) holding a
 * .git entry, else the directory itself. Malloc'd. */
char *ar_sandbox_find_workspace(const char *cwd);

#endif
