/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A bump allocator: everything of one config is freed at once. */
#ifndef AGENTRUN_ARENA_H
#define AGENTRUN_ARENA_H

#include <stddef.h>

struct ar_arena_chunk;

struct ar_arena {
	struct ar_arena_chunk *head;
};

/* Allocation aborts on out-of-memory. Memory is zeroed. */
void *oci_arena_alloc(struct ar_arena *a, size_t size);
void *oci_arena_calloc(struct ar_arena *a, size_t n, size_t size);
char *oci_arena_strdup(struct ar_arena *a, const char *s);
char *oci_arena_strndup(struct ar_arena *a, const char *s, size_t n);
char *oci_arena_printf(struct ar_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void oci_arena_free(struct ar_arena *a);

#endif
