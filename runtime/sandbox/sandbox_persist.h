/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the host runs later from the home directory, checked at start
 * (sandbox_persist.c): the paths of sb_protect_home_each (shell rc files,
 * ~/.local/bin, systemd user units, the agent CLIs' config and launchers,
 * ...) against the mount list as built by sandbox_plan.c.
 */
#ifndef AGENTRUN_SANDBOX_PERSIST_H
#define AGENTRUN_SANDBOX_PERSIST_H

#include "profile.h"
#include "sandbox_mounts.h"

/* The profile's read-only files (an agent CLI's settings) name scripts
 * the CLI runs outside any sandbox (hooks, status line, notify command,
 * MCP servers): each word of them that is a path ('/', "~/", "$HOME/")
 * to a regular file below the home directory (not the workspace `ws`,
 * not a secret) that a read-write bind would show writable gets a
 * read-only bind. Call after the profile's and the options' binds. */
void sb_persist_named_scripts(struct sb_mounts *m,
			      const struct ar_sandbox_host *h, const char *ws,
			      const struct oci_profile *pf);
/* One warning line per read-write bind below the home directory (not the
 * workspace) that is, is below, or holds without a read-only mount over
 * it, a path the host runs code from later. Call on the full list. */
void sb_persist_warn(const struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *ws);

#endif
