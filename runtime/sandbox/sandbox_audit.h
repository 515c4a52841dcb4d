/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * --audit FILE and --learn PROFILE in one sandbox run (sandbox_audit.c):
 * the glue between ar_sandbox_run (sandbox.c) and the audit writer
 * (audit.c), the notification listener (audit_notify.c), the files
 * event (audit_files.c) and learn mode (learn.c). With neither option
 * nothing here runs: the config and the run are unchanged.
 */
#ifndef AGENTRUN_SANDBOX_AUDIT_H
#define AGENTRUN_SANDBOX_AUDIT_H

#include <stdbool.h>
#include <time.h>

#include "audit/audit_files.h"
#include "audit/audit_notify.h"
#include "oci_config.h"
#include "sandbox_types.h"

struct sb_egress;

struct ar_audit;
struct sb_learn;
struct sb_notify;

struct sb_observe {
	struct ar_audit *audit;
	struct sb_learn *learn;
	struct sb_notify *notify;
	struct sb_attempts attempts; /* on protected paths */
	struct sb_scan before;
	bool scanned;
	struct timespec t0;
	char *const *argv; /* the command, for the first exec event */
};

/* With --audit/--learn (plan->observe), after the config is built: open
 * the log, start the listener, add its rules to the config, log "start",
 * scan the workspace. */
int sb_observe_start(struct sb_observe *ob, const struct sb_plan *p,
		     struct oci_config *cfg, struct ar_error *err);
/* Once the container process exists: start the listener thread. */
int sb_observe_on_spawn(struct sb_observe *ob, pid_t pid, struct ar_error *err);
/* Route the egress proxy's decisions to the log / the learner. */
void sb_observe_egress(struct sb_observe *ob, struct sb_egress *e);
/* After the run: stop the listener, log "files" and "exit", sum the
 * attempts on protected paths up on stderr (one line, like the egress
 * proxy's blocked connections), write the learned profile (only when
 * the run succeeded). Returns run_rc when it is < 0 (err untouched),
 * else 0 or -1 when the profile cannot be written. */
int sb_observe_finish(struct sb_observe *ob, const struct sb_plan *p,
		      int run_rc, int exit_status, struct ar_error *err);
/* Free everything (safe after a failed start). */
void sb_observe_release(struct sb_observe *ob);

#endif
