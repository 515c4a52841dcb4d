/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/egress/egress_policy.c: patterns, address
 * classes, the two decisions and the deny line. No network. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>

#include "../../runtime/sandbox/egress/egress_policy.h"
#include "unit.h"

static struct ar_egress_policy policy(const char *list)
{
	struct ar_egress_policy p = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	if (ar_egress_policy_add(&p, list, &err) < 0)
		printf("# unexpected: %s\n", err.msg);
	return p;
}

static bool parses(const char *s)
{
	struct ar_egress_rule r;
	struct ar_error err = AR_ERROR_INIT;
	bool ok = ar_egress_rule_parse(s, &r, &err) == 0;

	ar_egress_rule_release(&r);
	return ok;
}

static enum ar_addr_class cls(const char *a)
{
	unsigned char b[16];

	if (inet_pton(AF_INET, a, b) == 1)
		return ar_egress_addr_class(AF_INET, b);
	if (inet_pton(AF_INET6, a, b) == 1)
		return ar_egress_addr_class(AF_INET6, b);
	return (enum ar_addr_class) - 1;
}

/* ar_egress_addr_check for "ADDR" and a port */
static enum ar_addr_class check(const struct ar_egress_policy *p, const char *a,
				uint16_t port)
{
	struct sockaddr_in s4 = { .sin_family = AF_INET,
				  .sin_port = htons(port) };
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(port) };

	if (inet_pton(AF_INET, a, &s4.sin_addr) == 1)
		return ar_egress_addr_check(p, (struct sockaddr *)&s4);
	inet_pton(AF_INET6, a, &s6.sin6_addr);
	return ar_egress_addr_check(p, (struct sockaddr *)&s6);
}

UNIT_TEST(patterns_parse)
{
	CHECK(parses("example.com"));
	CHECK(parses("Example.COM."));
	CHECK(parses("example.com:443"));
	CHECK(parses("*.example.com"));
	CHECK(parses("*.example.com:8443"));
	CHECK(parses("*"));
	CHECK(parses("*:443"));
	CHECK(parses("10.1.2.3"));
	CHECK(parses("127.0.0.1:8080"));
	CHECK(parses("[::1]:8080"));
	CHECK(parses("::1"));
	CHECK(parses("[2001:db8::1]"));
	CHECK(parses("my_host-1.internal"));
	CHECK(!parses(""));
	CHECK(!parses("example.com:0"));
	CHECK(!parses("example.com:65536"));
	CHECK(!parses("example.com:http"));
	CHECK(!parses("https://example.com"));
	CHECK(!parses("*example.com"));
	CHECK(!parses("a.*.example.com"));
	CHECK(!parses("*."));
	CHECK(!parses("exa mple.com"));
	CHECK(!parses("a..b"));
	CHECK(!parses("[::1"));
	CHECK(!parses("[::1]x"));
	CHECK(!parses("host:1:2"));
}

/* a URL is refused with its host offered */
UNIT_TEST(policy_url_offers_host)
{
	struct ar_egress_rule r;
	struct ar_error err = AR_ERROR_INIT;

	CHECK(ar_egress_rule_parse("https://api.example.com/v1/x", &r, &err) <
	      0);
	CHECK(strstr(err.msg, "--net allow=api.example.com:443") != NULL);
	CHECK(ar_egress_rule_parse("http://u@127.0.0.1:4000", &r, &err) < 0);
	CHECK(strstr(err.msg, "--net allow=127.0.0.1:4000") != NULL);
	CHECK(ar_egress_rule_parse("ftp://files.example.com/", &r, &err) < 0);
	CHECK(strstr(err.msg, "--net allow=files.example.com") != NULL);
}

UNIT_TEST(policy_list_errors)
{
	struct ar_egress_policy p = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(ar_egress_policy_add(&p, "a.com,b.com:443", &err) == 0);
	CHECK(p.n_rules == 2);
	CHECK(ar_egress_policy_add(&p, "c.com,,d.com", &err) < 0);
	CHECK(strstr(err.msg, "empty pattern") != NULL);
	CHECK(ar_egress_policy_add(&p, "x:99999", &err) < 0);
	CHECK(strstr(err.msg, "--net allow=`x:99999`") != NULL);
	ar_egress_policy_release(&p);
}

UNIT_TEST(names_exact_wildcard_port)
{
	struct ar_egress_policy p =
		policy("api.example.com,*.cdn.example.org:443,10.0.0.7:22");

	CHECK(ar_egress_host_allowed(&p, "api.example.com", 443));
	CHECK(ar_egress_host_allowed(&p, "api.example.com", 80));
	CHECK(!ar_egress_host_allowed(&p, "example.com", 443));
	CHECK(!ar_egress_host_allowed(&p, "xapi.example.com", 443));
	CHECK(!ar_egress_host_allowed(&p, "api.example.com.evil.test", 443));
	CHECK(ar_egress_host_allowed(&p, "a.cdn.example.org", 443));
	CHECK(ar_egress_host_allowed(&p, "a.b.cdn.example.org", 443));
	CHECK(!ar_egress_host_allowed(&p, "a.cdn.example.org", 80));
	CHECK(!ar_egress_host_allowed(&p, "cdn.example.org", 443));
	CHECK(!ar_egress_host_allowed(&p, "xcdn.example.org", 443));
	/* raw addresses need an address rule */
	CHECK(ar_egress_host_allowed(&p, "10.0.0.7", 22));
	CHECK(!ar_egress_host_allowed(&p, "10.0.0.7", 23));
	CHECK(ar_egress_host_allowed(&p, "::ffff:10.0.0.7", 22));
	CHECK(!ar_egress_host_allowed(&p, "10.0.0.8", 22));
	ar_egress_policy_release(&p);

	p = policy("*");
	CHECK(ar_egress_host_allowed(&p, "anything.test", 1));
	CHECK(ar_egress_host_allowed(&p, "93.184.216.34", 443));
	ar_egress_policy_release(&p);
	p = policy("*:443");
	CHECK(ar_egress_host_allowed(&p, "anything.test", 443));
	CHECK(!ar_egress_host_allowed(&p, "anything.test", 22));
	ar_egress_policy_release(&p);
}

UNIT_TEST(host_normalize_and_split)
{
	char h[256];
	uint16_t port;

	CHECK(ar_egress_host_normalize("API.Example.COM.", 16, h, sizeof(h)));
	CHECK_STR_EQ(h, "api.example.com");
	CHECK(!ar_egress_host_normalize("a b", 3, h, sizeof(h)));
	CHECK(!ar_egress_host_normalize("a%00", 4, h, sizeof(h)));
	CHECK(!ar_egress_host_normalize("", 0, h, sizeof(h)));
	CHECK(ar_egress_split_hostport("h.test:8080", 11, h, sizeof(h), 80,
				       &port));
	CHECK_STR_EQ(h, "h.test");
	CHECK(port == 8080);
	CHECK(ar_egress_split_hostport("h.test", 6, h, sizeof(h), 80, &port));
	CHECK(port == 80);
	CHECK(ar_egress_split_hostport("[::1]:443", 9, h, sizeof(h), 80,
				       &port));
	CHECK_STR_EQ(h, "::1");
	CHECK(port == 443);
	CHECK(ar_egress_split_hostport("[fe80::1]", 9, h, sizeof(h), 80,
				       &port));
	CHECK(port == 80);
	CHECK(!ar_egress_split_hostport("h.test:", 7, h, sizeof(h), 80, &port));
	CHECK(!ar_egress_split_hostport("[::1]443", 8, h, sizeof(h), 80,
					&port));
}

UNIT_TEST(address_classes_v4)
{
	CHECK(cls("8.8.8.8") == AR_ADDR_PUBLIC);
	CHECK(cls("93.184.216.34") == AR_ADDR_PUBLIC);
	CHECK(cls("127.0.0.1") == AR_ADDR_LOOPBACK);
	CHECK(cls("127.255.0.9") == AR_ADDR_LOOPBACK);
	CHECK(cls("10.200.0.2") == AR_ADDR_PRIVATE);
	CHECK(cls("172.16.0.1") == AR_ADDR_PRIVATE);
	CHECK(cls("172.31.255.255") == AR_ADDR_PRIVATE);
	CHECK(cls("172.32.0.1") == AR_ADDR_PUBLIC);
	CHECK(cls("192.168.1.1") == AR_ADDR_PRIVATE);
	CHECK(cls("100.64.0.1") == AR_ADDR_CGNAT);
	CHECK(cls("100.127.255.255") == AR_ADDR_CGNAT);
	CHECK(cls("100.128.0.1") == AR_ADDR_PUBLIC);
	CHECK(cls("169.254.169.254") == AR_ADDR_METADATA);
	CHECK(cls("169.254.1.1") == AR_ADDR_LINK_LOCAL);
	CHECK(cls("0.0.0.0") == AR_ADDR_UNSPECIFIED);
	CHECK(cls("0.1.2.3") == AR_ADDR_UNSPECIFIED);
	CHECK(cls("224.0.0.1") == AR_ADDR_MULTICAST);
	CHECK(cls("239.255.255.250") == AR_ADDR_MULTICAST);
	CHECK(cls("255.255.255.255") == AR_ADDR_BROADCAST);
	CHECK(cls("240.0.0.1") == AR_ADDR_RESERVED);
}

UNIT_TEST(address_classes_v6)
{
	CHECK(cls("2606:4700::1111") == AR_ADDR_PUBLIC);
	CHECK(cls("::1") == AR_ADDR_LOOPBACK);
	CHECK(cls("::") == AR_ADDR_UNSPECIFIED);
	CHECK(cls("fe80::1") == AR_ADDR_LINK_LOCAL);
	CHECK(cls("febf::1") == AR_ADDR_LINK_LOCAL);
	CHECK(cls("fec0::1") == AR_ADDR_PRIVATE);
	CHECK(cls("fc00::1") == AR_ADDR_ULA);
	CHECK(cls("fd12:3456::1") == AR_ADDR_ULA);
	CHECK(cls("fd00:ec2::254") == AR_ADDR_METADATA);
	CHECK(cls("ff02::1") == AR_ADDR_MULTICAST);
	/* IPv4 inside IPv6: mapped, compatible, NAT64 */
	CHECK(cls("::ffff:127.0.0.1") == AR_ADDR_LOOPBACK);
	CHECK(cls("::ffff:169.254.169.254") == AR_ADDR_METADATA);
	CHECK(cls("::ffff:10.0.0.1") == AR_ADDR_PRIVATE);
	CHECK(cls("::ffff:8.8.8.8") == AR_ADDR_PUBLIC);
	CHECK(cls("::127.0.0.1") == AR_ADDR_LOOPBACK);
	CHECK(cls("64:ff9b::7f00:1") == AR_ADDR_LOOPBACK);
	CHECK(cls("64:ff9b::a9fe:a9fe") == AR_ADDR_METADATA);
}

UNIT_TEST(addr_check_exact_allow_and_self)
{
	struct ar_egress_policy p = policy("localhost,127.0.0.1:8080,[::1]");
	unsigned char self[4] = { 203, 0, 113, 9 };

	/* a name that resolves to loopback: refused unless exact */
	CHECK(check(&p, "127.0.0.1", 8080) == AR_ADDR_PUBLIC);
	CHECK(check(&p, "127.0.0.1", 8081) == AR_ADDR_LOOPBACK);
	CHECK(check(&p, "127.0.0.2", 8080) == AR_ADDR_LOOPBACK);
	CHECK(check(&p, "::ffff:127.0.0.1", 8080) == AR_ADDR_PUBLIC);
	CHECK(check(&p, "::1", 1234) == AR_ADDR_PUBLIC);
	CHECK(check(&p, "169.254.169.254", 80) == AR_ADDR_METADATA);
	CHECK(check(&p, "8.8.8.8", 53) == AR_ADDR_PUBLIC);
	/* the host's own (public) address */
	CHECK(check(&p, "203.0.113.9", 22) == AR_ADDR_PUBLIC);
	ar_egress_policy_add_self(&p, AF_INET, self);
	CHECK(check(&p, "203.0.113.9", 22) == AR_ADDR_SELF);
	CHECK(check(&p, "::ffff:203.0.113.9", 22) == AR_ADDR_SELF);
	ar_egress_policy_release(&p);
}

UNIT_TEST(localhost_port_is_both_loopback_addresses)
{
	struct ar_egress_policy p = policy("localhost:8080");

	CHECK(ar_egress_host_allowed(&p, "localhost", 8080));
	CHECK(!ar_egress_host_allowed(&p, "localhost", 8081));
	CHECK(check(&p, "127.0.0.1", 8080) == AR_ADDR_PUBLIC);
	CHECK(check(&p, "::1", 8080) == AR_ADDR_PUBLIC);
	CHECK(check(&p, "127.0.0.1", 8081) == AR_ADDR_LOOPBACK);
	CHECK(check(&p, "127.0.0.2", 8080) == AR_ADDR_LOOPBACK);
	/* a bare localhost stays a name only */
	ar_egress_policy_release(&p);
	p = policy("localhost");
	CHECK(check(&p, "127.0.0.1", 8080) == AR_ADDR_LOOPBACK);
	ar_egress_policy_release(&p);
}

UNIT_TEST(load_self_has_loopback)
{
	struct ar_egress_policy p = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(ar_egress_policy_load_self(&p, &err) == 0);
	/* every netns has lo: 127.0.0.1 when it is up; at least no crash */
	ar_egress_policy_release(&p);
}

UNIT_TEST(deny_reasons)
{
	char buf[512];

	ar_egress_deny_reason(buf, sizeof(buf), "evil.test", 443,
			      AR_ADDR_PUBLIC, NULL);
	CHECK_STR_EQ(
		buf,
		"agentrun: blocked evil.test:443 \xe2\x80\x94 not in the allowlist; add --net allow=evil.test");
	ar_egress_deny_reason(buf, sizeof(buf), "localhost", 8080,
			      AR_ADDR_LOOPBACK, "127.0.0.1");
	CHECK_STR_EQ(
		buf,
		"agentrun: blocked localhost:8080 \xe2\x80\x94 resolves to 127.0.0.1, a loopback address; allow that exact address with --net allow=127.0.0.1:8080");
	ar_egress_deny_reason(buf, sizeof(buf), "10.0.0.5", 22, AR_ADDR_PRIVATE,
			      "10.0.0.5");
	CHECK(strstr(buf, "10.0.0.5 is a private (RFC 1918) address") != NULL);
	ar_egress_deny_reason(buf, sizeof(buf), "::1", 22, AR_ADDR_PUBLIC,
			      NULL);
	CHECK_STR_EQ(
		buf,
		"agentrun: blocked [::1]:22 \xe2\x80\x94 not in the allowlist; add --net allow=[::1]:22");
}

UNIT_MAIN()
