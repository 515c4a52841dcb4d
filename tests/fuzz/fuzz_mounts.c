/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: the mounts file of `agentrun mounts add|remove ID FILE`
 * (oci_mounts_parse: a JSON array of mount objects). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "error.h"
#include "oci_config.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	struct oci_config *cfg = NULL;

	if (oci_mounts_parse((const char *)data, size, "mounts.json", &cfg,
			     &err) < 0) {
		FUZZ_CHECK(cfg == NULL);
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(cfg != NULL);
	for (size_t i = 0; i < cfg->n_mounts; i++) {
		const struct oci_mount *m = &cfg->mounts[i];

		/* every item has its destination; the option vector is
		 * NULL-terminated */
		FUZZ_CHECK(m->destination != NULL);
		FUZZ_CHECK(m->options.n == 0 ||
			   m->options.v[m->options.n] == NULL);
	}
	oci_config_free(cfg);
	return 0;
}
