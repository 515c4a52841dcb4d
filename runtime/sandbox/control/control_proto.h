/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control socket's protocol (docs/sandbox.md, "The control plane"):
 * newline-ended JSON objects, one request per connection from the
 * client, one reply (and for "events", the stream) from the sandbox.
 *
 *   {"op":"requests"}
 *       -> {"ok":true,"sandbox":"NAME","requests":[REQUEST...]}
 *   {"op":"answer","id":"ID","answer":"once|session|always|refuse",
 *    "interface":"cli"|"web"}
 *       -> {"ok":true} | {"ok":false,"error":"..."}
 *   {"op":"events"}
 *       -> {"ok":true,"sandbox":"NAME"} then one audit-schema event per
 *          line (docs/audit.md) as they happen, until either side closes
 *
 *   {"op":"allow"|"revoke","kind":"net|ro|rw","target":"HOST[:PORT]|PATH",
 *    "force":false,"interface":"cli"}
 *       -> {"ok":true,"done":"..."} | {"ok":false,"error":"..."}
 *       (live grants, control_grant.h; PATH absolute and real)
 *
 *   {"op":"policy"}
 *       -> {"ok":true,"sandbox":"NAME",...} the effective network policy:
 *          the start's allowlist, ask, the --secret names and their
 *          hosts (never a value), the live grants and the session and
 *          always answers in force (control_policy.h)
 *
 * REQUEST: {"id","sandbox","since","kind":"net","proto","host","port",
 * "target","address","pid","sandbox_pid","exe","cmdline","waiting","reason","from":"connection"|"agent"}
 * and, for the agent's (control_channel.h), "explanation": its words,
 * quoted (ar_quote).
 */
#ifndef AGENTRUN_CONTROL_PROTO_H
#define AGENTRUN_CONTROL_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "audit/audit.h"
#include "control_queue.h"

#define CTL_LINE_MAX 4096 /* a client's request line */

enum ctl_op {
	CTL_OP_REQUESTS = 1,
	CTL_OP_ANSWER,
	CTL_OP_EVENTS,
	CTL_OP_GRANT, /* allow / revoke */
	CTL_OP_POLICY,
};

struct ctl_msg {
	enum ctl_op op;
	uint64_t id; /* answer */
	enum ctl_answer answer; /* answer */
	char iface[16]; /* answer: "cli", "watch" or "web"; grant: "cli" */
	bool revoke; /* grant: revoke, else allow */
	bool force; /* grant: --force (the never-share list) */
	char kind[4]; /* grant: "net", "ro", "rw" */
	char target[CTL_LINE_MAX]; /* grant */
};

/* One request line (without its newline): 0, or -1 with `why`. */
int ctl_proto_parse(const char *line, size_t len, struct ctl_msg *m, char *why,
		    size_t wsize);
/* {"ok":false,"error":MSG}\n */
void ctl_proto_error(struct ar_jbuf *b, const char *msg);

#endif
