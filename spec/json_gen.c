/* SPDX-License-Identifier: GPL-2.0-or-later */
#include "json_gen.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "utils.h"

int jg_init(struct jgen *w, struct ar_error *err)
{
	return jg_init_indent(w, "\t", err);
}

int jg_init_indent(struct jgen *w, const char *indent, struct ar_error *err)
{
	w->failed = false;
	w->g = yajl_gen_alloc(NULL);
	if (!w->g)
		return ar_error_set_plain(err, ENOMEM,
					  "yajl_gen_alloc: out of memory");
	if (indent) {
		yajl_gen_config(w->g, yajl_gen_beautify, 1);
		yajl_gen_config(w->g, yajl_gen_indent_string, indent);
	}
	yajl_gen_config(w->g, yajl_gen_escape_solidus, 0);
	yajl_gen_config(w->g, yajl_gen_validate_utf8, 1);
	return 0;
}

int jg_init_compact(struct jgen *w, struct ar_error *err)
{
	return jg_init_indent(w, NULL, err);
}

void jg_free(struct jgen *w)
{
	if (w->g)
		yajl_gen_free(w->g);
	w->g = NULL;
}

void jg_check(struct jgen *w, yajl_gen_status st)
{
	if (st != yajl_gen_status_ok)
		w->failed = true;
}

void jg_str(struct jgen *w, const char *v)
{
	jg_check(w, yajl_gen_string(w->g, (const unsigned char *)v, strlen(v)));
}

void jg_key_str(struct jgen *w, const char *k, const char *v)
{
	if (!v)
		return;
	jg_str(w, k);
	jg_str(w, v);
}

void jg_key_strv(struct jgen *w, const char *k, const char *const *v)
{
	jg_str(w, k);
	jg_array_open(w);
	for (; *v; v++)
		jg_str(w, *v);
	jg_array_close(w);
}

void jg_u64(struct jgen *w, unsigned long long v)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%llu", v);

	jg_check(w, yajl_gen_number(w->g, buf, (size_t)n));
}

void jg_key_u64(struct jgen *w, const char *k, unsigned long long v)
{
	jg_str(w, k);
	jg_u64(w, v);
}

void jg_key_i64(struct jgen *w, const char *k, long long v)
{
	jg_str(w, k);
	jg_check(w, yajl_gen_integer(w->g, v));
}

void jg_key_bool(struct jgen *w, const char *k, bool v)
{
	jg_str(w, k);
	jg_check(w, yajl_gen_bool(w->g, v));
}

void jg_map_open(struct jgen *w)
{
	jg_check(w, yajl_gen_map_open(w->g));
}

void jg_map_close(struct jgen *w)
{
	jg_check(w, yajl_gen_map_close(w->g));
}

void jg_array_open(struct jgen *w)
{
	jg_check(w, yajl_gen_array_open(w->g));
}

void jg_array_close(struct jgen *w)
{
	jg_check(w, yajl_gen_array_close(w->g));
}

int jg_finish(struct jgen *w, const char *what, char **out, size_t *len,
	      struct ar_error *err)
{
	const unsigned char *buf;
	size_t blen;
	char *r;

	if (w->failed ||
	    yajl_gen_get_buf(w->g, &buf, &blen) != yajl_gen_status_ok)
		return ar_error_set_plain(
			err, EINVAL,
			"%s: JSON generation failed (invalid UTF-8 in a string?)",
			what);
	r = ar_xmalloc(blen + 2);
	memcpy(r, buf, blen);
	if (blen == 0 || r[blen - 1] != '\n')
		r[blen++] = '\n';
	r[blen] = '\0';
	*out = r;
	*len = blen;
	return 0;
}
