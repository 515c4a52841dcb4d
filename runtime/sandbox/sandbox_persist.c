/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the host runs later from the home directory, at start
 * (sandbox_persist.h): the scripts an agent CLI's read-only settings name
 * get read-only binds, and a read-write bind over a path the host runs
 * code from (sb_protect_home_each) is said on stderr at every start.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit/audit.h"
#include "protect/home_secrets.h"
#include "log.h"
#include "protect/protect.h"
#include "sandbox_persist.h"
#include "utils.h"

/* The settings files read, at most this much of each, and at most this
 * many scripts bound per start. */
#define PERSIST_MAX_FILE (256 * 1024)
#define PERSIST_MAX_SCRIPTS 64

static bool mount_rw(const struct oci_mount *mt)
{
	return strcmp(mt->type, "bind") == 0 &&
	       strcmp(mt->source, "/dev/null") != 0 &&
	       oci_strv_has(&mt->options, "rw");
}

/* Nothing can be written below it (a read-only bind, a hiding mount). */
static bool mount_ro(const struct oci_mount *mt)
{
	return ((strcmp(mt->type, "bind") == 0 ||
		 strcmp(mt->type, "tmpfs") == 0) &&
		(oci_strv_has(&mt->options, "ro") ||
		 oci_strv_has(&mt->options, "rro"))) ||
	       strcmp(mt->source, "/dev/null") == 0;
}

/* A read-only mount covers `p` on top of the read-write bind at `rw`:
 * deeper than it (mounted after it) and at or above `p`. */
static bool covered(const struct sb_mounts *m, const char *p, const char *rw)
{
	for (size_t i = 0; i < m->n; i++) {
		const char *d = m->v[i].destination;

		if (mount_ro(&m->v[i]) && ar_path_under(p, d) &&
		    ar_path_under(d, rw) && strcmp(d, rw) != 0)
			return true;
	}
	return false;
}

/* The read-write bind `p` would be written through, or NULL: the
 * deepest one at or above it, unless a read-only mount covers `p`. */
static const char *writable_through(const struct sb_mounts *m, const char *p)
{
	const char *best = NULL;

	for (size_t i = 0; i < m->n; i++)
		if (mount_rw(&m->v[i]) &&
		    ar_path_under(p, m->v[i].destination) &&
		    (!best || strlen(m->v[i].destination) > strlen(best)))
			best = m->v[i].destination;
	return best && !covered(m, p, best) ? best : NULL;
}

/* "~/x", "$HOME/x", "${HOME}/x" -> HOME/x; "/x" kept; else NULL. */
static char *script_path(const char *home, const char *tok, size_t n)
{
	static const char *const pre[] = { "~/", "$HOME/", "${HOME}/" };

	for (size_t i = 0; i < AR_ARRAY_SIZE(pre); i++) {
		size_t pl = strlen(pre[i]);

		if (n > pl && strncmp(tok, pre[i], pl) == 0)
			return ar_xasprintf("%s/%.*s", home, (int)(n - pl),
					    tok + pl);
	}
	if (n > 1 && tok[0] == '/')
		return ar_xasprintf("%.*s", (int)n, tok);
	return NULL;
}

/* One token of a settings file that may be a script: shown read-only
 * when it is a regular file below the home directory (not the
 * workspace, not a secret) that a read-write bind would show writable. */
static void one_script(struct sb_mounts *m, const struct ar_sandbox_host *h,
		       const char *ws, const char *tok, size_t n, size_t *count)
{
	_cleanup_free_ char *p = script_path(h->home, tok, n);
	_cleanup_free_ char *real = NULL;
	struct stat st;

	if (!p || !(real = realpath(p, NULL)) || stat(real, &st) < 0 ||
	    !S_ISREG(st.st_mode) || !ar_path_under(real, h->home) ||
	    ar_path_under(real, ws) ||
	    ar_sandbox_path_is_secret(h->home, real) ||
	    !writable_through(m, real) || sb_has_dest(m, real))
		return;
	ar_debug("sandbox: `%s`, named by the agent's settings, read-only",
		 real);
	sb_bind(m, real, false);
	(*count)++;
}

static bool tok_start(char c)
{
	return strchr(" \t\r\n\"'=[,({:;", c) != NULL;
}

static bool tok_end(char c)
{
	return c == '\0' || strchr(" \t\r\n\"'`,;)]}|&<>\\", c) != NULL;
}

/* The paths a settings file names (hook commands, status lines, notify
 * commands, MCP servers), whatever its format (JSON, TOML, YAML): every
 * word that starts with '/', "~/" or "$HOME/". */
static void file_scripts(struct sb_mounts *m, const struct ar_sandbox_host *h,
			 const char *ws, const char *file, size_t *count)
{
	_cleanup_close_ int fd =
		open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	struct stat st;
	ssize_t r;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	buf = ar_xcalloc(1, PERSIST_MAX_FILE + 1);
	while (len < PERSIST_MAX_FILE &&
	       (r = read(fd, buf + len, PERSIST_MAX_FILE - len)) > 0)
		len += (size_t)r;
	buf[len] = '\0';
	for (size_t i = 0; i < len && *count < PERSIST_MAX_SCRIPTS; i++) {
		size_t e = i;

		if ((i > 0 && !tok_start(buf[i - 1])) ||
		    (buf[i] != '/' && buf[i] != '~' && buf[i] != '$'))
			continue;
		while (!tok_end(buf[e]))
			e++;
		if (e > i + 1)
			one_script(m, h, ws, buf + i, e - i, count);
		i = e > i ? e - 1 : i;
	}
}

void sb_persist_named_scripts(struct sb_mounts *m,
			      const struct ar_sandbox_host *h, const char *ws,
			      const struct oci_profile *pf)
{
	size_t count = 0;

	for (size_t i = 0; pf && i < pf->ro.n; i++) {
		_cleanup_free_ char *f = sb_expand_path(h, pf->ro.v[i]);

		if (f && ar_path_under(f, h->home))
			file_scripts(m, h, ws, f, &count);
	}
}

struct holds {
	const struct sb_mounts *m;
	const char *rw;
	const char *home;
	struct ar_jbuf names;
	const char *at_why; /* rw is, or is below, one of them */
	char *at;
};

struct above {
	const struct holds *x;
	const char *p;
	bool found;
};

/* Another one, between the bind and `p`, named in its place. */
static bool above_one(const char *q, const char *why, void *data)
{
	struct above *a = data;

	(void)why;
	if (strcmp(q, a->p) != 0 && ar_path_under(a->p, q) &&
	    ar_path_under(q, a->x->rw) && strcmp(q, a->x->rw) != 0 &&
	    !covered(a->x->m, q, a->x->rw))
		a->found = true;
	return !a->found;
}

static bool holds_one(const char *p, const char *why, void *data)
{
	struct holds *x = data;

	if (ar_path_under(x->rw, p)) {
		x->at_why = why;
		x->at = ar_xstrdup(p);
		return false;
	}
	struct above a = { .x = x, .p = p };

	if (!ar_path_under(p, x->rw) || covered(x->m, p, x->rw))
		return true;
	sb_protect_home_each(x->home, above_one, &a);
	if (a.found)
		return true;
	if (x->names.len)
		ar_jbuf_lit(&x->names, ", ");
	/* named relative to the bind: the line stays readable */
	ar_jbuf_addf(&x->names, "%s (%s)", p + strlen(x->rw) + 1, why);
	return true;
}

void sb_persist_warn(const struct sb_mounts *m, const struct ar_sandbox_host *h,
		     const char *ws)
{
	for (size_t i = 0; i < m->n; i++) {
		const char *d = m->v[i].destination;
		struct holds x = { .m = m, .rw = d, .home = h->home };

		if (!mount_rw(&m->v[i]) || !ar_path_under(d, h->home) ||
		    strcmp(d, h->home) == 0 || ar_path_under(d, ws))
			continue;
		sb_protect_home_each(h->home, holds_one, &x);
		if (x.at_why)
			ar_warn("sandbox: read-write %s (%s%s%s): the host runs code from it later, and the agent can change it (a profile's \"rw\" or --rw; " AR_SANDBOX_DOC
				", \"Agent profiles\")",
				d, x.at_why, strcmp(x.at, d) ? " at " : "",
				strcmp(x.at, d) ? x.at : "");
		else if (x.names.len)
			ar_warn("sandbox: read-write %s holds what the host runs code from later, writable inside: %s (a profile's \"rw\" or --rw; " AR_SANDBOX_DOC
				", \"Agent profiles\")",
				d, x.names.p);
		free(x.at);
		ar_jbuf_free(&x.names);
	}
}
