/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Fuzz target: a mount's options list (ar_mount_parse_options). The
 * input is split at ',' and '\n' into the list (empty items included:
 * the parser must refuse them with an error).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "fuzz.h"

#include "error.h"
#include "mounts.h"
#include "oci_config.h"

int FUZZ_ENTRY(const uint8_t *data, size_t size);
int FUZZ_ENTRY(const uint8_t *data, size_t size)
{
	struct ar_error err = { 0 };
	struct ar_mount_flags f;
	struct oci_strv opts = { 0 };
	char *s = fuzz_strndup(data, size);
	size_t n = 1, len = strlen(s), k = 0;
	char *p;

	for (p = s; *p; p++)
		if (*p == ',' || *p == '\n')
			n++;
	opts.v = calloc(n + 1, sizeof(*opts.v));
	if (!opts.v)
		abort();
	opts.v[k++] = s;
	for (p = s; *p; p++) {
		if (*p == ',' || *p == '\n') {
			*p = '\0';
			opts.v[k++] = p + 1;
		}
	}
	opts.n = len ? k : 0;
	if (ar_mount_parse_options(&opts, &f, &err) == 0) {
		/* Unknown options end up in data, each one whole. */
		if (f.data)
			FUZZ_CHECK(strlen(f.data) <= len);
		ar_mount_flags_free(&f);
	} else {
		FUZZ_CHECK(err.msg[0] != '\0');
	}
	free(opts.v);
	free(s);
	return 0;
}
