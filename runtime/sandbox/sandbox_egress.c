/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --net allow=PATTERN,...` (or "net": {"allow": [...]}
 * in the profile): the sandbox gets its own network namespace with
 * loopback only, and agentrun, which waits for the sandbox anyway, serves
 * the egress proxy (egress_proxy.c) on 127.0.0.1:AR_EGRESS_PORT inside
 * it. The agent finds it through HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and
 * lowercase); /etc/resolv.conf is empty: names are resolved by the proxy.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "egress_diag.h"
#include "egress_proxy.h"
#include "log.h"
#include "profile.h"
#include "sandbox_internal.h"
#include "utils.h"

enum ar_sandbox_net sb_net_mode(const struct ar_sandbox_opts *o)
{
	const struct oci_profile *pf = o->profile;

	if (o->net != AR_SANDBOX_NET_DEFAULT)
		return o->net;
	if (pf && pf->net_allow.n > 0)
		return AR_SANDBOX_NET_ALLOW;
	if (pf && pf->net && strcmp(pf->net, "host") == 0)
		return AR_SANDBOX_NET_HOST;
	return AR_SANDBOX_NET_NONE;
}

int sb_egress_policy(const struct ar_sandbox_opts *o,
		     struct ar_egress_policy *p, struct ar_error *err)
{
	const struct oci_profile *pf = o->profile;

	memset(p, 0, sizeof(*p));
	/* the profile's patterns, then the command line's: a union */
	for (size_t i = 0; pf && i < pf->net_allow.n; i++) {
		if (ar_egress_policy_add(p, pf->net_allow.v[i], err) < 0) {
			ar_egress_policy_release(p);
			return ar_error_wrap(err, "%s: net.allow[%zu]",
					     pf->filename, i);
		}
	}
	for (size_t i = 0; i < o->net_allow.n; i++) {
		if (ar_egress_policy_add(p, o->net_allow.v[i], err) < 0) {
			ar_egress_policy_release(p);
			return -1;
		}
	}
	return 0;
}

void sb_egress_mounts(struct sb_mounts *m)
{
	/* no resolver inside: names are the proxy's to resolve */
	for (size_t i = 0; i < m->n; i++) {
		if (strcmp(m->v[i].destination, "/etc/resolv.conf") != 0)
			continue;
		memmove(&m->v[i], &m->v[i + 1], (m->n - i - 1) * sizeof(*m->v));
		m->n--;
		sb_mount_add(m, "/etc/resolv.conf", "bind", "/dev/null",
			     SB_OPTS("bind", "ro", "nosuid", "noexec"));
		return;
	}
}

#define SB_STR_(x) #x
#define SB_STR(x) SB_STR_(x)

const char *const sb_egress_env[] = {
	"HTTP_PROXY=http://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"HTTPS_PROXY=http://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"ALL_PROXY=socks5h://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"NO_PROXY=localhost,127.0.0.1,::1",
	"http_proxy=http://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"https_proxy=http://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"all_proxy=socks5h://127.0.0.1:" SB_STR(AR_EGRESS_PORT),
	"no_proxy=localhost,127.0.0.1,::1",
	NULL,
};

int sb_egress_init(struct sb_egress *e, const struct ar_sandbox_opts *o,
		   struct ar_error *err)
{
	memset(e, 0, sizeof(*e));
	e->verbose = o->verbose;
	e->audit_path = o->audit;
	if (sb_egress_policy(o, &e->policy, err) < 0)
		return -1;
	if (ar_egress_policy_load_self(&e->policy, err) < 0) {
		ar_egress_policy_release(&e->policy);
		return -1;
	}
	return 0;
}

int sb_egress_on_spawn(pid_t pid, void *arg, struct ar_error *err)
{
	struct sb_egress *e = arg;
	int fd;

	if (ar_egress_listen_in(pid, AR_EGRESS_PORT, &fd, err) < 0)
		return -1;
	e->diag = ar_egress_diag_new(e->verbose, e->audit_path, e->fn,
				     e->fn_data);
	return ar_egress_proxy_start(fd, &e->policy, ar_egress_diag_event,
				     e->diag, &e->proxy, err);
}

void sb_egress_release(struct sb_egress *e)
{
	ar_egress_proxy_stop(e->proxy);
	e->proxy = NULL;
	/* the proxy is stopped: no decision comes any more */
	ar_egress_diag_summary(e->diag);
	ar_egress_diag_free(e->diag);
	e->diag = NULL;
	ar_egress_policy_release(&e->policy);
}
