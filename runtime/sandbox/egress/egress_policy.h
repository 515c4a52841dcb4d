/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The egress allowlist of `agentrun sandbox --net allow=PATTERN,...`:
 * patterns, address classes and the two questions the proxy asks.
 *
 * Patterns (case-insensitive, one trailing dot ignored):
 *   example.com          that name, any port
 *   example.com:443      that name, port 443
 *   *.example.com        any name below example.com (not example.com)
 *   *                    any name or public IP address
 *   10.1.2.3[:port]      that IPv4 address
 *   [::1]:8080, ::1      that IPv6 address (brackets needed with a port)
 *   localhost:8080       the name, and the addresses 127.0.0.1:8080 and
 *                        [::1]:8080
 *   ask                  not a pattern: what the others do not allow is
 *                        asked through the control plane (control/)
 * A loopback address with a port is also a host service shown inside
 * the sandbox at that address (sandbox_egress.c).
 *
 * A connection to HOST:PORT is made when
 *   1. HOST is allowed: a name pattern matches the name (a raw IP
 *      address needs an address pattern, or `*`), and
 *   2. the address it resolves to (by the proxy, never inside the
 *      sandbox) is public, or is named exactly by an address pattern
 *      (whose port, when given, matches). Loopback, RFC 1918, CGNAT,
 *      link-local (cloud metadata 169.254.169.254), ULA, multicast,
 *      broadcast, unspecified and reserved addresses, their IPv4-mapped,
 *      -compatible and NAT64 IPv6 forms, and the host's own interface
 *      addresses are never public.
 * This stops DNS rebinding and names that point at localhost.
 */
#ifndef AGENTRUN_EGRESS_POLICY_H
#define AGENTRUN_EGRESS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "error.h"

struct ar_egress_rule {
	char *text; /* as written, for messages */
	char *name; /* lowercased name or suffix (".example.com"); NULL for
		     * an address rule and for `*` */
	bool wildcard; /* name is a suffix */
	bool any; /* `*` */
	int family; /* AF_INET / AF_INET6 for an address rule, else 0 */
	uint8_t addr[16]; /* network order; IPv4 as ::ffff:a.b.c.d */
	uint16_t port; /* 0: any port */
};

struct ar_egress_policy {
	struct ar_egress_rule *rules;
	size_t n_rules;
	/* The host's own interface addresses (ar_egress_policy_load_self),
	 * each 16 bytes: IPv4 as ::ffff:a.b.c.d. */
	uint8_t (*self)[16];
	size_t n_self;
	/* --learn: every address class but the cloud metadata address
	 * passes step 2 (learn.h) */
	bool learn;
	/* the item `ask` (--net ask, --net allow=...,ask): a destination
	 * the rules do not allow waits for the user's answer (control/) */
	bool ask;
	/* --shadow (sandbox_shadow.h): `ask` answered by the shadow, which
	 * grants names only: its grant of an address literal is not the
	 * user's exact grant, the address classes still refuse */
	bool shadow;
};

/* Parse one pattern. Errors name it: "--net allow=`x:99999`: port ...". */
int ar_egress_rule_parse(const char *text, struct ar_egress_rule *r,
			 struct ar_error *err);
void ar_egress_rule_release(struct ar_egress_rule *r);

/* Add PATTERN[,PATTERN...] (empty items are an error). */
int ar_egress_policy_add(struct ar_egress_policy *p, const char *list,
			 struct ar_error *err);
/* Record the addresses of this host's interfaces (getifaddrs). */
int ar_egress_policy_load_self(struct ar_egress_policy *p,
			       struct ar_error *err);
/* Add one address to the self list (tests). */
void ar_egress_policy_add_self(struct ar_egress_policy *p, int family,
			       const void *addr);
void ar_egress_policy_release(struct ar_egress_policy *p);

/* ---- address classes ---- */

enum ar_addr_class {
	AR_ADDR_PUBLIC = 0,
	AR_ADDR_LOOPBACK,
	AR_ADDR_PRIVATE, /* RFC 1918, IPv6 site-local */
	AR_ADDR_CGNAT, /* 100.64.0.0/10 */
	AR_ADDR_METADATA, /* 169.254.169.254, fd00:ec2::254 */
	AR_ADDR_LINK_LOCAL, /* 169.254.0.0/16, fe80::/10 */
	AR_ADDR_ULA, /* fc00::/7 */
	AR_ADDR_UNSPECIFIED, /* 0.0.0.0/8, :: */
	AR_ADDR_MULTICAST,
	AR_ADDR_BROADCAST,
	AR_ADDR_RESERVED, /* 240.0.0.0/4 */
	AR_ADDR_SELF, /* an address of this host's interfaces */
};

/* Class of an address (family AF_INET: 4 bytes, AF_INET6: 16 bytes).
 * IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96) and NAT64
 * (64:ff9b::/96) addresses are classed by the IPv4 address they hold.
 * Does not know the host's own addresses: see ar_egress_addr_check. */
enum ar_addr_class ar_egress_addr_class(int family, const void *addr);
/* "loopback", "private (RFC 1918)", ... */
const char *ar_egress_addr_class_name(enum ar_addr_class c);

/* ---- decisions ---- */

/* Step 1: is HOST:PORT allowed by name? HOST is a name or an address
 * literal (IPv6 without brackets). */
bool ar_egress_host_allowed(const struct ar_egress_policy *p, const char *host,
			    uint16_t port);

/* Is NAME allowed on some port (the sandbox's DNS answers it)? */
bool ar_egress_name_allowed(const struct ar_egress_policy *p, const char *name);

/* Step 2: may the proxy connect to this resolved address? AR_ADDR_PUBLIC
 * (0) when yes, else the class that refuses it. An address named exactly
 * by an address rule (port matching) is always allowed. */
enum ar_addr_class ar_egress_addr_check(const struct ar_egress_policy *p,
					const struct sockaddr *sa);

/* Normalise a host from a request: lowercase, one trailing dot dropped,
 * brackets of an IPv6 literal removed. Fails (false) for characters no
 * name or address has. `out` holds at least 256 bytes. */
bool ar_egress_host_normalize(const char *in, size_t len, char *out,
			      size_t size);

/* Split "host:port", "[v6]:port", "host" (default_port); false when
 * malformed. host gets the normalised host. */
bool ar_egress_split_hostport(const char *s, size_t len, char *host,
			      size_t size, uint16_t default_port,
			      uint16_t *port);

/* The reason line for a refusal, without a newline:
 *   agentrun: blocked HOST:PORT — not in the allowlist; add --net allow=HOST
 *   agentrun: blocked HOST:PORT — resolves to 127.0.0.1 (loopback); ...
 * `cls` is AR_ADDR_PUBLIC for "not in the allowlist"; `addr` the text of
 * the refused address otherwise. */
void ar_egress_deny_reason(char *buf, size_t size, const char *host,
			   uint16_t port, enum ar_addr_class cls,
			   const char *addr);

#endif
