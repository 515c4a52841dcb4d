/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers every spec/parse*.c file uses; not for users of spec/. */
#ifndef AGENTRUN_PARSE_COMMON_H
#define AGENTRUN_PARSE_COMMON_H

#include "json_tree.h"
#include "oci_config.h"

/* uidMappings / gidMappings arrays (linux.* and mounts[].*). */
int oci_parse_id_mappings(const struct jt_ctx *c, const struct jt_node *obj,
			  const struct jt_path *p, const char *key,
			  struct oci_id_mappings *out);

/* Look a string up in a NULL-name-terminated table. */
struct oci_name_value {
	const char *name;
	int value;
};
const struct oci_name_value *oci_lookup_name(const struct oci_name_value *t,
					     const char *name);

#endif
