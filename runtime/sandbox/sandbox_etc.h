/* SPDX-License-Identifier: GPL-2.0-or-later */
/* /etc inside the sandbox (sandbox_etc.c). */
#ifndef AGENTRUN_SANDBOX_ETC_H
#define AGENTRUN_SANDBOX_ETC_H

#include "sandbox_mounts.h"

/* The default /etc allowlist, NULL terminated. */
extern const char *const ar_sandbox_etc_default[];

/* The /etc entries: the default list plus `extra` and the profile's. */
void sb_etc_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		   const struct ar_sandbox_list *extra,
		   const struct oci_strv *profile_extra);

/* A profile's "etc_files" text with each ${WORKSPACE} replaced by
 * `workspace` escaped for a double-quoted JSON or TOML string (\" \\ and
 * \uXXXX for control characters), so that a template like
 * [projects."${WORKSPACE}"] stays well formed whatever the path (malloc'd). */
char *sb_etc_file_text(const char *tmpl, const char *workspace);

/* "/etc/passwd" and "/etc/group" contents for the user (malloc'd). */
char *ar_sandbox_passwd(const struct ar_sandbox_host *h);
char *ar_sandbox_group(const struct ar_sandbox_host *h);

#endif
