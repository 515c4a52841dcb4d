/* SPDX-License-Identifier: GPL-2.0-or-later */
/* hooks/workspace.c: the syntax of run.agentrun.workspace and the mount it
 * adds (plain or idmapped, the maps), without mounting anything. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_hooks.h"
#include "error.h"
#include "oci_config.h"
#include "unit.h"
#include "utils.h"

static int parse(const char *v, struct ar_workspace_spec *s,
		 struct ar_error *err)
{
	ar_error_clear(err);
	return ar_workspace_parse(v, s, err);
}

UNIT_TEST(parse_host_only_and_ctr)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_workspace_spec s;

	CHECK(parse("/src/proj", &s, &err) == 0);
	CHECK_STR_EQ(s.host, "/src/proj");
	CHECK_STR_EQ(s.ctr, "/src/proj");
	ar_workspace_spec_free(&s);
	CHECK(parse("/src/proj:/work//./x/", &s, &err) == 0);
	CHECK_STR_EQ(s.ctr, "/work/x");
	ar_workspace_spec_free(&s);
	CHECK(parse("/src/proj:/usr/src/app", &s, &err) == 0);
	CHECK_STR_EQ(s.ctr, "/usr/src/app");
	ar_workspace_spec_free(&s);
}

UNIT_TEST(parse_rejects_bad_values)
{
	static const struct {
		const char *v, *msg;
	} bad[] = {
		{ "", "HOSTPATH is empty" },
		{ "rel", "is not absolute" },
		{ "/a:rel", "CTRPATH `rel` is not absolute" },
		{ "/a:", "CTRPATH is empty" },
		{ "/a/../b", "has a `..` component" },
		{ "/a:/w/..", "has a `..` component" },
		{ "/a:/b:/c", "more than one `:`" },
		{ "/", "shared with the whole system" },
		{ "/etc", "shared with the whole system" },
		{ "/home/", "shared with the whole system" },
		{ "/proc/1", "under /proc" },
		{ "/a:/", "a system directory of the container" },
		{ "/a:/usr", "a system directory of the container" },
		{ "/a:/sys/fs", "under /sys" },
		{ "/a:/dev/shm/x", "under /dev" },
	};

	for (size_t i = 0; i < AR_ARRAY_SIZE(bad); i++) {
		struct ar_error err = AR_ERROR_INIT;
		struct ar_workspace_spec s;

		CHECK(parse(bad[i].v, &s, &err) < 0);
		CHECK(strstr(err.msg,
			     "annotations[\"run.agentrun.workspace\"]") !=
		      NULL);
		if (!strstr(err.msg, bad[i].msg))
			printf("# value \"%s\": %s\n", bad[i].v, err.msg);
		CHECK(strstr(err.msg, bad[i].msg) != NULL);
		CHECK(s.host == NULL && s.ctr == NULL);
	}
}

/* A config with the annotation on a fresh directory (owned by us). */
static struct oci_config *config(const char *dir, const char *extra)
{
	struct ar_error err = AR_ERROR_INIT;
	struct oci_config *cfg = NULL;
	_cleanup_free_ char *json = ar_xasprintf(
		"{\"ociVersion\":\"1.2.0\",\"root\":{\"path\":\"rootfs\"},"
		"\"process\":{\"args\":[\"true\"],\"cwd\":\"/\","
		"\"user\":{\"uid\":1000,\"gid\":1000}},"
		"\"mounts\":[{\"destination\":\"/tmp\",\"type\":\"tmpfs\"}],"
		"\"annotations\":{\"run.agentrun.workspace\":\"%s:/work\"}%s}",
		dir, extra);

	if (oci_config_parse(json, strlen(json), "config.json", &cfg, &err) < 0)
		printf("# %s\n", err.msg);
	return cfg;
}

static char *tmpdir(void)
{
	char *d = ar_xstrdup("/var/tmp/ar-ws-unit-XXXXXX");

	if (!mkdtemp(d)) {
		free(d);
		return NULL;
	}
	return d;
}

UNIT_TEST(adds_an_idmapped_bind_for_another_owner)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *d = tmpdir();
	struct oci_config *cfg;
	const struct oci_mount *m;
	struct stat st;

	CHECK(d != NULL);
	if (!d)
		return;
	/* container ids 0.. are host 300000..: process 1000 is 301000 */
	cfg = config(
		d,
		",\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
		"\"uidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":65536}],"
		"\"gidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":65536}]}");
	CHECK(cfg != NULL);
	CHECK(stat(d, &st) == 0);
	if (cfg) {
		CHECK(ar_hook_workspace(cfg, false, &err) == 0);
		CHECK(cfg->n_mounts == 2);
		m = &cfg->mounts[1];
		CHECK_STR_EQ(m->destination, "/work");
		CHECK_STR_EQ(m->source, d);
		CHECK_STR_EQ(m->type, "bind");
		CHECK(m->options.n == 5);
		CHECK_STR_EQ(m->options.v[m->options.n - 1], "idmap");
		CHECK(m->uid_mappings.n == 1 && m->gid_mappings.n == 1);
		CHECK(m->uid_mappings.items[0].container_id == st.st_uid);
		CHECK(m->uid_mappings.items[0].host_id == 301000);
		CHECK(m->uid_mappings.items[0].size == 1);
		CHECK(m->gid_mappings.items[0].container_id == st.st_gid);
		CHECK(m->gid_mappings.items[0].host_id == 301000);
		CHECK_STR_EQ(cfg->mounts[0].destination, "/tmp");
		oci_config_free(cfg);
	}
	/* rootless: refused, the config untouched */
	cfg = config(
		d,
		",\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
		"\"uidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":65536}],"
		"\"gidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":65536}]}");
	if (cfg) {
		CHECK(ar_hook_workspace(cfg, true, &err) < 0);
		CHECK(err.code == EPERM);
		CHECK(strstr(err.msg, "keep-id") != NULL);
		CHECK(cfg->n_mounts == 1);
		oci_config_free(cfg);
	}
	rmdir(d);
}

UNIT_TEST(plain_bind_when_the_process_is_the_owner)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *d = tmpdir();
	struct oci_config *cfg;
	_cleanup_free_ char *maps = NULL;
	struct stat st;

	CHECK(d != NULL && stat(d, &st) == 0);
	if (!d)
		return;
	/* keep-id: container 1000 is the directory's owner */
	maps = ar_xasprintf(
		",\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
		"\"uidMappings\":[{\"containerID\":1000,\"hostID\":%u,\"size\":1}],"
		"\"gidMappings\":[{\"containerID\":1000,\"hostID\":%u,\"size\":1}]}",
		(unsigned)st.st_uid, (unsigned)st.st_gid);
	cfg = config(d, maps);
	CHECK(cfg != NULL);
	if (cfg) {
		CHECK(ar_hook_workspace(cfg, true, &err) == 0);
		CHECK(cfg->n_mounts == 2);
		CHECK(cfg->mounts[1].options.n == 4);
		CHECK(cfg->mounts[1].uid_mappings.n == 0);
		oci_config_free(cfg);
	}
	rmdir(d);
}

UNIT_TEST(unmapped_process_user)
{
	struct ar_error err = AR_ERROR_INIT;
	_cleanup_free_ char *d = tmpdir();
	struct oci_config *cfg;

	if (!d)
		return;
	cfg = config(
		d,
		",\"linux\":{\"namespaces\":[{\"type\":\"user\"}],"
		"\"uidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":10}],"
		"\"gidMappings\":[{\"containerID\":0,\"hostID\":300000,\"size\":10}]}");
	if (cfg) {
		CHECK(ar_hook_workspace(cfg, false, &err) < 0);
		CHECK(strstr(err.msg, "process.user 1000:1000 is not mapped") !=
		      NULL);
		CHECK(cfg->n_mounts == 1);
		oci_config_free(cfg);
	}
	rmdir(d);
}

UNIT_MAIN()
