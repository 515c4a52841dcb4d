/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A standalone linux.resources document (`update --resources FILE`). */
#ifndef AGENTRUN_PARSE_RESOURCES_DOC_H
#define AGENTRUN_PARSE_RESOURCES_DOC_H

#include <stddef.h>

#include "oci_config.h"

/* Parse a JSON object in the format of config.json's linux.resources.
 * The result is (*out_cfg)->linux_.resources, allocated in the config's
 * arena; `filename` is used in error messages ("resources.json"). */
int oci_resources_parse(const char *json, size_t len, const char *filename,
			struct oci_config **out_cfg, struct ar_error *err);

#endif
