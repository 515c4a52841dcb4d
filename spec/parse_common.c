/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Helpers shared by the spec/parse*.c files: name tables and id
 * mappings (linux.uidMappings/gidMappings and mounts[].*). */
#include "parse_common.h"

#include <string.h>

const struct oci_name_value *oci_lookup_name(const struct oci_name_value *t,
					     const char *name)
{
	for (; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

/* ---- id mappings ---- */

static int parse_id_mapping(const struct jt_ctx *c, const struct jt_node *m,
			    const struct jt_path *ip, void *items, size_t i,
			    void *arg)
{
	struct oci_id_mapping *o = (struct oci_id_mapping *)items + i;

	(void)arg;
	if (jt_as_object(c, m, ip) < 0 ||
	    jt_member_u32_req(c, m, ip, "containerID", &o->container_id) < 0 ||
	    jt_member_u32_req(c, m, ip, "hostID", &o->host_id) < 0 ||
	    jt_member_u32_req(c, m, ip, "size", &o->size) < 0)
		return -1;
	return 0;
}

int oci_parse_id_mappings(const struct jt_ctx *c, const struct jt_node *obj,
			  const struct jt_path *p, const char *key,
			  struct oci_id_mappings *out)
{
	return jt_member_list(c, obj, p, key, sizeof(*out->items),
			      parse_id_mapping, NULL, &out->items, &out->n);
}
