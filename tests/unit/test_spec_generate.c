/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for spec/generate.c: `agentrun spec` output parses back. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"
#include "generate.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

static struct oci_config *generate_and_parse(bool rootless, uint32_t uid,
					     uint32_t gid, char **text)
{
	struct oci_spec_options o = { .rootless = rootless,
				      .ids_set = true,
				      .host_uid = uid,
				      .host_gid = gid };
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;
	char *json = NULL;
	size_t len = 0;

	if (oci_spec_generate(&o, &json, &len, &err) < 0) {
		printf("# generate: %s\n", err.msg);
		return NULL;
	}
	if (strlen(json) != len || len == 0 || json[len - 1] != '\n')
		printf("# bad length or no final newline\n");
	else if (oci_config_parse(json, len, "config.json", &cfg, &err) < 0)
		printf("# parse: %s\n", err.msg);
	*text = json;
	return cfg;
}

static const struct oci_mount *find_mount(const struct oci_config *cfg,
					  const char *dest)
{
	for (size_t i = 0; i < cfg->n_mounts; i++)
		if (strcmp(cfg->mounts[i].destination, dest) == 0)
			return &cfg->mounts[i];
	return NULL;
}

static bool has_option(const struct oci_mount *m, const char *opt)
{
	for (size_t i = 0; m && i < m->options.n; i++)
		if (strcmp(m->options.v[i], opt) == 0)
			return true;
	return false;
}

static void check_common(const struct oci_config *cfg)
{
	const uint64_t caps = (1ULL << 29) | (1ULL << 5) | (1ULL << 10);

	CHECK_STR_EQ(cfg->oci_version, "1.2.0");
	CHECK(cfg->process.present);
	CHECK(!cfg->process.terminal);
	CHECK_INT_EQ(cfg->process.user.uid, 0);
	CHECK_INT_EQ(cfg->process.user.gid, 0);
	CHECK_INT_EQ(cfg->process.args.n, 1);
	CHECK_STR_EQ(cfg->process.args.v[0], "sh");
	CHECK_INT_EQ(cfg->process.env.n, 2);
	CHECK_STR_CONTAINS(cfg->process.env.v[0], "PATH=/usr/local/sbin:");
	CHECK_STR_EQ(cfg->process.env.v[1], "TERM=xterm");
	CHECK_STR_EQ(cfg->process.cwd, "/");
	CHECK(cfg->process.capabilities.mask[OCI_CAP_BOUNDING] == caps);
	CHECK(cfg->process.capabilities.mask[OCI_CAP_EFFECTIVE] == caps);
	CHECK(cfg->process.capabilities.mask[OCI_CAP_PERMITTED] == caps);
	CHECK(!cfg->process.capabilities.set_present[OCI_CAP_AMBIENT]);
	CHECK_INT_EQ(cfg->process.n_rlimits, 1);
	if (cfg->process.n_rlimits == 1) {
		CHECK_INT_EQ(cfg->process.rlimits[0].resource, RLIMIT_NOFILE);
		CHECK_INT_EQ(cfg->process.rlimits[0].soft, 1024);
		CHECK_INT_EQ(cfg->process.rlimits[0].hard, 1024);
	}
	CHECK(cfg->process.no_new_privileges);
	CHECK_STR_EQ(cfg->root.path, "rootfs");
	CHECK(cfg->root.readonly);
	CHECK_STR_EQ(cfg->hostname, "agentrun");
	CHECK(find_mount(cfg, "/proc") != NULL);
	CHECK(find_mount(cfg, "/dev") != NULL);
	CHECK(find_mount(cfg, "/dev/pts") != NULL);
	CHECK(find_mount(cfg, "/dev/shm") != NULL);
	CHECK(find_mount(cfg, "/dev/mqueue") != NULL);
	CHECK(has_option(find_mount(cfg, "/sys"), "ro"));
	for (int t = 0; t < OCI_NS_NTYPES; t++) {
		bool want = t == OCI_NS_PID || t == OCI_NS_NETWORK ||
			    t == OCI_NS_IPC || t == OCI_NS_UTS ||
			    t == OCI_NS_MOUNT || t == OCI_NS_CGROUP;
		const struct oci_namespace *ns =
			oci_config_find_ns(cfg, (enum oci_ns_type)t);

		if (t == OCI_NS_USER)
			continue;
		CHECK((ns != NULL) == want);
		if (ns)
			CHECK(ns->path == NULL);
	}
	CHECK(cfg->linux_.masked_paths.n >= 10);
	CHECK_STR_EQ(cfg->linux_.masked_paths.v[0], "/proc/acpi");
	CHECK_INT_EQ(cfg->linux_.readonly_paths.n, 5);
	CHECK_STR_EQ(cfg->linux_.readonly_paths.v[3], "/proc/sys");
	CHECK(cfg->linux_.seccomp != NULL);
	if (cfg->linux_.seccomp)
		CHECK(cfg->linux_.seccomp->n_syscalls > 0);
}

UNIT_TEST(default_spec_round_trip)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_config_ struct oci_config *cfg =
		generate_and_parse(false, 1234, 5678, &text);

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	check_common(cfg);
	CHECK(oci_config_find_ns(cfg, OCI_NS_USER) == NULL);
	CHECK_INT_EQ(cfg->linux_.uid_mappings.n, 0);
	CHECK(has_option(find_mount(cfg, "/dev/pts"), "gid=5"));
	CHECK_STR_EQ(find_mount(cfg, "/sys")->type, "sysfs");
	CHECK(find_mount(cfg, "/sys/fs/cgroup") != NULL);
	CHECK(has_option(find_mount(cfg, "/sys/fs/cgroup"), "ro"));
	CHECK(cfg->linux_.resources.present);
	CHECK_INT_EQ(cfg->linux_.resources.n_devices, 1);
	CHECK(!cfg->linux_.resources.devices[0].allow);
	/* beautified, '/' not escaped */
	CHECK_STR_CONTAINS(text, "\n\t\"ociVersion\": \"1.2.0\",\n");
	CHECK_STR_CONTAINS(text, "\"/proc/sysrq-trigger\"");
	CHECK(strstr(text, "\\/") == NULL);
}

UNIT_TEST(rootless_spec_round_trip)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_config_ struct oci_config *cfg =
		generate_and_parse(true, 1234, 5678, &text);
	const struct oci_mount *sys;

	CHECK(cfg != NULL);
	if (!cfg)
		return;
	check_common(cfg);
	CHECK(oci_config_find_ns(cfg, OCI_NS_USER) != NULL);
	CHECK_INT_EQ(cfg->linux_.uid_mappings.n, 1);
	CHECK_INT_EQ(cfg->linux_.gid_mappings.n, 1);
	if (cfg->linux_.uid_mappings.n == 1 &&
	    cfg->linux_.gid_mappings.n == 1) {
		CHECK_INT_EQ(cfg->linux_.uid_mappings.items[0].container_id, 0);
		CHECK_INT_EQ(cfg->linux_.uid_mappings.items[0].host_id, 1234);
		CHECK_INT_EQ(cfg->linux_.uid_mappings.items[0].size, 1);
		CHECK_INT_EQ(cfg->linux_.gid_mappings.items[0].host_id, 5678);
		CHECK_INT_EQ(cfg->linux_.gid_mappings.items[0].size, 1);
	}
	CHECK(!has_option(find_mount(cfg, "/dev/pts"), "gid=5"));
	sys = find_mount(cfg, "/sys");
	CHECK(sys != NULL);
	if (sys) {
		CHECK_STR_EQ(sys->source, "/sys");
		CHECK(has_option(sys, "rbind"));
		CHECK(has_option(sys, "nosuid"));
		CHECK(has_option(sys, "noexec"));
		CHECK(has_option(sys, "nodev"));
	}
	CHECK(find_mount(cfg, "/sys/fs/cgroup") == NULL);
	CHECK(!cfg->linux_.resources.present);
}

UNIT_TEST(rootless_defaults_to_caller_ids)
{
	struct oci_spec_options o = { .rootless = true };
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;
	_cleanup_free_ char *json = NULL;
	size_t len;

	CHECK(oci_spec_generate(&o, &json, &len, &err) == 0);
	CHECK(oci_config_parse(json, len, "config.json", &cfg, &err) == 0);
	if (!cfg || cfg->linux_.uid_mappings.n != 1)
		return;
	CHECK_INT_EQ(cfg->linux_.uid_mappings.items[0].host_id, geteuid());
	CHECK_INT_EQ(cfg->linux_.gid_mappings.items[0].host_id, getegid());
}

UNIT_TEST(embedded_seccomp_profile_is_the_contrib_file)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_config_ struct oci_config *cfg = NULL;
	_cleanup_free_ char *wrapped = NULL;

	CHECK(oci_default_seccomp_json_len == strlen(oci_default_seccomp_json));
	CHECK(oci_default_seccomp_json_len > 20);
	wrapped = ar_xasprintf(
		"{\"ociVersion\": \"1.2.0\", \"linux\": {\"seccomp\": %s}}",
		oci_default_seccomp_json);
	CHECK(oci_config_parse(wrapped, strlen(wrapped), "agent-default.json",
			       &cfg, &err) == 0);
	if (!cfg) {
		printf("# %s\n", err.msg);
		return;
	}
	CHECK(cfg->linux_.seccomp != NULL);
}

UNIT_TEST(spec_write_refuses_overwrite)
{
	char dir[] = "/tmp/test_spec.XXXXXX";
	struct oci_spec_options o = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *path = NULL;
	struct oci_config *cfg = NULL;
	struct stat st;

	CHECK(mkdtemp(dir) != NULL);
	path = ar_xasprintf("%s/config.json", dir);
	CHECK(oci_spec_write(dir, NULL, &o, &err) == 0);
	CHECK(stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 100);
	CHECK(oci_config_load_file(dir, &cfg, &err) == 0);
	oci_config_free(cfg);

	ar_error_clear(&err);
	CHECK(oci_spec_write(dir, NULL, &o, &err) < 0);
	CHECK_INT_EQ(err.code, EEXIST);
	CHECK_STR_EQ(err.msg, "config.json already exists");
	/* a dangling symlink is not followed either */
	unlink(path);
	CHECK(symlink("/tmp/nonexistent-agentrun-target", path) == 0);
	CHECK(oci_spec_write(dir, NULL, &o, &err) < 0);
	CHECK_INT_EQ(err.code, EEXIST);
	CHECK(access("/tmp/nonexistent-agentrun-target", F_OK) < 0);
	unlink(path);
	/* --file: relative to the bundle, replaced when it exists (crun) */
	free(path);
	path = ar_xasprintf("%s/other.json", dir);
	CHECK(oci_spec_write(dir, "other.json", &o, &err) == 0);
	CHECK(truncate(path, 3) == 0);
	CHECK(oci_spec_write(dir, "other.json", &o, &err) == 0);
	CHECK(stat(path, &st) == 0 && st.st_size > 100);
	CHECK(access(path, F_OK) == 0);
	unlink(path);
	CHECK(oci_spec_write(dir, path, &o, &err) == 0); /* absolute */
	CHECK(stat(path, &st) == 0 && st.st_size > 100);
	unlink(path);
	ar_error_clear(&err);
	CHECK(oci_spec_write(dir, "", &o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "empty file name");
	ar_error_clear(&err);
	CHECK(oci_spec_write(dir, "no/such/dir/x.json", &o, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "no/such/dir/x.json");
	rmdir(dir);

	CHECK(oci_spec_write("/nonexistent/bundle", NULL, &o, &err) < 0);
	CHECK_INT_EQ(err.code, ENOENT);
	CHECK_STR_CONTAINS(err.msg, "/nonexistent/bundle");
}

UNIT_MAIN()
