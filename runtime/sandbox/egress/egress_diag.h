/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Where the egress proxy's decisions go while the sandboxed command runs:
 * never into the terminal the command owns. A refusal (or a failure to
 * connect) is written once to the --log file when there is one, else to
 * $XDG_STATE_HOME/agentrun/egress.log (~/.local/state/...; opened at
 * the first one); --verbose also writes it on stderr as it happens. An
 * audit log or learn mode (the `next` function) sees every decision.
 * When the command has exited, one line sums the refusals up:
 *   agentrun: 3 connections blocked: a.test:443 (not in the allowlist),
 *   ... — see FILE
 */
#ifndef AGENTRUN_EGRESS_DIAG_H
#define AGENTRUN_EGRESS_DIAG_H

#include <stdbool.h>

#include "egress_proxy.h"

struct ar_egress_diag;

/* audit_path: the --audit file (named in the summary when there is no
 * --log), or NULL; next/next_data: called after, may be NULL. */
struct ar_egress_diag *ar_egress_diag_new(bool verbose, const char *audit_path,
					  ar_egress_event_fn next,
					  void *next_data);
/* An ar_egress_event_fn; data: the struct ar_egress_diag. Thread-safe. */
void ar_egress_diag_event(const struct ar_egress_event *ev, void *data);
/* The summary line (nothing when nothing was refused), once. Call it
 * when no decision can come any more (the proxy stopped). */
void ar_egress_diag_summary(struct ar_egress_diag *d);
void ar_egress_diag_free(struct ar_egress_diag *d);

#endif
