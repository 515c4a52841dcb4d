/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OCI hooks: run every hook of one stage, in order, with the container
 * state JSON on stdin. The caller decides where (runtime namespace or the
 * container's) by calling from the right process at the right moment.
 */
#ifndef AGENTRUN_HOOKS_H
#define AGENTRUN_HOOKS_H

#include <stddef.h>

#include "error.h"
#include "oci_config.h"

/*
 * Run the hooks of `stage` from cfg. state_json is the OCI state (compact).
 * Each hook's stdout and stderr go to the runtime log file when there is
 * one (else to the runtime's stderr). A hook that exits non-zero, is killed
 * or exceeds its timeout is an error naming the stage, index and path; the
 * remaining hooks of the stage are not run. Except poststart and poststop
 * (runtime-spec): each failure is logged as a warning, the remaining hooks
 * run, and the result is 0.
 */
int ar_hooks_run(const struct oci_config *cfg, enum oci_hook_stage stage,
		 const char *state_json, size_t len, struct ar_error *err);

/* Same, for a single hook (unit-testable). */
int ar_hook_run_one(const struct oci_hook *hook, const char *what,
		    const char *state_json, size_t len, struct ar_error *err);

#endif
