/* SPDX-License-Identifier: GPL-2.0-or-later */
#include <errno.h>

#include "unit.h"
#include "userns.h"

UNIT_TEST(format_map)
{
	struct oci_id_mapping items[] = { { 0, 1000, 1 },
					  { 1, 100000, 65536 } };
	struct oci_id_mappings m = { items, 2 };
	char buf[128];

	CHECK_INT_EQ(ar_userns_format_map(&m, buf, sizeof(buf)), 24);
	CHECK_STR_EQ(buf, "0 1000 1\n1 100000 65536\n");
}

UNIT_TEST(format_map_too_small)
{
	struct oci_id_mapping items[] = { { 0, 1000, 1 },
					  { 1, 100000, 65536 } };
	struct oci_id_mappings m = { items, 2 };
	char buf[12];

	CHECK_INT_EQ(ar_userns_format_map(&m, buf, sizeof(buf)), -1);
	CHECK_INT_EQ(errno, ENOSPC);
}

UNIT_TEST(format_empty)
{
	struct oci_id_mappings m = { NULL, 0 };
	char buf[8];

	CHECK_INT_EQ(ar_userns_format_map(&m, buf, sizeof(buf)), 0);
	CHECK_STR_EQ(buf, "");
}

UNIT_TEST(own_id)
{
	struct oci_id_mapping one[] = { { 0, 1000, 1 } };
	struct oci_id_mapping big[] = { { 0, 1000, 2 } };
	struct oci_id_mapping two[] = { { 0, 1000, 1 }, { 1, 100000, 10 } };
	struct oci_id_mappings m1 = { one, 1 }, m2 = { big, 1 },
			       m3 = { two, 2 };

	CHECK(ar_userns_map_is_own(&m1, 1000));
	CHECK(!ar_userns_map_is_own(&m1, 1001));
	CHECK(!ar_userns_map_is_own(&m2, 1000));
	CHECK(!ar_userns_map_is_own(&m3, 1000));
}

UNIT_MAIN()
