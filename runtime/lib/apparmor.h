/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * process.apparmorProfile as crun applies it (no libapparmor): on a host
 * whose AppArmor is enabled (/sys/module/apparmor/parameters/enabled is
 * Y), "exec PROFILE" written to the process's own
 * /proc/thread-self/attr/apparmor/exec (or attr/exec on kernels without
 * the per-LSM directory) before execve; "stack PROFILE" when
 * no_new_privileges is set and the runtime is itself confined (the only
 * transition AppArmor allows then). A profile that is not loaded fails the
 * write (ENOENT): an error naming it. Without AppArmor the profile is
 * ignored, as crun and runc do.
 */
#ifndef AGENTRUN_APPARMOR_H
#define AGENTRUN_APPARMOR_H

#include <stdbool.h>

#include "error.h"

/* AppArmor is enabled on this host (read once, then cached). */
bool ar_apparmor_enabled(void);

/* Apply profile to the next execve of this thread; `enabled` is
 * ar_apparmor_enabled() as the runtime saw it before the clone (the
 * container's /sys may be missing or another's). NULL or "" profile, or
 * !enabled: nothing. */
int ar_apparmor_apply(const char *profile, bool enabled, bool nnp,
		      struct ar_error *err);

#endif
