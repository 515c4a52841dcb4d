/* SPDX-License-Identifier: GPL-2.0-or-later */
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

UNIT_MAIN()
