/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The parsers of config.json's parts, called by spec/parse.c; not for
 * users of spec/. */
#ifndef AGENTRUN_PARSE_PARTS_H
#define AGENTRUN_PARSE_PARTS_H

#include "json_tree.h"
#include "oci_config.h"
#include "parse_common.h"

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

#endif
