/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The user's git configuration inside the sandbox (sandbox_gitconfig.h):
 * every file git reads for the user, shown read-only at the path git
 * opens, the keys that make git run a command left out.
 *
 * The files: ~/.config/git/config and ~/.gitconfig (and /etc/gitconfig
 * when /etc shows it), their include.path and includeIf.*.path targets
 * (recursively, as deep as git goes), every core.excludesFile and
 * core.attributesFile they name, and the defaults of those two
 * (~/.config/git/ignore, ~/.config/git/attributes). A config file with
 * no key of protect/git_code.c's list is bound as it is; one with such
 * keys is shown as a filtered copy (the keys commented out, includes
 * kept: their targets go through the same filter) written in a private
 * directory of the host, bound read-only at the file's path. A file on
 * the never-share list (by its path as written, or by the file a
 * symbolic link or `..` leads to) is never shown; git skips an include
 * it cannot open.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "protect/git_code.h"
#include "protect/home_secrets.h"
#include "sandbox_gitconfig.h"
#include "utils.h"

#define GC_MAX_FILES 64
#define GC_MAX_DEPTH 10 /* git's MAX_INCLUDE_DEPTH */
#define GC_MAX_SIZE (1024 * 1024)

struct gc {
	struct sb_mounts *m;
	const struct ar_sandbox_host *h;
	const char *ws;
	struct sb_gitconfig *g;
	char *seen[GC_MAX_FILES];
	size_t n_seen;
	/* the last core.excludesFile, core.attributesFile value (expanded) */
	char *named[2];
};

/* `p` with "." and ".." and "//" resolved by name (absolute in, absolute
 * out; ".." of "/" is "/"). Malloc'd. */
static char *lexical_clean(const char *p)
{
	char *out = ar_xmalloc(strlen(p) + 2);
	size_t n = 0;

	out[n++] = '/';
	while (*p) {
		const char *e;
		size_t len;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		len = (size_t)(e - p);
		if (len == 1 && p[0] == '.') {
		} else if (len == 2 && p[0] == '.' && p[1] == '.') {
			while (n > 1 && out[n - 1] != '/')
				n--;
			if (n > 1)
				n--;
		} else {
			if (n > 1)
				out[n++] = '/';
			memcpy(out + n, p, len);
			n += len;
		}
		p = e;
	}
	out[n] = '\0';
	return out;
}

/* A path value as git expands it: "~/x" below the home, absolute kept,
 * relative to `base` (a directory; NULL: not taken), cleaned. */
static char *expand(const struct ar_sandbox_host *h, const char *v,
		    const char *base)
{
	_cleanup_free_ char *raw = NULL;

	if (v[0] == '~' && (v[1] == '/' || v[1] == '\0'))
		raw = ar_xasprintf("%s%s", h->home, v + 1);
	else if (v[0] == '/')
		raw = ar_xstrdup(v);
	else if (base && v[0] != '~' && v[0])
		raw = ar_xasprintf("%s/%s", base, v);
	else
		return NULL;
	return lexical_clean(raw);
}

/* May `lex` (the path git opens inside) be shown, and from where (the
 * file it leads to on the host, *real)? Never a secret, by either path,
 * never a path in the workspace (git reads it there as it is), only a
 * regular file. */
static bool showable(struct gc *c, const char *lex, char **real)
{
	struct stat st;
	char *r;

	*real = NULL;
	if (ar_sandbox_path_is_secret(c->h->home, lex) ||
	    ar_path_under(lex, c->ws) || strcmp(lex, c->h->home) == 0)
		return false;
	r = realpath(lex, NULL);
	if (!r)
		return false;
	if (ar_sandbox_path_is_secret(c->h->home, r) ||
	    ar_path_under(r, c->ws) || stat(r, &st) < 0 ||
	    !S_ISREG(st.st_mode)) {
		if (ar_sandbox_path_is_secret(c->h->home, r))
			ar_log(AR_LOG_WARNING,
			       "sandbox: git config: `%s` leads to `%s`, on the never-share list: not shown inside",
			       lex, r);
		free(r);
		return false;
	}
	*real = r;
	return true;
}

static bool seen(struct gc *c, const char *lex)
{
	for (size_t i = 0; i < c->n_seen; i++)
		if (strcmp(c->seen[i], lex) == 0)
			return true;
	if (c->n_seen == GC_MAX_FILES)
		return true; /* enough: the rest is not shown */
	c->seen[c->n_seen++] = ar_xstrdup(lex);
	return false;
}

/* A file of data (excludes, attributes): bound as it is. */
static void show_data(struct gc *c, const char *lex)
{
	_cleanup_free_ char *real = NULL;

	if (seen(c, lex) || sb_has_dest(c->m, lex) || !showable(c, lex, &real))
		return;
	sb_mount_add(c->m, oci_arena_strdup(c->m->a, lex), "bind",
		     oci_arena_strdup(c->m->a, real),
		     SB_OPTS("bind", "ro", "nosuid", "nodev"));
}

/* The filtered text written in the private directory; its path, or NULL
 * (then the file is not shown). */
static char *write_file(struct sb_gitconfig *g, const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	char *path;

	if (!g->dir) {
		_cleanup_free_ char *tmpl =
			ar_xasprintf("%s/agentrun-git-XXXXXX", g->parent);

		if (!mkdtemp(tmpl) || chmod(tmpl, 0755) < 0) {
			ar_log(AR_LOG_WARNING,
			       "sandbox: git config: cannot make %s: %s", tmpl,
			       strerror(errno));
			return NULL;
		}
		g->dir = ar_xstrdup(tmpl);
	}
	path = ar_xasprintf("%s/%zu", g->dir, g->n);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0444);
	if (fd < 0 || ar_write_all(fd, text, len) < 0) {
		if (fd >= 0)
			unlink(path);
		free(path);
		return NULL;
	}
	g->n++;
	return path;
}

static char *write_copy(struct gc *c, const char *text, size_t len)
{
	return write_file(c->g, text, len);
}

const char *sb_gitconfig_empty_file(struct sb_gitconfig *g)
{
	if (!g->empty)
		g->empty = write_file(g, "", 0);
	return g->empty;
}

static void show_config(struct gc *c, const char *lex, int depth);

/* Every path value of core.excludesFile / core.attributesFile in a
 * config text: shown (data). */
static void show_named_files(struct gc *c, const char *text, size_t len)
{
	static const char *const keys[] = { "excludesfile", "attributesfile" };

	for (size_t i = 0; i < AR_ARRAY_SIZE(keys); i++) {
		_cleanup_free_ char *v =
			sb_git_config_value(text, len, "core", keys[i]);
		_cleanup_free_ char *p = v ? expand(c->h, v, NULL) : NULL;

		if (p) {
			show_data(c, p);
			free(c->named[i]);
			c->named[i] = ar_xstrdup(p);
		}
	}
}

/* A program that runs git with GIT_CONFIG_GLOBAL=/dev/null (Gemini CLI's
 * shell tool; GIT_CONFIG_SYSTEM too) still reads git's default excludes
 * and attributes files, ~/.config/git/ignore and attributes, which need
 * no config: when the user has none there, the files core.excludesFile
 * and core.attributesFile name are shown there too, read-only. git with
 * the user's config reads the named file instead of the default one, so
 * nothing is read twice. */
static void show_named_as_default(struct gc *c, const char *const *data)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(c->named); i++) {
		_cleanup_free_ char *def =
			ar_xasprintf("%s/%s", c->h->home, data[i]);
		_cleanup_free_ char *real = NULL;
		struct stat st;

		if (!c->named[i] || lstat(def, &st) == 0 ||
		    sb_has_dest(c->m, def) || !showable(c, c->named[i], &real))
			continue;
		sb_mount_add(c->m, oci_arena_strdup(c->m->a, def), "bind",
			     oci_arena_strdup(c->m->a, real),
			     SB_OPTS("bind", "ro", "nosuid", "nodev"));
	}
}

static void show_config(struct gc *c, const char *lex, int depth)
{
	_cleanup_free_ char *real = NULL, *text = NULL, *out = NULL,
			    *keys = NULL, *dir = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_(ar_strv_freep) char **inc = NULL;
	struct ar_error err = AR_ERROR_INIT;
	const char *src;
	_cleanup_free_ char *copy = NULL;
	size_t len = 0;
	int n;

	if (depth > GC_MAX_DEPTH || seen(c, lex) || !showable(c, lex, &real))
		return;
	fd = open(real, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 ||
	    ar_read_fd(fd, real, GC_MAX_SIZE, 0, &text, &len, &err) < 0)
		return;
	n = sb_git_config_filter(text, len, &out, &keys);
	if (n < 0) {
		ar_log(AR_LOG_WARNING,
		       "sandbox: git config `%s` is not understood (git would reject it): not shown inside",
		       lex);
		return;
	}
	if (n == 0) {
		src = real;
	} else {
		copy = write_copy(c, out, strlen(out));
		if (!copy)
			return;
		src = copy;
		ar_debug("sandbox: git config `%s` shown without %s", lex,
			 keys);
	}
	/* a later entry for the same path wins (/etc/gitconfig) */
	sb_mount_add(c->m, oci_arena_strdup(c->m->a, lex), "bind",
		     oci_arena_strdup(c->m->a, src),
		     SB_OPTS("bind", "ro", "nosuid", "nodev"));
	show_named_files(c, text, len);
	inc = sb_git_config_includes(text, len);
	dir = ar_xstrdup(lex);
	*strrchr(dir, '/') = '\0';
	for (size_t i = 0; inc && inc[i]; i++) {
		_cleanup_free_ char *p =
			expand(c->h, inc[i], dir[0] ? dir : "/");

		if (p)
			show_config(c, p, depth + 1);
	}
}

void sb_gitconfig_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
			 const char *ws, struct sb_gitconfig *g)
{
	struct gc c = { .m = m, .h = h, .ws = ws, .g = g };
	static const char *const config[] = { ".config/git/config",
					      ".gitconfig" };
	static const char *const data[] = { ".config/git/ignore",
					    ".config/git/attributes" };

	/* git's order: system, XDG, global */
	if (sb_has_dest(m, "/etc/gitconfig"))
		show_config(&c, "/etc/gitconfig", 0);
	for (size_t i = 0; i < AR_ARRAY_SIZE(config); i++) {
		_cleanup_free_ char *p =
			ar_xasprintf("%s/%s", h->home, config[i]);

		show_config(&c, p, 0);
	}
	for (size_t i = 0; i < AR_ARRAY_SIZE(data); i++) {
		_cleanup_free_ char *p =
			ar_xasprintf("%s/%s", h->home, data[i]);

		show_data(&c, p);
	}
	show_named_as_default(&c, data);
	for (size_t i = 0; i < c.n_seen; i++)
		free(c.seen[i]);
	for (size_t i = 0; i < AR_ARRAY_SIZE(c.named); i++)
		free(c.named[i]);
}

void sb_gitconfig_release(struct sb_gitconfig *g, bool keep)
{
	if (g->dir && !keep) {
		for (size_t i = 0; i < g->n; i++) {
			_cleanup_free_ char *p =
				ar_xasprintf("%s/%zu", g->dir, i);

			unlink(p);
		}
		rmdir(g->dir);
	}
	free(g->dir);
	free(g->empty);
	memset(g, 0, sizeof(*g));
}
