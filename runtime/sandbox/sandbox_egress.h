/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's network: --net, --publish, --secret (sandbox_egress.c). */
#ifndef AGENTRUN_SANDBOX_EGRESS_H
#define AGENTRUN_SANDBOX_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "egress/egress_policy.h"
#include "egress/egress_proxy.h"
#include "egress/egress_upstream.h"
#include "error.h"
#include "sandbox_mounts.h"
#include "sandbox_types.h"

/* An empty /etc/resolv.conf instead of the host's (call it after the
 * /etc mounts). */
void sb_egress_mounts(struct sb_mounts *m);
/* HTTP_PROXY=... and friends for the sandbox's environment, NULL ended. */
extern const char *const sb_egress_env[];

/* The proxy of one run, from the plan (which outlives it: the policy
 * and the secrets are the plan's): init before ar_container_run (binds
 * the --publish sockets on the host), on_spawn once the container
 * process exists (the sockets in its netns, the proxy started), release
 * after the run (prints the summary of refusals: egress_diag.h).
 * fn/fn_data: an audit log or learn mode also sees every decision. */
struct sb_egress {
	const struct ar_egress_policy *policy;
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
	const struct sb_secrets *secrets; /* or NULL */
	/* the caller's proxy: --upstream-proxy, the profile's
	 * "upstream_proxy", else HTTPS_PROXY/HTTP_PROXY/NO_PROXY */
	struct ar_upstreams ups;
	/* --net ask: who answers (the control plane), or NULL */
	ar_egress_ask_fn ask_fn;
	void *ask_data;
	ar_egress_grant_fn grant_fn; /* sandbox allow --net */
	void *grant_data;
};
int sb_egress_init(struct sb_egress *e, const struct sb_plan *p,
		   struct ar_error *err);
int sb_egress_on_spawn(struct sb_egress *e, pid_t pid, struct ar_error *err);
void sb_egress_release(struct sb_egress *e);

/* --secret and the profile's "secret" (egress_tls.h): the secrets whose
 * NAME is set, their placeholders, the sandbox's CA in a private
 * directory made in `parent` (/tmp, or the --print-bundle directory), and the variables for the
 * environment (struct sb_secrets, sandbox_types.h). Nothing without any;
 * an error for --secret without --net allow. */
int sb_secrets_prepare(struct sb_secrets *s, const struct ar_sandbox_opts *o,
		       enum ar_sandbox_net net, const char *parent,
		       struct ar_error *err);
void sb_secrets_release(struct sb_secrets *s);

#endif
