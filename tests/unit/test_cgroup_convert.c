/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The pure parts of cgroup support: v1 -> v2 conversions, unified key
 * validation, cgroupsPath resolution (incl. the systemd form), stats JSON,
 * and refusals that need no cgroup file system. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>

#include "cgroup.h"
#include "parse_resources_doc.h"
#include "unit.h"
#include "utils.h"

UNIT_TEST(shares_to_weight)
{
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(0), 0);
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(1), 1);
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(2), 1);
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(1024), 39);
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(262144), 10000);
	CHECK_INT_EQ(ar_cgroup_shares_to_weight(1000000), 10000);
	CHECK(ar_cgroup_shares_to_weight(512) <
	      ar_cgroup_shares_to_weight(2048));
}

UNIT_TEST(blkio_weight)
{
	CHECK_INT_EQ(ar_cgroup_blkio_to_io_weight(0), 0);
	CHECK_INT_EQ(ar_cgroup_blkio_to_io_weight(10), 1);
	CHECK_INT_EQ(ar_cgroup_blkio_to_io_weight(500), 4950);
	CHECK_INT_EQ(ar_cgroup_blkio_to_io_weight(1000), 10000);
	CHECK_INT_EQ(ar_cgroup_blkio_to_io_weight(5000), 10000);
}

UNIT_TEST(swap_conversion)
{
	struct ar_error err = AR_ERROR_INIT;
	int64_t out;
	bool set;

	CHECK(ar_cgroup_swap_to_v2(-1, 1 << 20, &out, &set, &err) == 0);
	CHECK(set && out == -1);
	CHECK(ar_cgroup_swap_to_v2(0, 1 << 20, &out, &set, &err) == 0);
	CHECK(!set);
	CHECK(ar_cgroup_swap_to_v2(2LL << 30, 1LL << 30, &out, &set, &err) ==
	      0);
	CHECK(set && out == 1LL << 30);
	CHECK(ar_cgroup_swap_to_v2(1LL << 30, 1LL << 30, &out, &set, &err) ==
	      0);
	CHECK(set && out == 0);
	CHECK(ar_cgroup_swap_to_v2(512LL << 20, 1LL << 30, &out, &set, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, ">= memory.limit");
	ar_error_clear(&err);
	CHECK(ar_cgroup_swap_to_v2(1LL << 30, -1, &out, &set, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "needs a memory limit");
	CHECK(ar_cgroup_swap_to_v2(-5, 100, &out, &set, &err) < 0);
}

UNIT_TEST(unified_keys)
{
	struct ar_error err = AR_ERROR_INIT;
	unsigned c;

	CHECK(ar_cgroup_unified_key_check("memory.max", &c, &err) == 0);
	CHECK_INT_EQ(c, AR_CG_MEMORY);
	CHECK(ar_cgroup_unified_key_check("memory.oom.group", &c, &err) == 0);
	CHECK_INT_EQ(c, AR_CG_MEMORY);
	CHECK(ar_cgroup_unified_key_check("cgroup.freeze", &c, &err) == 0);
	CHECK_INT_EQ(c, 0);
	CHECK(ar_cgroup_unified_key_check("io.max", &c, &err) == 0);
	CHECK_INT_EQ(c, AR_CG_IO);

	CHECK(ar_cgroup_unified_key_check("../../../etc/passwd", &c, &err) < 0);
	CHECK_STR_CONTAINS(err.msg,
			   "linux.resources.unified.../../../etc/passwd");
	CHECK(ar_cgroup_unified_key_check("memory/../../x", &c, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "no '/'");
	CHECK(ar_cgroup_unified_key_check("..", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("memory..max", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("nodot", &c, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "controller.file");
	CHECK(ar_cgroup_unified_key_check(".max", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("memory.", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("memory.max\n", &c, &err) < 0);
	CHECK(ar_cgroup_unified_key_check("bogus.max", &c, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "unknown controller `bogus`");
}

static void check_path(const char *cp, bool rootless, const char *base,
		       const char *want)
{
	struct ar_error err = AR_ERROR_INIT;
	char *out = NULL;

	if (ar_cgroup_resolve_path(cp, "c1", rootless, base, &out, &err) < 0) {
		printf("# resolve `%s`: %s\n", cp ? cp : "(null)", err.msg);
		CHECK(!"resolve failed");
		return;
	}
	CHECK_STR_EQ(out, want);
	free(out);
}

static void check_path_fails(const char *cp, const char *msg)
{
	struct ar_error err = AR_ERROR_INIT;
	char *out = NULL;

	CHECK(ar_cgroup_resolve_path(cp, "c1", false, "/", &out, &err) < 0);
	CHECK(out == NULL);
	CHECK_STR_CONTAINS(err.msg, msg);
	free(out);
}

UNIT_TEST(cgroups_path)
{
	check_path(NULL, false, "/", "/agentrun/c1");
	check_path("", false, "/", "/agentrun/c1");
	check_path("/a/b", false, "/", "/a/b");
	check_path("a//b/", false, "/", "/a/b");
	check_path(NULL, true, "/user.slice/u", "/user.slice/u/agentrun-c1");
	check_path("x/y", true, "/user.slice/u", "/user.slice/u/x/y");
	check_path("/abs", true, "/user.slice/u", "/abs");
	check_path_fails("/../x", "are not allowed");
	check_path_fails("a/./b", "are not allowed");
	check_path_fails("/", "root of the hierarchy");
	check_path_fails("//", "root of the hierarchy");
}

UNIT_TEST(systemd_path)
{
	check_path("machine.slice:libpod:abc", false, "/",
		   "/machine.slice/libpod-abc.scope");
	check_path("a-b.slice:p:n", false, "/", "/a.slice/a-b.slice/p-n.scope");
	check_path(":p:n", false, "/", "/system.slice/p-n.scope");
	check_path("x.slice::n", false, "/", "/x.slice/n.scope");
	check_path("-.slice:p:n", false, "/", "/p-n.scope");
	check_path("a.slice::sub.slice", false, "/", "/a.slice/sub.slice");
	check_path(":p:n", true, "/user.slice/u",
		   "/user.slice/u/user.slice/p-n.scope");
	check_path("user.slice:podman:x", true, "/u",
		   "/u/user.slice/podman-x.scope");
	check_path_fails("a:b:c:d", "slice:prefix:name");
	check_path_fails("a:b", "slice:prefix:name");
	check_path_fails("foo:b:c", "invalid systemd slice `foo`");
	check_path_fails("a--b.slice:p:n", "invalid systemd slice");
	check_path_fails("a.slice:p:", "invalid unit name");
	check_path_fails("a.slice:p:..", "invalid unit name");
}

static void check_unit(const char *cp, bool rootless, const char *slice,
		       const char *unit)
{
	struct ar_error err = AR_ERROR_INIT;
	char *s = NULL, *u = NULL;

	CHECK(ar_cgroup_systemd_unit(cp, "ID", rootless, &s, &u, &err) == 0);
	CHECK_STR_EQ(s, slice);
	CHECK_STR_EQ(u, unit);
	free(s);
	free(u);
}

static void check_unit_fails(const char *cp, const char *msg)
{
	struct ar_error err = AR_ERROR_INIT;
	char *s = NULL, *u = NULL;

	CHECK(ar_cgroup_systemd_unit(cp, "ID", false, &s, &u, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, msg);
	CHECK(s == NULL && u == NULL);
}

/* the systemd manager's unit and slice (cgroup_systemd_props.c) */
UNIT_TEST(systemd_unit_names)
{
	check_unit("machine.slice:libpod:abc", false, "machine.slice",
		   "libpod-abc.scope");
	check_unit(":p:n", false, "system.slice", "p-n.scope");
	check_unit(":p:n", true, "user.slice", "p-n.scope");
	check_unit("x.slice::n", false, "x.slice", "n.scope");
	check_unit(NULL, false, "system.slice", "agentrun-ID.scope");
	check_unit("", true, "user.slice", "agentrun-ID.scope");
	check_unit_fails("/a/b", "slice:prefix:name");
	check_unit_fails("a/b", "slice:prefix:name");
	check_unit_fails("a:b", "slice:prefix:name");
	check_unit_fails("a:b:c:d", "slice:prefix:name");
	check_unit_fails("a.slice:p:", "no unit name");
	check_unit_fails("a.slice:p:..", "invalid name");
	check_unit_fails("a.slice::sub.slice", "not supported");
	check_unit_fails("foo:b:c", "invalid systemd slice");
}

UNIT_TEST(resources_ctrls)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct oci_kv kv = { (char *)"hugetlb.1GB.max", (char *)"0" };
	struct ar_error err = AR_ERROR_INIT;
	unsigned m;

	r->present = true;
	CHECK(!ar_cgroup_resources_any(r));
	CHECK(ar_cgroup_resources_ctrls(r, &m, &err) == 0 && m == 0);
	/* devices alone are not a limit: the default spec has them */
	r->n_devices = 1;
	CHECK(!ar_cgroup_resources_any(r));
	r->pids.present = true;
	r->pids.limit = 10;
	r->cpu.cpus = (char *)"0";
	r->memory.limit = (struct oci_opt_i64){ true, 1 << 20 };
	r->unified.items = &kv;
	r->unified.n = 1;
	CHECK(ar_cgroup_resources_any(r));
	CHECK(ar_cgroup_resources_ctrls(r, &m, &err) == 0);
	CHECK_INT_EQ(m,
		     AR_CG_PIDS | AR_CG_CPUSET | AR_CG_MEMORY | AR_CG_HUGETLB);
	kv.key = (char *)"../x";
	CHECK(ar_cgroup_resources_ctrls(r, &m, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "linux.resources.unified.../x");
	r->unified.n = 0;
	oci_config_free(cfg);
}

UNIT_TEST(stats_json)
{
	struct ar_cgroup_stats s = { 0 };
	struct ar_cgroup_io_stat io = { 8, 0, 100, 200, 1, 2, 0, 0 };
	struct ar_error err = AR_ERROR_INIT;
	char *j = NULL;

	s.has_cpu = true;
	s.cpu_usage_usec = 5;
	s.cpu_nr_throttled = 3;
	s.has_memory = true;
	s.mem_current = 4096;
	s.mem_max = AR_CG_MAX;
	s.ev_oom_kill = 2;
	s.memory_stat = ar_xstrdup("anon 10\nfile 20\n");
	s.has_pids = true;
	s.pids_current = 3;
	s.pids_max = 100;
	s.io = &io;
	s.n_io = 1;
	CHECK_INT_EQ(ar_cgroup_stats_json("c\"1", &s, &j, &err), 0);
	CHECK_STR_CONTAINS(j,
			   "{\"type\":\"stats\",\"id\":\"c\\\"1\",\"data\":{");
	CHECK_STR_CONTAINS(j, "\"usage\":{\"total\":5000,");
	CHECK_STR_CONTAINS(j, "\"throttledPeriods\":3");
	CHECK_STR_CONTAINS(j, "\"usage\":4096");
	CHECK_STR_CONTAINS(j, "\"limit\":18446744073709551615");
	CHECK_STR_CONTAINS(j, "\"oomKill\":2");
	CHECK_STR_CONTAINS(j, "\"raw\":{\"anon\":10,\"file\":20}");
	CHECK_STR_CONTAINS(j, "\"pids\":{\"current\":3,\"limit\":100}");
	CHECK_STR_CONTAINS(
		j, "{\"major\":8,\"minor\":0,\"op\":\"Read\",\"value\":100}");
	CHECK_STR_CONTAINS(
		j,
		"\"ioServicedRecursive\":[{\"major\":8,\"minor\":0,\"op\":\"Read\",\"value\":1}");
	CHECK(strcmp(j + strlen(j) - 2, "}\n") == 0);
	CHECK(strchr(j, '\n') == j + strlen(j) - 1);
	free(j);
	free(s.memory_stat);
}

UNIT_TEST(refuses_non_cgroup2_paths)
{
	struct ar_error err = AR_ERROR_INIT;
	pid_t *p = NULL;
	size_t n;

	CHECK(ar_cgroup_destroy("/tmp", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "not on a cgroup2 file system");
	ar_error_clear(&err);
	CHECK(ar_cgroup_freeze("/tmp", true, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "not on a cgroup2");
	ar_error_clear(&err);
	CHECK(ar_cgroup_kill_all("/proc", 9, &err) < 0);
	ar_error_clear(&err);
	CHECK(ar_cgroup_pids("relative/path", &p, &n, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "invalid cgroup path");
	ar_error_clear(&err);
	CHECK(ar_cgroup_destroy("/sys/fs/cgroup/../../etc", &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "invalid cgroup path");
	ar_error_clear(&err);
	/* already gone: success (delete after a crash) */
	CHECK(ar_cgroup_destroy("/nonexistent-agentrun-cgroup/x", &err) == 0);
	CHECK(ar_cgroup_destroy(NULL, &err) == 0);
	CHECK(!ar_cgroup_is_frozen("/tmp"));
}

UNIT_TEST(resources_document)
{
	static const char ok[] =
		"{\"pids\":{\"limit\":44},\"memory\":{\"limit\":-1,\"swap\":-1},"
		"\"cpu\":{\"cpus\":\"0-1\"},\"unified\":{\"io.max\":\"8:0 rbps=1\"}}";
	static const char bad[] = "{\"pids\":{\"limit\":\"x\"}}";
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;
	const struct oci_resources *r;

	CHECK(oci_resources_parse(ok, sizeof(ok) - 1, "r.json", &cfg, &err) ==
	      0);
	if (!cfg) {
		printf("# %s\n", err.msg);
		return;
	}
	r = &cfg->linux_.resources;
	CHECK(r->present && r->pids.present && r->pids.limit == 44);
	CHECK(r->memory.limit.set && r->memory.limit.v == -1);
	CHECK_STR_EQ(r->cpu.cpus, "0-1");
	CHECK_INT_EQ(r->unified.n, 1);
	oci_config_free(cfg);
	cfg = NULL;
	CHECK(oci_resources_parse(bad, sizeof(bad) - 1, "r.json", &cfg, &err) <
	      0);
	CHECK_STR_CONTAINS(err.msg, "r.json");
	CHECK_STR_CONTAINS(err.msg, "pids.limit");
	CHECK(oci_resources_parse("[]", 2, "r.json", &cfg, &err) < 0);
}

UNIT_MAIN()
