/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The quarantine of the end-of-run check (quarantine.c). */
#ifndef AGENTRUN_SANDBOX_QUARANTINE_H
#define AGENTRUN_SANDBOX_QUARANTINE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* $XDG_STATE_HOME/agentrun/quarantine/DATE-PID (or
 * ~/.local/state/agentrun/quarantine/...), made at the first use: the
 * copies (NNNN.data) and MANIFEST (ACTION PATH COPY WHY, a line each). */
struct sb_quarantine {
	char *const *environ; /* the caller's: XDG_STATE_HOME */
	const char *home;
	char *dir; /* made (or "" when it could not be) at the first use */
	int fd;
	FILE *manifest;
	unsigned n; /* copies made */
	size_t found; /* paths neutralised or reported */
};

void sb_quarantine_init(struct sb_quarantine *q, char *const *env,
			const char *home);
/* The directory and MANIFEST closed; q->found kept. */
void sb_quarantine_close(struct sb_quarantine *q);

/* Move dfd/name (a file or a link; a directory is left) into the
 * quarantine: copied, then unlinked; without a copy renamed to
 * NAME.agentrun-quarantined; never deleted without a copy. `path` and
 * `why` are printed and written in MANIFEST. */
void sb_quarantine_set_aside(struct sb_quarantine *q, int dfd, const char *name,
			     const char *path, const char *why);
/* dfd/name (described by st) given `text` (its keys that run code
 * commented out), the original copied into the quarantine first: in
 * place when it is a single link, else by a rename; set aside when it
 * cannot be rewritten. */
void sb_quarantine_neutralise(struct sb_quarantine *q, int dfd,
			      const char *name, const char *path,
			      const struct stat *st, const char *text,
			      const char *why);
/* `s` as printed: control characters as \xNN (names are the agent's).
 * Malloc'd. */
char *sb_quarantine_esc(const char *s);

#endif
