/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A profile's "keep" files (sandbox_keep.h): a writable copy inside,
 * the profile's keys kept by agentrun, the host's file never written.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "arena.h"
#include "json_gen.h"
#include "json_tree.h"
#include "log.h"
#include "profile.h"
#include "sandbox_keep.h"
#include "utils.h"

#define KEEP_MAX_SIZE (256 * 1024)
#define KEEP_MAX_VALUE 256

/* `path` read whole (at most KEEP_MAX_SIZE, a regular file, never
 * through a link) and parsed into `a`; NULL when missing (*missing) or
 * unreadable or not plain JSON (a warning naming `what`). */
static struct jt_node *load(struct ar_arena *a, const char *path,
			    const char *what, bool *missing)
{
	_cleanup_close_ int fd =
		open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	struct ar_error err = AR_ERROR_INIT;
	struct jt_node *doc = NULL;
	struct stat st;
	size_t len = 0;

	*missing = fd < 0 && errno == ENOENT;
	if (fd < 0) {
		if (!*missing)
			ar_log(AR_LOG_WARNING,
			       "sandbox: %s `%s`: %s: shown read-only", what,
			       path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    ar_read_fd(fd, path, KEEP_MAX_SIZE, 0, &text, &len, &err) < 0 ||
	    jt_parse(a, text, len, path, &doc, &err) < 0 ||
	    doc->type != JT_OBJECT) {
		ar_log(AR_LOG_WARNING,
		       "sandbox: %s `%s` is not a plain JSON object (%s): shown read-only, nothing kept",
		       what, path,
		       err.msg[0] ? err.msg : "not a regular file or object");
		ar_error_clear(&err);
		return NULL;
	}
	return doc;
}

/* A value worth keeping: a short string without control characters, a
 * number, a boolean (never an object or array: a command line, a list
 * of servers). */
static bool scalar(const struct jt_node *n)
{
	if (!n)
		return false;
	if (n->type == JT_TRUE || n->type == JT_FALSE || n->type == JT_NUMBER)
		return true;
	if (n->type != JT_STRING || n->u.str.len != strlen(n->u.str.s) ||
	    n->u.str.len > KEEP_MAX_VALUE)
		return false;
	for (const unsigned char *s = (const unsigned char *)n->u.str.s; *s;
	     s++)
		if (*s < 0x20 || *s == 0x7f)
			return false;
	return true;
}

/* The member of `obj` named by the dotted `key`, or NULL. */
static const struct jt_node *find(const struct jt_node *obj, const char *key)
{
	_cleanup_free_ char *k = ar_xstrdup(key);
	char *save = NULL;

	for (char *t = strtok_r(k, ".", &save); t && obj;
	     t = strtok_r(NULL, ".", &save)) {
		if (obj->type != JT_OBJECT)
			return NULL;
		obj = jt_get(obj, t);
	}
	return obj;
}

static struct jt_node *append(struct ar_arena *a, struct jt_node *obj,
			      const char *key, enum jt_type type)
{
	struct jt_node *n = oci_arena_calloc(a, 1, sizeof(*n));

	n->type = type;
	n->key = oci_arena_strdup(a, key);
	jt_append(obj, n);
	return n;
}

/* `key` set to (a copy of) the scalar `v` in `doc` when `doc` has none,
 * making the objects on the way; nothing when a step is not an object. */
static void set_missing(struct ar_arena *a, struct jt_node *doc,
			const char *key, const struct jt_node *v)
{
	_cleanup_free_ char *k = ar_xstrdup(key);
	char *save = NULL, *t = strtok_r(k, ".", &save), *next;
	struct jt_node *obj = doc, *n;

	for (; t; t = next) {
		next = strtok_r(NULL, ".", &save);
		n = (struct jt_node *)jt_get(obj, t);
		if (!next) {
			if (n)
				return; /* the host's file has it: it wins */
			n = append(a, obj, t, v->type);
			n->u.str.s = oci_arena_strndup(
				a, v->u.str.s ? v->u.str.s : "", v->u.str.len);
			n->u.str.len = v->u.str.len;
			return;
		}
		if (!n)
			n = append(a, obj, t, JT_OBJECT);
		if (n->type != JT_OBJECT)
			return;
		obj = n;
	}
}

/* `doc` written to `path` (mode 0600, replacing it by a rename). */
static int write_doc(const struct jt_node *doc, const char *path)
{
	_cleanup_jgen_ struct jgen w = { 0 };
	_cleanup_free_ char *out = NULL, *tmp = ar_xasprintf("%s.tmp", path);
	_cleanup_close_ int fd = -1;
	struct ar_error err = AR_ERROR_INIT;
	size_t len = 0;

	if (jg_init_indent(&w, "  ", &err) < 0)
		goto fail;
	if (jt_gen(w.g, doc) < 0)
		w.failed = true;
	if (jg_finish(&w, path, &out, &len, &err) < 0)
		goto fail;
	(void)unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0600);
	if (fd < 0 || ar_write_all(fd, out, len) < 0 || rename(tmp, path) < 0) {
		ar_log(AR_LOG_WARNING, "sandbox: keep: write `%s`: %s", path,
		       strerror(errno));
		(void)unlink(tmp);
		return -1;
	}
	return 0;
fail:
	ar_log(AR_LOG_WARNING, "sandbox: keep: `%s`: %s", path, err.msg);
	ar_error_clear(&err);
	return -1;
}

static char *state_dir(const struct ar_sandbox_host *h)
{
	for (char *const *e = h->environ; e && *e; e++)
		if (strncmp(*e, "XDG_STATE_HOME=/", 16) == 0)
			return ar_xasprintf("%s/agentrun/kept", *e + 15);
	return ar_xasprintf("%s/.local/state/agentrun/kept", h->home);
}

/* The state file of "~/REL": REL with '/' as '!' (one flat directory). */
static char *state_file(const char *dir, const char *rel)
{
	char *p = ar_xasprintf("%s/%s", dir, rel + 2), *s;

	for (s = p + strlen(dir) + 1; *s; s++)
		if (*s == '/')
			*s = '!';
	return p;
}

static void keep_one(struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *rel, const struct oci_strv *keys,
		     struct sb_keep *k, const char *sdir)
{
	_cleanup_free_ char *host = ar_xasprintf("%s/%s", h->home, rel + 2);
	_cleanup_free_ char *state = state_file(sdir, rel);
	_cleanup_free_ char *copy = NULL;
	struct ar_arena a = { 0 };
	struct jt_node *doc, *kept;
	bool missing, kept_missing;
	struct stat st;

	doc = load(&a, host, "keep", &missing);
	if (!doc && !missing)
		goto out;
	/* below a link or outside a directory shown: nothing to cover */
	if (missing) {
		_cleanup_free_ char *parent = ar_xstrdup(host);

		*strrchr(parent, '/') = '\0';
		if (lstat(parent, &st) < 0 || !S_ISDIR(st.st_mode))
			goto out;
		doc = oci_arena_calloc(&a, 1, sizeof(*doc));
		doc->type = JT_OBJECT;
	}
	kept = load(&a, state, "kept keys", &kept_missing);
	for (size_t i = 0; kept && i < keys->n; i++) {
		const struct jt_node *v = jt_get(kept, keys->v[i]);

		if (scalar(v))
			set_missing(&a, doc, keys->v[i], v);
	}
	if (!k->dir) {
		_cleanup_free_ char *tmpl =
			ar_xasprintf("%s/agentrun-keep-XXXXXX", k->parent);

		if (!mkdtemp(tmpl)) {
			ar_log(AR_LOG_WARNING, "sandbox: keep: %s: %s", tmpl,
			       strerror(errno));
			goto out;
		}
		k->dir = ar_xstrdup(tmpl);
	}
	copy = ar_xasprintf("%s/%zu", k->dir, k->n);
	if (write_doc(doc, copy) < 0)
		goto out;
	/* a later mount for the same path wins over the profile's "ro" */
	sb_mount_add(m, oci_arena_strdup(m->a, host), "bind",
		     oci_arena_strdup(m->a, copy),
		     SB_OPTS("bind", "rw", "nosuid", "nodev", "noexec"));
	k->v = ar_xrealloc(k->v, (k->n + 1) * sizeof(*k->v));
	k->v[k->n++] = (struct sb_keep_file){ ar_xstrdup(copy),
					      ar_xstrdup(state),
					      ar_xstrdup(host),
					      (const char *const *)keys->v };
	ar_debug(
		"sandbox: keep: %s is a writable copy inside (its kept keys in %s)",
		host, state);
out:
	oci_arena_free(&a);
}

void sb_keep_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		    const struct oci_profile *pf, struct sb_keep *k)
{
	_cleanup_free_ char *sdir = NULL;

	if (!pf || pf->keep_path.n == 0)
		return;
	sdir = state_dir(h);
	for (size_t i = 0; i < pf->keep_path.n; i++)
		keep_one(m, h, pf->keep_path.v[i], &pf->keep_keys[i], k, sdir);
}

static void collect_one(const struct sb_keep_file *f)
{
	struct ar_arena a = { 0 };
	struct jt_node *copy, *kept, *out;
	bool missing;
	_cleanup_free_ char *dir = ar_xstrdup(f->state);
	_cleanup_close_ int dfd = -1;

	copy = load(&a, f->copy, "keep: the copy of", &missing);
	if (!copy)
		goto done;
	kept = load(&a, f->state, "kept keys", &missing);
	out = oci_arena_calloc(&a, 1, sizeof(*out));
	out->type = JT_OBJECT;
	for (const char *const *key = f->keys; *key; key++) {
		const struct jt_node *v = find(copy, *key);

		if (!scalar(v))
			v = kept ? jt_get(kept, *key) : NULL;
		if (v && scalar(v)) {
			struct jt_node *n = append(&a, out, *key, v->type);

			n->u.str = v->u.str;
		}
	}
	*strrchr(dir, '/') = '\0';
	dfd = ar_open_dir_p(dir);
	if (dfd < 0) {
		ar_log(AR_LOG_WARNING, "sandbox: keep: %s: %s", dir,
		       strerror(errno));
		goto done;
	}
	if (out->n > 0 && write_doc(out, f->state) == 0)
		ar_debug("sandbox: keep: %u key(s) of %s kept in %s", out->n,
			 f->host, f->state);
done:
	oci_arena_free(&a);
}

void sb_keep_collect(struct sb_keep *k)
{
	for (size_t i = 0; i < k->n; i++)
		collect_one(&k->v[i]);
}

void sb_keep_release(struct sb_keep *k, bool keep)
{
	for (size_t i = 0; i < k->n; i++) {
		if (!keep)
			(void)unlink(k->v[i].copy);
		free(k->v[i].copy);
		free(k->v[i].state);
		free(k->v[i].host);
	}
	if (k->dir && !keep)
		(void)rmdir(k->dir);
	free(k->dir);
	free(k->v);
	memset(k, 0, sizeof(*k));
}
