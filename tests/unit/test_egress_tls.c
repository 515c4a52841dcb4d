/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/egress/egress_tls.c: where a secret's value
 * replaces its placeholder in a request head. No network, no TLS. */
#include <string.h>

#include "../../runtime/sandbox/egress/egress_tls.h"
#include "unit.h"

static struct ar_egress_secret secret(const char *hosts)
{
	struct ar_egress_secret s = { .name = "TOKEN",
				      .value = "REAL-VALUE",
				      .placeholder = "agentrun-secret-00ff" };
	struct ar_error err = AR_ERROR_INIT;

	if (ar_egress_policy_add(&s.hosts, hosts, &err) < 0)
		printf("# unexpected: %s\n", err.msg);
	return s;
}

static const char head[] = "POST /v1/x?k=agentrun-secret-00ff HTTP/1.1\r\n"
			   "Host: api.test\r\n"
			   "Authorization: Bearer agentrun-secret-00ff\r\n"
			   "X-Two: agentrun-secret-00ffagentrun-secret-00ff\r\n"
			   "Connection: keep-alive\r\n"
			   "Keep-Alive: 5\r\n"
			   "\r\n";

UNIT_TEST(headers_only_for_the_listed_host)
{
	struct ar_egress_secret s = secret("api.test:443");
	char buf[1024];
	size_t len = strlen(head);

	memcpy(buf, head, len + 1);
	CHECK(ar_egress_secrets_apply(&s, 1, "api.test", 443, true, buf, &len,
				      sizeof(buf)));
	buf[len] = '\0';
	CHECK_STR_EQ(buf, "POST /v1/x?k=agentrun-secret-00ff HTTP/1.1\r\n"
			  "Host: api.test\r\n"
			  "Authorization: Bearer REAL-VALUE\r\n"
			  "X-Two: REAL-VALUEREAL-VALUE\r\n"
			  "Connection: close\r\n\r\n");
	/* another host, another port: the placeholder stays */
	len = strlen(head);
	memcpy(buf, head, len + 1);
	CHECK(ar_egress_secrets_apply(&s, 1, "evil.test", 443, true, buf, &len,
				      sizeof(buf)));
	buf[len] = '\0';
	CHECK(strstr(buf, "REAL-VALUE") == NULL);
	CHECK(strstr(buf, "Bearer agentrun-secret-00ff\r\n") != NULL);
	len = strlen(head);
	memcpy(buf, head, len + 1);
	CHECK(ar_egress_secrets_apply(&s, 1, "api.test", 8443, true, buf, &len,
				      sizeof(buf)));
	buf[len] = '\0';
	CHECK(strstr(buf, "REAL-VALUE") == NULL);
	CHECK(ar_egress_secrets_for(&s, 1, "api.test", 443));
	CHECK(!ar_egress_secrets_for(&s, 1, "api.test", 80));
	CHECK(!ar_egress_secrets_for(&s, 1, "x.api.test", 443));
	ar_egress_policy_release(&s.hosts);
}

UNIT_TEST(too_long_fails)
{
	struct ar_egress_secret s = secret("api.test");
	char buf[sizeof(head) + 4];
	size_t len = strlen(head);

	memcpy(buf, head, len + 1);
	/* REAL-VALUE is shorter, but "Connection: close" does not fit */
	CHECK(!ar_egress_secrets_apply(&s, 1, "api.test", 443, true, buf, &len,
				       60));
	ar_egress_policy_release(&s.hosts);
}

UNIT_TEST(withheld_when_not_injecting)
{
	struct ar_egress_secret s = secret("api.test:443");
	char buf[1024];
	size_t len = strlen(head);

	memcpy(buf, head, len + 1);
	CHECK(ar_egress_secrets_apply(&s, 1, "api.test", 443, false, buf, &len,
				      sizeof(buf)));
	buf[len] = '\0';
	CHECK(strstr(buf, "REAL-VALUE") == NULL);
	CHECK(strstr(buf, "Bearer agentrun-secret-00ff\r\n") != NULL);
	CHECK(strstr(buf, "Connection: close\r\n\r\n") != NULL);
	ar_egress_policy_release(&s.hosts);
}

static enum ar_secret_verdict verdict(const char *h, const char *host,
				      unsigned port, char *asked)
{
	char why[128];

	return ar_egress_request_verdict(h, strlen(h), host, port, why,
					 sizeof(why), asked, 256);
}

#define V(req, host, port) verdict(req, host, port, asked)

UNIT_TEST(request_verdict)
{
	char asked[256];

	/* the host the decision was made for, however it is spelled */
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test\r\n\r\n", "api.test", 443) ==
	      AR_SECRET_INJECT);
	CHECK(V("GET / HTTP/1.1\r\nhOsT:  API.Test:443 \r\n\r\n", "api.test",
		443) == AR_SECRET_INJECT);
	CHECK(V("GET /x HTTP/1.1\r\nHost: api.test:8443\r\n\r\n", "api.test",
		8443) == AR_SECRET_INJECT);
	CHECK(V("GET https://api.test/x HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_INJECT);
	CHECK(V("GET https://API.test:443/x HTTP/1.0\r\n\r\n", "api.test",
		443) == AR_SECRET_INJECT);
	CHECK(V("OPTIONS * HTTP/1.1\r\nHost: api.test\r\n\r\n", "api.test",
		443) == AR_SECRET_INJECT);
	CHECK(V("GET / HTTP/1.1\r\nHost: [::1]:443\r\n\r\n", "::1", 443) ==
	      AR_SECRET_INJECT);
	/* another host: in Host, in the target, by port, by a dot */
	CHECK(V("GET / HTTP/1.1\r\nHost: other.test\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	CHECK_STR_EQ(asked, "other.test");
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test:444\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test.\r\n\r\n", "api.test", 443) ==
	      AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test..\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: x@api.test\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test.other.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET https://other.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK_STR_EQ(asked, "other.test");
	CHECK(V("GET http://api.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET https://api.test@other.test/ HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("CONNECT other.test:443 HTTP/1.1\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	/* no Host, two Hosts, hidden Hosts */
	CHECK(V("GET / HTTP/1.0\r\n\r\n", "api.test", 443) ==
	      AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test\r\nHOST: other.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_REFUSE);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_REFUSE);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test\r\n other.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost : other.test\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nHost: api.test\nHost: other.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1\r\nX: 1\rHost: other.test\r\nHost: api.test\r\n\r\n",
		"api.test", 443) == AR_SECRET_WITHHOLD);
	/* not HTTP/1.x (an HTTP/2 preface), a malformed line */
	CHECK(V("PRI * HTTP/2.0\r\n\r\n", "api.test", 443) ==
	      AR_SECRET_WITHHOLD);
	CHECK(V("GET  / HTTP/1.1\r\nHost: api.test\r\n\r\n", "api.test", 443) ==
	      AR_SECRET_WITHHOLD);
	CHECK(V("GET / HTTP/1.1 x\r\nHost: api.test\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	/* what the request named, quoted: no escape reaches a terminal */
	CHECK(V("GET / HTTP/1.1\r\nHost: a\033[2K\033[1Ab\r\n\r\n", "api.test",
		443) == AR_SECRET_WITHHOLD);
	CHECK_STR_EQ(asked, "\"a\\033[2K\\033[1Ab\"");
}

UNIT_MAIN()
