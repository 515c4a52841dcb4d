/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The model of `agentrun watch` (watch_model.h). */
#define _GNU_SOURCE
#include "watch_model.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "control/control.h"
#include "error.h"
#include "json_tree.h"
#include "utils.h"

/* snprintf whose cut is intended (lines are cut to the screen anyway) */
static void cut_printf(char *out, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cut_printf(char *out, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out, size, fmt, ap);
	va_end(ap);
}

void watch_model_init(struct watch_model *m, const char *root, const char *only)
{
	memset(m, 0, sizeof(*m));
	m->root = ar_xstrdup(root);
	m->only = only ? ar_xstrdup(only) : NULL;
	for (size_t k = 0; k < WATCH_KINDS; k++)
		m->show[k] = true;
	m->dirty_reqs = true;
}

static void sb_drop(struct watch_sandbox *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->name);
	free(s->buf);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

void watch_model_free(struct watch_model *m)
{
	for (size_t i = 0; i < m->n_sb; i++)
		sb_drop(&m->sb[i]);
	free(m->reqs);
	free(m->root);
	free(m->only);
	memset(m, 0, sizeof(*m));
}

enum watch_kind watch_kind_of(const char *event)
{
	static const struct {
		const char *name;
		enum watch_kind kind;
	} kinds[] = {
		{ "proxy", WATCH_NET },
		{ "connect", WATCH_NET },
		{ "request", WATCH_NET },
		{ "answer", WATCH_NET },
		{ "secret_withheld", WATCH_NET },
		{ "exec", WATCH_EXEC },
		{ "files", WATCH_FILE },
		{ "file", WATCH_FILE },
		{ "protected", WATCH_PROTECTED },
		{ "protected_attempt", WATCH_PROTECTED },
	};

	for (size_t i = 0; event && i < AR_ARRAY_SIZE(kinds); i++)
		if (strcmp(event, kinds[i].name) == 0)
			return kinds[i].kind;
	return WATCH_OTHER;
}

/* A member as text: a string quoted with ar_quote (the agent's), a
 * number or literal as is; "-" when absent or null. */
static void member(const struct jt_node *o, const char *key, char *out,
		   size_t size)
{
	const struct jt_node *n = o ? jt_get(o, key) : NULL;

	if (!n || n->type == JT_NULL)
		cut_printf(out, size, "-");
	else if (n->type == JT_STRING)
		ar_quote_to(out, size, n->u.str.s, n->u.str.len);
	else if (n->type == JT_NUMBER)
		cut_printf(out, size, "%s", n->u.str.s);
	else if (n->type == JT_TRUE || n->type == JT_FALSE)
		cut_printf(out, size, "%s",
			   n->type == JT_TRUE ? "true" : "false");
	else
		cut_printf(out, size, "...");
}

/* argv (an array of strings) as quoted words, cut to size */
static void words(const struct jt_node *o, const char *key, char *out,
		  size_t size)
{
	const struct jt_node *a = jt_get(o, key);
	size_t l = 0;

	out[0] = '\0';
	if (!a || a->type != JT_ARRAY)
		return;
	for (const struct jt_node *w = a->u.kids.first; w && l + 2 < size;
	     w = w->next) {
		if (w->type != JT_STRING)
			continue;
		if (l)
			out[l++] = ' ';
		l += ar_quote_to(out + l, size - l, w->u.str.s, w->u.str.len);
	}
}

/* The time "HH:MM:SS" of an event's "time" (ISO 8601), or now. */
static void clock_of(const struct jt_node *o, char out[9])
{
	const struct jt_node *t = jt_get(o, "time");

	if (t && t->type == JT_STRING && t->u.str.len >= 19 &&
	    t->u.str.s[10] == 'T') {
		memcpy(out, t->u.str.s + 11, 8);
		out[8] = '\0';
		for (int i = 0; i < 8; i++)
			if (!strchr("0123456789:", out[i]))
				out[i] = '?';
	} else {
		time_t now = time(NULL);
		struct tm tm;

		gmtime_r(&now, &tm);
		strftime(out, 9, "%H:%M:%S", &tm);
	}
}

/* What an event says, in one line. */
static void describe(const struct jt_node *o, const char *ev, char *out,
		     size_t size)
{
	char a[200], b[200], c[200], d[200];

	if (strcmp(ev, "proxy") == 0) {
		const struct jt_node *ok = jt_get(o, "allowed");

		member(o, "host", a, sizeof(a));
		member(o, "port", b, sizeof(b));
		member(o, "address", c, sizeof(c));
		member(o, "reason", d, sizeof(d));
		cut_printf(out, size, "net   %s:%s (%s) %s%s%s", a, b, c,
			   ok && ok->type == JT_TRUE ? "allowed" : "REFUSED",
			   ok && ok->type == JT_TRUE ? "" : ": ",
			   ok && ok->type == JT_TRUE ? "" : d);
	} else if (strcmp(ev, "request") == 0) {
		const struct jt_node *r = jt_get(o, "request");

		member(r, "id", a, sizeof(a));
		member(r, "target", b, sizeof(b));
		member(r, "exe", c, sizeof(c));
		member(r, "pid", d, sizeof(d));
		cut_printf(out, size, "ask   #%s %s from pid %s %s", a, b, d,
			   c);
	} else if (strcmp(ev, "answer") == 0) {
		member(o, "id", a, sizeof(a));
		member(o, "answer", b, sizeof(b));
		member(o, "host", c, sizeof(c));
		member(o, "uid", d, sizeof(d));
		cut_printf(out, size, "answer #%s %s (%s) by uid %s", a, b, c,
			   d);
	} else if (strcmp(ev, "connect") == 0) {
		member(o, "pid", a, sizeof(a));
		member(o, "address", b, sizeof(b));
		member(o, "port", c, sizeof(c));
		cut_printf(out, size, "connect pid %s to %s:%s", a, b, c);
	} else if (strcmp(ev, "exec") == 0) {
		member(o, "pid", a, sizeof(a));
		words(o, "argv", b, sizeof(b));
		cut_printf(out, size, "exec  pid %s %s", a, b);
	} else if (strcmp(ev, "protected_attempt") == 0) {
		member(o, "pid", a, sizeof(a));
		member(o, "op", b, sizeof(b));
		member(o, "path", c, sizeof(c));
		cut_printf(out, size, "PROTECTED pid %s %s %s refused", a, b,
			   c);
	} else if (strcmp(ev, "protected") == 0) {
		cut_printf(out, size, "protected paths kept read-only");
	} else if (strcmp(ev, "files") == 0) {
		const struct jt_node *ch = jt_get(o, "changes");

		cut_printf(out, size, "files %u changed",
			   ch && ch->type == JT_ARRAY ? ch->n : 0);
	} else if (strcmp(ev, "exit") == 0) {
		member(o, "status", a, sizeof(a));
		cut_printf(out, size, "exit  status %s", a);
	} else {
		ar_quote_to(a, sizeof(a), ev, strlen(ev));
		cut_printf(out, size, "%s", a);
	}
}

static void push_event(struct watch_model *m, enum watch_kind k,
		       const char *text)
{
	size_t slot;

	if (m->ev_n < WATCH_MAX_EVENTS) {
		slot = (m->ev_head + m->ev_n++) % WATCH_MAX_EVENTS;
	} else {
		slot = m->ev_head;
		m->ev_head = (m->ev_head + 1) % WATCH_MAX_EVENTS;
	}
	m->ev[slot].kind = k;
	cut_printf(m->ev[slot].text, sizeof(m->ev[slot].text), "%s", text);
}

void watch_model_event(struct watch_model *m, const char *sandbox,
		       const char *line, size_t len)
{
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *o = NULL;
	const struct jt_node *ev;
	char what[WATCH_LINE], hhmmss[9], text[WATCH_LINE], sb[64];

	if (jt_parse(&a, line, len, "event", &o, &err) < 0 ||
	    o->type != JT_OBJECT) {
		oci_arena_free(&a);
		return;
	}
	ev = jt_get(o, "event");
	if (ev && ev->type == JT_STRING) {
		enum watch_kind k = watch_kind_of(ev->u.str.s);

		describe(o, ev->u.str.s, what, sizeof(what));
		clock_of(o, hhmmss);
		ar_quote_to(sb, sizeof(sb), sandbox, strlen(sandbox));
		cut_printf(text, sizeof(text), "%s %-14s %s", hhmmss, sb, what);
		push_event(m, k, text);
		if (strcmp(ev->u.str.s, "request") == 0 ||
		    strcmp(ev->u.str.s, "answer") == 0)
			m->dirty_reqs = true;
	}
	oci_arena_free(&a);
}

/* ---- the sandboxes and their streams ---- */

static int stream_open(struct watch_model *m, const char *name)
{
	struct ar_error err = AR_ERROR_INIT;
	static const char req[] = "{\"op\":\"events\"}\n";
	int fd = ar_control_connect(m->root, name, &err);

	if (fd < 0)
		return -1;
	if (ar_write_all(fd, req, sizeof(req) - 1) < 0 ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

bool watch_model_read(struct watch_model *m, size_t i)
{
	struct watch_sandbox *s = &m->sb[i];

	for (;;) {
		ssize_t n;
		char *nl, *p;

		if (s->len >= WATCH_STREAM_BUF - 1)
			s->len = 0; /* a line too long: dropped */
		n = read(s->fd, s->buf + s->len, WATCH_STREAM_BUF - 1 - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return true;
		if (n <= 0) {
			close(s->fd);
			s->fd = -1;
			s->len = 0;
			s->greeted = false;
			return false;
		}
		s->len += (size_t)n;
		p = s->buf;
		while ((nl = memchr(p, '\n', s->len - (size_t)(p - s->buf)))) {
			if (s->greeted)
				watch_model_event(m, s->name, p,
						  (size_t)(nl - p));
			s->greeted = true; /* {"ok":true,"sandbox":...} */
			p = nl + 1;
		}
		s->len -= (size_t)(p - s->buf);
		memmove(s->buf, p, s->len);
	}
}

static struct watch_sandbox *sb_find(struct watch_model *m, const char *name)
{
	for (size_t i = 0; i < m->n_sb; i++)
		if (strcmp(m->sb[i].name, name) == 0)
			return &m->sb[i];
	return NULL;
}

/* The pending requests of sandbox s appended to m->reqs. */
static void list_requests(struct watch_model *m, struct watch_sandbox *s,
			  struct watch_req **v, size_t *n)
{
	_cleanup_free_ char *line = NULL;
	_cleanup_close_ int fd = -1;
	struct ar_arena a = { 0 };
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *o = NULL;
	const struct jt_node *reqs, *ok;

	s->n_pending = 0;
	fd = ar_control_connect(m->root, s->name, &err);
	if (fd < 0 ||
	    ar_control_call(fd, "{\"op\":\"requests\"}\n", &line, &err) < 0 ||
	    jt_parse(&a, line, strlen(line), "requests", &o, &err) < 0 ||
	    o->type != JT_OBJECT) {
		oci_arena_free(&a);
		return;
	}
	ok = jt_get(o, "ok");
	reqs = jt_get(o, "requests");
	if (ok && ok->type == JT_TRUE && reqs && reqs->type == JT_ARRAY) {
		for (const struct jt_node *r = reqs->u.kids.first; r;
		     r = r->next) {
			struct watch_req *q;
			char id[24], t[200], addr[80], pid[24], exe[160],
				why[120], sb[64], w[16];

			if (r->type != JT_OBJECT)
				continue;
			*v = ar_xrealloc(*v, (*n + 1) * sizeof(**v));
			q = &(*v)[(*n)++];
			memset(q, 0, sizeof(*q));
			member(r, "id", id, sizeof(id));
			member(r, "target", t, sizeof(t));
			member(r, "address", addr, sizeof(addr));
			member(r, "pid", pid, sizeof(pid));
			member(r, "exe", exe, sizeof(exe));
			member(r, "reason", why, sizeof(why));
			member(r, "waiting", w, sizeof(w));
			ar_quote_to(sb, sizeof(sb), s->name, strlen(s->name));
			cut_printf(q->sandbox, sizeof(q->sandbox), "%s",
				   s->name);
			cut_printf(q->id, sizeof(q->id), "%s", id);
			cut_printf(q->text, sizeof(q->text),
				   "%-14s #%-4s %s -> %s  pid %s %s  x%s  %s",
				   sb, id, t, addr, pid, exe, w, why);
			s->n_pending++;
		}
	}
	oci_arena_free(&a);
}

void watch_model_scan(struct watch_model *m)
{
	size_t n = 0;
	char **names = ar_control_names(m->root, &n);
	struct watch_req *v = NULL;
	size_t nv = 0, w = 0;
	char selected[160] = "";

	for (size_t i = 0; i < m->n_sb; i++)
		m->sb[i].seen = false;
	for (size_t i = 0; i < n; i++) {
		struct watch_sandbox *s;

		if (m->only && strcmp(names[i], m->only) != 0)
			continue;
		s = sb_find(m, names[i]);
		if (!s && m->n_sb < WATCH_MAX_SANDBOXES) {
			s = &m->sb[m->n_sb++];
			memset(s, 0, sizeof(*s));
			s->name = ar_xstrdup(names[i]);
			s->buf = ar_xmalloc(WATCH_STREAM_BUF);
			s->fd = -1;
		}
		if (!s)
			continue;
		if (s->fd < 0)
			s->fd = stream_open(m, s->name);
		/* a stale socket (its sandbox ended) does not connect */
		s->seen = s->fd >= 0;
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	/* ended sandboxes go; the others keep their order */
	for (size_t i = 0; i < m->n_sb; i++) {
		if (!m->sb[i].seen)
			sb_drop(&m->sb[i]);
		else
			m->sb[w++] = m->sb[i];
	}
	m->n_sb = w;
	for (size_t i = 0; i < m->n_sb; i++)
		list_requests(m, &m->sb[i], &v, &nv);
	/* the selection follows its request */
	if (m->sel < m->n_reqs)
		cut_printf(selected, sizeof(selected), "%s#%s",
			   m->reqs[m->sel].sandbox, m->reqs[m->sel].id);
	free(m->reqs);
	m->reqs = v;
	m->n_reqs = nv;
	for (size_t i = 0; selected[0] && i < nv; i++) {
		char k[160];

		cut_printf(k, sizeof(k), "%s#%s", v[i].sandbox, v[i].id);
		if (strcmp(k, selected) == 0)
			m->sel = i;
	}
	if (m->sel >= m->n_reqs)
		m->sel = m->n_reqs ? m->n_reqs - 1 : 0;
	if (m->n_reqs == 0)
		m->confirm_always = false;
	m->dirty_reqs = false;
}

static void answer(struct watch_model *m, const char *ans)
{
	struct ar_error err = AR_ERROR_INIT;
	const struct watch_req *r = &m->reqs[m->sel];
	char *diff = NULL;
	size_t dlen = 0;
	FILE *out = open_memstream(&diff, &dlen);
	int rc;

	rc = ar_sandbox_answer_via(m->root, r->sandbox, r->id, ans, "watch",
				   out, &err);
	if (out)
		fclose(out);
	if (rc < 0)
		cut_printf(m->status, sizeof(m->status), "answer failed: %s",
			   err.msg);
	else
		cut_printf(m->status, sizeof(m->status), "#%s of %s: %s%s",
			   r->id, r->sandbox, ans,
			   diff && dlen ? " (written to the profile)" : "");
	free(diff);
	m->dirty_reqs = true;
}

bool watch_model_key(struct watch_model *m, int key)
{
	static const char kind_keys[WATCH_KINDS] = { 'n', 'e', 'f', 'p', 0 };

	if (m->confirm_always) {
		m->confirm_always = false;
		if ((key == 'y' || key == 'Y') && m->sel < m->n_reqs)
			answer(m, "always");
		else
			cut_printf(m->status, sizeof(m->status),
				   "always: not given");
		return false;
	}
	switch (key) {
	case 'q':
	case 'Q':
	case 3: /* Ctrl-C in raw mode */
		return true;
	case WATCH_KEY_UP:
	case 'k':
		if (m->sel > 0)
			m->sel--;
		return false;
	case WATCH_KEY_DOWN:
	case 'j':
		if (m->sel + 1 < m->n_reqs)
			m->sel++;
		return false;
	case 'o':
	case 's':
	case 'r':
	case 'a':
		if (m->sel >= m->n_reqs) {
			cut_printf(m->status, sizeof(m->status),
				   "no pending request");
			return false;
		}
		if (key == 'a') {
			m->confirm_always = true;
			return false;
		}
		answer(m, key == 'o' ? "once" :
			  key == 's' ? "session" :
				       "refuse");
		return false;
	default:
		break;
	}
	for (size_t k = 0; k < WATCH_KINDS; k++)
		if (kind_keys[k] && key == kind_keys[k])
			m->show[k] = !m->show[k];
	return false;
}
