/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The sandbox's DNS (transparent egress): queries of the sandbox's
 * resolver (127.0.0.1:53 inside, the default of an empty resolv.conf)
 * are answered by agentrun from the policy, never forwarded. An allowed
 * name gets an address of a private pool (198.18.0.0/15, RFC 2544) that
 * stands for it: a connection to that address is captured and decided by
 * the name (egress_proxy.c). Any other name: NXDOMAIN. Pure functions.
 */
#ifndef AGENTRUN_EGRESS_DNS_H
#define AGENTRUN_EGRESS_DNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AR_DNS_TYPE_A 1
#define AR_DNS_TYPE_AAAA 28
#define AR_DNS_NOERROR 0
#define AR_DNS_FORMERR 1
#define AR_DNS_SERVFAIL 2
#define AR_DNS_NXDOMAIN 3
#define AR_DNS_NOTIMP 4
#define AR_DNS_REFUSED 5

/* The fake pool: 198.18.0.0/15; index i (0 .. AR_DNS_POOL_SIZE-1) is
 * 198.18.0.0 + 1 + i. */
#define AR_DNS_POOL_SIZE 65536
void ar_dns_pool_addr(uint32_t i, uint8_t a[4]);
/* The index of a pool address, or -1. */
long ar_dns_pool_index(const uint8_t a[4]);

/* A standard query with one question: its name (lowercase, without the
 * trailing dot; at most 253 characters, into `name` of 256 bytes), type
 * and where the question ends. */
bool ar_dns_parse_query(const uint8_t *q, size_t len, char *name,
			uint16_t *qtype, size_t *qend);
/* The reply to q (its header and question, qend bytes) with `rcode`, and
 * one A record when a4 is not NULL. Its length, 0 when out is too small. */
size_t ar_dns_reply(const uint8_t *q, size_t qend, int rcode, const uint8_t *a4,
		    uint8_t *out, size_t size);

#endif
