/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A profile's "keep" files (sandbox_keep.c): a JSON settings file of the
 * home that the agent CLI writes a choice into (Gemini CLI's auth type
 * and theme in ~/.gemini/settings.json) but that also names what the
 * host runs (hooks, MCP servers), so it stays read-only on the host.
 * Inside, it is a writable copy of the host's file; at the end, only the
 * profile's keys (scalar values) are taken from the copy and kept in
 * agentrun's state ($XDG_STATE_HOME/agentrun/kept/); the next start puts
 * them into the copy where the host's file has none. The host's file is
 * never written; what else the agent writes into the copy (a hook, an MCP
 * server) lasts for the run, inside.
 */
#ifndef AGENTRUN_SANDBOX_KEEP_H
#define AGENTRUN_SANDBOX_KEEP_H

#include <stdbool.h>

#include "sandbox_mounts.h"
#include "sandbox_types.h"

struct oci_profile;

/* For each "keep" file of `pf`: the copy made (the host's file, or {},
 * with the kept keys it lacks) in k->dir and bound read-write over its
 * path. A host file that is not a regular file or not plain JSON (its
 * comments: JSON with comments is not read) keeps its read-only bind,
 * with a warning. */
void sb_keep_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		    const struct oci_profile *pf, struct sb_keep *k);
/* After the run: the profile's keys read from each copy into the state
 * (the values found; the others as they were). */
void sb_keep_collect(struct sb_keep *k);
/* The copies removed (keep: left, for a --print-bundle bundle), k freed. */
void sb_keep_release(struct sb_keep *k, bool keep);

#endif
