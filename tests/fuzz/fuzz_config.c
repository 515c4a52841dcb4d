/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: config.json (oci_config_parse), and what the runtime
 * derives from a parsed config without touching the system: mount
 * options of every mount, the uid/gid map text of the user namespace and
 * of idmapped mounts, the annotation and namespace lookups. A config that
 * parses and that the writer can render must render to JSON that parses
 * again and renders to the same text (oci_config_to_json round trip).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "config_write.h"
#include "error.h"
#include "mounts.h"
#include "net_loopback.h"
#include "oci_config.h"
#include "userns.h"

static void fuzz_config_map(const struct oci_id_mappings *m)
{
	char buf[4096];
	int n = ar_userns_format_map(m, buf, sizeof(buf));

	FUZZ_CHECK(n == -1 || (n >= 0 && (size_t)n < sizeof(buf)));
	if (n >= 0)
		FUZZ_CHECK(strlen(buf) == (size_t)n);
	(void)ar_userns_map_is_own(m, 1000);
}

static void fuzz_config_derive(const struct oci_config *cfg)
{
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		struct ar_error err = { 0 };
		struct ar_mount_flags f;

		if (ar_mount_parse_options(&cfg->mounts[i].options, &f, &err) ==
		    0)
			ar_mount_flags_free(&f);
		fuzz_config_map(&cfg->mounts[i].uid_mappings);
		fuzz_config_map(&cfg->mounts[i].gid_mappings);
	}
	fuzz_config_map(&cfg->linux_.uid_mappings);
	fuzz_config_map(&cfg->linux_.gid_mappings);
	for (int t = 0; t < OCI_NS_NTYPES; t++)
		(void)oci_config_find_ns(cfg, (enum oci_ns_type)t);
	(void)oci_config_annotation(cfg, "run.agentrun.landlock");
	{
		/* new_netns false: validates the annotation, touches nothing */
		struct ar_error err = { 0 };

		(void)ar_net_loopback_apply(cfg, false, &err);
	}
}

static void fuzz_config_round_trip(const struct oci_config *cfg)
{
	struct ar_error err = { 0 };
	struct oci_config *again = NULL;
	char *json = NULL, *json2 = NULL;
	size_t len = 0, len2 = 0;

	if (oci_config_to_json(cfg, &json, &len, &err) < 0)
		return; /* a part the writer refuses to render */
	if (oci_config_parse(json, len, "round-trip.json", &again, &err) < 0) {
		fprintf(stderr, "re-parse failed: %s\n--- written:\n%s\n",
			err.msg, json);
		abort();
	}
	FUZZ_CHECK(oci_config_to_json(again, &json2, &len2, &err) == 0);
	if (len != len2 || memcmp(json, json2, len) != 0) {
		fprintf(stderr, "round trip differs:\n%s\n---\n%s\n", json,
			json2);
		abort();
	}
	free(json);
	free(json2);
	oci_config_free(again);
}

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	struct oci_config *cfg = NULL;

	if (oci_config_parse((const char *)data, size, "config.json", &cfg,
			     &err) < 0) {
		FUZZ_CHECK(cfg == NULL);
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(cfg != NULL);
	fuzz_config_derive(cfg);
	fuzz_config_round_trip(cfg);
	oci_config_free(cfg);
	return 0;
}
