/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * OCI hooks: run every hook of one stage, in order, with the container
 * state JSON on stdin. The caller decides where (runtime namespace or the
 * container's) by calling from the right process at the right moment.
 */
#ifndef AGENTRUN_HOOKS_H
#define AGENTRUN_HOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "state.h"

/*
 * Run the hooks of `stage` from cfg. state_json is the OCI state (compact).
 * Each hook's stdout and stderr go to the files of the run.oci.hooks.*
 * annotations, else to the runtime log file when there is one, else to
 * the runtime's stderr. A hook that exits non-zero, is killed
 * or exceeds its timeout is an error naming the stage, index and path; the
 * remaining hooks of the stage are not run. Except poststart and poststop
 * (runtime-spec): each failure is logged as a warning, the remaining hooks
 * run, and the result is 0.
 */
int ar_hooks_run(const struct oci_config *cfg, enum oci_hook_stage stage,
		 const char *state_json, size_t len, struct ar_error *err);

/* crun's annotations: files (relative to the runtime's cwd, created 0600,
 * appended to) that take the hooks' stdout and stderr instead of the log
 * file or stderr. */
#define AR_ANNOTATION_HOOKS_STDOUT "run.oci.hooks.stdout"
#define AR_ANNOTATION_HOOKS_STDERR "run.oci.hooks.stderr"

/* Open the files of AR_ANNOTATION_HOOKS_STDOUT/STDERR, once per process
 * (ar_hooks_run does it when a stage has hooks; the runtime does it before
 * the clone so the container process's createContainer and startContainer
 * hooks write to the same files). O_CLOEXEC. */
int ar_hooks_output_open(const struct oci_config *cfg, struct ar_error *err);
void ar_hooks_output_close(void);

/* Same, for a single hook (unit-testable). */
int ar_hook_run_one(const struct oci_hook *hook, const char *what,
		    const char *state_json, size_t len, struct ar_error *err);

/*
 * Run the hooks of one stage with the OCI state of the container (id, pid
 * in the runtime's pid namespace, bundle, the config's annotations, the
 * given status) on their stdin. 0 when there are none.
 */
int ar_hooks_run_state(const struct oci_config *cfg, enum oci_hook_stage stage,
		       const char *id, pid_t pid, const char *bundle,
		       enum ar_status status, struct ar_error *err);

/* True when the container process needs its pid in the runtime's pid
 * namespace (AR_SYNC_HOST_PID): it runs the createContainer or
 * startContainer hooks. */
bool ar_hooks_need_host_pid(const struct oci_config *cfg);

#endif
