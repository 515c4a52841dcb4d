/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The dashboard's API (ui_routes.h). */
#define _GNU_SOURCE
#include "ui_routes.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "arena.h"
#include "audit/audit.h"
#include "json_tree.h"
#include "overlay/overlay.h"
#include "state.h"
#include "control/control.h"
#include "utils.h"

static void reply_jbuf(struct ui_reply *r, unsigned status, struct ar_jbuf *b)
{
	r->status = status;
	r->type = "application/json";
	r->body = b->p ? b->p : ar_xstrdup("{}");
	r->len = b->p ? b->len : 2;
	b->p = NULL;
	b->len = b->cap = 0;
}

void ui_reply_error(struct ui_reply *r, unsigned status, const char *msg)
{
	struct ar_jbuf b = { 0 };

	ar_jbuf_lit(&b, "{\"ok\":false,\"error\":");
	ar_jbuf_cstr(&b, msg);
	ar_jbuf_lit(&b, "}");
	reply_jbuf(r, status, &b);
}

static const char *member_str(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = o ? jt_get(o, key) : NULL;

	if (!n || n->type != JT_STRING || strlen(n->u.str.s) != n->u.str.len)
		return NULL;
	return n->u.str.s;
}

static const char *member_num(const struct jt_node *o, const char *key)
{
	const struct jt_node *n = o ? jt_get(o, key) : NULL;

	return n && (n->type == JT_NUMBER || n->type == JT_STRING) ?
		       n->u.str.s :
		       NULL;
}

/* One request line (REQ, newline-ended) to NAME's control socket: the
 * reply line, parsed and {"ok":true,...} (NULL otherwise). */
static char *call_of(const char *root, const char *name, const char *req,
		     struct ar_arena *a, struct jt_node **tree)
{
	struct ar_error e = AR_ERROR_INIT;
	_cleanup_close_ int fd = ar_control_connect(root, name, &e);
	char *line = NULL;
	const struct jt_node *ok;

	*tree = NULL;
	if (fd < 0 || ar_control_call(fd, req, &line, &e) < 0)
		return NULL;
	if (jt_parse(a, line, strlen(line), "reply", tree, &e) < 0 ||
	    (*tree)->type != JT_OBJECT || !(ok = jt_get(*tree, "ok")) ||
	    ok->type != JT_TRUE) {
		free(line);
		*tree = NULL;
		return NULL;
	}
	return line;
}

/* {"op":"requests"} to NAME */
static char *requests_of(const char *root, const char *name, struct ar_arena *a,
			 struct jt_node **tree)
{
	return call_of(root, name, "{\"op\":\"requests\"}\n", a, tree);
}

void ui_api_sandboxes(const char *root, struct ui_reply *r)
{
	size_t n = 0;
	_cleanup_strv_ char **names = ar_control_names(root, &n);
	struct ar_jbuf b = { 0 };
	bool first = true;

	ar_jbuf_lit(&b, "{\"ok\":true,\"sandboxes\":[");
	for (size_t i = 0; i < n; i++) {
		struct ar_arena a = { 0 };
		struct jt_node *t = NULL;
		_cleanup_free_ char *line = requests_of(root, names[i], &a, &t);

		oci_arena_free(&a);
		if (!line)
			continue; /* a stale socket of an ended sandbox */
		if (!first)
			ar_jbuf_lit(&b, ",");
		first = false;
		/* the sandbox's own reply: a checked JSON object */
		ar_jbuf_add(&b, line, strlen(line));
	}
	ar_jbuf_lit(&b, "]}");
	reply_jbuf(r, 200, &b);
}

static bool is_loopback(const char *addr)
{
	struct in6_addr a6;
	struct in_addr a4;

	if (!addr)
		return false;
	if (inet_pton(AF_INET, addr, &a4) == 1)
		return (ntohl(a4.s_addr) >> 24) == 127;
	if (inet_pton(AF_INET6, addr, &a6) == 1)
		return IN6_IS_ADDR_LOOPBACK(&a6) ||
		       (IN6_IS_ADDR_V4MAPPED(&a6) && a6.s6_addr[12] == 127);
	return false;
}

/* A grant of the dashboard's own port on the host's loopback: never
 * (the request is left pending; `refuse` is fine). 1 when request ID of
 * NAME is for it, 0 when not, -1 when its requests cannot be read. */
static int grants_ui(const char *root, const char *name, const char *id,
		     uint16_t ui_port)
{
	struct ar_arena a = { 0 };
	struct jt_node *t = NULL;
	_cleanup_free_ char *line = requests_of(root, name, &a, &t);
	const struct jt_node *reqs = t ? jt_get(t, "requests") : NULL;
	bool bad = false;

	if (!line) {
		oci_arena_free(&a);
		return -1;
	}
	for (const struct jt_node *q =
		     reqs && reqs->type == JT_ARRAY ? reqs->u.kids.first : NULL;
	     q && !bad; q = q->next) {
		const char *qid = member_num(q, "id");
		const char *port = member_num(q, "port");

		if (!qid || strcmp(qid, id) != 0 || !port)
			continue;
		bad = strtoul(port, NULL, 10) == ui_port &&
		      (is_loopback(member_str(q, "address")) ||
		       is_loopback(member_str(q, "host")));
	}
	oci_arena_free(&a);
	return bad ? 1 : 0;
}

void ui_api_answer(const char *root, uint16_t ui_port, const char *body,
		   size_t len, struct ui_reply *r)
{
	struct ar_arena a = { 0 };
	struct ar_error e = AR_ERROR_INIT;
	struct jt_node *t = NULL;
	struct ar_jbuf req = { 0 };
	_cleanup_free_ char *line = NULL;
	_cleanup_close_ int fd = -1;
	const char *sb, *id, *ans;
	int rc;

	if (jt_parse(&a, body, len, "body", &t, &e) < 0 ||
	    t->type != JT_OBJECT) {
		ui_reply_error(r, 400, "expected a JSON object");
		goto out;
	}
	sb = member_str(t, "sandbox");
	id = member_str(t, "id");
	ans = member_str(t, "answer");
	if (!sb || ar_state_validate_id(sb, &e) < 0) {
		ui_reply_error(r, 400, "sandbox: expected a sandbox's name");
		goto out;
	}
	if (!id || !*id || strspn(id, "0123456789") != strlen(id)) {
		ui_reply_error(r, 400, "id: expected a request id");
		goto out;
	}
	if (!ans || (strcmp(ans, "once") && strcmp(ans, "session") &&
		     strcmp(ans, "always") && strcmp(ans, "refuse"))) {
		ui_reply_error(
			r, 400,
			"answer: expected once, session, always or refuse");
		goto out;
	}
	if (strcmp(ans, "refuse") != 0 &&
	    (rc = grants_ui(root, sb, id, ui_port)) != 0) {
		if (rc < 0) {
			ui_reply_error(r, 404,
				       "the sandbox's requests cannot be read");
			goto out;
		}
		ui_reply_error(
			r, 403,
			"this request is for the dashboard's own port on the host's loopback: it can only be refused");
		goto out;
	}
	fd = ar_control_connect(root, sb, &e);
	if (fd < 0) {
		ui_reply_error(r, 404, e.msg);
		goto out;
	}
	ar_jbuf_lit(&req, "{\"op\":\"answer\",\"id\":");
	ar_jbuf_cstr(&req, id);
	ar_jbuf_lit(&req, ",\"answer\":");
	ar_jbuf_cstr(&req, ans);
	ar_jbuf_lit(&req, ",\"interface\":\"web\"}\n");
	if (ar_control_call(fd, req.p, &line, &e) < 0) {
		ui_reply_error(r, 502, e.msg);
		goto out;
	}
	/* the control plane's reply ({"ok":...}, and a diff for always) */
	r->status = strstr(line, "\"ok\":true") == line + 1 ? 200 : 409;
	r->type = "application/json";
	r->len = strlen(line);
	r->body = ar_steal_ptr(&line);
out:
	ar_jbuf_free(&req);
	oci_arena_free(&a);
}

static const char *mount_mode(const struct jt_node *m)
{
	const char *type = member_str(m, "type");
	const struct jt_node *o = jt_get(m, "options");
	bool bind = false;

	for (const struct jt_node *x =
		     o && o->type == JT_ARRAY ? o->u.kids.first : NULL;
	     x; x = x->next) {
		if (x->type != JT_STRING)
			continue;
		if (!strcmp(x->u.str.s, "ro") || !strcmp(x->u.str.s, "rro"))
			return "ro";
		if (!strcmp(x->u.str.s, "bind") || !strcmp(x->u.str.s, "rbind"))
			bind = true;
	}
	if (bind)
		return "rw";
	return type ? type : member_str(m, "source");
}

void ui_api_policy(const char *root, const char *name, struct ui_reply *r)
{
	_cleanup_free_ char *dir = NULL, *text = NULL, *live = NULL;
	_cleanup_close_ int dfd = -1;
	struct ar_error e = AR_ERROR_INIT;
	struct ar_arena a = { 0 }, la = { 0 };
	struct jt_node *t = NULL, *lt = NULL;
	const struct jt_node *ann = NULL, *mounts = NULL;
	struct ar_jbuf b = { 0 };
	size_t len = 0;
	bool first = true;

	if (!name || ar_state_validate_id(name, &e) < 0) {
		ui_reply_error(r, 400, "name: expected a sandbox's name");
		return;
	}
	/* the session's config (sandboxes started with --name): what the
	 * sandbox was made of. Only these fields leave it: never its
	 * environment or command line (secrets). */
	dir = ar_xasprintf("%s/.sandboxes/%s", root, name);
	dfd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 ||
	    ar_read_file_at(dfd, "config.json", 4 << 20, &text, &len, &e) < 0 ||
	    jt_parse(&a, text, len, "config.json", &t, &e) < 0 ||
	    t->type != JT_OBJECT)
		t = NULL;
	/* the network policy in force, as the control plane knows it:
	 * the allowlist, the live grants and the session answers (secret
	 * names and hosts, never a value: control_policy.h) */
	live = call_of(root, name, "{\"op\":\"policy\"}\n", &la, &lt);
	oci_arena_free(&la);
	if (!t && !live) {
		oci_arena_free(&a);
		ui_reply_error(
			r, 404,
			"no policy to show: no running sandbox and no session of that name");
		return;
	}
	if (t) {
		ann = jt_get(t, "annotations");
		mounts = jt_get(t, "mounts");
	}
	ar_jbuf_lit(&b, "{\"ok\":true,\"sandbox\":");
	ar_jbuf_cstr(&b, name);
	ar_jbuf_lit(&b, ",\"workspace\":");
	ar_jbuf_cstr(&b, member_str(ann, "run.agentrun.sandbox.workspace"));
	ar_jbuf_lit(&b, ",\"net\":");
	ar_jbuf_cstr(&b, member_str(ann, "run.agentrun.sandbox.net"));
	ar_jbuf_lit(&b, ",\"protections\":");
	ar_jbuf_cstr(&b, member_str(ann, "run.agentrun.sandbox.protections"));
	ar_jbuf_lit(&b, ",\"landlock\":");
	ar_jbuf_cstr(&b, member_str(ann, "run.agentrun.landlock"));
	ar_jbuf_lit(&b, ",\"mounts\":[");
	for (const struct jt_node *m = mounts && mounts->type == JT_ARRAY ?
					       mounts->u.kids.first :
					       NULL;
	     m; m = m->next) {
		const char *src = member_str(m, "source");

		if (m->type != JT_OBJECT)
			continue;
		if (!first)
			ar_jbuf_lit(&b, ",");
		first = false;
		ar_jbuf_lit(&b, "{\"destination\":");
		ar_jbuf_cstr(&b, member_str(m, "destination"));
		ar_jbuf_lit(&b, ",\"source\":");
		ar_jbuf_cstr(&b, src && src[0] == '/' ? src : NULL);
		ar_jbuf_lit(&b, ",\"mode\":");
		ar_jbuf_cstr(&b, mount_mode(m));
		ar_jbuf_lit(&b, "}");
	}
	/* the sandbox's own reply: a checked JSON object */
	ar_jbuf_lit(&b, "],\"live\":");
	if (live)
		ar_jbuf_add(&b, live, strlen(live));
	else
		ar_jbuf_lit(&b, "null");
	ar_jbuf_lit(&b, "}");
	oci_arena_free(&a);
	reply_jbuf(r, 200, &b);
}

/* A text reply from what fn printed, or the error. */
static void reply_text(struct ui_reply *r, char *text, size_t len, int rc,
		       struct ar_error *e)
{
	if (rc < 0) {
		free(text);
		ui_reply_error(r, 409, e->msg);
		return;
	}
	r->status = 200;
	r->type = "text/plain; charset=utf-8";
	r->body = text ? text : ar_xstrdup("");
	r->len = text ? len : 0;
}

void ui_api_overlays(struct ui_reply *r)
{
	struct ar_error e = AR_ERROR_INIT;
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	int rc = ar_overlay_list(f, &e);

	fclose(f);
	reply_text(r, text, len, rc, &e);
}

static int open_overlay(const char *name, struct ar_overlay *ov,
			struct ui_reply *r)
{
	struct ar_error e = AR_ERROR_INIT;

	if (!name || ar_state_validate_id(name, &e) < 0) {
		ui_reply_error(r, 400, "name: expected an overlay's name");
		return -1;
	}
	if (ar_overlay_open(name, ov, &e) < 0) {
		ui_reply_error(r, 404, e.msg);
		return -1;
	}
	return 0;
}

void ui_api_changes(const char *name, struct ui_reply *r)
{
	struct ar_error e = AR_ERROR_INIT;
	struct ar_overlay ov;
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (open_overlay(name, &ov, r) < 0)
		return;
	f = open_memstream(&text, &len);
	rc = ar_overlay_print_changes(&ov, NULL, 0, f, &e);
	fclose(f);
	ar_overlay_release(&ov);
	reply_text(r, text, len, rc, &e);
}

void ui_api_diff(const char *name, const char *path, struct ui_reply *r)
{
	struct ar_error e = AR_ERROR_INIT;
	struct ar_overlay ov;
	char *paths[1] = { (char *)path };
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	if (open_overlay(name, &ov, r) < 0)
		return;
	f = open_memstream(&text, &len);
	rc = ar_overlay_diff(&ov, paths, path && *path ? 1 : 0, false, f, &e);
	fclose(f);
	ar_overlay_release(&ov);
	reply_text(r, text, len, rc, &e);
}

static const char *body_name(struct ar_arena *a, const char *body, size_t len)
{
	struct ar_error e = AR_ERROR_INIT;
	struct jt_node *t = NULL;

	if (jt_parse(a, body, len, "body", &t, &e) < 0 || t->type != JT_OBJECT)
		return NULL;
	return member_str(t, "name");
}

void ui_api_commit(const char *body, size_t len, struct ui_reply *r)
{
	struct ar_arena a = { 0 };
	struct ar_error e = AR_ERROR_INIT;
	struct ar_overlay ov;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f;
	int rc;

	if (open_overlay(body_name(&a, body, len), &ov, r) < 0) {
		oci_arena_free(&a);
		return;
	}
	f = open_memstream(&text, &tlen);
	{
		struct ar_commit_opts o = { .out = f, .err = f };

		rc = ar_overlay_commit(&ov, NULL, 0, &o, &e);
	}
	fclose(f);
	ar_overlay_release(&ov);
	oci_arena_free(&a);
	if (rc < 0 && text && *text) {
		/* what was applied before the failure, and the failure */
		_cleanup_free_ char *msg = ar_xasprintf("%s%s", text, e.msg);

		free(text);
		ui_reply_error(r, 409, msg);
		return;
	}
	reply_text(r, text, tlen, rc, &e);
}

void ui_api_discard(const char *body, size_t len, struct ui_reply *r)
{
	struct ar_arena a = { 0 };
	struct ar_error e = AR_ERROR_INIT;
	struct ar_overlay ov;
	int rc;

	if (open_overlay(body_name(&a, body, len), &ov, r) < 0) {
		oci_arena_free(&a);
		return;
	}
	rc = ar_overlay_discard(&ov, &e);
	ar_overlay_release(&ov);
	oci_arena_free(&a);
	reply_text(r, ar_xstrdup("discarded\n"), 10, rc, &e);
}
