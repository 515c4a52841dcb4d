/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Shared between the spec/parse*.c files; not for users of spec/. */
#ifndef AGENTRUN_PARSE_INTERNAL_H
#define AGENTRUN_PARSE_INTERNAL_H

#include "json_tree.h"
#include "oci_config.h"

/* Each parser gets the node of its object and that node's path; the node
 * is known to exist (callers skip absent properties). */
int oci_parse_process(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_process *out);
int oci_parse_linux(const struct jt_ctx *c, const struct jt_node *n,
		    const struct jt_path *p, struct oci_linux *out);
int oci_parse_resources(const struct jt_ctx *c, const struct jt_node *n,
			const struct jt_path *p, struct oci_resources *out);
int oci_parse_seccomp(const struct jt_ctx *c, const struct jt_node *n,
		      const struct jt_path *p, struct oci_seccomp *out);

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
