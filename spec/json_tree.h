/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small JSON document tree for spec/, built with yajl's streaming parser
 * directly into an arena, plus typed accessors that name the JSON path of
 * every problem they report.
 *
 * Why not yajl_tree: yajl_tree loses string lengths (so embedded NUL bytes
 * go unnoticed), frees recursively and cannot enforce limits while parsing.
 * Here the limits (depth, string size, number of values) are enforced in the
 * parser callbacks, before anything deep is built, and the tree is freed
 * with its arena, without recursion.
 */
#ifndef AGENTRUN_JSON_TREE_H
#define AGENTRUN_JSON_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"

struct ar_error;

/* Upper bound on the number of JSON values in one document: a real config
 * has a few thousand; this keeps a hostile 64 MiB "[0,0,0,...]" from
 * turning into gigabytes of nodes. */
#define JT_MAX_VALUES (1u << 20)

enum jt_type {
	JT_NULL = 0,
	JT_FALSE,
	JT_TRUE,
	JT_NUMBER, /* u.str holds the number exactly as written */
	JT_STRING,
	JT_OBJECT,
	JT_ARRAY,
};

struct jt_node {
	enum jt_type type;
	uint32_t n; /* number of children (object members, array items) */
	const char *key; /* member name when the parent is an object */
	struct jt_node *next; /* next sibling */
	union {
		struct {
			const char *s; /* NUL terminated */
			size_t len; /* may be > strlen(s): embedded NUL */
		} str;
		struct {
			struct jt_node *first;
			struct jt_node *last;
		} kids;
	} u;
};

/* Parse `len` bytes of JSON into a tree allocated from `a`. Errors:
 * "FILE: invalid JSON at line L, column C: <yajl message>",
 * "FILE: PATH: nesting deeper than 64 levels", ... */
int jt_parse(struct ar_arena *a, const char *json, size_t len,
	     const char *filename, struct jt_node **out, struct ar_error *err);

/* ---- paths, for error messages ---- */

/* One step of a JSON path; chains live on the C stack of the parsers.
 * key != NULL: member `key` of an object; else item `index` of an array.
 * The document root is the NULL path. */
struct jt_path {
	const struct jt_path *parent;
	const char *key;
	size_t index;
};

#define JT_KEY(parent_, key_)                                                  \
	(&(const struct jt_path){ .parent = (parent_), .key = (key_) })
#define JT_IDX(parent_, i_)                                                    \
	(&(const struct jt_path){ .parent = (parent_), .index = (i_) })

/* Render a path: process.rlimits[2].hard, annotations["a b"]. */
void jt_path_format(const struct jt_path *p, char *buf, size_t size);

/* Parsing context shared by every accessor. */
struct jt_ctx {
	struct ar_arena *a; /* where strings and arrays are allocated */
	const char *file; /* for messages */
	struct ar_error *err;
};

/* Set "FILE: PATH: message" (or "FILE: message" for the root). Returns -1. */
int jt_fail(const struct jt_ctx *c, const struct jt_path *p, const char *fmt,
	    ...) __attribute__((format(printf, 3, 4)));
#ifdef __clang_analyzer__ /* see ar_error_set in error.h */
#define jt_fail(...)                                                           \
	({                                                                     \
		(jt_fail)(__VA_ARGS__);                                        \
		-1;                                                            \
	})
#endif

/* "string", "number", "object", ... */
const char *jt_type_name(const struct jt_node *n);

/* A string shortened and sanitised for a message (control characters and
 * quotes replaced, at most size-1 bytes, "..." when cut). Returns buf. */
const char *jt_short(const char *s, char *buf, size_t size);
#define JT_SHORT_MAX 72

/* ---- lookups ---- */

/* The member `key` of object `obj` (the last one when repeated), NULL when
 * absent. JSON null counts as absent: optional properties written as null
 * by some generators mean "not set". */
const struct jt_node *jt_get(const struct jt_node *obj, const char *key);

/* n added as the last child of the object or array `parent` (n->key set
 * by the caller for an object's member). */
void jt_append(struct jt_node *parent, struct jt_node *n);

#define jt_foreach(child, parent)                                              \
	for (const struct jt_node *child = (parent)->u.kids.first; child;      \
	     child = child->next)

/* ---- typed conversion of one node (p is the node's own path) ---- */

int jt_as_object(const struct jt_ctx *c, const struct jt_node *n,
		 const struct jt_path *p);
int jt_as_array(const struct jt_ctx *c, const struct jt_node *n,
		const struct jt_path *p);
/* Strings: must not contain NUL bytes or be longer than the limit.
 * *out points into the tree (the tree lives as long as the arena). */
int jt_as_string(const struct jt_ctx *c, const struct jt_node *n,
		 const struct jt_path *p, char **out);
int jt_as_bool(const struct jt_ctx *c, const struct jt_node *n,
	       const struct jt_path *p, bool *out);
int jt_as_u64(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, uint64_t *out);
int jt_as_i64(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, int64_t *out);
/* Range-checked integers: [min, max]. */
int jt_as_u64_max(const struct jt_ctx *c, const struct jt_node *n,
		  const struct jt_path *p, uint64_t max, uint64_t *out);
int jt_as_i64_range(const struct jt_ctx *c, const struct jt_node *n,
		    const struct jt_path *p, int64_t min, int64_t max,
		    int64_t *out);
int jt_as_u32(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, uint32_t *out);
int jt_as_i32(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, int32_t *out);

/* ---- members of an object (p is the object's path) ----
 * `*_req` fail with "PATH.key: missing required property" when absent;
 * the others leave *out untouched when absent. */

int jt_member_object(const struct jt_ctx *c, const struct jt_node *obj,
		     const struct jt_path *p, const char *key,
		     const struct jt_node **out);
int jt_member_array(const struct jt_ctx *c, const struct jt_node *obj,
		    const struct jt_path *p, const char *key,
		    const struct jt_node **out);
int jt_member_string(const struct jt_ctx *c, const struct jt_node *obj,
		     const struct jt_path *p, const char *key, char **out);
int jt_member_string_req(const struct jt_ctx *c, const struct jt_node *obj,
			 const struct jt_path *p, const char *key, char **out);
int jt_member_bool(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key, bool *out);
int jt_member_u32_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, uint32_t *out);
int jt_member_i64_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, int64_t *out);
int jt_member_u64_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, uint64_t *out);

struct oci_opt_u64;
struct oci_opt_i64;
struct oci_opt_u32;
struct oci_opt_i32;
struct oci_opt_bool;
struct oci_strv;
struct oci_kv_list;

int jt_member_opt_u64(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_u64 *out);
int jt_member_opt_i64(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_i64 *out);
int jt_member_opt_u32(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_u32 *out);
/* uint32 field whose allowed range is narrower (uint16 weights, file modes) */
int jt_member_opt_u32_max(const struct jt_ctx *c, const struct jt_node *obj,
			  const struct jt_path *p, const char *key,
			  uint32_t max, struct oci_opt_u32 *out);
int jt_member_opt_i32(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_i32 *out);
int jt_member_opt_bool(const struct jt_ctx *c, const struct jt_node *obj,
		       const struct jt_path *p, const char *key,
		       struct oci_opt_bool *out);
/* Array of strings -> NULL-terminated vector. */
int jt_member_strv(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key,
		   struct oci_strv *out);
/* Object of strings -> key/value list (in document order). */
int jt_member_kv(const struct jt_ctx *c, const struct jt_node *obj,
		 const struct jt_path *p, const char *key,
		 struct oci_kv_list *out);

/* ---- lists: a JSON array or object into a C array ---- */

/* Called by jt_list for item i: n its node, p its path (p[i] in an array,
 * p["key"] in an object), items the C array being filled (the item's
 * element is items[i], zeroed). */
typedef int (*jt_item_fn)(const struct jt_ctx *c, const struct jt_node *n,
			  const struct jt_path *p, void *items, size_t i,
			  void *arg);

/* The items of array or object `a` (path p) as a C array: an arena array
 * of a->n zeroed elements of `size` bytes plus one more (so never NULL,
 * and NULL-terminated when the elements are pointers) is stored in the
 * pointer `out` points to (a T ** for elements of type T), a->n in *n;
 * then fn(..., arg) fills each item in order. -1 at the first failure. */
int jt_list(const struct jt_ctx *c, const struct jt_node *a,
	    const struct jt_path *p, size_t size, jt_item_fn fn, void *arg,
	    void *out, size_t *n);
/* jt_list over member `key` of obj, an array; absent: out and *n are
 * left untouched. */
int jt_member_list(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key, size_t size,
		   jt_item_fn fn, void *arg, void *out, size_t *n);

/* ---- output ---- */

/* Emit a tree with yajl_gen (numbers exactly as written). `gen` is a
 * yajl_gen; void * keeps yajl out of this header's users. */
int jt_gen(void *gen, const struct jt_node *n);

#endif
