/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Sandbox sessions: `agentrun sandbox --name NAME` makes the sandbox the
 * container NAME of the state root, and keeps what the other session
 * commands need in ROOT/.sandboxes/NAME/:
 *
 *   config.json  the sandbox's full OCI config (seccomp profile included):
 *                `sandbox exec` runs its process with it, through the
 *                runtime's exec (ar_container_exec: every namespace,
 *                user, capabilities, no_new_privs, seccomp, Landlock,
 *                env with the proxy variables, cwd)
 *   monitor      the pid of the agentrun process that runs the sandbox
 *                (it holds the egress proxy and the audit log, and
 *                deletes the container and this directory at the end)
 *   output       --detach: the command's stdout and stderr
 *   observed     present with --audit/--learn: exec is refused
 *
 * `sandbox stop` signals the command and waits for the monitor to have
 * cleaned up; `sandbox list` reads these directories and the containers'
 * states.
 */
#ifndef AGENTRUN_SANDBOX_SESSION_H
#define AGENTRUN_SANDBOX_SESSION_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "error.h"

struct oci_config;

struct sb_session {
	char *dir; /* ROOT/.sandboxes/NAME; NULL: no session */
	int ready_fd; /* --detach, in the monitor: tells the caller */
};

/* Make the session directory (a stale one, whose monitor is gone, is
 * removed first). Fails when a live session of that name exists.
 * observed: --audit/--learn, whose seccomp listener sees the first
 * process only: exec is refused. vm: --vm, whose command runs in a
 * guest: exec runs `agentrun vm-exec -- CMD` in the sandbox, which
 * asks the guest agent for a session (vm/vm_agent.h). */
int sb_session_begin(struct sb_session *s, const char *root, const char *name,
		     const struct oci_config *cfg, bool observed, bool vm,
		     struct ar_error *err);

/* --detach: fork the monitor. Returns 1 in the caller (the sandbox runs
 * on in the monitor; *exit_status is set: 0 once it runs, or its early
 * end), 0 in the monitor, -1 on error. */
int sb_session_detach(struct sb_session *s, const char *root, const char *name,
		      int *exit_status, struct ar_error *err);

/* In the monitor, when the run is over: tell the caller (detach) the
 * outcome; remove the session directory. */
void sb_session_end(struct sb_session *s, int r, int exit_status,
		    const struct ar_error *err);

/* agentrun sandbox exec NAME [--tty] -- CMD */
int ar_sandbox_session_exec(const char *root, const char *name, char **argv,
			    int tty, int *exit_status, struct ar_error *err);

/* agentrun sandbox list */
int ar_sandbox_session_list(const char *root, FILE *out, struct ar_error *err);

/* agentrun sandbox stop NAME: SIGTERM, after `timeout` seconds SIGKILL;
 * returns once the monitor has cleaned up. */
int ar_sandbox_session_stop(const char *root, const char *name, int timeout,
			    struct ar_error *err);

#endif
