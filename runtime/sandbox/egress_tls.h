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
 * next one), so only request heads are ever parsed.
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
};

struct ar_egress_tls;

/* A CA (EC P-256, valid two days) and a leaf key; writes DIR/ca.pem (the
 * CA's certificate) and DIR/bundle.pem (the system's bundle, then it). */
int ar_egress_tls_new(const char *dir, struct ar_egress_tls **out,
		      struct ar_error *err);
void ar_egress_tls_free(struct ar_egress_tls *t);

/* Is any secret meant for HOST:PORT? */
bool ar_egress_secrets_for(const struct ar_egress_secret *s, size_t n,
			   const char *host, unsigned port);

/* Replace, in the head of length *len (a request head, "\r\n\r\n"
 * ended, in buf of `size` bytes), each secret's placeholder with its
 * value in header lines, for the secrets meant for host:port, and make
 * the request the connection's last ("Connection: close"). Returns
 * false when the result does not fit. */
bool ar_egress_secrets_apply(const struct ar_egress_secret *s, size_t n,
			     const char *host, unsigned port, char *buf,
			     size_t *len, size_t size);

/* Intercept one connection: c the sandbox's (it starts TLS: after a
 * CONNECT's 200, or at once when captured), up connected to host:port.
 * Returns when either side is done; closes nothing. A failure is
 * described in reason (may be empty). */
void ar_egress_tls_relay(struct ar_egress_tls *t, int c, int up,
			 const char *host, unsigned port,
			 const struct ar_egress_secret *s, size_t n,
			 char *reason, size_t size);

#endif
