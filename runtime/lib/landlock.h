/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Landlock as an extra filesystem layer (agentrun sandbox): the container
 * process restricts itself just before execve, after its mounts are in
 * place, so that even a way around the read-only mounts meets a second
 * wall. A rule is a path inside the container and whether it is
 * read-only (reading and executing below it) or read-write (everything
 * Landlock handles); what no rule covers is denied. Needs
 * no_new_privileges (or CAP_SYS_ADMIN). A rule whose path does not exist
 * is skipped.
 *
 * The rules reach the container process as data (ar_create_opts.landlock:
 * the sandbox's run) or, for a bundle on disk (--print-bundle, a
 * session's config for exec), as the annotation
 *
 *   run.agentrun.landlock = "ro:/\nrw:/work/space\nrw:/tmp\n..."
 *
 * one "ro:PATH" or "rw:PATH" per line.
 */
#ifndef AGENTRUN_LANDLOCK_H
#define AGENTRUN_LANDLOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"
#include "oci_config.h"

#define AR_ANNOTATION_LANDLOCK "run.agentrun.landlock"

/* The kernel's Landlock ABI version, 0 when unavailable. */
int ar_landlock_abi(void);

struct ar_landlock_rule {
	const char *path; /* absolute, inside the container */
	bool rw;
};

struct ar_landlock_rules {
	const struct ar_landlock_rule *v;
	size_t n;
};

/* Restrict the calling process by the rules. Fails (ENOTSUP) when the
 * kernel has no Landlock: the caller asked for it. */
int ar_landlock_restrict(const struct ar_landlock_rules *rules,
			 struct ar_error *err);

/* The annotation's text for the rules (malloc'd). A path holding a
 * newline cannot be written as a line: it is left out (no rule, denied:
 * the safe side). */
char *ar_landlock_rules_text(const struct ar_landlock_rules *rules);

/* Restrict the calling process: by `rules` when given, else by the
 * config's annotation when present (parsed here), else no-op. */
int ar_landlock_apply(const struct oci_config *cfg,
		      const struct ar_landlock_rules *rules,
		      struct ar_error *err);

#endif
