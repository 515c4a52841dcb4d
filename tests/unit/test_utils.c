/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>
#include <stdint.h>

#include "unit.h"
#include "utils.h"

UNIT_TEST(path_under_by_name)
{
	CHECK(ar_path_under("/a", "/a"));
	CHECK(ar_path_under("/a/b", "/a"));
	CHECK(ar_path_under("/a/b/", "/a"));
	CHECK(ar_path_under("/a/b", "/a/"));
	CHECK(ar_path_under("/a/b", "/a//"));
	CHECK(!ar_path_under("/ab", "/a"));
	CHECK(!ar_path_under("/a", "/a/b"));
	CHECK(!ar_path_under("/b", "/a"));
}

UNIT_TEST(path_under_root)
{
	CHECK(ar_path_under("/", "/"));
	CHECK(ar_path_under("/x/y", "/"));
	CHECK(ar_path_under("/x", "//"));
	CHECK(!ar_path_under("relative", "/"));
}

UNIT_TEST(parse_u64)
{
	unsigned long long v = 7;

	CHECK(ar_parse_u64("0", &v) == 0 && v == 0);
	CHECK(ar_parse_u64("18446744073709551615", &v) == 0 &&
	      v == 18446744073709551615ULL);
	v = 7;
	errno = 0;
	CHECK(ar_parse_u64("18446744073709551616", &v) < 0 && errno == ERANGE);
	CHECK(ar_parse_u64("-1", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_u64("+1", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_u64(" 1", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_u64("1x", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_u64("", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_u64(NULL, &v) < 0 && errno == EINVAL);
	CHECK(v == 7); /* untouched on failure */
}

UNIT_TEST(parse_i64)
{
	long long v = 7;

	CHECK(ar_parse_i64("-9223372036854775808", &v) == 0 && v == INT64_MIN);
	CHECK(ar_parse_i64("42", &v) == 0 && v == 42);
	v = 7;
	errno = 0;
	CHECK(ar_parse_i64("9223372036854775808", &v) < 0 && errno == ERANGE);
	CHECK(ar_parse_i64("+1", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_i64(" 1", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_i64("1 ", &v) < 0 && errno == EINVAL);
	CHECK(ar_parse_i64("", &v) < 0 && errno == EINVAL);
	CHECK(v == 7);
}

UNIT_TEST(quote_agent_strings)
{
	char *q, buf[16];

	/* plain text stays as is */
	q = ar_quote("api.example.com:443");
	CHECK_STR_EQ(q, "api.example.com:443");
	free(q);
	/* escape sequences (erase line, cursor up) never reach a terminal */
	q = ar_quote("a\033[2K\033[1Ab");
	CHECK_STR_EQ(q, "\"a\\033[2K\\033[1Ab\"");
	free(q);
	q = ar_quote("x\r\n\t\"\\\x7f\xc3\xa9");
	CHECK_STR_EQ(q, "\"x\\r\\n\\t\\\"\\\\\\177\\303\\251\"");
	free(q);
	q = ar_quote_n("a\0b", 3);
	CHECK_STR_EQ(q, "\"a\\000b\"");
	free(q);
	/* cut at a whole escape, the closing quote kept */
	CHECK(ar_quote_to(buf, sizeof(buf), "\033\033\033\033", 4) == 14);
	CHECK_STR_EQ(buf, "\"\\033\\033\\033\"");
	CHECK(ar_quote_to(buf, 3, "\033", 1) == 2);
	CHECK_STR_EQ(buf, "\"\"");
	CHECK(ar_quote_to(buf, 4, "abcdef", 6) == 3);
	CHECK_STR_EQ(buf, "abc");
}

UNIT_MAIN()
