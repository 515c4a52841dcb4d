/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * `agentrun sandbox --learn PROFILE.json -- CMD` (learn.c): the run shows
 * more of the host read-only (sb_learn_extra_ro), lets the egress proxy
 * connect anywhere but the cloud metadata address, records the host
 * paths the command opens (audit_notify.c, observation only) and the
 * destinations it reaches, and writes a profile (spec/profile.c format)
 * with exactly those extras: "ro", "rw" and "net": {"allow": [...]}.
 */
#ifndef AGENTRUN_LEARN_H
#define AGENTRUN_LEARN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

struct ar_egress_event;
struct ar_audit;
struct ar_jbuf;

struct sb_learn;

/* workspace: the run's (paths below it are not extras). audit: events
 * are also passed to the audit log (NULL: none). */
struct sb_learn *sb_learn_new(const char *home, const char *workspace,
			      struct ar_audit *audit);
void sb_learn_free(struct sb_learn *l);

/* A path the command used (absolute, normalised); thread-safe. */
void sb_learn_path(struct sb_learn *l, const char *path, bool write, bool exec);
/* A directory the command made (mkdir): listed, with a trailing '/'
 * (created when the profile is used), only when it does not exist on
 * the host; an existing one needs no grant. */
void sb_learn_mkdir(struct sb_learn *l, const char *path);
/* An ar_egress_event_fn (data: the struct sb_learn). */
void sb_learn_egress_event(const struct ar_egress_event *ev, void *data);

/* The top-level host directories the learn run binds read-only (beyond
 * the default set; NULL terminated, malloc'd strings). */
char **sb_learn_extra_ro(const char *workspace);

/* Write the profile (atomically, 0644). Fails naming the file. */
int sb_learn_write(struct sb_learn *l, const char *path, char *const *argv,
		   struct ar_error *err);

/* The destinations learned, as a profile fragment
 * {"net": {"allow": [...]}} (sorted) into b; returns how many. */
size_t sb_learn_net_json(struct sb_learn *l, struct ar_jbuf *b);

/* agentrun sandbox learn --from LOG [-o PROFILE] (learn_log.c): the
 * would_deny events of a --shadow run's audit log, and the allowlist
 * refusals of any run's, as allowlist entries (the same rules as
 * --learn's: an address the enforcing proxy refuses by its class is
 * listed by its exact address too). Without `profile`: the fragment on
 * `out`; with it: a whole profile written there. Errors name LOG and
 * its line. */
int sb_learn_from_log(const char *log, const char *profile, const char *home,
		      const char *workspace, FILE *out, struct ar_error *err);

/* For tests: is this path one the learned profile would list (not a
 * default, not a secret, not the workspace, not the home directory nor
 * a directory above it)? */
bool sb_learn_is_extra(const struct sb_learn *l, const char *path);

#endif
