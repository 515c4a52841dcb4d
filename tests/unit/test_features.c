/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The features document: well-formed JSON with the expected content, and
 * every advertised mount option understood by the mount code. */
#include "config.h"

#include <stdarg.h>
#include <stdbool.h>

#include <yajl/yajl_tree.h>

#include "capabilities.h"
#include "oci_features.h"
#include "mounts.h"
#include "oci_config.h"
#include "seccomp.h"
#include "unit.h"
#include "unit_json.h"
#include "utils.h"

static yajl_val features_tree(char **text)
{
	struct ar_error err = AR_ERROR_INIT;
	char ebuf[256];
	size_t len = 0;

	if (ar_features_json(text, &len, &err) < 0) {
		printf("# %s\n", err.msg);
		return NULL;
	}
	return yajl_tree_parse(*text, ebuf, sizeof(ebuf));
}

static yajl_val get(yajl_val root, yajl_type t, ...)
{
	const char *path[8];
	va_list ap;
	size_t n = 0;

	va_start(ap, t);
	while (n < 7 && (path[n] = va_arg(ap, const char *)))
		n++;
	va_end(ap);
	path[n] = NULL;
	return yajl_tree_get(root, path, t);
}

UNIT_TEST(features_document)
{
	_cleanup_free_ char *text = NULL;
	yajl_val root = features_tree(&text), v;

	CHECK(root != NULL);
	if (!root)
		return;
	CHECK(text[strlen(text) - 1] == '\n');
	CHECK(strstr(text, "\\/") == NULL);
	CHECK_STR_CONTAINS(text, "\n    \"ociVersionMin\"");
	CHECK_STR_EQ(YAJL_GET_STRING(
			     get(root, yajl_t_string, "ociVersionMin", NULL)),
		     "1.0.0");
	CHECK_STR_EQ(YAJL_GET_STRING(
			     get(root, yajl_t_string, "ociVersionMax", NULL)),
		     "1.2.0");
	v = get(root, yajl_t_array, "hooks", NULL);
	CHECK(v && v->u.array.len == 6);
	CHECK(unit_json_array_has(v, "createRuntime"));
	CHECK(unit_json_array_has(v, "poststop"));
	v = get(root, yajl_t_array, "mountOptions", NULL);
	CHECK(unit_json_array_has(v, "rbind"));
	CHECK(unit_json_array_has(v, "idmap"));
	CHECK(unit_json_array_has(v, "tmpcopyup"));

	v = get(root, yajl_t_array, "linux", "namespaces", NULL);
	CHECK(v && v->u.array.len == 8);
	CHECK(unit_json_array_has(v, "time"));
	v = get(root, yajl_t_array, "linux", "capabilities", NULL);
	CHECK(v && (int)v->u.array.len == ar_cap_last_cap() + 1);
	CHECK(unit_json_array_has(v, "CAP_SYS_ADMIN"));
	CHECK(YAJL_IS_TRUE(
		get(root, yajl_t_any, "linux", "cgroup", "v2", NULL)));
	CHECK(YAJL_IS_FALSE(
		get(root, yajl_t_any, "linux", "cgroup", "v1", NULL)));
	CHECK(YAJL_IS_TRUE(
		get(root, yajl_t_any, "linux", "seccomp", "enabled", NULL)));
	v = get(root, yajl_t_array, "linux", "seccomp", "actions", NULL);
	CHECK(v && v->u.array.len == 9);
	CHECK(unit_json_array_has(v, "SCMP_ACT_NOTIFY"));
	v = get(root, yajl_t_array, "linux", "seccomp", "operators", NULL);
	CHECK(v && v->u.array.len == 7);
	v = get(root, yajl_t_array, "linux", "seccomp", "archs", NULL);
	CHECK(unit_json_array_has(v, "SCMP_ARCH_X86_64"));
	CHECK(unit_json_array_has(v, "SCMP_ARCH_AARCH64"));
	v = get(root, yajl_t_array, "linux", "seccomp", "knownFlags", NULL);
	CHECK(v && v->u.array.len == 4);
	{
		yajl_val sup = get(root, yajl_t_array, "linux", "seccomp",
				   "supportedFlags", NULL);

		CHECK(sup != NULL);
		CHECK(unit_json_array_has(sup, "SECCOMP_FILTER_FLAG_LOG"));
		for (size_t i = 0; sup && i < sup->u.array.len; i++)
			CHECK(unit_json_array_has(
				v, YAJL_GET_STRING(sup->u.array.values[i])));
	}
	CHECK(YAJL_IS_FALSE(
		get(root, yajl_t_any, "linux", "apparmor", "enabled", NULL)));
	CHECK(get(root, yajl_t_any, "linux", "selinux", "enabled", NULL));
	CHECK(YAJL_IS_FALSE(
		get(root, yajl_t_any, "linux", "intelRdt", "enabled", NULL)));
	CHECK(get(root, yajl_t_any, "linux", "mountExtensions", "idmap",
		  "enabled", NULL));
	CHECK_STR_EQ(YAJL_GET_STRING(get(root, yajl_t_string, "annotations",
					 "io.github.seccomp.libseccomp.version",
					 NULL)),
		     ar_seccomp_lib_version());
	CHECK_STR_EQ(YAJL_GET_STRING(get(root, yajl_t_string, "annotations",
					 "run.agentrun.version", NULL)),
		     PACKAGE_VERSION);
	yajl_tree_free(root);
}

UNIT_TEST(mount_options_are_understood)
{
	for (size_t i = 0; ar_features_mount_options[i]; i++) {
		char *v[] = { (char *)ar_features_mount_options[i], NULL };
		struct oci_strv opts = { .v = v, .n = 1 };
		struct ar_error err = AR_ERROR_INIT;
		struct ar_mount_flags f;

		memset(&f, 0, sizeof(f));
		if (ar_mount_parse_options(&opts, &f, &err) < 0) {
			printf("# %s: %s\n", v[0], err.msg);
			CHECK(!"option parses");
			continue;
		}
		if (f.data) {
			printf("# %s passed on as fs data\n", v[0]);
			CHECK(!"option understood, not passed as data");
		}
		ar_mount_flags_free(&f);
	}
}

UNIT_MAIN()
