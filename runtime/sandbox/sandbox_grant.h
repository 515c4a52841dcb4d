/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's checks of a live --ro/--rw grant (sandbox_grant.c),
 * given to the control plane (control/control_grant.h). */
#ifndef AGENTRUN_SANDBOX_GRANT_H
#define AGENTRUN_SANDBOX_GRANT_H

#include <stdbool.h>

#include "error.h"

struct sb_grant_ctx {
	const char *workspace; /* real path */
	const char *home; /* real path */
};

/* A ctl_path_check_fn (data: struct sb_grant_ctx): `path` (real) must
 * not be under /proc or /sys nor hold a kernel interface
 * (sandbox_kernfs.h), must not be, hold or be inside the workspace,
 * must not be nor hold a path on the never-share list unless `force`;
 * a --rw one gets its protected paths (protect.h: git metadata, editor
 * and agent config, and the home directory's paths the host runs code
 * from) in *protect, kept read-only. */
int sb_grant_check(const char *path, bool rw, bool force, char ***protect,
		   void *data, struct ar_error *err);

#endif
