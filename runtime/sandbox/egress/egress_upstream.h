/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The caller's own proxy (a corporate proxy) for the egress proxy's
 * dials: --upstream-proxy URL (profile "upstream_proxy"), else the
 * caller's HTTPS_PROXY / HTTP_PROXY (and lower case), with NO_PROXY.
 *
 * The egress proxy decides first (allowlist, address classes); only an
 * allowed connection is then made through the upstream: a tunnel
 * (CONNECT HOST:PORT) for CONNECT, SOCKS5 and captured TCP, the
 * absolute-form request for plain HTTP. Credentials in the URL
 * (user:pass@) become the Proxy-Authorization sent to the upstream
 * only; they are in no log line or reason (`shown` is HOST:PORT).
 */
#ifndef AGENTRUN_EGRESS_UPSTREAM_H
#define AGENTRUN_EGRESS_UPSTREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

#define AR_UPSTREAM_NO_PROXY_MAX 64

struct ar_no_proxy {
	bool all; /* "*" */
	size_t n;
	struct {
		char name[256]; /* a host or domain suffix, lower case */
		bool cidr; /* an address with a prefix length */
		int family;
		uint8_t addr[16];
		int prefix;
	} v[AR_UPSTREAM_NO_PROXY_MAX];
};

struct ar_upstream {
	char host[256]; /* an IPv6 literal without brackets */
	uint16_t port;
	char shown[300]; /* HOST:PORT, for messages */
	char *auth; /* "Basic BASE64", or NULL */
};

/* The upstreams of a run: `tunnel` for CONNECT/SOCKS5/captured TCP,
 * `http` for plain HTTP (either may be unset: host[0] == '\0'). */
struct ar_upstreams {
	struct ar_upstream tunnel, http;
	struct ar_no_proxy no_proxy;
	const char *source; /* where they came from, for messages */
};

/* "http://[USER[:PASS]@]HOST[:PORT][/]" or "HOST[:PORT]" (port 1080
 * by default, as curl; percent-escapes decoded in USER and PASS).
 * Other schemes are refused with a reason naming `what` (the option or
 * variable), never the credentials. */
int ar_upstream_parse(const char *url, const char *what, struct ar_upstream *u,
		      struct ar_error *err);
void ar_upstream_release(struct ar_upstream *u);

/* NO_PROXY as curl reads it: comma- or blank-separated; "*" alone is
 * every host; NAME matches NAME and its subdomains (a leading "." is
 * the same); an IP address, or ADDR/PREFIX, matches a host given as
 * an address literal in it. Entries with a :PORT have it ignored. */
void ar_no_proxy_parse(const char *list, struct ar_no_proxy *np);
/* HOST (normalised, an IPv6 literal without brackets) goes direct. */
bool ar_no_proxy_match(const struct ar_no_proxy *np, const char *host);

/* From `url` (the option or profile; NULL: the environment): both
 * upstreams and NO_PROXY. 0 also when there is none. */
int ar_upstreams_init(struct ar_upstreams *ups, const char *url,
		      const char *what, struct ar_error *err);
void ar_upstreams_release(struct ar_upstreams *ups);

/* A TCP connection to the upstream (host resolved here, every address
 * tried), bounded by timeout_ms per address; -1 with `reason` filled
 * ("agentrun: cannot reach the upstream proxy HOST:PORT: ..."). */
int ar_upstream_connect(const struct ar_upstream *u, int timeout_ms,
			char *reason, size_t size);
/* A tunnel to HOST:PORT through the upstream: CONNECT sent, the answer
 * read up to its empty line (nothing after it: the tunnel is clean).
 * -1 with `reason` filled when the upstream cannot be reached or does
 * not answer 2xx (its status line, quoted). */
int ar_upstream_tunnel(const struct ar_upstream *u, const char *host,
		       uint16_t port, int timeout_ms, char *reason,
		       size_t size);

/* Standard base64 of n bytes into out (size >= 4*((n+2)/3)+1). */
void ar_base64(const unsigned char *in, size_t n, char *out);

#endif
