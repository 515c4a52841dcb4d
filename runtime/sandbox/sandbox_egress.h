/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's network: --net, --publish, --secret (sandbox_egress.c). */
#ifndef AGENTRUN_SANDBOX_EGRESS_H
#define AGENTRUN_SANDBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "egress_policy.h"
#include "egress_proxy.h"
#include "error.h"
#include "sandbox_mounts.h"
#include "sandbox_types.h"

/* none, host or allow: the command line's, else the profile's. */
enum ar_sandbox_net sb_net_mode(const struct ar_sandbox_opts *o);
/* The allowlist: the profile's patterns and --net allow=... (errors name
 * the profile file and net.allow[i], or the option). */
int sb_egress_policy(const struct ar_sandbox_opts *o,
		     struct ar_egress_policy *p, struct ar_error *err);
/* An empty /etc/resolv.conf instead of the host's (call it after the
 * /etc mounts). */
void sb_egress_mounts(struct sb_mounts *m);
/* HTTP_PROXY=... and friends for the sandbox's environment, NULL ended. */
extern const char *const sb_egress_env[];
/* The proxy of one run: init before ar_container_run, on_spawn as
 * ar_create_opts.on_spawn (arg: the struct), release after the run
 * (prints the summary of refusals: egress_diag.h). fn/fn_data: an
 * audit log or learn mode also sees every decision. */
struct sb_egress {
	struct ar_egress_policy policy;
	struct ar_egress_proxy *proxy;
	ar_egress_event_fn fn;
	void *fn_data;
	struct ar_egress_diag *diag;
	bool verbose; /* --verbose */
	const char *audit_path; /* --audit FILE or NULL */
	bool allow; /* --net allow: the proxy and transparent egress */
	/* --publish: host sockets (bound by init), the inside ports */
	struct ar_egress_forward *publish;
	size_t n_publish;
	struct ar_egress_sockmaker *maker;
	struct sb_secrets *secrets; /* or NULL */
};
/* --secret (sandbox_egress.c, egress_tls.h): placeholders in the
 * environment, the sandbox's CA in a private directory shown read-only
 * inside and named by SSL_CERT_FILE and friends. prepare: *o becomes a
 * copy with those added (before the config is built). */
struct ar_egress_secret;
struct ar_egress_tls;
struct sb_secrets {
	struct ar_egress_secret *v;
	size_t n;
	struct ar_egress_tls *tls;
	char *dir;
	char **strs; /* NAME=placeholder, VAR=path: freed at release */
	size_t n_strs;
	const char **env, **ro;
	struct ar_sandbox_opts opts;
};
bool sb_secrets_wanted(const struct ar_sandbox_opts *o);
int sb_secrets_prepare(struct sb_secrets *s, const struct ar_sandbox_opts **o,
		       struct ar_error *err);
void sb_secrets_release(struct sb_secrets *s);

/* --publish given (command line or profile)? */
bool sb_egress_publish_wanted(const struct ar_sandbox_opts *o);
/* allow: --net allow (else --publish alone, with --net none); host:
 * --net host (where --publish is an error). */
int sb_egress_init(struct sb_egress *e, const struct ar_sandbox_opts *o,
		   bool allow, bool host, struct ar_error *err);
int sb_egress_on_spawn(pid_t pid, void *arg, struct ar_error *err);
void sb_egress_release(struct sb_egress *e);

#endif
