/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --nested (sandbox_nested.c). */
#ifndef AGENTRUN_SANDBOX_NESTED_H
#define AGENTRUN_SANDBOX_NESTED_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

/* Relax the built config so that the command can create namespaces;
 * appends what changed to protections (the start line and the
 * protections annotation). */
int sb_nested_apply(struct oci_config *cfg, const struct ar_sandbox_host *h,
		    char *protections, size_t protections_len,
		    struct ar_error *err);

/* Whether the sandbox's processes would hold the host's root id: an
 * id map (linux.uidMappings/gidMappings) onto host uid or gid 0, or gid
 * 0 among the caller's supplementary groups (kept in the user
 * namespace). /proc/sys obeys that id, not capabilities. */
bool sb_nested_holds_host_root(const struct oci_linux *l, const gid_t *groups,
			       size_t n_groups);

/* A subordinate id range of /etc/subuid or /etc/subgid. */
struct sb_id_range {
	uint32_t start, count;
};
/* The ranges of USER (or of the numeric ID) in the text of /etc/subuid
 * or /etc/subgid, at most max; ranges that hold ID itself are left out
 * (the kernel refuses overlapping maps). */
size_t sb_subid_ranges(const char *text, const char *user, uint32_t id,
		       struct sb_id_range *out, size_t max);
/* The id map of a --nested sandbox: OWN to itself, then the ranges
 * from container id 0 upwards, around OWN. Returns the entries written
 * (at most max). */
size_t sb_nested_id_map(uint32_t own, const struct sb_id_range *r, size_t n,
			struct oci_id_mapping *out, size_t max);

#endif
