/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the systemd cgroup manager tells systemd (cgroup_systemd_props.c):
 * runc's org.systemd.property.* annotations in GVariant text, and the
 * limits as unit properties (start and update). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup_systemd_props.h"
#include "unit.h"

#define P "org.systemd.property."

static struct ar_systemd_prop parse_ok(const char *key, const char *value)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_systemd_prop p;

	if (ar_systemd_parse_property(key, value, &p, &err) < 0) {
		printf("# %s\n", err.msg);
		CHECK(!"parse failed");
	}
	return p;
}

static void parse_fails(const char *key, const char *value, const char *msg)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_systemd_prop p;

	CHECK(ar_systemd_parse_property(key, value, &p, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, key);
	CHECK_STR_CONTAINS(err.msg, msg);
}

static void prop_free(struct ar_systemd_prop *p)
{
	struct ar_systemd_props l = { .n = 1, .cap = 1 };

	l.v = malloc(sizeof(*p));
	*l.v = *p;
	ar_systemd_props_free(&l);
}

UNIT_TEST(property_values)
{
	struct ar_systemd_prop p;

	/* runc's documented examples */
	p = parse_ok(P "TimeoutStopUSec", "uint64 123456789");
	CHECK_STR_EQ(p.name, "TimeoutStopUSec");
	CHECK(p.type == 't' && p.u == 123456789);
	p = parse_ok(P "CollectMode", "'inactive-or-failed'");
	CHECK(p.type == 's');
	CHECK_STR_EQ(p.s, "inactive-or-failed");
	prop_free(&p);
	p = parse_ok(P "Description", " \"a \\\"b\\\" c\" ");
	CHECK_STR_EQ(p.s, "a \"b\" c");
	prop_free(&p);
	p = parse_ok(P "Delegate", "true");
	CHECK(p.type == 'b' && p.i == 1);
	p = parse_ok(P "SendSIGHUP", "false");
	CHECK(p.type == 'b' && p.i == 0);
	p = parse_ok(P "CPUWeight", "int64 -5");
	CHECK(p.type == 'x' && p.i == -5);
	p = parse_ok(P "CPUWeight", "@u 7");
	CHECK(p.type == 'u' && p.u == 7);
	p = parse_ok(P "CPUWeight", "42");
	CHECK(p.type == 'i' && p.i == 42);
	p = parse_ok(P "DelegateControllers", "['cpu', \"memory\"]");
	CHECK(p.type == 'a' && p.strv && p.strv[0] && p.strv[1] && !p.strv[2]);
	CHECK_STR_EQ(p.strv[0], "cpu");
	CHECK_STR_EQ(p.strv[1], "memory");
	prop_free(&p);
	p = parse_ok(P "DelegateControllers", "[]");
	CHECK(p.type == 'a' && p.strv && !p.strv[0]);
	prop_free(&p);
}

UNIT_TEST(property_sec_to_usec)
{
	struct ar_systemd_prop p;

	/* as runc: NAMESec (lowercase before Sec) -> NAMEUSec, seconds ->
	 * microseconds as uint64, whatever the number's type */
	p = parse_ok(P "TimeoutStopSec", "2");
	CHECK_STR_EQ(p.name, "TimeoutStopUSec");
	CHECK(p.type == 't' && p.u == 2000000);
	p = parse_ok(P "RuntimeMaxSec", "uint64 5000");
	CHECK_STR_EQ(p.name, "RuntimeMaxUSec");
	CHECK(p.type == 't' && p.u == 5000000000ull);
	p = parse_ok(P "RuntimeMaxSec", "1.5");
	CHECK(p.type == 't' && p.u == 1500000);
	/* USec stays as it is */
	p = parse_ok(P "TimeoutStopUSec", "uint64 7");
	CHECK_STR_EQ(p.name, "TimeoutStopUSec");
	CHECK(p.u == 7);
	parse_fails(P "TimeoutStopSec", "'x'", "seconds");
	parse_fails(P "TimeoutStopSec", "-1", "seconds");
	parse_fails(P "TimeoutStopSec", "uint64 18446744073709551615",
		    "too many seconds");
}

UNIT_TEST(property_malformed)
{
	parse_fails(P "TimeoutStopUSec", "uint64 12x", "not an integer");
	parse_fails(P "TimeoutStopUSec", "uint64 -1", "not an integer");
	parse_fails(P "TimeoutStopUSec", "uint32 4294967296", "out of range");
	parse_fails(P "TimeoutStopUSec", "int32 2147483648", "out of range");
	parse_fails(P "TimeoutStopUSec", "99999999999", "out of range");
	parse_fails(P "TimeoutStopUSec", "", "not a value");
	parse_fails(P "TimeoutStopUSec", "uint8 1", "not a value");
	parse_fails(P "TimeoutStopUSec", "1.5", "decimal");
	parse_fails(P "CollectMode", "'inactive", "unterminated");
	parse_fails(P "CollectMode", "'a' 'b'", "text after it");
	parse_fails(P "DelegateControllers", "['a', b]", "array");
	parse_fails(P "DelegateControllers", "['a'", "array");
	parse_fails(P "DelegateControllers", "['a'] x", "array");
	parse_fails(P "Bad_Name", "true", "ASCII letters");
	parse_fails(P "Ab", "true", "3 to");
	parse_fails(P "Dé", "true", "ASCII letters");
}

UNIT_TEST(annotation_list)
{
	struct oci_kv kv[] = {
		{ (char *)"run.oci.systemd.subgroup", (char *)"x" },
		{ (char *)P "CollectMode", (char *)"'inactive-or-failed'" },
		{ (char *)"org.systemd.propertyX", (char *)"ignored" },
		{ (char *)P "TimeoutStopSec", (char *)"3" },
	};
	struct oci_kv bad[] = {
		{ (char *)P "CollectMode", (char *)"'x'" },
		{ (char *)P "TimeoutStopUSec", (char *)"uint64 abc" },
	};
	struct ar_systemd_props l = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	CHECK(ar_systemd_annotation_props(kv, 4, &l, &err) == 0);
	CHECK_INT_EQ(l.n, 2);
	CHECK_STR_EQ(l.v[0].name, "CollectMode");
	CHECK_STR_EQ(l.v[1].name, "TimeoutStopUSec");
	CHECK(l.v[1].u == 3000000);
	ar_systemd_props_free(&l);
	CHECK(ar_systemd_annotation_props(bad, 2, &l, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, P "TimeoutStopUSec=uint64 abc");
	ar_systemd_props_free(&l);
}

static const struct ar_systemd_prop *find(const struct ar_systemd_props *l,
					  const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->v[i].name, name) == 0)
			return &l->v[i];
	return NULL;
}

UNIT_TEST(resource_props)
{
	struct oci_resources r;
	struct ar_systemd_props l = { 0 };
	struct ar_error err = AR_ERROR_INIT;

	memset(&r, 0, sizeof(r));
	r.memory.limit.set = true;
	r.memory.limit.v = 64 << 20;
	r.pids.present = true;
	r.pids.limit = 30;
	r.cpu.quota.set = true;
	r.cpu.quota.v = 50000;
	r.cpu.period.set = true;
	r.cpu.period.v = 100000;
	CHECK(ar_systemd_resource_props(&r, &l, &err) == 0);
	CHECK(find(&l, "MemoryMax") && find(&l, "MemoryMax")->u == 64 << 20);
	CHECK(find(&l, "TasksMax") && find(&l, "TasksMax")->u == 30);
	CHECK(find(&l, "CPUQuotaPerSecUSec") &&
	      find(&l, "CPUQuotaPerSecUSec")->u == 500000);
	CHECK(find(&l, "CPUQuotaPeriodUSec") &&
	      find(&l, "CPUQuotaPeriodUSec")->u == 100000);
	CHECK(!find(&l, "MemoryLow") && !find(&l, "CPUWeight"));
	ar_systemd_props_free(&l);
	/* update --memory -1 / --pids-limit -1 / --cpu-quota -1: infinity */
	memset(&r, 0, sizeof(r));
	r.memory.limit.set = true;
	r.memory.limit.v = -1;
	r.pids.present = true;
	r.pids.limit = -1;
	r.cpu.quota.set = true;
	r.cpu.quota.v = -1;
	CHECK(ar_systemd_resource_props(&r, &l, &err) == 0);
	CHECK(find(&l, "MemoryMax") && find(&l, "MemoryMax")->u == UINT64_MAX);
	CHECK(find(&l, "TasksMax") && find(&l, "TasksMax")->u == UINT64_MAX);
	CHECK(find(&l, "CPUQuotaPerSecUSec") &&
	      find(&l, "CPUQuotaPerSecUSec")->u == UINT64_MAX);
	ar_systemd_props_free(&l);
	/* pids.limit 0: systemd's TasksMax left as it is (runc) */
	memset(&r, 0, sizeof(r));
	r.pids.present = true;
	CHECK(ar_systemd_resource_props(&r, &l, &err) == 0 && l.n == 0);
	CHECK(ar_systemd_resource_props(NULL, &l, &err) == 0 && l.n == 0);
}

UNIT_MAIN()
