/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/egress/egress_dns.c: the sandbox's DNS
 * messages and its address pool. No network. */
#include <string.h>

#include "../../runtime/sandbox/egress/egress_dns.h"
#include "unit.h"

/* A query for NAME (dotted) of type `type`, id 0x1234, RD set. */
static size_t query(const char *name, uint16_t type, uint8_t *q)
{
	size_t o = 12;
	const uint8_t hdr[12] = { 0x12, 0x34, 0x01, 0, 0, 1, 0, 0, 0, 0, 0, 0 };

	memcpy(q, hdr, 12);
	while (*name) {
		size_t l = strcspn(name, ".");

		q[o++] = (uint8_t)l;
		memcpy(q + o, name, l);
		o += l;
		name += l + (name[l] == '.');
	}
	q[o++] = 0;
	q[o++] = (uint8_t)(type >> 8);
	q[o++] = (uint8_t)type;
	q[o++] = 0;
	q[o++] = 1;
	return o;
}

UNIT_TEST(pool_addresses)
{
	uint8_t a[4];

	ar_dns_pool_addr(0, a);
	CHECK(a[0] == 198 && a[1] == 18 && a[2] == 0 && a[3] == 1);
	CHECK(ar_dns_pool_index(a) == 0);
	ar_dns_pool_addr(AR_DNS_POOL_SIZE - 1, a);
	CHECK(ar_dns_pool_index(a) == AR_DNS_POOL_SIZE - 1);
	CHECK(ar_dns_pool_index((const uint8_t[]){ 198, 18, 0, 0 }) == -1);
	CHECK(ar_dns_pool_index((const uint8_t[]){ 198, 19, 0, 1 }) == -1);
	CHECK(ar_dns_pool_index((const uint8_t[]){ 10, 0, 0, 1 }) == -1);
}

UNIT_TEST(parse_and_answer)
{
	uint8_t q[300], out[600];
	const uint8_t a4[4] = { 198, 18, 0, 7 };
	char name[256];
	uint16_t type;
	size_t qend, n, len = query("Api.Example.COM", AR_DNS_TYPE_A, q);

	CHECK(ar_dns_parse_query(q, len, name, &type, &qend));
	CHECK_STR_EQ(name, "api.example.com");
	CHECK(type == AR_DNS_TYPE_A && qend == len);
	n = ar_dns_reply(q, qend, AR_DNS_NOERROR, a4, out, sizeof(out));
	CHECK(n == len + 16);
	CHECK(out[0] == 0x12 && out[1] == 0x34);
	CHECK(out[2] == 0x81 && out[3] == 0x80); /* QR RD, RA NOERROR */
	CHECK(out[7] == 1 && out[11] == 0); /* one answer, no additional */
	CHECK(memcmp(out + n - 4, a4, 4) == 0);
	n = ar_dns_reply(q, qend, AR_DNS_NXDOMAIN, NULL, out, sizeof(out));
	CHECK(n == len && (out[3] & 0x0f) == AR_DNS_NXDOMAIN && out[7] == 0);
	CHECK(ar_dns_reply(q, qend, 0, a4, out, len) == 0);
}

UNIT_TEST(malformed_queries)
{
	uint8_t q[300];
	char name[256];
	uint16_t type;
	size_t qend, len = query("a.test", AR_DNS_TYPE_A, q);

	/* a response, another opcode, two questions, truncated */
	q[2] = 0x81;
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	q[2] = 0x09;
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	q[2] = 0x01;
	q[5] = 2;
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	q[5] = 1;
	CHECK(!ar_dns_parse_query(q, len - 3, name, &type, &qend));
	/* a compression pointer, a byte no name has, class CH */
	q[12] = 0xc0;
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	len = query("a b.test", AR_DNS_TYPE_A, q);
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	len = query("a.test", AR_DNS_TYPE_A, q);
	q[len - 1] = 3;
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
	/* the root name */
	len = query("", AR_DNS_TYPE_A, q);
	CHECK(!ar_dns_parse_query(q, len, name, &type, &qend));
}

UNIT_MAIN()
