/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The control socket's protocol (control_proto.h). */
#define _GNU_SOURCE
#include "control_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "error.h"
#include "json_tree.h"
#include "utils.h"

static const char *member_str(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = jt_get(o, key);

	if (!n || n->type != JT_STRING || strlen(n->u.str.s) != n->u.str.len)
		return NULL;
	return n->u.str.s;
}

int ctl_proto_parse(const char *line, size_t len, struct ctl_msg *m, char *why,
		    size_t wsize)
{
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *root = NULL;
	const char *op, *s;
	char *end;
	int r = -1;

	memset(m, 0, sizeof(*m));
	if (len > CTL_LINE_MAX) {
		snprintf(why, wsize, "request longer than %d bytes",
			 CTL_LINE_MAX);
		return -1;
	}
	if (jt_parse(&a, line, len, "request", &root, &err) < 0) {
		snprintf(why, wsize, "%s", err.msg);
		goto out;
	}
	if (root->type != JT_OBJECT) {
		snprintf(why, wsize, "request: expected a JSON object");
		goto out;
	}
	op = member_str(root, "op");
	if (!op) {
		snprintf(why, wsize, "request: op: expected a string");
		goto out;
	}
	if (strcmp(op, "requests") == 0) {
		m->op = CTL_OP_REQUESTS;
	} else if (strcmp(op, "events") == 0) {
		m->op = CTL_OP_EVENTS;
	} else if (strcmp(op, "policy") == 0) {
		m->op = CTL_OP_POLICY;
	} else if (strcmp(op, "answer") == 0) {
		m->op = CTL_OP_ANSWER;
		s = member_str(root, "id");
		if (!s || !*s || *s < '0' || *s > '9' ||
		    (m->id = strtoull(s, &end, 10), *end) || m->id == 0) {
			snprintf(
				why, wsize,
				"request: id: expected a request id (a number as a string)");
			goto out;
		}
		s = member_str(root, "answer");
		m->answer = ctl_answer_parse(s);
		if (m->answer == CTL_ANSWER_NONE) {
			snprintf(
				why, wsize,
				"request: answer: expected once, session, always or refuse");
			goto out;
		}
		s = member_str(root, "interface");
		if (!s || (strcmp(s, "cli") != 0 && strcmp(s, "watch") != 0 &&
			   strcmp(s, "web") != 0)) {
			snprintf(
				why, wsize,
				"request: interface: expected \"cli\", \"watch\" or \"web\"");
			goto out;
		}
		snprintf(m->iface, sizeof(m->iface), "%s", s);
	} else if (strcmp(op, "allow") == 0 || strcmp(op, "revoke") == 0) {
		const struct jt_node *f = jt_get(root, "force");

		m->op = CTL_OP_GRANT;
		m->revoke = strcmp(op, "revoke") == 0;
		s = member_str(root, "kind");
		if (!s ||
		    (strcmp(s, "net") && strcmp(s, "ro") && strcmp(s, "rw"))) {
			snprintf(why, wsize,
				 "request: kind: expected net, ro or rw");
			goto out;
		}
		snprintf(m->kind, sizeof(m->kind), "%s", s);
		s = member_str(root, "target");
		if (!s || !*s || strlen(s) >= sizeof(m->target)) {
			snprintf(
				why, wsize,
				"request: target: expected HOST[:PORT] or PATH");
			goto out;
		}
		snprintf(m->target, sizeof(m->target), "%s", s);
		if (f && f->type != JT_TRUE && f->type != JT_FALSE) {
			snprintf(why, wsize,
				 "request: force: expected a boolean");
			goto out;
		}
		m->force = f && f->type == JT_TRUE;
		s = member_str(root, "interface");
		if (!s || strcmp(s, "cli") != 0) {
			snprintf(why, wsize,
				 "request: interface: expected \"cli\"");
			goto out;
		}
		snprintf(m->iface, sizeof(m->iface), "%s", s);
	} else {
		snprintf(
			why, wsize,
			"request: op: expected requests, answer, events, policy, allow or revoke");
		goto out;
	}
	r = 0;
out:
	oci_arena_free(&a);
	return r;
}

void ctl_proto_error(struct ar_jbuf *b, const char *msg)
{
	ar_jbuf_lit(b, "{\"ok\":false,\"error\":");
	ar_jbuf_cstr(b, msg);
	ar_jbuf_lit(b, "}\n");
}
