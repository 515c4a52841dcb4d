/* SPDX-License-Identifier: GPL-2.0-or-later */
/* DNS messages of the sandbox's resolver (egress_dns.h; RFC 1035). */
#include "egress_dns.h"

#include <string.h>

void ar_dns_pool_addr(uint32_t i, uint8_t a[4])
{
	uint32_t v = (198u << 24 | 18u << 16) + 1 + i;

	a[0] = (uint8_t)(v >> 24);
	a[1] = (uint8_t)(v >> 16);
	a[2] = (uint8_t)(v >> 8);
	a[3] = (uint8_t)v;
}

long ar_dns_pool_index(const uint8_t a[4])
{
	uint32_t v = (uint32_t)a[0] << 24 | (uint32_t)a[1] << 16 |
		     (uint32_t)a[2] << 8 | a[3];
	uint32_t base = 198u << 24 | 18u << 16;

	if (v <= base || v - base - 1 >= AR_DNS_POOL_SIZE)
		return -1;
	return (long)(v - base - 1);
}

bool ar_dns_parse_query(const uint8_t *q, size_t len, char *name,
			uint16_t *qtype, size_t *qend)
{
	size_t o = 12, n = 0;

	/* QR=0, OPCODE=0 (query), QDCOUNT=1 */
	if (len < 17 || (q[2] & 0xf8) != 0 || q[4] != 0 || q[5] != 1)
		return false;
	for (;;) {
		size_t l;

		if (o >= len)
			return false;
		l = q[o++];
		if (l == 0)
			break;
		if (l > 63 || o + l > len || n + l + 1 > 254)
			return false; /* no compression in a question */
		if (n)
			name[n++] = '.';
		for (size_t i = 0; i < l; i++) {
			char c = (char)q[o + i];

			if (c >= 'A' && c <= 'Z')
				c = (char)(c - 'A' + 'a');
			if (!((c >= 'a' && c <= 'z') ||
			      (c >= '0' && c <= '9') || c == '-' || c == '_'))
				return false;
			name[n++] = c;
		}
		o += l;
	}
	name[n] = '\0';
	if (o + 4 > len || n == 0)
		return false;
	*qtype = (uint16_t)(q[o] << 8 | q[o + 1]);
	if (q[o + 2] != 0 || q[o + 3] != 1) /* class IN */
		return false;
	*qend = o + 4;
	return true;
}

size_t ar_dns_reply(const uint8_t *q, size_t qend, int rcode, const uint8_t *a4,
		    uint8_t *out, size_t size)
{
	static const uint8_t rr[] = {
		0xc0, 12, /* the name of the question */
		0,    AR_DNS_TYPE_A,
		0,    1, /* A, IN */
		0,    0,
		0,    60, /* TTL 60 s */
		0,    4,
	};
	size_t n = qend + (a4 ? sizeof(rr) + 4 : 0);

	if (size < n || qend < 12)
		return 0;
	memcpy(out, q, qend);
	out[2] = (uint8_t)(0x80 | (q[2] & 0x01)); /* QR, RD as asked */
	out[3] = (uint8_t)(0x80 | (rcode & 0x0f)); /* RA */
	out[6] = 0;
	out[7] = a4 ? 1 : 0; /* ANCOUNT */
	memset(out + 8, 0, 4); /* NSCOUNT, ARCOUNT: no EDNS echoed */
	if (a4) {
		memcpy(out + qend, rr, sizeof(rr));
		memcpy(out + qend + sizeof(rr), a4, 4);
	}
	return n;
}
