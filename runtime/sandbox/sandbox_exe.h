/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's executable installed under the hidden home directory
 * (sandbox_exe.c). */
#ifndef AGENTRUN_SANDBOX_EXE_H
#define AGENTRUN_SANDBOX_EXE_H

#include <stdbool.h>

#include "error.h"
#include "sandbox_mounts.h"
#include "sandbox_types.h"

/* `cmd` (argv[0]) as the caller's PATH finds it: when it is under the
 * home directory and no mount in `m` shows it, show (a profile) binds
 * its install read-only (and a script's interpreter; never a
 * never-share path) and says so; without show, fails naming the option
 * that shows it, unless PATH finds another one inside. Call it after the
 * user's binds, before the secrets are hidden. */
int sb_exe_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		  const char *ws, const char *cmd, bool show,
		  struct ar_error *err);

#endif
