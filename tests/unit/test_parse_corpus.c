/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Configs written by other tools parse: `crun spec`, `runc spec` (and their
 * --rootless variants) are generated at test time when those tools are
 * installed; more files (e.g. a podman-generated config.json, see
 * tests/integration/test_spec.sh) come from $PARSE_CORPUS, a colon-separated
 * list of files.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "error.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

static bool have_cmd(const char *name)
{
	_cleanup_free_ char *cmd =
		ar_xasprintf("command -v %s >/dev/null 2>&1", name);

	return system(cmd) == 0;
}

/* Run `TOOL spec ARGS` in a fresh temp dir and parse the result. */
static struct oci_config *tool_spec(const char *tool, const char *args,
				    const char **skip)
{
	char dir[] = "/tmp/test_parse_corpus.XXXXXX";
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *cmd = NULL;
	struct oci_config *cfg = NULL;

	if (!have_cmd(tool)) {
		*skip = "tool not installed";
		return NULL;
	}
	if (!mkdtemp(dir)) {
		printf("# mkdtemp failed\n");
		return NULL;
	}
	cmd = ar_xasprintf("cd %s && %s spec %s >/dev/null", dir, tool, args);
	if (system(cmd) != 0) {
		printf("# `%s` failed\n", cmd);
	} else if (oci_config_load_file(dir, &cfg, &err) < 0) {
		printf("# %s spec %s: %s\n", tool, args, err.msg);
	}
	free(cmd);
	cmd = ar_xasprintf("rm -rf %s", dir);
	if (system(cmd) != 0)
		printf("# cleanup of %s failed\n", dir);
	return cfg;
}

static void check_tool_config(const char *tool, const char *args, bool rootless)
{
	const char *skip = NULL;
	_cleanup_config_ struct oci_config *cfg = tool_spec(tool, args, &skip);

	if (skip) {
		unit_current_skip = skip;
		return;
	}
	CHECK(cfg != NULL);
	if (!cfg)
		return;
	CHECK(cfg->oci_version != NULL);
	CHECK(cfg->process.present);
	CHECK_STR_EQ(cfg->process.args.v[0], "sh");
	CHECK_STR_EQ(cfg->process.cwd, "/");
	CHECK(cfg->process.capabilities.mask[OCI_CAP_BOUNDING] != 0);
	CHECK(cfg->process.n_rlimits >= 1);
	CHECK_STR_EQ(cfg->root.path, "rootfs");
	CHECK(cfg->n_mounts >= 5);
	CHECK(oci_config_find_ns(cfg, OCI_NS_PID) != NULL);
	CHECK(oci_config_find_ns(cfg, OCI_NS_MOUNT) != NULL);
	CHECK((oci_config_find_ns(cfg, OCI_NS_USER) != NULL) == rootless);
	CHECK(cfg->linux_.masked_paths.n > 0);
	CHECK(cfg->linux_.readonly_paths.n > 0);
}

UNIT_TEST(crun_spec)
{
	check_tool_config("crun", "", false);
}

UNIT_TEST(crun_spec_rootless)
{
	check_tool_config("crun", "--rootless", true);
}

UNIT_TEST(runc_spec)
{
	check_tool_config("runc", "", false);
}

UNIT_TEST(runc_spec_rootless)
{
	check_tool_config("runc", "--rootless", true);
}

UNIT_TEST(corpus_files_from_env)
{
	const char *list = getenv("PARSE_CORPUS");
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;
	int n = 0;

	if (!list || !*list)
		UNIT_SKIP("PARSE_CORPUS not set");
	copy = ar_xstrdup(list);
	for (char *f = strtok_r(copy, ":", &save); f;
	     f = strtok_r(NULL, ":", &save)) {
		struct ar_error err = AR_ERROR_INIT;
		struct oci_config *cfg = NULL;

		if (oci_config_load_file(f, &cfg, &err) < 0) {
			printf("# %s\n", err.msg);
			CHECK(0);
			continue;
		}
		printf("# parsed %s: %zu mounts, %zu namespaces\n", f,
		       cfg->n_mounts, cfg->linux_.n_namespaces);
		CHECK(cfg->oci_version != NULL);
		oci_config_free(cfg);
		n++;
	}
	CHECK(n > 0);
}

UNIT_MAIN()
