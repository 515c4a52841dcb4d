/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A plain-HTTP model gateway on the host's loopback (egress_gateway.h). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "egress_gateway.h"
#include "utils.h"

#define GW_HEAD_MAX 65536

bool ar_egress_gateway_loopback(const char *host)
{
	struct in_addr a;

	if (strcasecmp(host, "localhost") == 0 || strcmp(host, "::1") == 0)
		return true;
	return inet_pton(AF_INET, host, &a) == 1 &&
	       (ntohl(a.s_addr) >> 24) == 127;
}

bool ar_egress_gateway_for(const struct ar_egress_secret *s, size_t n,
			   const char *host, unsigned port)
{
	for (size_t i = 0; i < n; i++)
		if (s[i].plain_http &&
		    ar_egress_host_allowed(&s[i].hosts, host, (uint16_t)port))
			return true;
	return false;
}

static void reply_400(int c, const char *why)
{
	char buf[512];
	int k = snprintf(buf, sizeof(buf),
			 "HTTP/1.1 400 Bad Request\r\n"
			 "Content-Type: text/plain; charset=utf-8\r\n"
			 "Content-Length: %zu\r\n"
			 "Connection: close\r\n"
			 "X-Agentrun-Egress: blocked\r\n\r\n"
			 "agentrun: %s\n",
			 strlen(why) + 11, why);

	if (k > 0 && (size_t)k < sizeof(buf))
		(void)!ar_write_all(c, buf, (size_t)k);
}

int ar_egress_gateway_request(int c, int up, const char *host, unsigned port,
			      const struct ar_egress_secret *s, size_t n,
			      struct ar_egress_tls_outcome *res)
{
	_cleanup_free_ char *head = ar_xmalloc(GW_HEAD_MAX + 1);
	_cleanup_free_ char *req = NULL;
	const char *vhost = host;
	size_t len = 0, hlen, rlen;

	res->reason[0] = res->why[0] = res->asked[0] = '\0';
	for (;;) {
		char *e;
		ssize_t r;

		head[len] = '\0';
		e = strstr(head, "\r\n\r\n");
		if (e) {
			hlen = (size_t)(e + 4 - head);
			break;
		}
		if (len == GW_HEAD_MAX)
			return -1;
		r = read(c, head + len, GW_HEAD_MAX - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0 || memchr(head + len, '\0', (size_t)r))
			return -1;
		len += (size_t)r;
	}
	res->verdict = ar_egress_request_verdict(head, hlen, host, port,
						 res->why, sizeof(res->why),
						 res->asked,
						 sizeof(res->asked));
	/* "localhost:PORT" in Host, when a secret lists that name */
	if (res->verdict == AR_SECRET_WITHHOLD &&
	    ar_egress_gateway_for(s, n, "localhost", port)) {
		struct ar_egress_tls_outcome o2 = { 0 };

		o2.verdict = ar_egress_request_verdict(head, hlen, "localhost",
						       port, o2.why,
						       sizeof(o2.why), o2.asked,
						       sizeof(o2.asked));
		if (o2.verdict == AR_SECRET_INJECT) {
			res->verdict = AR_SECRET_INJECT;
			vhost = "localhost";
		}
	}
	if (res->on_verdict)
		res->on_verdict(res, res->data);
	if (res->verdict == AR_SECRET_REFUSE) {
		reply_400(c, res->why);
		return -1;
	}
	req = ar_xmalloc(hlen + 1024);
	memcpy(req, head, hlen);
	rlen = hlen;
	if (!ar_egress_secrets_apply(s, n, vhost, port,
				     res->verdict == AR_SECRET_INJECT, req,
				     &rlen, hlen + 1024))
		return -1;
	if (ar_write_all(up, req, rlen) < 0 ||
	    (len > hlen && ar_write_all(up, head + hlen, len - hlen) < 0))
		return -1;
	return 0;
}
