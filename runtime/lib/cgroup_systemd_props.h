/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the systemd cgroup manager tells systemd (the D-Bus side is
 * cgroup_systemd.c; this file is pure, unit-tested):
 *
 *  - the unit and slice of "slice:prefix:name" (ar_cgroup_systemd_unit,
 *    declared in cgroup.h);
 *  - the linux.resources limits systemd can hold as unit properties
 *    (MemoryMax, MemoryLow, MemorySwapMax, CPUWeight, CPUQuotaPerSecUSec,
 *    CPUQuotaPeriodUSec, TasksMax, IOWeight), at start and at `update`;
 *  - runc's org.systemd.property.NAME annotations: NAME of ASCII letters
 *    (3 or more), the value in GVariant text as runc and crun read it:
 *    true/false, 'string' or "string", ['a', 'b'] (strings),
 *    "uint64 N", "int64 N", "uint32 N", "int32 N" (also "@t N", "@x N",
 *    "@u N", "@i N"), a bare integer (int32). A NAME ending in a
 *    lowercase letter and "Sec" (TimeoutStopSec) becomes NAMEUSec with the
 *    number of seconds times 1000000 as uint64 (a bare decimal like 1.5
 *    too), as runc does. A malformed one is an error naming the
 *    annotation.
 */
#ifndef AGENTRUN_CGROUP_SYSTEMD_PROPS_H
#define AGENTRUN_CGROUP_SYSTEMD_PROPS_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup_systemd.h"
#include "error.h"
#include "oci_config.h"

#define AR_SD_PROPERTY_PREFIX "org.systemd.property."

void ar_systemd_props_free(struct ar_systemd_props *p);
/* A uint64 property "name" = v at the end of p. */
void ar_systemd_props_add_u64(struct ar_systemd_props *p, const char *name,
			      uint64_t v);

/* The limits of r that systemd can hold, appended to out. A negative
 * (unlimited) memory, swap or pids limit or cpu quota is systemd's
 * "infinity" (UINT64_MAX): what `update --memory -1` asks for; a pids
 * limit of 0 is left out (as runc). */
int ar_systemd_resource_props(const struct oci_resources *r,
			      struct ar_systemd_props *out,
			      struct ar_error *err);

/* One annotation: key "org.systemd.property.NAME" and its value into *out
 * (free with ar_systemd_props_free of a list holding it, or by hand). */
int ar_systemd_parse_property(const char *key, const char *value,
			      struct ar_systemd_prop *out,
			      struct ar_error *err);

/* Every org.systemd.property.* annotation of kv[0..n), in order,
 * appended to out. */
int ar_systemd_annotation_props(const struct oci_kv *kv, size_t n,
				struct ar_systemd_props *out,
				struct ar_error *err);

/* "slice:prefix:name" -> "/a.slice/a-b.slice/prefix-name.scope".
 * Returns 1 when cp has the systemd form, 0 when not, -1 on error. */
int ar_cgroup_systemd_path(const char *cp, bool rootless, char **out,
			   struct ar_error *err);

/* The systemd manager's unit: "slice:prefix:name" (NULL cgroupsPath:
 * ":agentrun:ID") -> the slice ("system.slice" / "user.slice" when empty)
 * and the unit ("prefix-name.scope", "name.scope" without a prefix),
 * malloc'ed. Anything else is an error naming the form. */
int ar_cgroup_systemd_unit(const char *cgroups_path, const char *id,
			   bool rootless, char **slice, char **unit,
			   struct ar_error *err);

#endif
