/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Credential injection (`--secret NAME=HOST-PATTERN[,...]`): the sandbox's
 * NAME holds a placeholder; the egress proxy, for HTTPS connections to
 * the listed hosts only, terminates TLS with a certificate of a
 * per-sandbox CA (made at start, its key never inside), opens its own
 * verified TLS connection upstream and replaces the placeholder with the
 * real value in the request's header lines. Every other connection is
 * relayed untouched. OpenSSL (libssl) does all the cryptography.
 *
 * One request per intercepted connection: the request is sent upstream
 * with "Connection: close" (the client opens a new connection for the
 * next one), so only request heads are ever parsed. Anything the client
 * sends after that head (a pipelined or keep-alive request) is relayed
 * as it is: the value is never in it.
 *
 * The value goes only into a request for the host the decision was made
 * for (the CONNECT target, the captured name): its Host header and an
 * absolute-form target must name exactly that host and port
 * (ar_egress_request_verdict). A shared front (a CDN) routes by Host, so
 * a request for another host is forwarded with the placeholder; two
 * Host headers are refused (400).
 */
#ifndef AGENTRUN_EGRESS_TLS_H
#define AGENTRUN_EGRESS_TLS_H

#include <stdbool.h>
#include <stddef.h>

#include "egress_policy.h"
#include "error.h"

struct ar_egress_secret {
	char *name; /* the variable */
	char *value; /* the real value (never inside the sandbox) */
	char *placeholder; /* what the sandbox's NAME holds */
	struct ar_egress_policy hosts; /* where it may go */
	/* NAME=http://LOOPBACK:PORT: a plain-HTTP model gateway on the
	 * host's loopback (a host loopback service, egress_proxy.h): its
	 * requests' heads get the value, no TLS */
	bool plain_http;
	char *gateway; /* plain_http: its "HOST:PORT", an allow pattern */
};

/* The first secret whose placeholder is in buf[0..len), or NULL. */
const struct ar_egress_secret *
ar_egress_placeholder_in(const struct ar_egress_secret *s, size_t n,
			 const char *buf, size_t len);

struct ar_egress_tls;

/* A CA (EC P-256, valid two days) and a leaf key; writes DIR/ca.pem (the
 * CA's certificate) and DIR/bundle.pem (the system's bundle, then it). */
int ar_egress_tls_new(const char *dir, struct ar_egress_tls **out,
		      struct ar_error *err);
void ar_egress_tls_free(struct ar_egress_tls *t);

/* Is any secret meant for HOST:PORT? */
bool ar_egress_secrets_for(const struct ar_egress_secret *s, size_t n,
			   const char *host, unsigned port);

enum ar_secret_verdict {
	AR_SECRET_INJECT, /* the request is for host:port */
	AR_SECRET_WITHHOLD, /* forwarded with the placeholders */
	AR_SECRET_REFUSE, /* not forwarded (400) */
};

/* May the request head (hlen bytes, "\r\n\r\n" ended) on a connection
 * to host:port (normalised, as decided) carry its secrets? INJECT when
 * it is an HTTP/1.0 or 1.1 request whose target is a path, "*" or an
 * http(s) URL naming host:port, with exactly one Host header naming
 * host:port (omitted only with such a URL): case-insensitive, the port
 * omitted is 443 (80 for http://), no user info, no trailing dot, no
 * folded or malformed header line. REFUSE for more than one Host
 * header; WITHHOLD otherwise. `why` (when not INJECT) says why;
 * `asked` gets what the request named (its Host, or the target's
 * authority), quoted with ar_quote_to (agent-controlled). */
enum ar_secret_verdict ar_egress_request_verdict(const char *head, size_t hlen,
						 const char *host,
						 unsigned port, char *why,
						 size_t wsize, char *asked,
						 size_t asize);

/* Replace, in the head of length *len (a request head, "\r\n\r\n"
 * ended, in buf of `size` bytes), each secret's placeholder with its
 * value in header lines, for the secrets meant for host:port (none when
 * !inject), and make the request the connection's last ("Connection:
 * close"). Returns false when the result does not fit. */
bool ar_egress_secrets_apply(const struct ar_egress_secret *s, size_t n,
			     const char *host, unsigned port, bool inject,
			     char *buf, size_t *len, size_t size);

/* What became of one intercepted connection. */
struct ar_egress_tls_outcome {
	char reason[1024]; /* the connection failed: why, else "" */
	enum ar_secret_verdict verdict; /* of its request */
	char why[128]; /* verdict not INJECT: why */
	char asked[256]; /* what the request named, quoted (or "") */
	/* called (when set) as soon as the verdict is known, before
	 * anything is sent upstream */
	void (*on_verdict)(const struct ar_egress_tls_outcome *res, void *data);
	void *data;
};

/* Intercept one connection: c the sandbox's (it starts TLS: after a
 * CONNECT's 200, or at once when captured), up connected to host:port.
 * Returns when either side is done; closes nothing. `res` says what
 * became of it (a failure: reason, may be empty; the request's
 * verdict); the caller sets on_verdict and data. */
void ar_egress_tls_relay(struct ar_egress_tls *t, int c, int up,
			 const char *host, unsigned port,
			 const struct ar_egress_secret *s, size_t n,
			 struct ar_egress_tls_outcome *res);

#endif
