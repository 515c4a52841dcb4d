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

int oci_parse_id_mappings(const struct jt_ctx *c, const struct jt_node *obj,
			  const struct jt_path *p, const char *key,
			  struct oci_id_mappings *out)
{
	const struct jt_path *kp = JT_KEY(p, key);
	const struct jt_node *arr;
	size_t i = 0;

	if (jt_member_array(c, obj, p, key, &arr) < 0)
		return -1;
	if (!arr)
		return 0;
	out->items = oci_arena_calloc(c->a, arr->n ? arr->n : 1,
				      sizeof(*out->items));
	out->n = arr->n;
	jt_foreach(m, arr) {
		const struct jt_path *ip = JT_IDX(kp, i);
		struct oci_id_mapping *o = &out->items[i++];

		if (jt_as_object(c, m, ip) < 0 ||
		    jt_member_u32_req(c, m, ip, "containerID",
				      &o->container_id) < 0 ||
		    jt_member_u32_req(c, m, ip, "hostID", &o->host_id) < 0 ||
		    jt_member_u32_req(c, m, ip, "size", &o->size) < 0)
			return -1;
	}
	return 0;
}
