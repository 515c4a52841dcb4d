/* SPDX-License-Identifier: GPL-2.0-or-later */
/* ar_cgroup_create() against a FAKE cgroup tree: a temp directory with the
 * interface files pre-created as regular files, so we can check which
 * value lands in which file without a real cgroup2 mount. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "unit.h"
#include "utils.h"

static char root[256];

static void put(const char *rel, const char *content)
{
	char *p = ar_xasprintf("%s/%s", root, rel);
	int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || ar_write_all(fd, content, strlen(content)) < 0) {
		printf("# cannot write %s\n", p);
		abort();
	}
	close(fd);
	free(p);
}

static char *get(const char *rel)
{
	char *p = ar_xasprintf("%s/%s", root, rel), *buf = NULL;
	struct ar_error err = AR_ERROR_INIT;

	if (ar_read_file_at(AT_FDCWD, p, 1 << 20, &buf, NULL, &err) < 0)
		buf = ar_xstrdup("<missing>");
	free(p);
	return buf;
}

static void mkd(const char *rel)
{
	char *p = ar_xasprintf("%s/%s", root, rel);

	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		abort();
	free(p);
}

#define ALL_CTRLS "cpuset cpu io memory hugetlb pids rdma misc\n"

static const char *const leaf_files[] = {
	"cgroup.procs", "cgroup.events",    "cgroup.subtree_control",
	"memory.max",	"memory.low",	    "memory.swap.max",
	"cpu.weight",	"cpu.max.burst",    "cpu.idle",
	"cpuset.cpus",	"cpuset.mems",	    "pids.max",
	"io.weight",	"io.max",	    "hugetlb.2MB.max",
	"rdma.max",	"memory.oom.group",
};

/* A cgroup directory with empty interface files. */
static void fake_cgroup(const char *rel, const char *controllers)
{
	mkd(rel);
	for (size_t i = 0; i < AR_ARRAY_SIZE(leaf_files); i++) {
		char *f = ar_xasprintf("%s/%s", rel, leaf_files[i]);

		put(f, "");
		free(f);
	}
	{
		char *f = ar_xasprintf("%s/cgroup.controllers", rel);

		put(f, controllers);
		free(f);
		f = ar_xasprintf("%s/cpu.max", rel);
		put(f, "max 100000\n");
		free(f);
	}
}

static void setup(const char *root_ctrls)
{
	snprintf(root, sizeof(root), "%s/agentrun-cgfake.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(root))
		abort();
	put("cgroup.controllers", root_ctrls);
	put("cgroup.subtree_control", "");
	put("cgroup.procs", "1\n");
	fake_cgroup("agentrun", "");
	fake_cgroup("agentrun/c1", "");
}

static void teardown(void)
{
	char *cmd = ar_xasprintf("rm -rf '%s'", root);

	if (system(cmd) != 0)
		printf("# cleanup of %s failed\n", root);
	free(cmd);
}

static struct oci_config *full_resources(void)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_arena *a = &cfg->arena;

	r->present = true;
	r->memory.present = true;
	r->memory.limit = (struct oci_opt_i64){ true, 1 << 20 };
	r->memory.swap = (struct oci_opt_i64){ true, 3 << 20 };
	r->memory.reservation = (struct oci_opt_i64){ true, 1 << 19 };
	r->cpu.present = true;
	r->cpu.shares = (struct oci_opt_u64){ true, 1024 };
	r->cpu.quota = (struct oci_opt_i64){ true, 50000 };
	r->cpu.burst = (struct oci_opt_u64){ true, 1000 };
	r->cpu.idle = (struct oci_opt_i64){ true, 0 };
	r->cpu.cpus = oci_arena_strdup(a, "0-1");
	r->cpu.mems = oci_arena_strdup(a, "0");
	r->pids.present = true;
	r->pids.limit = 100;
	r->block_io.present = true;
	r->block_io.weight = (struct oci_opt_u32){ true, 500 };
	r->block_io.throttle_read_bps.items =
		oci_arena_alloc(a, 2 * sizeof(struct oci_throttle_device));
	r->block_io.throttle_read_bps.items[0] =
		(struct oci_throttle_device){ 8, 0, 1048576 };
	r->block_io.throttle_read_bps.items[1] =
		(struct oci_throttle_device){ 8, 16, 2048 };
	r->block_io.throttle_read_bps.n = 2;
	r->block_io.throttle_write_iops.items =
		oci_arena_alloc(a, sizeof(struct oci_throttle_device));
	r->block_io.throttle_write_iops.items[0] =
		(struct oci_throttle_device){ 8, 0, 77 };
	r->block_io.throttle_write_iops.n = 1;
	r->hugepage_limits =
		oci_arena_alloc(a, sizeof(struct oci_hugepage_limit));
	r->hugepage_limits[0].page_size = oci_arena_strdup(a, "2MB");
	r->hugepage_limits[0].limit = 4194304;
	r->n_hugepage_limits = 1;
	r->unified.items = oci_arena_alloc(a, sizeof(struct oci_kv));
	r->unified.items[0].key = oci_arena_strdup(a, "memory.oom.group");
	r->unified.items[0].value = oci_arena_strdup(a, "1");
	r->unified.n = 1;
	return cfg;
}

static struct ar_cgroup_opts opts_for(const struct oci_config *cfg)
{
	struct ar_cgroup_opts o = { 0 };

	ar_cgroup_opts_from_config(&o, cfg, "c1");
	o.manager = AR_CGROUP_MGR_CGROUPFS;
	o.mount = root;
	o.own_cgroup = "/";
	return o;
}

#define CHECK_FILE(rel, want)                                                  \
	do {                                                                   \
		char *_g = get(rel);                                           \
		CHECK_STR_EQ(_g, want);                                        \
		free(_g);                                                      \
	} while (0)

#define CHECK_FILE_HAS(rel, want)                                              \
	do {                                                                   \
		char *_g = get(rel);                                           \
		CHECK_STR_CONTAINS(_g, want);                                  \
		free(_g);                                                      \
	} while (0)

UNIT_TEST(create_applies_resources)
{
	struct oci_config *cfg = full_resources();
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;
	char *want;

	setup(ALL_CTRLS);
	o = opts_for(cfg);
	o.pid = 4242;
	if (ar_cgroup_create(&o, &cg, &err) < 0) {
		printf("# %s\n", err.msg);
		CHECK(!"create failed");
		goto out;
	}
	want = ar_xasprintf("%s/agentrun/c1", root);
	CHECK_STR_EQ(ar_cgroup_path(cg), want);
	free(want);
	CHECK(ar_cgroup_dirfd(cg) >= 0);
	CHECK_FILE("agentrun/c1/cgroup.procs", "4242");
	CHECK_FILE("agentrun/c1/memory.max", "1048576");
	CHECK_FILE("agentrun/c1/memory.swap.max", "2097152");
	CHECK_FILE("agentrun/c1/memory.low", "524288");
	CHECK_FILE("agentrun/c1/cpu.weight", "39");
	CHECK_FILE("agentrun/c1/cpu.max", "50000 100000");
	CHECK_FILE("agentrun/c1/cpu.max.burst", "1000");
	CHECK_FILE("agentrun/c1/cpu.idle", "0");
	CHECK_FILE("agentrun/c1/cpuset.cpus", "0-1");
	CHECK_FILE("agentrun/c1/cpuset.mems", "0");
	CHECK_FILE("agentrun/c1/pids.max", "100");
	CHECK_FILE("agentrun/c1/io.weight", "default 4950");
	CHECK_FILE("agentrun/c1/io.max",
		   "8:0 rbps=10485768:16 rbps=20488:0 wiops=77");
	CHECK_FILE("agentrun/c1/hugetlb.2MB.max", "4194304");
	CHECK_FILE("agentrun/c1/memory.oom.group", "1");
	/* controllers enabled from the root down to the parent, not in the
	 * leaf */
	CHECK_FILE_HAS("cgroup.subtree_control", "+memory");
	CHECK_FILE_HAS("cgroup.subtree_control", "+pids");
	CHECK_FILE_HAS("cgroup.subtree_control", "+cpuset");
	CHECK_FILE_HAS("cgroup.subtree_control", "+hugetlb");
	CHECK_FILE_HAS("agentrun/cgroup.subtree_control", "+cpu");
	CHECK_FILE_HAS("agentrun/cgroup.subtree_control", "+io");
	CHECK_FILE("agentrun/c1/cgroup.subtree_control", "");
	{
		char *g = get("cgroup.subtree_control");

		CHECK(!strstr(g, "rdma"));
		free(g);
	}
out:
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(cpu_period_only_keeps_quota)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup(ALL_CTRLS);
	put("agentrun/c1/cpu.max", "20000 100000\n");
	r->present = r->cpu.present = true;
	r->cpu.period = (struct oci_opt_u64){ true, 50000 };
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK_FILE("agentrun/c1/cpu.max", "20000 50000");
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(swap_without_limit_in_request_uses_current_limit)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup(ALL_CTRLS);
	put("agentrun/c1/memory.max", "1000\n");
	r->present = r->memory.present = true;
	r->memory.swap = (struct oci_opt_i64){ true, 3000 };
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK_FILE("agentrun/c1/memory.swap.max", "2000");
	CHECK_FILE("agentrun/c1/memory.max", "1000\n");
	ar_cgroup_free(cg);
	cg = NULL;
	/* and without any limit it is an error */
	put("agentrun/c1/memory.max", "max\n");
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "needs a memory limit");
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(unified_traversal_refused)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct oci_kv kv = { (char *)"../cgroup.procs", (char *)"1" };
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup(ALL_CTRLS);
	r->present = true;
	r->unified.items = &kv;
	r->unified.n = 1;
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "linux.resources.unified.../cgroup.procs");
	CHECK_FILE("agentrun/cgroup.procs", "");
	r->unified.n = 0;
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(existing_busy_cgroup_refused)
{
	struct oci_config *cfg = oci_config_new();
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup(ALL_CTRLS);
	put("agentrun/c1/cgroup.procs", "77\n");
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "already exists and is in use");
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(missing_controller)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct oci_rdma_limit rl = { (char *)"mlx5_0",
				     { true, 3 },
				     { false, 0 } };
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup("cpu io memory pids\n");
	r->present = true;
	r->rdma = &rl;
	r->n_rdma = 1;
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "rdma not available");
	CHECK_STR_CONTAINS(err.msg, AR_CGROUP_IGNORE_ANNOTATION);
	ar_cgroup_free(cg);
	cg = NULL;
	ar_error_clear(&err);
	o.ignore_unavailable = true;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) != NULL);
	CHECK_FILE("agentrun/c1/rdma.max", "");
	ar_cgroup_free(cg);
	cg = NULL;
	/* with the controller there, the line is written */
	teardown();
	setup(ALL_CTRLS);
	o.ignore_unavailable = false;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK_FILE("agentrun/c1/rdma.max",
		   "mlx5_0 hca_handle=3 hca_object=max");
	ar_cgroup_free(cg);
	r->n_rdma = 0;
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(hybrid_tree_without_controllers)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	/* like this host: only hugetlb in the v2 tree; a cgroup is made
	 * anyway (procs, freeze, kill and the device program need no
	 * controller) */
	setup("hugetlb\n");
	r->present = true;
	r->n_devices = 1; /* the default spec's device rules: no limit */
	o = opts_for(cfg);
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) != NULL);
	CHECK(ar_cgroup_dirfd(cg) >= 0);
	ar_cgroup_free(cg);
	cg = NULL;
	r->n_devices = 0;
	/* a limit whose controller is missing: an error naming it */
	r->pids.present = true;
	r->pids.limit = 5;
	o.id = "c2";
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "pids not available");
	CHECK_STR_CONTAINS(err.msg, AR_CGROUP_IGNORE_ENV);
	ar_cgroup_free(cg);
	cg = NULL;
	ar_error_clear(&err);
	/* opting in via the annotation: the cgroup without the limit */
	{
		struct oci_kv kv = { (char *)AR_CGROUP_IGNORE_ANNOTATION,
				     (char *)"true" };

		cfg->annotations.items = &kv;
		cfg->annotations.n = 1;
		o = opts_for(cfg);
		o.id = "c3";
		CHECK(o.ignore_unavailable);
		CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
		CHECK(ar_cgroup_path(cg) != NULL);
		cfg->annotations.n = 0;
	}
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(unwritable_tree_device_rules)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	/* a tree where no cgroup can be made (mkdir in /sys: EPERM/EACCES) */
	r->present = true;
	o = opts_for(cfg);
	o.mount = "/sys";
	/* nothing requested: run without a cgroup */
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) == NULL);
	ar_cgroup_free(cg);
	cg = NULL;
	/* device rules that cannot be enforced: an error, never silence */
	r->n_devices = 1;
	CHECK(ar_cgroup_create(&o, &cg, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "cannot enforce linux.resources.devices");
	CHECK_STR_CONTAINS(err.msg, AR_CGROUP_IGNORE_ENV);
	ar_cgroup_free(cg);
	cg = NULL;
	ar_error_clear(&err);
	/* rootless: a user namespace cannot load a device program anyway */
	o.rootless = true;
	o.own_cgroup = "/";
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) == NULL);
	ar_cgroup_free(cg);
	cg = NULL;
	/* the opt-in: a warning */
	o.rootless = false;
	o.ignore_unavailable = true;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) == NULL);
	ar_cgroup_free(cg);
	r->n_devices = 0;
	oci_config_free(cfg);
}

UNIT_TEST(disabled_manager)
{
	struct oci_config *cfg = oci_config_new();
	struct oci_resources *r = &cfg->linux_.resources;
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;

	setup(ALL_CTRLS);
	o = opts_for(cfg);
	o.manager = AR_CGROUP_MGR_DISABLED;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) == NULL);
	ar_cgroup_free(cg);
	cg = NULL;
	r->present = r->memory.present = true;
	r->memory.limit = (struct oci_opt_i64){ true, 1 << 20 };
	o = opts_for(cfg);
	o.manager = AR_CGROUP_MGR_DISABLED;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	CHECK(ar_cgroup_path(cg) == NULL);
	CHECK_FILE("agentrun/c1/memory.max", "");
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(rootless_sibling_of_own_cgroup)
{
	struct oci_config *cfg = oci_config_new();
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;
	char *want;

	setup(ALL_CTRLS);
	mkd("user.slice");
	fake_cgroup("user.slice/u", ALL_CTRLS);
	fake_cgroup("user.slice/u/init.scope", "");
	put("user.slice/u/init.scope/cgroup.procs", "1234\n");
	fake_cgroup("user.slice/u/agentrun-c1", "");
	o = opts_for(cfg);
	o.rootless = true;
	o.own_cgroup = "/user.slice/u/init.scope";
	if (ar_cgroup_create(&o, &cg, &err) < 0) {
		printf("# %s\n", err.msg);
		CHECK(!"create failed");
	} else {
		want = ar_xasprintf("%s/user.slice/u/agentrun-c1", root);
		CHECK_STR_EQ(ar_cgroup_path(cg), want);
		free(want);
		/* the default controllers, enabled in the delegated base
		 * only */
		CHECK_FILE_HAS("user.slice/u/cgroup.subtree_control",
			       "+memory");
		CHECK_FILE_HAS("user.slice/u/cgroup.subtree_control", "+pids");
		CHECK_FILE("cgroup.subtree_control", "");
	}
	ar_cgroup_free(cg);
	oci_config_free(cfg);
	teardown();
}

UNIT_TEST(systemd_form_maps_to_cgroupfs)
{
	struct oci_config *cfg = oci_config_new();
	struct ar_cgroup_opts o;
	struct ar_cgroup *cg = NULL;
	struct ar_error err = AR_ERROR_INIT;
	char *want;

	setup(ALL_CTRLS);
	fake_cgroup("machine.slice", "");
	fake_cgroup("machine.slice/libpod-c1.scope", "");
	cfg->linux_.cgroups_path = (char *)"machine.slice:libpod:c1";
	o = opts_for(cfg);
	/* cgroupfs lays the systemd form out itself (the systemd manager
	 * asks systemd over D-Bus: test_systemd_vm) */
	o.manager = AR_CGROUP_MGR_CGROUPFS;
	CHECK(ar_cgroup_create(&o, &cg, &err) == 0);
	want = ar_xasprintf("%s/machine.slice/libpod-c1.scope", root);
	CHECK_STR_EQ(ar_cgroup_path(cg), want);
	free(want);
	CHECK_FILE_HAS("cgroup.subtree_control", "+memory");
	ar_cgroup_free(cg);
	cfg->linux_.cgroups_path = NULL;
	oci_config_free(cfg);
	teardown();
}

UNIT_MAIN()
