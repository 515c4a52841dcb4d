/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a standalone process object (`exec --process FILE`,
 * oci_process_parse). */
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

	if (oci_process_parse((const char *)data, size, "process.json", &cfg,
			      &err) < 0) {
		FUZZ_CHECK(cfg == NULL);
		FUZZ_CHECK(err.msg[0] != '\0');
		return 0;
	}
	FUZZ_CHECK(cfg != NULL);
	/* The vectors are NULL-terminated, as execve wants them. */
	FUZZ_CHECK(cfg->process.args.n == 0 ||
		   cfg->process.args.v[cfg->process.args.n] == NULL);
	FUZZ_CHECK(cfg->process.env.n == 0 ||
		   cfg->process.env.v[cfg->process.env.n] == NULL);
	oci_config_free(cfg);
	return 0;
}
