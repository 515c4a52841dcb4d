/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/egress_tls.c: where a secret's value
 * replaces its placeholder in a request head. No network, no TLS. */
#include <string.h>

#include "../../runtime/sandbox/egress_tls.h"
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
	CHECK(ar_egress_secrets_apply(&s, 1, "api.test", 443, buf, &len,
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
	CHECK(ar_egress_secrets_apply(&s, 1, "evil.test", 443, buf, &len,
				      sizeof(buf)));
	buf[len] = '\0';
	CHECK(strstr(buf, "REAL-VALUE") == NULL);
	CHECK(strstr(buf, "Bearer agentrun-secret-00ff\r\n") != NULL);
	len = strlen(head);
	memcpy(buf, head, len + 1);
	CHECK(ar_egress_secrets_apply(&s, 1, "api.test", 8443, buf, &len,
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
	CHECK(!ar_egress_secrets_apply(&s, 1, "api.test", 443, buf, &len, 60));
	ar_egress_policy_release(&s.hosts);
}

UNIT_MAIN()
