/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The control plane of a running sandbox (docs/sandbox.md, "The control
 * plane"): every `agentrun sandbox` run (named or not) serves a unix
 * socket ROOT/.control/NAME.sock (ROOT the state root: the caller's
 * runtime directory; the directory 0700, the socket 0600; a peer that
 * is neither the sandbox's user nor root is refused by SO_PEERCRED).
 * It lives in the monitor process, outside the sandbox: nothing of it is
 * mounted inside, and the sandbox has its own network namespace.
 *
 * Over it (control_proto.h): the pending decisions of --net ask
 * (control_queue.h) listed and answered, and a live event stream in the
 * audit log's schema (network decisions always; with --audit, every
 * event of the log).
 *
 * control_server.c: the socket and its thread (this header's sb_*);
 * control_always.c: `always`, the grant written into the profile;
 * control_grant.c, control_mount.c: live grants (sandbox allow/revoke);
 * control_policy.c: the effective network policy ({"op":"policy"});
 * control_client.c: the CLI's side (ar_sandbox_requests/_answer);
 * control_channel.c: the agent channel (srt's Sandbox-Agent channel).
 */
#ifndef AGENTRUN_CONTROL_H
#define AGENTRUN_CONTROL_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include "control_grant.h"
#include "egress/egress_proxy.h"
#include "error.h"
#include "watch_fd.h"

struct sb_control;
struct ar_audit;
struct ar_jbuf;

/* The control plane of sandbox NAME, in memory. ask_timeout: seconds a
 * --net ask connection waits (0: the default). */
int sb_control_start(const char *root, const char *name, int ask_timeout,
		     struct sb_control **out, struct ar_error *err);
/* The container process exists (ar_create_opts.on_spawn): the agent
 * channel is served (its thread), and the socket may be made. A thread
 * started before the runtime's clone3 may hold a lock (malloc's) that
 * the child, which has no fork handlers, would wait for forever. */
int sb_control_serve(struct sb_control *c, struct ar_error *err);
/* For ar_create_opts.watch: ROOT/.control/NAME.sock bound by the
 * runtime's thread while the container process sets up (after
 * sb_control_serve), watched by its supervision, and served from a
 * thread of this process started when the first client connects: a
 * sandbox nobody watches costs no thread. Nothing of the stream is lost
 * by it: events go to the clients connected when they happen (none
 * before the first), pending requests wait in the queue. NULL c: NULL. */
struct ar_watch *sb_control_watch(struct sb_control *c);
/* The sandbox ends: every pending decision is refused, no new one
 * waits. Before the proxy stops (it waits for asks under way). */
void sb_control_close(struct sb_control *c);
/* Stop the thread, remove the socket, free. NULL is fine. */
void sb_control_free(struct sb_control *c);

/* The agent channel (control_channel.h): before sb_control_serve, which
 * starts it. *inner: the program's end (O_CLOEXEC; the caller passes it
 * as ar_create_opts.pass_fd and closes its own copy once the container
 * process exists). can_ask: the policy has `ask`. */
int sb_control_agent_channel(struct sb_control *c, bool can_ask, int *inner,
			     struct ar_error *err);

/* An event of the sandbox (b begun with ar_audit_begin, its closing
 * brace not yet added): into the --audit log, which streams it, or to
 * the stream alone. Frees b. NULL c: b is freed. */
void sb_control_event(struct sb_control *c, struct ar_jbuf *b);

/* --profile FILE: where `always` writes its grant (control_always.h). */
void sb_control_set_profile(struct sb_control *c, const char *path);
/* --audit: every line of the log goes to the stream too, and the
 * control plane's own events (answers) go into the log. */
void sb_control_set_audit(struct sb_control *c, struct ar_audit *a);
/* The egress policy the sandbox starts with (the allowlist, `ask`) and
 * its --secret names and hosts, copied (never a value): what
 * {"op":"policy"} shows with the live grants and answers
 * (control_policy.h). Before sb_control_serve. */
struct ar_egress_secret;
void sb_control_set_policy(struct sb_control *c,
			   const struct ar_egress_policy *p,
			   const struct ar_egress_secret *secrets, size_t n);
/* The proxy's decisions: fn and data (what they went to) are replaced by
 * the control plane's, which streams them and calls the old ones. */
void sb_control_tap_egress(struct sb_control *c, ar_egress_event_fn *fn,
			   void **data);
/* The container process (its host pid): a request names the process of
 * the sandbox that asks (control_peer.h); sandbox allow/revoke
 * (control_grant.h) joins its namespaces for --ro/--rw. The sandbox's checks of a path grant, and
 * the proxy's ar_egress_grant_fn (data: the struct sb_control). */
void sb_control_set_pid(struct sb_control *c, pid_t pid);
void sb_control_set_path_check(struct sb_control *c, ctl_path_check_fn fn,
			       void *data);
/* Told what became of each path grant the check passed (its data). */
void sb_control_set_path_done(struct sb_control *c, ctl_path_done_fn fn);
bool sb_control_net_granted(const char *host, uint16_t port, bool *exact,
			    void *data);
/* An ar_egress_ask_fn: data is the struct sb_control. */
bool sb_control_ask(const struct ar_egress_ask *q, char *reason, size_t size,
		    void *data);

/* agentrun sandbox requests [NAME] [--json]: the pending requests of
 * NAME, or of every sandbox of ROOT. */
int ar_sandbox_requests(const char *root, const char *name, bool json,
			FILE *out, struct ar_error *err);
/* agentrun sandbox policy NAME [--json]: the network policy in force
 * ({"op":"policy"}, control_policy.h): its reply as is, or as text. */
int ar_sandbox_policy(const char *root, const char *name, bool json, FILE *out,
		      struct ar_error *err);
/* agentrun sandbox allow|revoke NAME --net HOST[:PORT] | --ro|--rw PATH
 * (kind "net", "ro", "rw"; PATH made absolute and real here). */
int ar_sandbox_grant(const char *root, const char *name, bool revoke,
		     const char *kind, const char *target, bool force,
		     FILE *out, struct ar_error *err);
/* agentrun sandbox answer NAME ID once|session|always|refuse */
int ar_sandbox_answer(const char *root, const char *name, const char *id,
		      const char *answer, FILE *out, struct ar_error *err);
/* The same through interface IFACE ("cli", "watch"): named in the
 * answer's audit event and in a refusal's reason. */
int ar_sandbox_answer_via(const char *root, const char *name, const char *id,
			  const char *answer, const char *iface, FILE *out,
			  struct ar_error *err);

/* For the control plane's clients (agentrun watch): the names of ROOT's
 * control sockets, sorted (a NULL-ended vector of *n; free each and it);
 * a connection to NAME's socket (the fd, or -1 with err); one request
 * line sent and the reply line read (malloc'd, without its newline;
 * 5 s at most). */
char **ar_control_names(const char *root, size_t *n);
int ar_control_connect(const char *root, const char *name,
		       struct ar_error *err);
int ar_control_call(int fd, const char *req, char **out, struct ar_error *err);

#endif
