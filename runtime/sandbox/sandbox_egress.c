/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --net allow=PATTERN,...` (or "net": {"allow": [...]}
 * in the profile): the sandbox gets its own network namespace with
 * loopback only, and agentrun, which waits for the sandbox anyway, serves
 * inside it (sockets made there, accepted outside): the egress proxy
 * (egress_proxy.c) on 127.0.0.1:AR_EGRESS_PORT, found through
 * HTTP_PROXY, HTTPS_PROXY, ALL_PROXY (and lowercase); transparent egress
 * (every other TCP connection captured by an nftables rule to
 * 127.0.0.1:AR_EGRESS_CAPTURE_PORT, egress_capture.c) with the sandbox's
 * DNS on 127.0.0.1:53 answering from the policy (egress_dns.h;
 * /etc/resolv.conf is empty, whose default is that address); and the
 * host loopback services of exact address rules.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include <string.h>
#include <strings.h>

#include "egress/egress_diag.h"
#include "egress/egress_gateway.h"
#include "egress/egress_tls.h"
#include "egress/egress_proxy.h"
#include "log.h"
#include "profile.h"
#include "sandbox_egress.h"
#include "utils.h"

void sb_egress_mounts(struct sb_mounts *m)
{
	/* no resolver of the host's inside: resolvers fall back to
	 * 127.0.0.1:53, the sandbox's DNS (egress_dns.h) */
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

/* "[ADDR:]HOSTPORT:PORT": ADDR an IPv4 address or [IPv6] (default
 * 127.0.0.1). */
static int publish_parse(const char *spec, struct ar_egress_forward *f,
			 struct ar_error *err)
{
	const char *last = strrchr(spec, ':'), *hp;
	char addr[INET6_ADDRSTRLEN + 2] = "127.0.0.1", *end;
	unsigned long hport, port;

	memset(f, 0, sizeof(*f));
	f->listen_fd = -1;
	if (!last)
		goto bad;
	port = strtoul(last + 1, &end, 10);
	if (last[1] < '0' || last[1] > '9' || *end || port == 0 || port > 65535)
		goto bad;
	/* HOSTPORT: after the previous ':' (or the start) */
	hp = last;
	while (hp > spec && hp[-1] != ':')
		hp--;
	hport = strtoul(hp, &end, 10);
	if (*hp < '0' || *hp > '9' || end != last || hport == 0 ||
	    hport > 65535)
		goto bad;
	if (hp > spec) {
		size_t al = (size_t)(hp - 1 - spec);

		if (al >= sizeof(addr) || al == 0)
			goto bad;
		if (spec[0] == '[' && spec[al - 1] == ']')
			snprintf(addr, sizeof(addr), "%.*s", (int)al - 2,
				 spec + 1);
		else
			snprintf(addr, sizeof(addr), "%.*s", (int)al, spec);
	}
	if (inet_pton(AF_INET, addr, f->alt.addr) == 1) {
		f->alt.family = AF_INET;
	} else if (inet_pton(AF_INET6, addr, f->alt.addr) == 1) {
		f->alt.family = AF_INET6;
	} else {
		goto bad;
	}
	/* alt holds the host side until the socket is bound */
	f->alt.port = (uint16_t)hport;
	f->to.family = AF_INET;
	f->to.addr[0] = 127;
	f->to.addr[3] = 1;
	f->to.port = (uint16_t)port;
	return 0;
bad:
	return ar_error_set_plain(
		err, EINVAL,
		"--publish `%s`: expected [ADDR:]HOSTPORT:PORT (ADDR an IP address, [IPv6] in brackets; ports 1-65535)",
		spec);
}

/* Bind the host side of one --publish. */
static int publish_bind(struct ar_egress_forward *f, const char *spec,
			struct ar_error *err)
{
	struct sockaddr_storage ss;
	socklen_t len = ar_egress_sockaddr(f->alt.family, f->alt.addr,
					   f->alt.port, &ss);
	int one = 1, fd = socket(f->alt.family, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 64) < 0) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		return ar_error_set(err, e,
				    "--publish `%s`: listen on the host", spec);
	}
	f->listen_fd = fd;
	memset(&f->alt, 0, sizeof(f->alt));
	return 0;
}

static void publish_release(struct sb_egress *e)
{
	for (size_t i = 0; i < e->n_publish; i++)
		if (e->publish[i].listen_fd >= 0)
			close(e->publish[i].listen_fd);
	free(e->publish);
	e->publish = NULL;
	e->n_publish = 0;
}

static int publish_init(struct sb_egress *e, const struct ar_sandbox_opts *o,
			struct ar_error *err)
{
	const struct oci_profile *pf = o->profile;
	size_t np = pf ? pf->publish.n : 0;

	e->publish = ar_xcalloc(np + o->publish.n + 1, sizeof(*e->publish));
	for (size_t i = 0; i < np + o->publish.n; i++) {
		const char *spec = i < np ? pf->publish.v[i] :
					    o->publish.v[i - np];
		struct ar_egress_forward *f = &e->publish[e->n_publish];
		int r = publish_parse(spec, f, err);

		if (r == 0)
			r = publish_bind(f, spec, err);
		if (r == 0) {
			e->n_publish++;
			continue;
		}
		if (i < np && f->to.port) {
			/* a profile's port that is taken (another sandbox
			 * of the same agent): without it, with a warning */
			ar_warn("%s: publish[%zu]: %s; going on without it",
				pf->filename, i, err->msg);
			ar_error_clear(err);
			continue;
		}
		publish_release(e);
		if (i < np)
			return ar_error_wrap(err, "%s: publish[%zu]",
					     pf->filename, i);
		return -1;
	}
	return 0;
}

/* The upstream: the option, the profile's, else the caller's
 * environment (a variable the egress proxy cannot use is a warning: it
 * then dials directly, as before). */
static int upstream_init(struct sb_egress *e, const struct ar_sandbox_opts *o,
			 struct ar_error *err)
{
	const struct oci_profile *pf = o->profile;

	if (o->upstream_proxy)
		return ar_upstreams_init(&e->ups, o->upstream_proxy,
					 "--upstream-proxy", err);
	if (pf && pf->upstream_proxy) {
		_cleanup_free_ char *what =
			ar_xasprintf("%s: upstream_proxy", pf->filename);

		return ar_upstreams_init(&e->ups, pf->upstream_proxy, what,
					 err);
	}
	if (ar_upstreams_init(&e->ups, NULL, NULL, err) < 0) {
		ar_warn("sandbox: %s; the egress proxy connects directly",
			err->msg);
		ar_error_clear(err);
		memset(&e->ups, 0, sizeof(e->ups));
	}
	return 0;
}

static size_t loopback_forwards(const struct ar_egress_policy *p,
				struct ar_egress_forward *fw, size_t max);

/* With --net allow, agentrun listens on the sandbox's loopback: the
 * proxy, the capture, and a relay per host loopback service of the
 * policy. A --publish to one of those ports would reach agentrun's
 * listener (the command could never bind it; under --vm QEMU cannot
 * forward it): refused, with the reason. */
static int publish_taken(const struct sb_egress *e, struct ar_error *err)
{
	struct ar_egress_forward fw[AR_EGRESS_MAX_FORWARDS];
	size_t n;

	if (!e->allow || !e->n_publish)
		return 0;
	n = loopback_forwards(e->policy, fw, AR_EGRESS_MAX_FORWARDS);
	for (size_t i = 0; i < e->n_publish; i++) {
		unsigned port = e->publish[i].to.port;
		const char *what = NULL;

		if (port == AR_EGRESS_PORT)
			what = "agentrun's egress proxy";
		else if (port == AR_EGRESS_CAPTURE_PORT)
			what = "agentrun's transparent egress capture";
		for (size_t k = 0; k < n && !what; k++)
			if (fw[k].to.port == port)
				what = "agentrun's relay to the host service of --net allow";
		if (what)
			return ar_error_set_plain(
				err, EINVAL,
				"sandbox: --publish: port %u on the sandbox's loopback is %s (--net allow): the command cannot listen there; publish another port",
				port, what);
	}
	return 0;
}

int sb_egress_init(struct sb_egress *e, const struct sb_plan *p,
		   struct ar_error *err)
{
	memset(e, 0, sizeof(*e));
	e->verbose = p->o.verbose;
	e->audit_path = p->o.audit;
	e->allow = p->net == AR_SANDBOX_NET_ALLOW;
	e->policy = &p->policy;
	e->secrets = p->secrets.n ? &p->secrets : NULL;
	if (p->net == AR_SANDBOX_NET_HOST && p->publish)
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --publish forwards into the sandbox's own network; with --net host its ports are the host's already");
	if (upstream_init(e, &p->o, err) < 0)
		return -1;
	if (publish_init(e, &p->o, err) < 0 || publish_taken(e, err) < 0) {
		publish_release(e);
		ar_upstreams_release(&e->ups);
		return -1;
	}
	return 0;
}

/* The host loopback services of the policy: every loopback address
 * rule with a port, once; `alt` the other family's rule of the same port
 * (localhost:PORT gives both). */
static size_t loopback_forwards(const struct ar_egress_policy *p,
				struct ar_egress_forward *fw, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ar_egress_rule *r = &p->rules[i];
		bool dup = false;

		uint8_t a[16] = { 0 };

		/* rule addresses are 16 bytes, IPv4 as ::ffff:a.b.c.d */
		if (!r->family || !r->port ||
		    ar_egress_addr_class(AF_INET6, r->addr) != AR_ADDR_LOOPBACK)
			continue;
		memcpy(a, r->family == AF_INET ? r->addr + 12 : r->addr,
		       r->family == AF_INET ? 4 : 16);
		for (size_t k = 0; k < n && !dup; k++)
			dup = fw[k].to.family == r->family &&
			      fw[k].to.port == r->port &&
			      memcmp(fw[k].to.addr, a, 16) == 0;
		if (dup || n == max)
			continue;
		memset(&fw[n], 0, sizeof(fw[n]));
		fw[n].listen_fd = -1;
		fw[n].to.family = r->family;
		memcpy(fw[n].to.addr, a, 16);
		fw[n].to.port = r->port;
		/* ::1 may be missing inside (IPv6 off): then 127.0.0.1 does */
		fw[n].to.optional = r->family == AF_INET6;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n && !fw[i].alt.family; k++)
			if (fw[k].to.port == fw[i].to.port &&
			    fw[k].to.family != fw[i].to.family)
				fw[i].alt = fw[k].to;
	return n;
}

/* The sockets inside: [0] the proxy, [1] captured TCP, [2] and [3] the
 * DNS (UDP 127.0.0.1:53, [::1]:53), then the loopback forwards. */
#define SB_FIXED 4

int sb_egress_on_spawn(struct sb_egress *e, pid_t pid, struct ar_error *err)
{
	struct ar_egress_forward fw[AR_EGRESS_MAX_FORWARDS];
	struct ar_egress_addr addrs[SB_FIXED + AR_EGRESS_MAX_FORWARDS] = {
		{ .family = AF_INET,
		  .addr = { 127, 0, 0, 1 },
		  .port = AR_EGRESS_PORT },
		{ .family = AF_INET,
		  .addr = { 127, 0, 0, 1 },
		  .port = AR_EGRESS_CAPTURE_PORT },
		{ .family = AF_INET,
		  .addr = { 127, 0, 0, 1 },
		  .port = 53,
		  .udp = true },
		{ .family = AF_INET6,
		  .addr = { [15] = 1 },
		  .port = 53,
		  .udp = true,
		  .optional = true },
	};
	int fds[SB_FIXED + AR_EGRESS_MAX_FORWARDS];
	size_t n = loopback_forwards(e->policy, fw, AR_EGRESS_MAX_FORWARDS);
	size_t nfixed = SB_FIXED;
	int r = 0;

	for (size_t i = 0; i < n; i++) {
		if (fw[i].to.port == AR_EGRESS_PORT ||
		    fw[i].to.port == AR_EGRESS_CAPTURE_PORT)
			return ar_error_set_plain(
				err, EINVAL,
				"sandbox: --net allow: ports %d and %d on the sandbox's loopback are the egress proxy's; the host service on port %u cannot be shown there",
				AR_EGRESS_PORT, AR_EGRESS_CAPTURE_PORT,
				(unsigned)fw[i].to.port);
	}
	for (size_t i = 0; i < SB_FIXED; i++)
		fds[i] = -1;
	if (!e->allow) {
		n = 0; /* --publish alone */
	} else if (ar_egress_listen_in(pid, addrs, SB_FIXED,
				       AR_EGRESS_CAPTURE_PORT, fds, err) < 0) {
		/* no nftables in this kernel: the proxy variables only */
		ar_warn("sandbox: transparent egress unavailable (%s); only programs that use HTTP_PROXY/ALL_PROXY reach the allowlist",
			err->msg);
		ar_error_clear(err);
		nfixed = 1;
		fds[1] = fds[2] = fds[3] = -1;
		if (ar_egress_listen_in(pid, addrs, 1, 0, fds, err) < 0)
			return -1;
	}
	for (size_t i = 0; i < n; i++)
		addrs[i] = fw[i].to;
	if (n &&
	    ar_egress_listen_in(pid, addrs, n, 0, fds + SB_FIXED, err) < 0) {
		for (size_t i = 0; i < nfixed; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return -1;
	}
	e->diag = ar_egress_diag_new(e->verbose, e->audit_path, e->fn,
				     e->fn_data);
	if (ar_egress_proxy_start(fds[0], e->policy, ar_egress_diag_event,
				  e->diag, &e->proxy, err) < 0) {
		for (size_t i = 1; i < SB_FIXED + n; i++)
			if (fds[i] >= 0)
				close(fds[i]);
		return -1;
	}
	if (e->ups.tunnel.host[0] || e->ups.http.host[0])
		ar_egress_proxy_set_upstream(e->proxy, &e->ups);
	if (e->ask_fn && e->policy->ask)
		ar_egress_proxy_set_ask(e->proxy, e->ask_fn, e->ask_data);
	if (e->grant_fn)
		ar_egress_proxy_set_grant(e->proxy, e->grant_fn, e->grant_data);
	if (fds[1] >= 0)
		ar_egress_proxy_add_transparent(e->proxy, fds[1], fds + 2);
	if (e->secrets && e->secrets->n)
		ar_egress_proxy_set_secrets(e->proxy, e->secrets->tls,
					    e->secrets->v, e->secrets->n);
	if (e->n_publish) {
		if (ar_egress_sockmaker_start(pid, &e->maker, err) < 0)
			return -1;
		for (size_t i = 0; i < e->n_publish && r == 0; i++) {
			e->publish[i].maker = e->maker;
			r = ar_egress_proxy_add_forward(e->proxy,
							&e->publish[i], err);
			e->publish[i].listen_fd = -1; /* the proxy's now */
		}
	}
	for (size_t i = 0; i < n; i++) {
		int fd = fds[SB_FIXED + i];

		if (fd < 0)
			continue;
		fw[i].listen_fd = fd;
		if (r == 0)
			r = ar_egress_proxy_add_forward(e->proxy, &fw[i], err);
		else
			close(fd);
	}
	return r;
}

void sb_egress_release(struct sb_egress *e)
{
	ar_egress_proxy_stop(e->proxy);
	e->proxy = NULL;
	ar_egress_sockmaker_stop(e->maker);
	e->maker = NULL;
	publish_release(e);
	ar_upstreams_release(&e->ups);
	/* the proxy is stopped: no decision comes any more */
	ar_egress_diag_summary(e->diag);
	ar_egress_diag_free(e->diag);
	e->diag = NULL;
}

/* ---- --secret ---- */

/* NAME=http://HOST:PORT[/]: a plain-HTTP model gateway, only on the
 * host's loopback (127.0.0.0/8, [::1], localhost: the name stands for
 * the three addresses), with its port. */
static int gateway_hosts(struct ar_egress_secret *x, const char *spec,
			 const char *auth, struct ar_error *err)
{
	char host[256], pat[300];
	size_t len = strcspn(auth, "/");
	uint16_t port;

	if (auth[len] == '/' && auth[len + 1] != '\0')
		len = 0; /* a path: not a gateway's address */
	if (len == 0 || memchr(auth, '@', len) ||
	    !ar_egress_split_hostport(auth, len, host, sizeof(host), 0,
				      &port) ||
	    port == 0 || !ar_egress_gateway_loopback(host))
		return ar_error_set_plain(
			err, EINVAL,
			"--secret `%s`: plain HTTP (http://) goes only to a gateway on the host's loopback, with its port (http://127.0.0.1:4000, http://localhost:4000, http://[::1]:4000); any other host gets the value over HTTPS only: NAME=HOST",
			spec);
	x->plain_http = true;
	x->gateway = ar_xasprintf(strchr(host, ':') ? "[%s]:%u" : "%s:%u", host,
				  (unsigned)port);
	if (strcasecmp(host, "localhost") == 0) {
		static const char *const names[] = { "localhost", "127.0.0.1",
						     "[::1]" };

		for (size_t i = 0; i < AR_ARRAY_SIZE(names); i++) {
			snprintf(pat, sizeof(pat), "%s:%u", names[i],
				 (unsigned)port);
			if (ar_egress_policy_add(&x->hosts, pat, err) < 0)
				return ar_error_wrap(err, "--secret `%s`",
						     spec);
		}
		return 0;
	}
	snprintf(pat, sizeof(pat), strchr(host, ':') ? "[%s]:%u" : "%s:%u",
		 host, (unsigned)port);
	if (ar_egress_policy_add(&x->hosts, pat, err) < 0)
		return ar_error_wrap(err, "--secret `%s`", spec);
	return 0;
}

/* One NAME=HOST-PATTERN[,...]: 1 added, 0 skipped (a profile's NAME
 * that is not set), -1 error. */
static int secret_add(struct sb_secrets *s, const char *spec, bool optional,
		      struct ar_error *err)
{
	const char *eq = strchr(spec, '='), *val;
	struct ar_egress_secret *x = &s->v[s->n];
	unsigned char rnd[16];
	char hex[33];

	if (!eq || eq == spec || !eq[1])
		return ar_error_set_plain(
			err, EINVAL,
			"--secret `%s`: expected NAME=HOST-PATTERN[,...]",
			spec);
	memset(x, 0, sizeof(*x));
	x->name = ar_xasprintf("%.*s", (int)(eq - spec), spec);
	s->n++;
	for (const char *c = x->name; *c; c++)
		if (!(*c == '_' || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= 'a' && *c <= 'z') ||
		      (c != x->name && *c >= '0' && *c <= '9')))
			return ar_error_set_plain(
				err, EINVAL,
				"--secret `%s`: `%s` is not a variable name",
				spec, x->name);
	if (strncasecmp(eq + 1, "http://", 7) == 0) {
		if (gateway_hosts(x, spec, eq + 8, err) < 0)
			return -1;
	} else if (ar_egress_policy_add(&x->hosts, eq + 1, err) < 0) {
		return ar_error_wrap(err, "--secret `%s`", spec);
	}
	val = getenv(x->name);
	if ((!val || !*val) && optional) {
		s->n--;
		free(x->name);
		free(x->gateway);
		ar_egress_policy_release(&x->hosts);
		memset(x, 0, sizeof(*x));
		return 0;
	}
	if (!val || !*val)
		return ar_error_set_plain(
			err, EINVAL,
			"--secret `%s`: %s is not set in the environment", spec,
			x->name);
	if (strpbrk(val, "\r\n"))
		return ar_error_set_plain(
			err, EINVAL,
			"--secret `%s`: the value of %s has a line break", spec,
			x->name);
	x->value = ar_xstrdup(val);
	if (getrandom(rnd, sizeof(rnd), 0) != sizeof(rnd))
		return ar_error_set(err, errno, "--secret: getrandom");
	for (size_t k = 0; k < sizeof(rnd); k++)
		snprintf(hex + 2 * k, 3, "%02x", rnd[k]);
	x->placeholder = ar_xasprintf("agentrun-secret-%s", hex);
	return 1;
}

/* A profile's NAME=... that the command line's --secret NAME=... replaces
 * (a gateway for the profile's vendor host: one placeholder per NAME). */
static bool named_on_command_line(const struct ar_sandbox_opts *o,
				  const char *spec)
{
	size_t nl = strcspn(spec, "=");

	for (size_t i = 0; i < o->secrets.n; i++)
		if (strncmp(o->secrets.v[i], spec, nl) == 0 &&
		    o->secrets.v[i][nl] == '=')
			return true;
	return false;
}

int sb_secrets_prepare(struct sb_secrets *s, const struct ar_sandbox_opts *o,
		       enum ar_sandbox_net net, const char *parent,
		       struct ar_error *err)
{
	const struct oci_profile *pf = o->profile;
	static const char *const ca_vars[] = { "SSL_CERT_FILE",
					       "CURL_CA_BUNDLE",
					       "REQUESTS_CA_BUNDLE",
					       "GIT_SSL_CAINFO", NULL };
	_cleanup_free_ char *tmpl = NULL;
	size_t np = pf ? pf->secret.n : 0;

	memset(s, 0, sizeof(*s));
	if (o->secrets.n == 0 && np == 0)
		return 0;
	if (net != AR_SANDBOX_NET_ALLOW) {
		if (o->secrets.n == 0)
			return 0; /* the profile's: nothing to put them in */
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: --secret needs --net allow=... (the proxy puts the value in)");
	}
	s->v = ar_xcalloc(np + o->secrets.n + 1, sizeof(*s->v));
	for (size_t i = 0; i < np; i++)
		if (!named_on_command_line(o, pf->secret.v[i]) &&
		    secret_add(s, pf->secret.v[i], true, err) < 0)
			return ar_error_wrap(err, "%s: secret[%zu]",
					     pf->filename, i);
	for (size_t i = 0; i < o->secrets.n; i++)
		if (secret_add(s, o->secrets.v[i], false, err) < 0)
			return -1;
	if (s->n == 0)
		return 0;
	tmpl = ar_xasprintf("%s/agentrun-ca-XXXXXX", parent);
	if (!mkdtemp(tmpl))
		return ar_error_set(err, errno, "--secret: mkdtemp %s", tmpl);
	s->dir = ar_xstrdup(tmpl);
	if (chmod(s->dir, 0755) < 0 ||
	    ar_egress_tls_new(s->dir, &s->tls, err) < 0)
		return -1;
	/* the variables: placeholders, then where the CA is */
	s->env = ar_xcalloc(s->n + 8, sizeof(char *));
	for (size_t i = 0; i < s->n; i++)
		s->env[s->n_env++] = ar_xasprintf("%s=%s", s->v[i].name,
						  s->v[i].placeholder);
	for (const char *const *v = ca_vars; *v; v++)
		s->env[s->n_env++] =
			ar_xasprintf("%s=%s/bundle.pem", *v, s->dir);
	s->env[s->n_env++] =
		ar_xasprintf("NODE_EXTRA_CA_CERTS=%s/ca.pem", s->dir);
	return 0;
}

void sb_secrets_release(struct sb_secrets *s)
{
	for (size_t i = 0; i < s->n; i++) {
		struct ar_egress_secret *x = &s->v[i];

		free(x->name);
		if (x->value) {
			explicit_bzero(x->value, strlen(x->value));
			free(x->value);
		}
		free(x->placeholder);
		free(x->gateway);
		ar_egress_policy_release(&x->hosts);
	}
	free(s->v);
	ar_egress_tls_free(s->tls);
	if (s->dir) {
		_cleanup_free_ char *a = ar_xasprintf("%s/ca.pem", s->dir);
		_cleanup_free_ char *b = ar_xasprintf("%s/bundle.pem", s->dir);

		unlink(a);
		unlink(b);
		rmdir(s->dir);
		free(s->dir);
	}
	for (size_t i = 0; i < s->n_env; i++)
		free(s->env[i]);
	free(s->env);
	memset(s, 0, sizeof(*s));
}
