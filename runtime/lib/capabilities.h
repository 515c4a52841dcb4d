/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Capabilities and no_new_privs of the container process.
 *
 * Order in the container process (as runc does it):
 *
 *   ar_caps_prepare_keep()     still uid 0: keep permitted caps over setuid
 *   setgroups/setgid/setuid
 *   ar_caps_apply()            bounding, eff/prm/inh, ambient; keepcaps off
 *   ar_set_no_new_privs()      when process.noNewPrivileges
 *   ar_seccomp_load()          last (see seccomp.h for the NNP caveat)
 *   execve
 *
 * Semantics (same as runc and crun): after ar_caps_apply() the five sets of
 * the calling process are exactly the masks of the config, bit N being
 * capability number N.  A config without "capabilities" (present == false)
 * gets empty sets: everything is dropped, as runc does.  Capabilities the
 * running kernel does not know (above /proc/sys/kernel/cap_last_cap) are
 * ignored with a warning, so a config written for a newer kernel still
 * runs (runc does the same).
 */
#ifndef AGENTRUN_CAPABILITIES_H
#define AGENTRUN_CAPABILITIES_H

#include <stdint.h>

#include "error.h"
#include "oci_config.h"

/* Highest capability number the running kernel knows (cap_last_cap).
 * Cached after the first call; works without /proc (probes prctl). */
int ar_cap_last_cap(void);

/* "CAP_CHOWN" for 0 ..., NULL for a number this build has no name for. */
const char *ar_cap_name(int cap);

/* Number of a capability name ("CAP_SYS_ADMIN"; the CAP_ prefix is required,
 * case-insensitive), -1 when unknown. */
int ar_cap_from_name(const char *name);

/* Same, with an error naming the capability:
 *   "unknown capability `CAP_FOO`" */
int ar_cap_parse(const char *name, int *out, struct ar_error *err);

/* Called as root before setuid/setgid: PR_SET_KEEPCAPS, so the permitted
 * set survives the uid change (ar_caps_apply clears it again). */
int ar_caps_prepare_keep(struct ar_error *err);

/* Make the capability sets of the calling process those of `caps` (see the
 * top of this file).  Called after setgroups/setgid/setuid, before exec.
 * Needs CAP_SETPCAP in the permitted set when the bounding set shrinks.
 * Errors: effective not a subset of permitted, ambient not in both
 * permitted and inheritable (names the capability), kernel refusals. */
int ar_caps_apply(const struct oci_capabilities *caps, struct ar_error *err);

/* The mask of a set as the calling process has it now (for tests and
 * diagnostics): which is one of enum oci_cap_set. */
int ar_caps_read_current(enum oci_cap_set which, uint64_t *out,
			 struct ar_error *err);

/* prctl(PR_SET_NO_NEW_PRIVS, 1): execve can no longer grant privileges
 * (setuid bits, file capabilities). */
int ar_set_no_new_privs(struct ar_error *err);

#endif
