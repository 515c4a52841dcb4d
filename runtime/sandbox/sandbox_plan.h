/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One sandbox resolved into a plan (sandbox_plan.c; struct sb_plan in
 * sandbox_types.h). */
#ifndef AGENTRUN_SANDBOX_PLAN_H
#define AGENTRUN_SANDBOX_PLAN_H

#include "error.h"
#include "sandbox_types.h"

/* Resolve the options (not kept: the plan copies what it needs, and the
 * strings they point to must outlive it) on host `h` (borrowed). ro: how
 * it runs; NULL, as --print-bundle: nothing for a run (no mount points
 * in the root's content, no host addresses for the proxy). Side effects
 * on the host: the --overlay directory (created and locked; removed
 * again on failure), the --secret CA directory, the profile's
 * directories below the home directory. Fails naming the option, the
 * profile entry or the path. */
int sb_plan_make(struct sb_plan *p, const struct ar_sandbox_opts *o,
		 const struct ar_sandbox_host *h,
		 const struct ar_sandbox_run_opts *ro, struct ar_error *err);
/* Free it (after a failed sb_plan_make too); the overlay's lock goes,
 * the --secret CA directory is removed. */
void sb_plan_release(struct sb_plan *p);
/* The files the plan made for the run stay on the host after the
 * release (the --secret CA directory): a --print-bundle bundle names
 * them, a detached run's monitor uses them. */
void sb_plan_keep_files(struct sb_plan *p);

/* The workspace the options select (--workspace, the profile's, else
 * ar_sandbox_find_workspace of the cwd), a real path; malloc'd. */
int ar_sandbox_workspace(const struct ar_sandbox_opts *o,
			 const struct ar_sandbox_host *h, char **out,
			 struct ar_error *err);

/* Workspace of a directory: the nearest ancestor (or itself) holding a
 * .git entry, else the directory itself. Malloc'd. */
char *ar_sandbox_find_workspace(const char *cwd);

#endif
