/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A yajl_gen with a sticky failure flag, so that code emitting a JSON
 * document stays linear: emit everything, check once at jg_finish().
 * The one JSON writer of agentrun: `agentrun spec` (generate.c),
 * config.json output of a struct oci_config (config_write.c), `features`
 * (oci_features.c), `list --format json` (container.c) and `events`
 * (cgroup_stats.c). Only the log (runtime/lib/log.c) escapes by hand: it
 * runs in the container's child, where nothing may allocate.
 */
#ifndef AGENTRUN_JSON_GEN_H
#define AGENTRUN_JSON_GEN_H

#include <stdbool.h>
#include <stddef.h>

#include <yajl/yajl_gen.h>

#include "error.h"

struct jgen {
	yajl_gen g;
	bool failed;
};

/* Pretty-printed (tab indent), '/' not escaped, UTF-8 validated. */
int jg_init(struct jgen *w, struct ar_error *err);
/* The same with another indent string (a string literal: kept, not
 * copied); NULL: one line, as jg_init_compact. */
int jg_init_indent(struct jgen *w, const char *indent, struct ar_error *err);
/* One line, no spaces (JSON lines: `events`, `list --format json`). */
int jg_init_compact(struct jgen *w, struct ar_error *err);
void jg_free(struct jgen *w);
#define _cleanup_jgen_ __attribute__((cleanup(jg_free)))

void jg_check(struct jgen *w, yajl_gen_status st);
void jg_str(struct jgen *w, const char *v);
/* "k": "v"; nothing when v is NULL. */
void jg_key_str(struct jgen *w, const char *k, const char *v);
void jg_key_u64(struct jgen *w, const char *k, unsigned long long v);
void jg_key_i64(struct jgen *w, const char *k, long long v);
void jg_key_bool(struct jgen *w, const char *k, bool v);
/* "k": ["a", "b", ...] from the NULL-terminated list v. */
void jg_key_strv(struct jgen *w, const char *k, const char *const *v);
void jg_u64(struct jgen *w, unsigned long long v);
void jg_map_open(struct jgen *w);
void jg_map_close(struct jgen *w);
void jg_array_open(struct jgen *w);
void jg_array_close(struct jgen *w);

/* The document as a malloc'd, NUL- and newline-terminated string. On a
 * generation failure: an error "WHAT: JSON generation failed (invalid
 * UTF-8 in a string?)". */
int jg_finish(struct jgen *w, const char *what, char **out, size_t *len,
	      struct ar_error *err);

#endif
