/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --nested (sandbox_nested.c). */
#ifndef AGENTRUN_SANDBOX_NESTED_H
#define AGENTRUN_SANDBOX_NESTED_H

#include "error.h"
#include "oci_config.h"

/* Relax the built config so that the command can create namespaces;
 * protections: the new protections annotation. */
int sb_nested_apply(struct oci_config *cfg, const char *protections,
		    struct ar_error *err);

#endif
