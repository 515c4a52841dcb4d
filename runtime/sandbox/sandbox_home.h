/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The home directory inside the sandbox (sandbox_home.c). */
#ifndef AGENTRUN_SANDBOX_HOME_H
#define AGENTRUN_SANDBOX_HOME_H

#include <stdbool.h>

#include "error.h"
#include "sandbox_mounts.h"

/* A tmpfs at the home path and the default dotfiles, read-only; the
 * skeleton rc files unless the home directory is (in) the workspace. */
int sb_home_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   bool home_is_workspace, struct ar_error *err);
/* Hide every existing secret below any bind already in the list (call
 * it after the last bind). */
void sb_hide_secrets(struct sb_mounts *m, const struct ar_sandbox_host *h);

#endif
