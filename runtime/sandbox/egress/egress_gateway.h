/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A model gateway on the host's loopback, in plain HTTP
 * (`--secret NAME=http://127.0.0.1:PORT`, egress_gateway.c): the
 * connection to that host loopback service gets its first request's head
 * read, checked as an intercepted HTTPS request is
 * (ar_egress_request_verdict: Host must name the gateway), the
 * placeholder replaced with the value, "Connection: close" added; the
 * rest is relayed as it is.
 */
#ifndef AGENTRUN_EGRESS_GATEWAY_H
#define AGENTRUN_EGRESS_GATEWAY_H

#include <stdbool.h>
#include <stddef.h>

#include "egress_tls.h"

/* Is host (normalised: a name or an address without brackets) one of
 * the host's loopback names: 127.0.0.0/8, ::1, localhost? */
bool ar_egress_gateway_loopback(const char *host);

/* Is a plain-HTTP secret meant for the loopback address host:port? */
bool ar_egress_gateway_for(const struct ar_egress_secret *s, size_t n,
			   const char *host, unsigned port);

/* The first request on c (the sandbox's) sent to up (the gateway's),
 * with the values of the secrets meant for host:port (or "localhost"
 * when the request names it and a secret lists it). 0: relay the rest;
 * -1: the connection is done (closed by the client, not HTTP, refused:
 * a 400 was sent). res: the verdict, why, what the request named. */
int ar_egress_gateway_request(int c, int up, const char *host, unsigned port,
			      const struct ar_egress_secret *s, size_t n,
			      struct ar_egress_tls_outcome *res);

#endif
