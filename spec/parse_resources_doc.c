/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A standalone linux.resources document, parsed with the same object
 * parser as config.json's (parse_resources.c). */
#include "config.h"

#include "error.h"
#include "json_tree.h"
#include "parse_parts.h"
#include "parse_resources_doc.h"
#include "utils.h"

int oci_resources_parse(const char *json, size_t len, const char *filename,
			struct oci_config **out_cfg, struct ar_error *err)
{
	_cleanup_config_ struct oci_config *cfg = oci_config_new();
	struct jt_node *doc;
	struct jt_ctx c;

	cfg->filename = oci_arena_strdup(
		&cfg->arena, filename ? filename : "resources.json");
	c = (struct jt_ctx){ &cfg->arena, cfg->filename, err };
	if (jt_parse(&cfg->arena, json, len, cfg->filename, &doc, err) < 0)
		return -1;
	if (jt_as_object(&c, doc, NULL) < 0 ||
	    oci_parse_resources(&c, doc, NULL, &cfg->linux_.resources) < 0)
		return -1;
	cfg->linux_.present = true;
	*out_cfg = ar_steal_ptr(&cfg);
	return 0;
}
