/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The agent's side of the control plane (docs/sandbox.md, "The agent
 * channel"): the outer end of the Sandbox-Agent channel of Anthropic's
 * sandbox-runtime (srt, src/sandbox/agent-channel.ts, protocol version
 * 1). The program in the sandbox inherits the inner end of a unix
 * socketpair as fd 3, named by SANDBOX_AGENT_CHANNEL_FD=3 in its
 * environment; newline-delimited JSON both ways:
 *
 *   sandbox -> agent
 *     {"type":"hello","protocol_version":1}          at once
 *     {"type":"blocked","resource":{"type":"network","host":H,"port":P},
 *      "operation":"connect","description":"..."}   what was refused, why
 *     {"type":"permission_response","id":ID,"behavior":"allow"|"deny",
 *      "description":"..."}                          the human's answer
 *   agent -> sandbox
 *     {"type":"hello","protocol_version":1}
 *     {"type":"permission_request","id":ID,"resource":{"type":"network",
 *      "host":H,"port":P},"operation":"connect","description":WHY}
 *
 * srt sends permission_request the other way (the sandbox asks the agent,
 * whose permission_response decides). Here the agent may ask and explain
 * but never grant: its permission_request joins the human queue of
 * --net ask (control_queue.h, marked as the agent's, its description
 * quoted), the human's answer comes back as permission_response; a
 * permission_response from the agent is ignored and counted. The same
 * message shapes, mirrored.
 *
 * Bounds: a line is at most CTL_CHANNEL_LINE_MAX bytes (longer ones are
 * dropped to their newline), at most CTL_CHANNEL_MAX_ASKS requests of the
 * agent wait at once, `blocked` messages are sent once each (a bounded
 * set) and never block the proxy (a full socket drops them). Every
 * dropped or ignored line is counted; the counts go to the event stream
 * (`agent_channel` events) and to the log at the end.
 */
#ifndef AGENTRUN_CONTROL_CHANNEL_H
#define AGENTRUN_CONTROL_CHANNEL_H

#include <stdbool.h>
#include <stdint.h>

#include "audit/audit.h"
#include "control_queue.h"
#include "error.h"

#define CTL_CHANNEL_ENV "SANDBOX_AGENT_CHANNEL_FD"
#define CTL_CHANNEL_FD 3 /* the program's fd, as srt */
#define CTL_CHANNEL_VERSION 1
#define CTL_CHANNEL_LINE_MAX (64 * 1024)
#define CTL_CHANNEL_MAX_ASKS 16 /* the agent's requests waiting at once */
#define CTL_CHANNEL_MAX_BLOCKED 256 /* distinct `blocked` sent */
#define CTL_CHANNEL_MAX_QUEUED 100 /* `blocked` kept until the hello */

struct ctl_channel;

/* An event of the channel for the stream/log: b is begun
 * (ar_audit_begin) and complete but for its closing brace. */
typedef void (*ctl_channel_emit_fn)(void *data, struct ar_jbuf *b);

/* The socketpair: *inner (O_CLOEXEC, for ar_create_opts.pass_fd) is the
 * program's; the channel keeps the outer end. can_ask: the policy has
 * `ask` (else a request of the agent is denied at once, saying so). */
int ctl_channel_open(struct ctl_queue *q, bool can_ask,
		     ctl_channel_emit_fn emit, void *emit_data, int *inner,
		     struct ctl_channel **out, struct ar_error *err);
/* Start its thread (after the container process exists: no thread before
 * the runtime's clone) and say hello. */
int ctl_channel_serve(struct ctl_channel *ch, struct ar_error *err);
/* The proxy refused a connection: tell the agent (once per target and
 * reason). Thread-safe, never blocks. */
void ctl_channel_blocked(struct ctl_channel *ch, const char *host,
			 uint16_t port, const char *reason);
/* A line of the --audit log (as it is written): a protected_attempt
 * (a write refused on a protected path) is told as `blocked`, resource
 * {"type":"file","path":...}, operation "write", once per path. Other
 * lines are skipped at the cost of a substring search. Thread-safe. */
void ctl_channel_audit_line(struct ctl_channel *ch, const char *line,
			    size_t len);
/* Stop (after ctl_queue_close: the agent's waiting requests are over),
 * emit the counts, free. NULL is fine. */
void ctl_channel_free(struct ctl_channel *ch);

#endif
