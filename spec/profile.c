/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Sandbox profile files (see profile.h), and the embedded default seccomp
 * profile as a struct. */
#define _GNU_SOURCE
#include "profile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "error.h"
#include "generate.h"
#include "parse_parts.h"
#include "utils.h"

static const char *const known_keys[] = {
	"description", "ro",	    "rw",     "hide",	       "env",
	"etc",	       "etc_files", "net",    "workspace",     "landlock",
	"publish",     "nested",    "secret", "agent_channel", "upstream_proxy",
	"keep",	       "vm",	    NULL,
};

static int check_keys(const struct jt_ctx *c, const struct jt_node *doc)
{
	jt_foreach(m, doc) {
		bool ok = false;

		for (const char *const *k = known_keys; *k && !ok; k++)
			ok = strcmp(m->key, *k) == 0;
		if (!ok) {
			char tmp[JT_SHORT_MAX];

			return jt_fail(
				c, NULL,
				"\"%s\": unknown property (known: description, ro, rw, hide, env, etc, etc_files, net, workspace, landlock, publish, nested, secret, agent_channel, upstream_proxy, keep)",
				jt_short(m->key, tmp, sizeof(tmp)));
		}
	}
	return 0;
}

/* Paths: absolute or "~/..."; no empty strings. */
static int check_paths(const struct jt_ctx *c, const struct jt_path *root,
		       const char *key, const struct oci_strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const char *s = v->v[i];

		if (s[0] == '/' || (s[0] == '~' && (s[1] == '/' || !s[1])))
			continue;
		char tmp[JT_SHORT_MAX];

		return jt_fail(
			c, JT_IDX(JT_KEY(root, key), i),
			"\"%s\": expected an absolute path or one starting with ~/",
			jt_short(s, tmp, sizeof(tmp)));
	}
	return 0;
}

/* env entries: NAME, NAME=VALUE, or a pattern with * (NAME part). */
static int check_env(const struct jt_ctx *c, const struct oci_strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const char *s = v->v[i];
		size_t n = strcspn(s, "=");
		bool ok = n > 0;

		for (size_t j = 0; j < n && ok; j++)
			ok = s[j] == '_' || s[j] == '*' ||
			     (s[j] >= 'A' && s[j] <= 'Z') ||
			     (s[j] >= 'a' && s[j] <= 'z') ||
			     (j > 0 && s[j] >= '0' && s[j] <= '9');
		if (ok && s[n] == '=' && memchr(s, '*', n))
			ok = false; /* a pattern cannot carry a value */
		if (!ok) {
			char tmp[JT_SHORT_MAX];

			return jt_fail(
				c, JT_IDX(JT_KEY(NULL, "env"), i),
				"\"%s\": expected NAME, NAME=VALUE or a NAME pattern with *",
				jt_short(s, tmp, sizeof(tmp)));
		}
	}
	return 0;
}

/* etc entries: names relative to /etc, no "..", no leading '/'. */
static int check_etc(const struct jt_ctx *c, const struct oci_strv *v)
{
	for (size_t i = 0; i < v->n; i++) {
		const char *s = v->v[i];
		bool ok =
			s[0] && s[0] != '/' && strcmp(s, "..") != 0 &&
			strncmp(s, "../", 3) != 0 && !strstr(s, "/../") &&
			!(strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/.."));

		if (!ok) {
			char tmp[JT_SHORT_MAX];

			return jt_fail(
				c, JT_IDX(JT_KEY(NULL, "etc"), i),
				"\"%s\": expected a name relative to /etc (e.g. \"gitconfig\")",
				jt_short(s, tmp, sizeof(tmp)));
		}
	}
	return 0;
}

/*
 * "etc_files": {"NAME": "TEXT", ...}: files the sandbox's own /etc holds,
 * generated (NAME relative to /etc, plain names, at most 64 files of 64 KiB).
 */
static int parse_etc_files(const struct jt_ctx *c, const struct jt_node *doc,
			   struct oci_profile *p)
{
	const struct jt_node *o = jt_get(doc, "etc_files");
	size_t i = 0;

	if (!o)
		return 0;
	if (jt_as_object(c, o, JT_KEY(NULL, "etc_files")) < 0)
		return -1;
	if (o->n > 64)
		return jt_fail(c, JT_KEY(NULL, "etc_files"),
			       "at most 64 files, got %u", o->n);
	p->etc_files_name.v =
		oci_arena_calloc(&p->arena, o->n + 1, sizeof(char *));
	p->etc_files_text.v =
		oci_arena_calloc(&p->arena, o->n + 1, sizeof(char *));
	jt_foreach(m, o) {
		const struct jt_path *at =
			JT_KEY(JT_KEY(NULL, "etc_files"), m->key);
		char tmp[JT_SHORT_MAX];

		if (!oci_etc_file_name_ok(m->key))
			return jt_fail(
				c, JT_KEY(NULL, "etc_files"),
				"\"%s\": expected a file name relative to /etc made of plain names (e.g. \"tool/config.toml\")",
				jt_short(m->key, tmp, sizeof(tmp)));
		if (m->type != JT_STRING)
			return jt_fail(c, at, "expected a string, got %s",
				       jt_type_name(m));
		if (m->u.str.len != strlen(m->u.str.s) || m->u.str.len > 65536)
			return jt_fail(
				c, at,
				"expected at most 64 KiB of text without NUL");
		p->etc_files_name.v[i] = oci_arena_strdup(&p->arena, m->key);
		p->etc_files_text.v[i] =
			oci_arena_strdup(&p->arena, m->u.str.s);
		i++;
	}
	p->etc_files_name.n = p->etc_files_text.n = i;
	return 0;
}

/* A "keep" key: dotted names of letters, digits, '_' and '-'. */
static bool keep_key_ok(const char *s)
{
	bool name = false;

	if (!*s || strlen(s) > 128)
		return false;
	for (; *s; s++) {
		if (*s == '.') {
			if (!name)
				return false;
			name = false;
		} else if ((*s >= 'a' && *s <= 'z') ||
			   (*s >= 'A' && *s <= 'Z') ||
			   (*s >= '0' && *s <= '9') || *s == '_' || *s == '-') {
			name = true;
		} else {
			return false;
		}
	}
	return name;
}

/*
 * "keep": {"~/FILE.json": ["a.b.c", ...]}: a JSON settings file of the
 * home shown as a writable copy; the listed keys' scalar values set
 * inside are kept by agentrun for the next run (never written to FILE).
 * At most 8 files of 16 keys.
 */
static int parse_keep(const struct jt_ctx *c, const struct jt_node *doc,
		      struct oci_profile *p)
{
	const struct jt_node *o = jt_get(doc, "keep");
	size_t i = 0;

	if (!o)
		return 0;
	if (jt_as_object(c, o, JT_KEY(NULL, "keep")) < 0)
		return -1;
	if (o->n > 8)
		return jt_fail(c, JT_KEY(NULL, "keep"),
			       "at most 8 files, got %u", o->n);
	p->keep_path.v = oci_arena_calloc(&p->arena, o->n + 1, sizeof(char *));
	p->keep_keys =
		oci_arena_calloc(&p->arena, o->n + 1, sizeof(*p->keep_keys));
	jt_foreach(m, o) {
		const struct jt_path *at = JT_KEY(JT_KEY(NULL, "keep"), m->key);
		size_t l = strlen(m->key);
		char tmp[JT_SHORT_MAX];

		if (strncmp(m->key, "~/", 2) != 0 || l < 8 ||
		    strcmp(m->key + l - 5, ".json") != 0 ||
		    strstr(m->key, "/../") || strstr(m->key, "/./") ||
		    strstr(m->key, "//"))
			return jt_fail(
				c, JT_KEY(NULL, "keep"),
				"\"%s\": expected a JSON file below the home directory (\"~/.tool/settings.json\")",
				jt_short(m->key, tmp, sizeof(tmp)));
		if (jt_member_strv(c, o, JT_KEY(NULL, "keep"), m->key,
				   &p->keep_keys[i]) < 0)
			return -1;
		if (p->keep_keys[i].n == 0 || p->keep_keys[i].n > 16)
			return jt_fail(c, at, "expected 1 to 16 keys, got %zu",
				       p->keep_keys[i].n);
		for (size_t k = 0; k < p->keep_keys[i].n; k++)
			if (!keep_key_ok(p->keep_keys[i].v[k]))
				return jt_fail(
					c, JT_IDX(at, k),
					"\"%s\": expected a dotted key (\"security.auth.selectedType\")",
					jt_short(p->keep_keys[i].v[k], tmp,
						 sizeof(tmp)));
		p->keep_path.v[i++] = oci_arena_strdup(&p->arena, m->key);
	}
	p->keep_path.n = i;
	return 0;
}

bool oci_etc_file_name_ok(const char *s)
{
	size_t len = strlen(s);

	if (len == 0 || len > 255 || s[0] == '/' || s[len - 1] == '/')
		return false;
	for (const char *c = s; c;
	     c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
		size_t n = strcspn(c, "/");

		if (n == 0 || (n == 1 && c[0] == '.') ||
		    (n == 2 && c[0] == '.' && c[1] == '.'))
			return false;
	}
	/* etc/passwd and etc/group are the sandbox's own */
	return strcmp(s, "passwd") != 0 && strcmp(s, "group") != 0;
}

/* "net": "none" | "host" | {"allow": ["PATTERN", ...]} */
static int parse_net(const struct jt_ctx *c, const struct jt_node *doc,
		     struct oci_profile *p)
{
	const struct jt_node *net = jt_get(doc, "net");

	if (!net || net->type != JT_OBJECT)
		return jt_member_string(c, doc, NULL, "net", &p->net);
	jt_foreach(m, net) {
		if (strcmp(m->key, "allow") != 0) {
			char tmp[JT_SHORT_MAX];

			return jt_fail(
				c, JT_KEY(NULL, "net"),
				"\"%s\": unknown property (known: allow)",
				jt_short(m->key, tmp, sizeof(tmp)));
		}
	}
	if (jt_member_strv(c, net, JT_KEY(NULL, "net"), "allow",
			   &p->net_allow) < 0)
		return -1;
	if (p->net_allow.n == 0)
		return jt_fail(c, JT_KEY(JT_KEY(NULL, "net"), "allow"),
			       "expected at least one host pattern");
	return 0;
}

static int parse_profile(const struct jt_ctx *c, const struct jt_node *doc,
			 struct oci_profile *p)
{
	if (jt_as_object(c, doc, NULL) < 0 || check_keys(c, doc) < 0 ||
	    jt_member_string(c, doc, NULL, "description", &p->description) <
		    0 ||
	    jt_member_strv(c, doc, NULL, "ro", &p->ro) < 0 ||
	    jt_member_strv(c, doc, NULL, "rw", &p->rw) < 0 ||
	    jt_member_strv(c, doc, NULL, "hide", &p->hide) < 0 ||
	    jt_member_strv(c, doc, NULL, "env", &p->env) < 0 ||
	    jt_member_strv(c, doc, NULL, "etc", &p->etc) < 0 ||
	    parse_etc_files(c, doc, p) < 0 || parse_keep(c, doc, p) < 0 ||
	    parse_net(c, doc, p) < 0 ||
	    jt_member_strv(c, doc, NULL, "publish", &p->publish) < 0 ||
	    jt_member_strv(c, doc, NULL, "secret", &p->secret) < 0 ||
	    jt_member_string(c, doc, NULL, "upstream_proxy",
			     &p->upstream_proxy) < 0 ||
	    jt_member_string(c, doc, NULL, "workspace", &p->workspace) < 0 ||
	    jt_member_opt_bool(c, doc, NULL, "landlock", &p->landlock) < 0 ||
	    jt_member_opt_bool(c, doc, NULL, "nested", &p->nested) < 0 ||
	    jt_member_opt_bool(c, doc, NULL, "vm", &p->vm) < 0 ||
	    jt_member_opt_bool(c, doc, NULL, "agent_channel",
			       &p->agent_channel) < 0)
		return -1;
	if (check_paths(c, NULL, "ro", &p->ro) < 0 ||
	    check_paths(c, NULL, "rw", &p->rw) < 0 ||
	    check_paths(c, NULL, "hide", &p->hide) < 0 ||
	    check_env(c, &p->env) < 0 || check_etc(c, &p->etc) < 0)
		return -1;
	if (p->net && strcmp(p->net, "none") != 0 &&
	    strcmp(p->net, "host") != 0) {
		char tmp[JT_SHORT_MAX];

		return jt_fail(c, JT_KEY(NULL, "net"),
			       "\"%s\": expected \"none\" or \"host\"",
			       jt_short(p->net, tmp, sizeof(tmp)));
	}
	if (p->workspace && p->workspace[0] != '/' &&
	    strncmp(p->workspace, "~/", 2) != 0 && strcmp(p->workspace, "~"))
		return jt_fail(
			c, JT_KEY(NULL, "workspace"),
			"expected an absolute path or one starting with ~/");
	return 0;
}

void oci_profile_free(struct oci_profile *p)
{
	if (!p)
		return;
	oci_arena_free(&p->arena);
	free(p);
}

int oci_profile_parse(const char *json, size_t len, const char *filename,
		      struct oci_profile **out, struct ar_error *err)
{
	struct oci_profile *p = ar_xcalloc(1, sizeof(*p));
	struct jt_node *doc;
	struct jt_ctx c;

	p->filename =
		oci_arena_strdup(&p->arena, filename ? filename : "profile");
	c = (struct jt_ctx){ &p->arena, p->filename, err };
	if (jt_parse(&p->arena, json, len, p->filename, &doc, err) < 0 ||
	    parse_profile(&c, doc, p) < 0) {
		oci_profile_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int oci_profile_load_file(const char *path, struct oci_profile **out,
			  struct ar_error *err)
{
	_cleanup_free_ char *buf = NULL;
	size_t len;

	if (ar_read_file_at(AT_FDCWD, path, OCI_PROFILE_MAX_FILE_SIZE, &buf,
			    &len, err) < 0)
		return ar_error_wrap(err, "profile `%s`", path);
	return oci_profile_parse(buf, len, path, out, err);
}

int oci_seccomp_default(struct ar_arena *a, struct oci_seccomp **out,
			struct ar_error *err)
{
	struct jt_ctx c = { a, "embedded seccomp profile", err };
	struct oci_seccomp *sc;
	struct jt_node *doc;

	if (jt_parse(a, oci_default_seccomp_json, oci_default_seccomp_json_len,
		     c.file, &doc, err) < 0)
		return -1;
	sc = oci_arena_calloc(a, 1, sizeof(*sc));
	if (oci_parse_seccomp(&c, doc, NULL, sc) < 0)
		return -1;
	*out = sc;
	return 0;
}
