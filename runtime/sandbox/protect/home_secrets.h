/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The never-share list (home_secrets.c), on its own so that the parts
 * that only need it (protect.c) do not include sandbox.h. */
#ifndef AGENTRUN_HOME_SECRETS_H
#define AGENTRUN_HOME_SECRETS_H

#include <stdbool.h>

/* Secrets under the home directory: the never-share list, as paths
 * relative to $HOME, NULL terminated. */
extern const char *const ar_sandbox_home_secrets[];
/* 1 when `path` is a secret or inside one (refused as a bind), 0 if not. */
bool ar_sandbox_path_is_secret(const char *home, const char *path);

#endif
