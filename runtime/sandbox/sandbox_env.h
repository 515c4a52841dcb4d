/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's environment filter (sandbox_env.c). */
#ifndef AGENTRUN_SANDBOX_ENV_H
#define AGENTRUN_SANDBOX_ENV_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_config.h"
#include "sandbox_types.h"

/* `requests` are --env entries and the profile's env entries (NAME,
 * NAME=VALUE, PATTERN*). The result (in `a`) has the host variables that
 * pass, then the requested values, then HOME/USER/LOGNAME/SHELL/PATH
 * forced to the sandbox's. */
bool ar_sandbox_env_default_allowed(const char *name);
bool ar_sandbox_env_is_secret(const char *name);
int ar_sandbox_env_build(struct ar_arena *a, char *const *host_env,
			 const char *const *requests, size_t n_requests,
			 const struct ar_sandbox_host *h, struct oci_strv *out,
			 struct ar_error *err);

#endif
