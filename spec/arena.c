/* SPDX-License-Identifier: GPL-2.0-or-later */
#define _GNU_SOURCE
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ARENA_CHUNK_SIZE 16384

struct ar_arena_chunk {
	struct ar_arena_chunk *next;
	size_t used;
	size_t size;
	max_align_t data[];
};

static _Noreturn void arena_oom(void)
{
	static const char msg[] = "agentrun: out of memory\n";
	ssize_t r = write(2, msg, sizeof(msg) - 1);
	(void)r;
	abort();
}

void *oci_arena_alloc(struct ar_arena *a, size_t size)
{
	struct ar_arena_chunk *c = a->head;
	size_t align = _Alignof(max_align_t);
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (size == 0)
		size = align;
	if (!c || c->size - c->used < size) {
		size_t csize = size > ARENA_CHUNK_SIZE / 2 ? size :
							     ARENA_CHUNK_SIZE;

		if (csize > SIZE_MAX - sizeof(*c))
			arena_oom();
		c = malloc(sizeof(*c) + csize);
		if (!c)
			arena_oom();
		c->used = 0;
		c->size = csize;
		/* Big one-off allocations go behind the current chunk so the
		 * current chunk keeps serving small ones. */
		if (a->head && csize != ARENA_CHUNK_SIZE) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
	}
	p = (char *)c->data + c->used;
	c->used += size;
	memset(p, 0, size);
	return p;
}

void *oci_arena_calloc(struct ar_arena *a, size_t n, size_t size)
{
	if (size && n > SIZE_MAX / size)
		arena_oom();
	return oci_arena_alloc(a, n * size);
}

char *oci_arena_strndup(struct ar_arena *a, const char *s, size_t n)
{
	char *r = oci_arena_alloc(a, n + 1);
	memcpy(r, s, n);
	r[n] = '\0';
	return r;
}

char *oci_arena_strdup(struct ar_arena *a, const char *s)
{
	return s ? oci_arena_strndup(a, s, strlen(s)) : NULL;
}

char *oci_arena_printf(struct ar_arena *a, const char *fmt, ...)
{
	va_list ap;
	char *tmp = NULL, *r;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&tmp, fmt, ap);
	va_end(ap);
	if (n < 0)
		arena_oom();
	r = oci_arena_strndup(a, tmp, (size_t)n);
	free(tmp);
	return r;
}

void oci_arena_free(struct ar_arena *a)
{
	struct ar_arena_chunk *c = a->head;

	while (c) {
		struct ar_arena_chunk *next = c->next;
		free(c);
		c = next;
	}
	a->head = NULL;
}
