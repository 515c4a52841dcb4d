/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for runtime/sandbox/egress/egress_upstream.c: the upstream
 * proxy's URL, its credentials and NO_PROXY. No network. */
#include <string.h>

#include "../../runtime/sandbox/egress/egress_upstream.h"
#include "unit.h"

UNIT_TEST(url_forms)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_upstream u;

	CHECK(ar_upstream_parse("http://proxy.corp:8080", "x", &u, &err) == 0);
	CHECK_STR_EQ(u.host, "proxy.corp");
	CHECK_INT_EQ(u.port, 8080);
	CHECK(u.auth == NULL);
	CHECK_STR_EQ(u.shown, "proxy.corp:8080");
	ar_upstream_release(&u);
	CHECK(ar_upstream_parse("proxy.corp", "x", &u, &err) == 0);
	CHECK_INT_EQ(u.port, 1080);
	ar_upstream_release(&u);
	CHECK(ar_upstream_parse("HTTP://[::1]:3128/", "x", &u, &err) == 0);
	CHECK_STR_EQ(u.host, "::1");
	CHECK_STR_EQ(u.shown, "[::1]:3128");
	ar_upstream_release(&u);
	/* user:pass, %-escapes decoded, "@" in the password */
	CHECK(ar_upstream_parse("http://al%69ce:p%40ss@h:1", "x", &u, &err) ==
	      0);
	CHECK_STR_EQ(u.auth, "Basic YWxpY2U6cEBzcw=="); /* alice:p@ss */
	CHECK_STR_EQ(u.shown, "h:1");
	ar_upstream_release(&u);
}

UNIT_TEST(url_errors_never_show_credentials)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_upstream u;

	CHECK(ar_upstream_parse("socks5://u:pw1@h:1", "--upstream-proxy", &u,
				&err) < 0);
	CHECK_STR_CONTAINS(err.msg, "--upstream-proxy: only an http:// proxy");
	CHECK(strstr(err.msg, "pw1") == NULL);
	ar_error_clear(&err);
	CHECK(ar_upstream_parse("https://h:1", "x", &u, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_upstream_parse("http://u:pw2@h:1/p", "x", &u, &err) < 0);
	CHECK(strstr(err.msg, "pw2") == NULL);
	ar_error_clear(&err);
	CHECK(ar_upstream_parse("http://u:pw3@h:99999", "x", &u, &err) < 0);
	CHECK(strstr(err.msg, "pw3") == NULL);
	ar_error_clear(&err);
	CHECK(ar_upstream_parse("http://u:p%4@h:1", "x", &u, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_upstream_parse("http://u:p%00@h:1", "x", &u, &err) < 0);
	ar_error_clear(&err);
}

UNIT_TEST(no_proxy_as_curl)
{
	struct ar_no_proxy np;

	ar_no_proxy_parse("example.com, .corp.internal,10.0.0.0/8 "
			  "[fd00::]/8,192.168.1.5,localhost:8080",
			  &np);
	CHECK(ar_no_proxy_match(&np, "example.com"));
	CHECK(ar_no_proxy_match(&np, "www.example.com"));
	CHECK(ar_no_proxy_match(&np, "WWW.Example.COM"));
	CHECK(!ar_no_proxy_match(&np, "badexample.com"));
	CHECK(!ar_no_proxy_match(&np, "example.com.evil"));
	CHECK(ar_no_proxy_match(&np, "corp.internal"));
	CHECK(ar_no_proxy_match(&np, "git.corp.internal"));
	CHECK(ar_no_proxy_match(&np, "10.1.2.3"));
	CHECK(!ar_no_proxy_match(&np, "11.1.2.3"));
	CHECK(ar_no_proxy_match(&np, "fd12::1"));
	CHECK(!ar_no_proxy_match(&np, "fe80::1"));
	CHECK(ar_no_proxy_match(&np, "192.168.1.5"));
	CHECK(!ar_no_proxy_match(&np, "192.168.1.6"));
	CHECK(ar_no_proxy_match(&np, "localhost"));
	/* a name is not matched by address entries, nor an address by
	 * names */
	CHECK(!ar_no_proxy_match(&np, "10.example"));
	ar_no_proxy_parse("*", &np);
	CHECK(ar_no_proxy_match(&np, "anything.test"));
	ar_no_proxy_parse("", &np);
	CHECK(!ar_no_proxy_match(&np, "anything.test"));
	ar_no_proxy_parse(NULL, &np);
	CHECK(!ar_no_proxy_match(&np, "anything.test"));
	ar_no_proxy_parse("10.0.0.0/33,a/b", &np);
	CHECK(!ar_no_proxy_match(&np, "10.0.0.1"));
}

UNIT_TEST(base64)
{
	char out[16];

	ar_base64((const unsigned char *)"", 0, out);
	CHECK_STR_EQ(out, "");
	ar_base64((const unsigned char *)"f", 1, out);
	CHECK_STR_EQ(out, "Zg==");
	ar_base64((const unsigned char *)"fo", 2, out);
	CHECK_STR_EQ(out, "Zm8=");
	ar_base64((const unsigned char *)"foo", 3, out);
	CHECK_STR_EQ(out, "Zm9v");
}

UNIT_MAIN()
