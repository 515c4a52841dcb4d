/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * struct oci_config -> config.json text: the inverse of oci_config_parse()
 * for everything a config built in C uses (agentrun sandbox, tests).
 *
 * Parts the writer does not render (linux.resources, time offsets,
 * intelRdt) are refused with an error naming them rather than dropped,
 * so a written bundle never means less than the struct it came from.
 */
#ifndef AGENTRUN_CONFIG_WRITE_H
#define AGENTRUN_CONFIG_WRITE_H

#include <stddef.h>

#include "oci_config.h"

struct ar_error;

/* Beautified JSON ('/' not escaped, ending in a newline); *out is
 * malloc'd, *len excludes the NUL. */
int oci_config_to_json(const struct oci_config *cfg, char **out, size_t *len,
		       struct ar_error *err);

/* Write DIR/config.json (created 0644, replacing an existing one
 * atomically). */
int oci_config_write_file(const struct oci_config *cfg, const char *dir,
			  struct ar_error *err);

#endif
