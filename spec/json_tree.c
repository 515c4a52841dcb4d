/* SPDX-License-Identifier: GPL-2.0-or-later */
/* JSON text -> struct jt_node tree (yajl streaming parser, arena memory,
 * limits enforced while parsing) and typed accessors with JSON paths. */
#include "json_tree.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#include "error.h"
#include "oci_config.h"
#include "utils.h"

/* ---------------------------------------------------------------- paths */

static bool key_is_plain(const char *k)
{
	if (!*k || !(isalpha((unsigned char)*k) || *k == '_'))
		return false;
	for (; *k; k++)
		if (!(isalnum((unsigned char)*k) || *k == '_'))
			return false;
	return true;
}

const char *jt_short(const char *s, char *buf, size_t size)
{
	size_t i = 0, max;

	if (size == 0)
		return "";
	if (!s)
		s = "";
	max = size - 1;
	for (; *s && i < max; s++) {
		unsigned char ch = (unsigned char)*s;

		buf[i++] =
			(ch < 0x20 || ch == 0x7f || ch == '"' || ch == '\\') ?
				'?' :
				(char)ch;
	}
	if (*s && max >= 3)
		memcpy(buf + max - 3, "...", 3), i = max;
	buf[i] = '\0';
	return buf;
}

void jt_path_format(const struct jt_path *p, char *buf, size_t size)
{
	const struct jt_path *steps[OCI_CONFIG_MAX_DEPTH + 8];
	size_t n = 0, off = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (; p && n < AR_ARRAY_SIZE(steps); p = p->parent)
		steps[n++] = p;
	while (n-- > 0 && off < size) {
		const struct jt_path *s = steps[n];
		char tmp[JT_SHORT_MAX];
		int w;

		if (!s->key)
			w = snprintf(buf + off, size - off, "[%zu]", s->index);
		else if (key_is_plain(s->key))
			w = snprintf(buf + off, size - off, "%s%s",
				     off ? "." : "", s->key);
		else
			w = snprintf(buf + off, size - off, "[\"%s\"]",
				     jt_short(s->key, tmp, sizeof(tmp)));
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

int(jt_fail)(const struct jt_ctx *c, const struct jt_path *p, const char *fmt,
	     ...)
{
	char path[512], msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jt_path_format(p, path, sizeof(path));
	if (path[0])
		return ar_error_set_plain(c->err, EINVAL, "%s: %s: %s", c->file,
					  path, msg);
	return ar_error_set_plain(c->err, EINVAL, "%s: %s", c->file, msg);
}

const char *jt_type_name(const struct jt_node *n)
{
	switch (n->type) {
	case JT_NULL:
		return "null";
	case JT_FALSE:
	case JT_TRUE:
		return "boolean";
	case JT_NUMBER:
		return "number";
	case JT_STRING:
		return "string";
	case JT_OBJECT:
		return "object";
	case JT_ARRAY:
		return "array";
	}
	return "?";
}

/* -------------------------------------------------------------- builder */

struct builder {
	struct ar_arena *a;
	const char *file;
	struct ar_error *err;
	struct jt_node *root;
	struct jt_node *stack[OCI_CONFIG_MAX_DEPTH];
	size_t depth;
	const char *pending_key;
	size_t n_values;
	bool failed; /* err was set by a callback */
};

/* The path of the value about to be added at the current position. */
static int builder_fail(struct builder *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int builder_fail(struct builder *b, const char *fmt, ...)
{
	struct jt_path steps[OCI_CONFIG_MAX_DEPTH];
	const struct jt_path *parent = NULL;
	struct jt_ctx c = { b->a, b->file, b->err };
	char msg[512];
	va_list ap;

	for (size_t i = 0; i < b->depth; i++) {
		const struct jt_node *box = b->stack[i];
		bool inner = i + 1 < b->depth;

		steps[i].parent = parent;
		if (box->type == JT_OBJECT) {
			steps[i].key = inner ? b->stack[i + 1]->key :
					       b->pending_key;
			if (!steps[i].key)
				break; /* error on a key itself */
		} else {
			steps[i].key = NULL;
			steps[i].index = inner ? box->n - 1 : box->n;
		}
		parent = &steps[i];
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	jt_fail(&c, parent, "%s", msg);
	b->failed = true;
	return 0; /* cancels the yajl parse */
}

void jt_append(struct jt_node *parent, struct jt_node *n)
{
	n->next = NULL;
	if (parent->u.kids.last)
		parent->u.kids.last->next = n;
	else
		parent->u.kids.first = n;
	parent->u.kids.last = n;
	parent->n++;
}

static struct jt_node *builder_add(struct builder *b, enum jt_type type)
{
	struct jt_node *n, *parent;

	if (++b->n_values > JT_MAX_VALUES) {
		builder_fail(b, "more than %u JSON values", JT_MAX_VALUES);
		return NULL;
	}
	n = oci_arena_alloc(b->a, sizeof(*n));
	n->type = type;
	if (b->depth == 0) {
		b->root = n;
		return n;
	}
	parent = b->stack[b->depth - 1];
	if (parent->type == JT_OBJECT) {
		n->key = b->pending_key;
		b->pending_key = NULL;
	}
	jt_append(parent, n);
	return n;
}

static int cb_null(void *ctx)
{
	return builder_add(ctx, JT_NULL) != NULL;
}

static int cb_boolean(void *ctx, int v)
{
	return builder_add(ctx, v ? JT_TRUE : JT_FALSE) != NULL;
}

static int add_text(struct builder *b, enum jt_type type, const char *s,
		    size_t len)
{
	struct jt_node *n;

	if (len > OCI_CONFIG_MAX_STRING)
		return builder_fail(
			b,
			"string of %zu bytes is longer than the limit of %u bytes",
			len, OCI_CONFIG_MAX_STRING);
	n = builder_add(b, type);
	if (!n)
		return 0;
	n->u.str.s = oci_arena_strndup(b->a, s, len);
	n->u.str.len = len;
	return 1;
}

static int cb_number(void *ctx, const char *s, size_t len)
{
	return add_text(ctx, JT_NUMBER, s, len);
}

static int cb_string(void *ctx, const unsigned char *s, size_t len)
{
	return add_text(ctx, JT_STRING, (const char *)s, len);
}

static int cb_map_key(void *ctx, const unsigned char *s, size_t len)
{
	struct builder *b = ctx;

	b->pending_key = NULL;
	if (len > OCI_CONFIG_MAX_STRING)
		return builder_fail(
			b,
			"property name of %zu bytes is longer than the limit",
			len);
	if (memchr(s, '\0', len))
		return builder_fail(b, "property name contains a NUL byte");
	b->pending_key = oci_arena_strndup(b->a, (const char *)s, len);
	return 1;
}

static int start_box(struct builder *b, enum jt_type type)
{
	struct jt_node *n;

	if (b->depth >= OCI_CONFIG_MAX_DEPTH)
		return builder_fail(b, "nesting deeper than %d levels",
				    OCI_CONFIG_MAX_DEPTH);
	n = builder_add(b, type);
	if (!n)
		return 0;
	b->stack[b->depth++] = n;
	return 1;
}

static int cb_start_map(void *ctx)
{
	return start_box(ctx, JT_OBJECT);
}

static int cb_start_array(void *ctx)
{
	return start_box(ctx, JT_ARRAY);
}

static int cb_end_box(void *ctx)
{
	struct builder *b = ctx;

	if (b->depth > 0)
		b->depth--;
	return 1;
}

static const yajl_callbacks builder_callbacks = {
	.yajl_null = cb_null,
	.yajl_boolean = cb_boolean,
	.yajl_number = cb_number,
	.yajl_string = cb_string,
	.yajl_start_map = cb_start_map,
	.yajl_map_key = cb_map_key,
	.yajl_end_map = cb_end_box,
	.yajl_start_array = cb_start_array,
	.yajl_end_array = cb_end_box,
};

static void offset_to_line_col(const char *s, size_t off, size_t *line,
			       size_t *col)
{
	size_t l = 1, c = 1;

	for (size_t i = 0; i < off; i++) {
		if (s[i] == '\n') {
			l++;
			c = 1;
		} else {
			c++;
		}
	}
	*line = l;
	*col = c;
}

static void yajl_handle_freep(yajl_handle *h)
{
	if (*h)
		yajl_free(*h);
}

int jt_parse(struct ar_arena *a, const char *json, size_t len,
	     const char *filename, struct jt_node **out, struct ar_error *err)
{
	_cleanup_(yajl_handle_freep) yajl_handle h = NULL;
	struct builder b = { .a = a, .file = filename, .err = err };
	yajl_status st;
	size_t off, line, col;
	unsigned char *ymsg;
	char msg[256];
	size_t mlen;

	if (len > OCI_CONFIG_MAX_FILE_SIZE)
		return ar_error_set_plain(
			err, EFBIG,
			"%s: %zu bytes is larger than the limit of %u bytes",
			filename, len, OCI_CONFIG_MAX_FILE_SIZE);
	h = yajl_alloc(&builder_callbacks, NULL, &b);
	if (!h)
		return ar_error_set_plain(
			err, ENOMEM, "%s: yajl_alloc: out of memory", filename);
	st = yajl_parse(h, (const unsigned char *)json, len);
	off = yajl_get_bytes_consumed(h);
	if (st == yajl_status_ok) {
		st = yajl_complete_parse(h);
		off = len;
	}
	if (b.failed)
		return -1;
	if (st != yajl_status_ok) {
		ymsg = yajl_get_error(h, 0, NULL, 0);
		snprintf(msg, sizeof(msg), "%s", ymsg ? (char *)ymsg : "error");
		if (ymsg)
			yajl_free_error(h, ymsg);
		mlen = strlen(msg);
		while (mlen && isspace((unsigned char)msg[mlen - 1]))
			msg[--mlen] = '\0';
		if (off > len)
			off = len;
		offset_to_line_col(json, off, &line, &col);
		return ar_error_set_plain(
			err, EINVAL,
			"%s: invalid JSON at line %zu, column %zu: %s",
			filename, line, col, msg);
	}
	if (!b.root)
		return ar_error_set_plain(err, EINVAL, "%s: empty document",
					  filename);
	*out = b.root;
	return 0;
}

/* ------------------------------------------------------------ accessors */

const struct jt_node *jt_get(const struct jt_node *obj, const char *key)
{
	const struct jt_node *found = NULL;

	if (!obj || obj->type != JT_OBJECT)
		return NULL;
	jt_foreach(n, obj)
		if (strcmp(n->key, key) == 0)
			found = n;
	if (found && found->type == JT_NULL)
		return NULL;
	return found;
}

static int want(const struct jt_ctx *c, const struct jt_node *n,
		const struct jt_path *p, enum jt_type t, const char *what)
{
	if (n->type == t)
		return 0;
	return jt_fail(c, p, "expected %s, got %s", what, jt_type_name(n));
}

int jt_as_object(const struct jt_ctx *c, const struct jt_node *n,
		 const struct jt_path *p)
{
	return want(c, n, p, JT_OBJECT, "an object");
}

int jt_as_array(const struct jt_ctx *c, const struct jt_node *n,
		const struct jt_path *p)
{
	return want(c, n, p, JT_ARRAY, "an array");
}

int jt_as_string(const struct jt_ctx *c, const struct jt_node *n,
		 const struct jt_path *p, char **out)
{
	if (want(c, n, p, JT_STRING, "a string") < 0)
		return -1;
	if (memchr(n->u.str.s, '\0', n->u.str.len))
		return jt_fail(c, p, "string contains a NUL byte");
	*out = (char *)n->u.str.s;
	return 0;
}

int jt_as_bool(const struct jt_ctx *c, const struct jt_node *n,
	       const struct jt_path *p, bool *out)
{
	if (n->type != JT_TRUE && n->type != JT_FALSE)
		return jt_fail(c, p, "expected a boolean, got %s",
			       jt_type_name(n));
	*out = n->type == JT_TRUE;
	return 0;
}

enum num_kind { NUM_INT, NUM_FRACTION, NUM_OVERFLOW };

/* Decompose a JSON number as written into sign and magnitude. */
static enum num_kind num_split(const char *s, bool *neg, uint64_t *mag)
{
	uint64_t v = 0;

	*neg = *s == '-';
	if (*neg)
		s++;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned d = (unsigned)(*s - '0');

		if (v > (UINT64_MAX - d) / 10) {
			/* keep scanning: "1e400" is a fraction, not overflow */
			while (*s >= '0' && *s <= '9')
				s++;
			return *s ? NUM_FRACTION : NUM_OVERFLOW;
		}
		v = v * 10 + d;
	}
	*mag = v;
	return *s ? NUM_FRACTION : NUM_INT;
}

int jt_as_u64_max(const struct jt_ctx *c, const struct jt_node *n,
		  const struct jt_path *p, uint64_t max, uint64_t *out)
{
	char tmp[JT_SHORT_MAX];
	uint64_t mag = 0;
	bool neg;

	if (n->type != JT_NUMBER)
		return jt_fail(c, p, "expected an unsigned integer, got %s",
			       jt_type_name(n));
	switch (num_split(n->u.str.s, &neg, &mag)) {
	case NUM_FRACTION:
		return jt_fail(c, p, "expected an unsigned integer, got %s",
			       jt_short(n->u.str.s, tmp, sizeof(tmp)));
	case NUM_OVERFLOW:
		return jt_fail(c, p,
			       "number %s is out of range (0 to %" PRIu64 ")",
			       jt_short(n->u.str.s, tmp, sizeof(tmp)), max);
	case NUM_INT:
		break;
	}
	if (neg && mag != 0)
		return jt_fail(
			c, p,
			"expected an unsigned integer, got negative number %s",
			jt_short(n->u.str.s, tmp, sizeof(tmp)));
	if (mag > max)
		return jt_fail(c, p,
			       "number %s is out of range (0 to %" PRIu64 ")",
			       jt_short(n->u.str.s, tmp, sizeof(tmp)), max);
	*out = mag;
	return 0;
}

int jt_as_i64_range(const struct jt_ctx *c, const struct jt_node *n,
		    const struct jt_path *p, int64_t min, int64_t max,
		    int64_t *out)
{
	char tmp[JT_SHORT_MAX];
	uint64_t mag = 0;
	int64_t v;
	bool neg;

	if (n->type != JT_NUMBER)
		return jt_fail(c, p, "expected an integer, got %s",
			       jt_type_name(n));
	switch (num_split(n->u.str.s, &neg, &mag)) {
	case NUM_FRACTION:
		return jt_fail(c, p, "expected an integer, got %s",
			       jt_short(n->u.str.s, tmp, sizeof(tmp)));
	case NUM_OVERFLOW:
		goto range;
	case NUM_INT:
		break;
	}
	if (neg) {
		if (mag > (uint64_t)INT64_MAX + 1)
			goto range;
		v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
	} else {
		if (mag > (uint64_t)INT64_MAX)
			goto range;
		v = (int64_t)mag;
	}
	if (v < min || v > max)
		goto range;
	*out = v;
	return 0;
range:
	return jt_fail(c, p,
		       "number %s is out of range (%" PRId64 " to %" PRId64 ")",
		       jt_short(n->u.str.s, tmp, sizeof(tmp)), min, max);
}

int jt_as_u64(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, uint64_t *out)
{
	return jt_as_u64_max(c, n, p, UINT64_MAX, out);
}

int jt_as_i64(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, int64_t *out)
{
	return jt_as_i64_range(c, n, p, INT64_MIN, INT64_MAX, out);
}

int jt_as_u32(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, uint32_t *out)
{
	uint64_t v = 0;

	if (jt_as_u64_max(c, n, p, UINT32_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int jt_as_i32(const struct jt_ctx *c, const struct jt_node *n,
	      const struct jt_path *p, int32_t *out)
{
	int64_t v = 0;

	if (jt_as_i64_range(c, n, p, INT32_MIN, INT32_MAX, &v) < 0)
		return -1;
	*out = (int32_t)v;
	return 0;
}

/* ------------------------------------------------------------- members */

static int missing(const struct jt_ctx *c, const struct jt_path *p,
		   const char *key)
{
	return jt_fail(c, JT_KEY(p, key), "missing required property");
}

int jt_member_object(const struct jt_ctx *c, const struct jt_node *obj,
		     const struct jt_path *p, const char *key,
		     const struct jt_node **out)
{
	const struct jt_node *n = jt_get(obj, key);

	*out = NULL;
	if (!n)
		return 0;
	if (jt_as_object(c, n, JT_KEY(p, key)) < 0)
		return -1;
	*out = n;
	return 0;
}

int jt_member_array(const struct jt_ctx *c, const struct jt_node *obj,
		    const struct jt_path *p, const char *key,
		    const struct jt_node **out)
{
	const struct jt_node *n = jt_get(obj, key);

	*out = NULL;
	if (!n)
		return 0;
	if (jt_as_array(c, n, JT_KEY(p, key)) < 0)
		return -1;
	*out = n;
	return 0;
}

int jt_member_string(const struct jt_ctx *c, const struct jt_node *obj,
		     const struct jt_path *p, const char *key, char **out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_string(c, n, JT_KEY(p, key), out) : 0;
}

int jt_member_string_req(const struct jt_ctx *c, const struct jt_node *obj,
			 const struct jt_path *p, const char *key, char **out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_string(c, n, JT_KEY(p, key), out) : missing(c, p, key);
}

int jt_member_bool(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key, bool *out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_bool(c, n, JT_KEY(p, key), out) : 0;
}

int jt_member_u32_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, uint32_t *out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_u32(c, n, JT_KEY(p, key), out) : missing(c, p, key);
}

int jt_member_i64_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, int64_t *out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_i64(c, n, JT_KEY(p, key), out) : missing(c, p, key);
}

int jt_member_u64_req(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key, uint64_t *out)
{
	const struct jt_node *n = jt_get(obj, key);

	return n ? jt_as_u64(c, n, JT_KEY(p, key), out) : missing(c, p, key);
}

int jt_member_opt_u64(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_u64 *out)
{
	const struct jt_node *n = jt_get(obj, key);

	if (!n)
		return 0;
	if (jt_as_u64(c, n, JT_KEY(p, key), &out->v) < 0)
		return -1;
	out->set = true;
	return 0;
}

int jt_member_opt_i64(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_i64 *out)
{
	const struct jt_node *n = jt_get(obj, key);

	if (!n)
		return 0;
	if (jt_as_i64(c, n, JT_KEY(p, key), &out->v) < 0)
		return -1;
	out->set = true;
	return 0;
}

int jt_member_opt_u32_max(const struct jt_ctx *c, const struct jt_node *obj,
			  const struct jt_path *p, const char *key,
			  uint32_t max, struct oci_opt_u32 *out)
{
	const struct jt_node *n = jt_get(obj, key);
	uint64_t v = 0;

	if (!n)
		return 0;
	if (jt_as_u64_max(c, n, JT_KEY(p, key), max, &v) < 0)
		return -1;
	out->v = (uint32_t)v;
	out->set = true;
	return 0;
}

int jt_member_opt_u32(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_u32 *out)
{
	return jt_member_opt_u32_max(c, obj, p, key, UINT32_MAX, out);
}

int jt_member_opt_i32(const struct jt_ctx *c, const struct jt_node *obj,
		      const struct jt_path *p, const char *key,
		      struct oci_opt_i32 *out)
{
	const struct jt_node *n = jt_get(obj, key);

	if (!n)
		return 0;
	if (jt_as_i32(c, n, JT_KEY(p, key), &out->v) < 0)
		return -1;
	out->set = true;
	return 0;
}

int jt_member_opt_bool(const struct jt_ctx *c, const struct jt_node *obj,
		       const struct jt_path *p, const char *key,
		       struct oci_opt_bool *out)
{
	const struct jt_node *n = jt_get(obj, key);

	if (!n)
		return 0;
	if (jt_as_bool(c, n, JT_KEY(p, key), &out->v) < 0)
		return -1;
	out->set = true;
	return 0;
}

int jt_list(const struct jt_ctx *c, const struct jt_node *a,
	    const struct jt_path *p, size_t size, jt_item_fn fn, void *arg,
	    void *out, size_t *n)
{
	void *items = oci_arena_calloc(c->a, (size_t)a->n + 1, size);
	size_t i = 0;

	memcpy(out, &items, sizeof(items));
	*n = a->n;
	jt_foreach(item, a) {
		const struct jt_path *ip = a->type == JT_OBJECT ?
						   JT_KEY(p, item->key) :
						   JT_IDX(p, i);

		if (fn(c, item, ip, items, i, arg) < 0)
			return -1;
		i++;
	}
	return 0;
}

int jt_member_list(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key, size_t size,
		   jt_item_fn fn, void *arg, void *out, size_t *n)
{
	const struct jt_node *arr;

	if (jt_member_array(c, obj, p, key, &arr) < 0)
		return -1;
	return arr ? jt_list(c, arr, JT_KEY(p, key), size, fn, arg, out, n) : 0;
}

static int string_item(const struct jt_ctx *c, const struct jt_node *n,
		       const struct jt_path *p, void *items, size_t i,
		       void *arg)
{
	(void)arg;
	return jt_as_string(c, n, p, (char **)items + i);
}

int jt_member_strv(const struct jt_ctx *c, const struct jt_node *obj,
		   const struct jt_path *p, const char *key,
		   struct oci_strv *out)
{
	return jt_member_list(c, obj, p, key, sizeof(*out->v), string_item,
			      NULL, &out->v, &out->n);
}

static int kv_item(const struct jt_ctx *c, const struct jt_node *n,
		   const struct jt_path *p, void *items, size_t i, void *arg)
{
	struct oci_kv *kv = (struct oci_kv *)items + i;

	(void)arg;
	kv->key = (char *)n->key;
	return jt_as_string(c, n, p, &kv->value);
}

int jt_member_kv(const struct jt_ctx *c, const struct jt_node *obj,
		 const struct jt_path *p, const char *key,
		 struct oci_kv_list *out)
{
	const struct jt_node *map;

	if (jt_member_object(c, obj, p, key, &map) < 0)
		return -1;
	return map ? jt_list(c, map, JT_KEY(p, key), sizeof(*out->items),
			     kv_item, NULL, &out->items, &out->n) :
		     0;
}

/* ----------------------------------------------------------------- gen */

int jt_gen(void *gen, const struct jt_node *n)
{
	yajl_gen g = gen;
	yajl_gen_status st = yajl_gen_status_ok;

	switch (n->type) {
	case JT_NULL:
		st = yajl_gen_null(g);
		break;
	case JT_FALSE:
	case JT_TRUE:
		st = yajl_gen_bool(g, n->type == JT_TRUE);
		break;
	case JT_NUMBER:
		st = yajl_gen_number(g, n->u.str.s, n->u.str.len);
		break;
	case JT_STRING:
		st = yajl_gen_string(g, (const unsigned char *)n->u.str.s,
				     n->u.str.len);
		break;
	case JT_OBJECT:
		st = yajl_gen_map_open(g);
		jt_foreach(k, n) {
			if (st != yajl_gen_status_ok)
				break;
			st = yajl_gen_string(g, (const unsigned char *)k->key,
					     strlen(k->key));
			if (st == yajl_gen_status_ok && jt_gen(g, k) < 0)
				return -1;
		}
		if (st == yajl_gen_status_ok)
			st = yajl_gen_map_close(g);
		break;
	case JT_ARRAY:
		st = yajl_gen_array_open(g);
		jt_foreach(k, n) {
			if (st != yajl_gen_status_ok)
				break;
			if (jt_gen(g, k) < 0)
				return -1;
		}
		if (st == yajl_gen_status_ok)
			st = yajl_gen_array_close(g);
		break;
	}
	return st == yajl_gen_status_ok ? 0 : -1;
}
