/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The user's git configuration inside the sandbox (sandbox_gitconfig.c). */
#ifndef AGENTRUN_SANDBOX_GITCONFIG_H
#define AGENTRUN_SANDBOX_GITCONFIG_H

#include <stdbool.h>

#include "sandbox_mounts.h"
#include "sandbox_types.h"

/* Read-only binds of every file git reads for the user (the XDG and
 * global config, /etc/gitconfig when /etc shows it, their includes,
 * core.excludesFile, core.attributesFile): a config file with keys
 * that run a command (protect/git_code.h) as a filtered copy in g->dir
 * (made on first need, /tmp/agentrun-git-XXXXXX); never a file on the
 * never-share list nor one in the workspace `ws`. Call it after /etc's
 * and the home's mounts. What cannot be read is not shown (a warning
 * for a secret or a file git would reject). */
void sb_gitconfig_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
			 const char *ws, struct sb_gitconfig *g);
/* An empty read-only (0444) file in g->dir, made on first need, for a
 * placeholder that must be a regular file (a project's missing
 * .claude/settings.json under --nested: sandbox_plan.c); NULL when it
 * cannot be made. Removed with the copies. */
const char *sb_gitconfig_empty_file(struct sb_gitconfig *g);
/* The copies removed (keep: left for a --print-bundle bundle or a
 * detached run's monitor), g freed. */
void sb_gitconfig_release(struct sb_gitconfig *g, bool keep);

#endif
