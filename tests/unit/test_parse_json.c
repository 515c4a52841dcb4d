/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for spec/json_tree.c: paths, message helpers, re-emitting. */
#include <stdio.h>
#include <string.h>

#include <yajl/yajl_gen.h>

#include "error.h"
#include "json_tree.h"
#include "unit.h"

UNIT_TEST(path_format)
{
	char buf[256];

	jt_path_format(NULL, buf, sizeof(buf));
	CHECK_STR_EQ(buf, "");
	jt_path_format(JT_KEY(NULL, "process"), buf, sizeof(buf));
	CHECK_STR_EQ(buf, "process");
	jt_path_format(
		JT_KEY(JT_IDX(JT_KEY(JT_KEY(NULL, "process"), "rlimits"), 2),
		       "hard"),
		buf, sizeof(buf));
	CHECK_STR_EQ(buf, "process.rlimits[2].hard");
	jt_path_format(JT_KEY(JT_KEY(NULL, "annotations"), "io.podman/x"), buf,
		       sizeof(buf));
	CHECK_STR_EQ(buf, "annotations[\"io.podman/x\"]");
	jt_path_format(JT_IDX(JT_IDX(NULL, 0), 17), buf, sizeof(buf));
	CHECK_STR_EQ(buf, "[0][17]");
	/* truncation is safe */
	jt_path_format(JT_KEY(JT_KEY(NULL, "process"), "capabilities"), buf, 8);
	CHECK_INT_EQ(strlen(buf), 7);
	CHECK(strncmp(buf, "process", 7) == 0);
}

UNIT_TEST(short_strings)
{
	char buf[JT_SHORT_MAX];
	char tiny[8];
	char big[200];

	CHECK_STR_EQ(jt_short("abc", buf, sizeof(buf)), "abc");
	CHECK_STR_EQ(jt_short("a\"b\\c\n\x01", buf, sizeof(buf)), "a?b?c??");
	CHECK_STR_EQ(jt_short("0123456789", tiny, sizeof(tiny)), "0123...");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	jt_short(big, buf, sizeof(buf));
	CHECK_INT_EQ(strlen(buf), JT_SHORT_MAX - 1);
	CHECK(strcmp(buf + JT_SHORT_MAX - 4, "...") == 0);
	CHECK_STR_EQ(jt_short(NULL, buf, sizeof(buf)), "");
}

UNIT_TEST(tree_shape_and_lookup)
{
	const char *text = "{\"a\": 1, \"b\": [true, false, null, \"s\"],"
			   " \"a\": {\"x\": -0.5e3}, \"n\": null}";
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *root = NULL;
	const struct jt_node *n;

	CHECK(jt_parse(&a, text, strlen(text), "t.json", &root, &err) == 0);
	if (!root)
		goto out;
	CHECK_INT_EQ(root->type, JT_OBJECT);
	CHECK_INT_EQ(root->n, 4);
	n = jt_get(root, "a"); /* the last "a" wins */
	CHECK(n && n->type == JT_OBJECT);
	n = jt_get(n, "x");
	CHECK(n && n->type == JT_NUMBER);
	if (n)
		CHECK_STR_EQ(n->u.str.s, "-0.5e3");
	CHECK(jt_get(root, "n") == NULL); /* null is absent */
	CHECK(jt_get(root, "missing") == NULL);
	n = jt_get(root, "b");
	CHECK(n && n->type == JT_ARRAY && n->n == 4);
	if (n) {
		CHECK_INT_EQ(n->u.kids.first->type, JT_TRUE);
		CHECK_INT_EQ(n->u.kids.last->type, JT_STRING);
		CHECK_STR_EQ(jt_type_name(n->u.kids.first), "boolean");
		CHECK_STR_EQ(jt_type_name(n->u.kids.first->next->next), "null");
	}
out:
	oci_arena_free(&a);
}

UNIT_TEST(gen_reemits_exactly)
{
	const char *text = "{\"big\":18446744073709551615,\"f\":1e400,"
			   "\"s\":\"/a\\u00e9\\n\",\"l\":[null,true,{}],"
			   "\"neg\":-9223372036854775808}";
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *root = NULL;
	const unsigned char *out;
	size_t len;
	yajl_gen g = yajl_gen_alloc(NULL);

	CHECK(jt_parse(&a, text, strlen(text), "t.json", &root, &err) == 0);
	if (root) {
		CHECK(jt_gen(g, root) == 0);
		CHECK(yajl_gen_get_buf(g, &out, &len) == yajl_gen_status_ok);
		CHECK_STR_EQ((const char *)out,
			     "{\"big\":18446744073709551615,\"f\":1e400,"
			     "\"s\":\"/a\xc3\xa9\\n\",\"l\":[null,true,{}],"
			     "\"neg\":-9223372036854775808}");
	}
	yajl_gen_free(g);
	oci_arena_free(&a);
}

UNIT_TEST(parse_errors_carry_position)
{
	const char *text = "{\n  \"a\": [1,\n  2,, 3]\n}";
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *root = NULL;

	CHECK(jt_parse(&a, text, strlen(text), "pos.json", &root, &err) < 0);
	CHECK_STR_CONTAINS(err.msg, "pos.json: invalid JSON at line 3, column");
	CHECK_STR_CONTAINS(err.msg, "unallowed token");
	oci_arena_free(&a);
}

UNIT_MAIN()
