/* SPDX-License-Identifier: GPL-2.0-or-later */
/* `agentrun spec`: the default config.json of a new bundle. */
#ifndef AGENTRUN_GENERATE_H
#define AGENTRUN_GENERATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ar_error;

struct oci_spec_options {
	bool rootless;
	/* Rootless: the host ids container root maps to. When !ids_set the
	 * caller's effective uid and gid are used. */
	bool ids_set;
	uint32_t host_uid;
	uint32_t host_gid;
};

/* The embedded default seccomp profile (contrib/seccomp/agent-default.json),
 * NUL terminated. */
extern const char oci_default_seccomp_json[];
extern const size_t oci_default_seccomp_json_len;

/* Build the JSON text (beautified, '/' not escaped, ending in a newline).
 * *out is malloc'd. */
int oci_spec_generate(const struct oci_spec_options *o, char **out, size_t *len,
		      struct ar_error *err);

/* Write BUNDLE_DIR/config.json; fails with "config.json already exists"
 * (EEXIST) rather than overwrite. With `file` (crun's `spec --file`):
 * that file instead, relative to BUNDLE_DIR unless absolute, replaced
 * when it exists. */
int oci_spec_write(const char *bundle_dir, const char *file,
		   const struct oci_spec_options *o, struct ar_error *err);

#endif
