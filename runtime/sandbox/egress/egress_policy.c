/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The egress allowlist: patterns, address classes, decisions (see
 * egress_policy.h). Pure functions, no I/O but getifaddrs. */
#define _GNU_SOURCE
#include "egress_policy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "utils.h"

/* ---- hosts and ports ---- */

bool ar_egress_host_normalize(const char *in, size_t len, char *out,
			      size_t size)
{
	size_t n = 0;

	if (len >= 2 && in[0] == '[' && in[len - 1] == ']') {
		in++;
		len -= 2;
	}
	if (len > 0 && in[len - 1] == '.')
		len--;
	if (len == 0 || len > 253 || len >= size)
		return false;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)in[i];

		if (!isalnum(ch) && ch != '-' && ch != '.' && ch != '_' &&
		    ch != ':')
			return false;
		out[n++] = (char)tolower(ch);
	}
	out[n] = '\0';
	return true;
}

static bool parse_port(const char *s, size_t len, uint16_t *port)
{
	unsigned long v = 0;

	if (len == 0 || len > 5)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s[i] - '0');
	}
	if (v == 0 || v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

bool ar_egress_split_hostport(const char *s, size_t len, char *host,
			      size_t size, uint16_t default_port,
			      uint16_t *port)
{
	const char *colon;
	size_t hlen = len;

	*port = default_port;
	if (len > 0 && s[0] == '[') {
		const char *close = memchr(s, ']', len);

		if (!close)
			return false;
		hlen = (size_t)(close - s) + 1;
		if (hlen < len) {
			if (s[hlen] != ':' ||
			    !parse_port(s + hlen + 1, len - hlen - 1, port))
				return false;
		}
		return hlen > 2 &&
		       ar_egress_host_normalize(s, hlen, host, size);
	}
	colon = memchr(s, ':', len);
	if (colon && !memchr(colon + 1, ':', len - (size_t)(colon - s) - 1)) {
		hlen = (size_t)(colon - s);
		if (!parse_port(colon + 1, len - hlen - 1, port))
			return false;
	}
	/* two or more colons and no brackets: an IPv6 literal, no port */
	return ar_egress_host_normalize(s, hlen, host, size);
}

/* An address literal as 16 bytes (IPv4 as ::ffff:a.b.c.d). */
static bool parse_addr(const char *s, uint8_t out[16], int *family)
{
	struct in_addr a4;

	if (inet_pton(AF_INET, s, &a4) == 1) {
		memset(out, 0, 10);
		out[10] = out[11] = 0xff;
		memcpy(out + 12, &a4, 4);
		*family = AF_INET;
		return true;
	}
	if (inet_pton(AF_INET6, s, out) == 1) {
		*family = AF_INET6;
		return true;
	}
	return false;
}

static bool valid_name(const char *s)
{
	if (!*s || *s == '.' || strstr(s, ".."))
		return false;
	for (; *s; s++)
		if (*s == ':' || *s == '*')
			return false;
	return true;
}

/* ---- rules ---- */

static bool rule_parse(const char *text, struct ar_egress_rule *r)
{
	char host[256];
	uint8_t addr[16];
	int family;

	if (text[0] == '*' && (text[1] == '\0' || text[1] == ':')) {
		r->any = true;
		return text[1] == '\0' ||
		       parse_port(text + 2, strlen(text + 2), &r->port);
	}
	if (text[0] == '*' && text[1] == '.') {
		if (!ar_egress_split_hostport(text + 2, strlen(text + 2), host,
					      sizeof(host), 0, &r->port) ||
		    !valid_name(host))
			return false;
		r->wildcard = true;
		r->name = ar_xasprintf(".%s", host);
		return true;
	}
	if (!ar_egress_split_hostport(text, strlen(text), host, sizeof(host), 0,
				      &r->port))
		return false;
	if (parse_addr(host, addr, &family)) {
		r->family = family;
		memcpy(r->addr, addr, 16);
		return true;
	}
	if (!valid_name(host))
		return false;
	r->name = ar_xstrdup(host);
	return true;
}

/* A URL where a host pattern goes: refused, offering its host and port
 * (the scheme's, 443 for https, 80 for http, when it names none). */
static int url_refused(const char *text, struct ar_error *err)
{
	const char *auth = strstr(text, "://") + 3, *at;
	size_t len = strcspn(auth, "/?#");
	char host[256], offer[300] = "";
	uint16_t port, dflt = 0;
	struct ar_egress_rule probe = { 0 };

	at = memchr(auth, '@', len);
	if (at) {
		len -= (size_t)(at + 1 - auth);
		auth = at + 1;
	}
	if (strncasecmp(text, "https://", 8) == 0)
		dflt = 443;
	else if (strncasecmp(text, "http://", 7) == 0)
		dflt = 80;
	if (len && ar_egress_split_hostport(auth, len, host, sizeof(host), dflt,
					    &port)) {
		snprintf(offer, sizeof(offer),
			 strchr(host, ':') ? "[%s]" : "%s", host);
		if (port)
			snprintf(offer + strlen(offer),
				 sizeof(offer) - strlen(offer), ":%u",
				 (unsigned)port);
		if (!rule_parse(offer, &probe))
			offer[0] = '\0';
		ar_egress_rule_release(&probe);
	}
	if (offer[0])
		return ar_error_set_plain(
			err, EINVAL,
			"--net allow=`%s`: a URL; the allowlist takes hosts: --net allow=%s",
			text, offer);
	return ar_error_set_plain(
		err, EINVAL,
		"--net allow=`%s`: expected a host pattern (example.com, *.example.com, example.com:443, 10.0.0.1, [::1]:8080), not a URL",
		text);
}

int ar_egress_rule_parse(const char *text, struct ar_egress_rule *r,
			 struct ar_error *err)
{
	memset(r, 0, sizeof(*r));
	if (strstr(text, "://"))
		return url_refused(text, err);
	if (!rule_parse(text, r)) {
		ar_egress_rule_release(r);
		return ar_error_set_plain(
			err, EINVAL,
			"--net allow=`%s`: expected HOST, *.DOMAIN, *, an IPv4 address or [IPv6], each optionally with :PORT (1-65535)",
			text);
	}
	r->text = ar_xstrdup(text);
	return 0;
}

void ar_egress_rule_release(struct ar_egress_rule *r)
{
	free(r->text);
	free(r->name);
	memset(r, 0, sizeof(*r));
}

int ar_egress_policy_add(struct ar_egress_policy *p, const char *list,
			 struct ar_error *err)
{
	_cleanup_free_ char *copy = ar_xstrdup(list);
	char *s = copy;

	for (;;) {
		char *comma = strchr(s, ',');
		struct ar_egress_rule r;

		if (comma)
			*comma = '\0';
		if (!*s)
			return ar_error_set_plain(
				err, EINVAL,
				"--net allow=`%s`: empty pattern in the list",
				list);
		if (strcasecmp(s, "ask") == 0) {
			/* not a destination: ask the user (control plane) */
			p->ask = true;
			if (!comma)
				return 0;
			s = comma + 1;
			continue;
		}
		if (ar_egress_rule_parse(s, &r, err) < 0)
			return -1;
		p->rules = ar_xrealloc(p->rules,
				       (p->n_rules + 3) * sizeof(*p->rules));
		p->rules[p->n_rules++] = r;
		/* localhost:PORT: the host's loopback service on PORT,
		 * whichever loopback address it listens on */
		if (r.name && !r.wildcard && r.port &&
		    strcmp(r.name, "localhost") == 0) {
			static const uint8_t v6[16] = { [15] = 1 };
			static const uint8_t v4[16] = {
				[10] = 0xff, [11] = 0xff, [12] = 127, [15] = 1
			};

			for (int k = 0; k < 2; k++) {
				struct ar_egress_rule *a =
					&p->rules[p->n_rules++];

				memset(a, 0, sizeof(*a));
				a->text = ar_xstrdup(r.text);
				a->family = k ? AF_INET6 : AF_INET;
				memcpy(a->addr, k ? v6 : v4, 16);
				a->port = r.port;
			}
		}
		if (!comma)
			return 0;
		s = comma + 1;
	}
}

void ar_egress_policy_add_self(struct ar_egress_policy *p, int family,
			       const void *addr)
{
	uint8_t a[16];

	if (family == AF_INET) {
		memset(a, 0, 10);
		a[10] = a[11] = 0xff;
		memcpy(a + 12, addr, 4);
	} else {
		memcpy(a, addr, 16);
	}
	p->self = ar_xrealloc(p->self, (p->n_self + 1) * sizeof(*p->self));
	memcpy(p->self[p->n_self++], a, 16);
}

int ar_egress_policy_load_self(struct ar_egress_policy *p, struct ar_error *err)
{
	struct ifaddrs *ifa = NULL;

	if (getifaddrs(&ifa) < 0)
		return ar_error_set(err, errno,
				    "egress proxy: list this host's addresses");
	for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			ar_egress_policy_add_self(
				p, AF_INET,
				&((struct sockaddr_in *)(void *)i->ifa_addr)
					 ->sin_addr);
		else if (i->ifa_addr->sa_family == AF_INET6)
			ar_egress_policy_add_self(
				p, AF_INET6,
				&((struct sockaddr_in6 *)(void *)i->ifa_addr)
					 ->sin6_addr);
	}
	freeifaddrs(ifa);
	return 0;
}

void ar_egress_policy_release(struct ar_egress_policy *p)
{
	for (size_t i = 0; i < p->n_rules; i++)
		ar_egress_rule_release(&p->rules[i]);
	free(p->rules);
	free(p->self);
	memset(p, 0, sizeof(*p));
}

/* ---- address classes ---- */

static enum ar_addr_class class4(const uint8_t *a)
{
	uint32_t v = ((uint32_t)a[0] << 24) | ((uint32_t)a[1] << 16) |
		     ((uint32_t)a[2] << 8) | a[3];

#define IN_NET(net, bits)                                                      \
	((v & (bits ? ~0u << (32 - bits) : 0)) == (uint32_t)(net))
	if (v == 0xffffffffu)
		return AR_ADDR_BROADCAST;
	if (v == 0xa9fea9feu) /* 169.254.169.254 */
		return AR_ADDR_METADATA;
	if (IN_NET(0x00000000u, 8))
		return AR_ADDR_UNSPECIFIED;
	if (IN_NET(0x7f000000u, 8))
		return AR_ADDR_LOOPBACK;
	if (IN_NET(0x0a000000u, 8) || IN_NET(0xac100000u, 12) ||
	    IN_NET(0xc0a80000u, 16))
		return AR_ADDR_PRIVATE;
	if (IN_NET(0x64400000u, 10))
		return AR_ADDR_CGNAT;
	if (IN_NET(0xa9fe0000u, 16))
		return AR_ADDR_LINK_LOCAL;
	if (IN_NET(0xe0000000u, 4))
		return AR_ADDR_MULTICAST;
	if (IN_NET(0xf0000000u, 4))
		return AR_ADDR_RESERVED;
#undef IN_NET
	return AR_ADDR_PUBLIC;
}

static const uint8_t v4mapped_prefix[12] = { 0, 0, 0, 0, 0,    0,
					     0, 0, 0, 0, 0xff, 0xff };
static const uint8_t nat64_prefix[12] = { 0x00, 0x64, 0xff, 0x9b };
static const uint8_t zero12[12];
/* fd00:ec2::254, the IPv6 metadata endpoint of EC2 */
static const uint8_t ec2_metadata6[16] = { 0xfd, 0x00,	      0x0e,
					   0xc2, [15] = 0x54, [14] = 0x02 };

enum ar_addr_class ar_egress_addr_class(int family, const void *addr)
{
	const uint8_t *a = addr;

	if (family == AF_INET)
		return class4(a);
	if (memcmp(a, v4mapped_prefix, 12) == 0 ||
	    memcmp(a, nat64_prefix, 12) == 0)
		return class4(a + 12);
	if (memcmp(a, zero12, 12) == 0) {
		/* ::, ::1, then the deprecated IPv4-compatible ::a.b.c.d */
		if (a[12] == 0 && a[13] == 0 && a[14] == 0 && a[15] <= 1)
			return a[15] ? AR_ADDR_LOOPBACK : AR_ADDR_UNSPECIFIED;
		return class4(a + 12);
	}
	if (memcmp(a, ec2_metadata6, 16) == 0)
		return AR_ADDR_METADATA;
	if (a[0] == 0xff)
		return AR_ADDR_MULTICAST;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0x80)
		return AR_ADDR_LINK_LOCAL;
	if (a[0] == 0xfe && (a[1] & 0xc0) == 0xc0)
		return AR_ADDR_PRIVATE; /* site-local, deprecated */
	if ((a[0] & 0xfe) == 0xfc)
		return AR_ADDR_ULA;
	return AR_ADDR_PUBLIC;
}

const char *ar_egress_addr_class_name(enum ar_addr_class c)
{
	switch (c) {
	case AR_ADDR_PUBLIC:
		return "public";
	case AR_ADDR_LOOPBACK:
		return "loopback";
	case AR_ADDR_PRIVATE:
		return "private (RFC 1918)";
	case AR_ADDR_CGNAT:
		return "carrier-grade NAT (100.64.0.0/10)";
	case AR_ADDR_METADATA:
		return "cloud metadata";
	case AR_ADDR_LINK_LOCAL:
		return "link-local";
	case AR_ADDR_ULA:
		return "unique local (fc00::/7)";
	case AR_ADDR_UNSPECIFIED:
		return "unspecified";
	case AR_ADDR_MULTICAST:
		return "multicast";
	case AR_ADDR_BROADCAST:
		return "broadcast";
	case AR_ADDR_RESERVED:
		return "reserved";
	case AR_ADDR_SELF:
		return "this host's own";
	}
	return "unknown";
}

/* ---- decisions ---- */

static bool port_ok(const struct ar_egress_rule *r, uint16_t port)
{
	return r->port == 0 || r->port == port;
}

static bool name_matches(const struct ar_egress_rule *r, const char *host)
{
	size_t hn, sn;

	if (!r->name)
		return false;
	if (!r->wildcard)
		return strcmp(r->name, host) == 0;
	hn = strlen(host);
	sn = strlen(r->name); /* ".example.com" */
	return hn > sn && strcmp(host + hn - sn, r->name) == 0;
}

bool ar_egress_host_allowed(const struct ar_egress_policy *p, const char *host,
			    uint16_t port)
{
	uint8_t addr[16];
	int family;
	bool is_addr = parse_addr(host, addr, &family);

	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ar_egress_rule *r = &p->rules[i];

		if (!port_ok(r, port))
			continue;
		if (r->any)
			return true;
		if (is_addr && r->family && memcmp(r->addr, addr, 16) == 0)
			return true;
		if (!is_addr && name_matches(r, host))
			return true;
	}
	return false;
}

bool ar_egress_name_allowed(const struct ar_egress_policy *p, const char *name)
{
	for (size_t i = 0; i < p->n_rules; i++)
		if (p->rules[i].any || name_matches(&p->rules[i], name))
			return true;
	return false;
}

enum ar_addr_class ar_egress_addr_check(const struct ar_egress_policy *p,
					const struct sockaddr *sa)
{
	uint8_t a[16];
	uint16_t port;
	enum ar_addr_class c;

	if (sa->sa_family == AF_INET) {
		const struct sockaddr_in *s4 = (const void *)sa;

		memcpy(a, v4mapped_prefix, 12);
		memcpy(a + 12, &s4->sin_addr, 4);
		port = ntohs(s4->sin_port);
	} else if (sa->sa_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const void *)sa;

		memcpy(a, &s6->sin6_addr, 16);
		port = ntohs(s6->sin6_port);
	} else {
		return AR_ADDR_RESERVED;
	}
	for (size_t i = 0; i < p->n_rules; i++) {
		const struct ar_egress_rule *r = &p->rules[i];

		if (r->family && port_ok(r, port) &&
		    memcmp(r->addr, a, 16) == 0)
			return AR_ADDR_PUBLIC;
	}
	c = ar_egress_addr_class(AF_INET6, a);
	if (p->learn && c != AR_ADDR_METADATA)
		return AR_ADDR_PUBLIC;
	if (c != AR_ADDR_PUBLIC)
		return c;
	for (size_t i = 0; i < p->n_self; i++)
		if (memcmp(p->self[i], a, 16) == 0)
			return AR_ADDR_SELF;
	return AR_ADDR_PUBLIC;
}

void ar_egress_deny_reason(char *buf, size_t size, const char *host,
			   uint16_t port, enum ar_addr_class cls,
			   const char *addr)
{
	bool v6 = strchr(host, ':') != NULL;
	uint8_t tmp[16];
	int family;
	bool is_addr = parse_addr(host, tmp, &family);
	char target[300];

	snprintf(target, sizeof(target), "%s%s%s:%u", v6 ? "[" : "", host,
		 v6 ? "]" : "", (unsigned)port);
	if (cls == AR_ADDR_PUBLIC) {
		snprintf(
			buf, size,
			"agentrun: blocked %s \xe2\x80\x94 not in the allowlist; add --net allow=%s",
			target, is_addr ? target : host);
		return;
	}
	{
		bool a6 = addr && strchr(addr, ':');
		char exact[300];

		snprintf(exact, sizeof(exact), "%s%s%s:%u", a6 ? "[" : "",
			 addr ? addr : host, a6 ? "]" : "", (unsigned)port);
		if (is_addr)
			snprintf(
				buf, size,
				"agentrun: blocked %s \xe2\x80\x94 %s is a %s address; allow that exact address with --net allow=%s",
				target, addr ? addr : host,
				ar_egress_addr_class_name(cls), exact);
		else
			snprintf(
				buf, size,
				"agentrun: blocked %s \xe2\x80\x94 resolves to %s, a %s address; allow that exact address with --net allow=%s",
				target, addr ? addr : "?",
				ar_egress_addr_class_name(cls), exact);
	}
}
