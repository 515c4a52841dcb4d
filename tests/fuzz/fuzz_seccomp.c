/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: linux.seccomp, from JSON to a compiled BPF program
 * (oci_config_parse + ar_seccomp_compile). The input is the seccomp
 * object itself; it is wrapped into a minimal config. The filter is
 * never loaded.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "error.h"
#include "oci_config.h"
#include "seccomp.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	static const char head[] =
		"{\"ociVersion\":\"1.2.0\",\"linux\":{\"seccomp\":";
	static const char tail[] = "}}";
	struct ar_error err = { 0 };
	struct oci_config *cfg = NULL;
	struct ar_seccomp_filter *f = NULL;
	size_t len = sizeof(head) - 1 + size + sizeof(tail) - 1;
	char *json = malloc(len);

	if (!json)
		abort();
	memcpy(json, head, sizeof(head) - 1);
	if (size)
		memcpy(json + sizeof(head) - 1, data, size);
	memcpy(json + sizeof(head) - 1 + size, tail, sizeof(tail) - 1);
	if (oci_config_parse(json, len, "config.json", &cfg, &err) == 0) {
		if (cfg->linux_.seccomp) {
			if (ar_seccomp_compile(cfg->linux_.seccomp, &f, &err) ==
			    0) {
				FUZZ_CHECK(f != NULL);
				ar_seccomp_filter_free(f);
			} else {
				FUZZ_CHECK(err.msg[0] != '\0');
			}
		}
		oci_config_free(cfg);
	}
	free(json);
	return 0;
}
