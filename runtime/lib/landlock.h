/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Landlock as an extra filesystem layer (agentrun sandbox): the container
 * process restricts itself just before execve, after its mounts are in
 * place, so that even a way around the read-only mounts meets a second
 * wall. Rules come from the annotation
 *
 *   run.agentrun.landlock = "ro:/\nrw:/work/space\nrw:/tmp\n..."
 *
 * one "ro:PATH" or "rw:PATH" per line (paths inside the container). ro
 * grants reading and executing below PATH, rw everything Landlock
 * handles; what no rule covers is denied. Needs no_new_privileges (or
 * CAP_SYS_ADMIN). A rule whose path does not exist is skipped.
 */
#ifndef AGENTRUN_LANDLOCK_H
#define AGENTRUN_LANDLOCK_H

#include "error.h"
#include "oci_config.h"

#define AR_ANNOTATION_LANDLOCK "run.agentrun.landlock"

/* The kernel's Landlock ABI version, 0 when unavailable. */
int ar_landlock_abi(void);

/* Restrict the calling process by the rules text (see above). Fails
 * (ENOTSUP) when the kernel has no Landlock: the caller asked for it. */
int ar_landlock_restrict(const char *rules, struct ar_error *err);

/* Apply the annotation when present (no-op otherwise). */
int ar_landlock_apply(const struct oci_config *cfg, struct ar_error *err);

#endif
