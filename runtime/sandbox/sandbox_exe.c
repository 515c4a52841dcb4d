/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The command's executable when it is installed under the home directory,
 * which the sandbox hides (sandbox_exe.h): nvm's node and npm globals,
 * ~/.local/bin, ~/.bun/bin, ~/.cargo/bin.
 *
 * The executable is the first one the caller's PATH finds (argv[0] with
 * a '/': that path). When it lies under the home directory and no bind
 * shows it, its install is:
 *  - the prefix of its bin/ directory (~/.nvm/versions/node/v22,
 *    ~/.bun, ~/.cargo) when the file it leads to (a link's target) is
 *    in that prefix too, unless the prefix is the home directory or
 *    ~/.local (too wide: only the file then);
 *  - else the file itself at the path PATH found, and the file it leads
 *    to, with its package (the nearest directory above it holding a
 *    package.json, below the home directory);
 *  - for a script, its interpreter too: `#!/usr/bin/env NAME` looked up
 *    in the caller's PATH, `#!/PATH` as it is, by the same rules.
 * With a profile these are bound read-only (never a never-share path);
 * without one the start fails naming the option that shows them.
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
#include "protect/home_secrets.h"
#include "sandbox_exe.h"
#include "utils.h"

struct exe {
	struct sb_mounts *m;
	const struct ar_sandbox_host *h;
	const char *ws;
	const char *path_env;
	bool show;
	char *shown[8]; /* the paths shown (or to show) */
	size_t n_shown;
};

static bool visible(const struct exe *x, const char *p)
{
	if (!ar_path_under(p, x->h->home) || ar_path_under(p, x->ws))
		return true;
	for (size_t i = 0; i < x->n_shown; i++)
		if (ar_path_under(p, x->shown[i]))
			return true;
	for (size_t i = 0; i < x->m->n; i++) {
		const struct oci_mount *mt = &x->m->v[i];

		if (strcmp(mt->type, "bind") == 0 &&
		    strcmp(mt->source, "/dev/null") != 0 &&
		    ar_path_under(p, mt->destination))
			return true;
	}
	return false;
}

/* The first executable regular file named `name` in PATH (or `name`
 * itself with a '/'), malloc'd, or NULL. */
static char *lookup(const struct exe *x, const char *name)
{
	const char *path = x->path_env;
	struct stat st;

	if (strchr(name, '/')) {
		char *p = name[0] == '/' ?
				  ar_xstrdup(name) :
				  ar_xasprintf("%s/%s", x->h->cwd, name);

		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			return p;
		free(p);
		return NULL;
	}
	while (path && *path) {
		size_t n = strcspn(path, ":");
		char *p = n ? ar_xasprintf("%.*s/%s", (int)n, path, name) :
			      NULL;

		if (p && p[0] == '/' && access(p, X_OK) == 0 &&
		    stat(p, &st) == 0 && S_ISREG(st.st_mode))
			return p;
		free(p);
		path += n;
		if (*path == ':')
			path++;
	}
	return NULL;
}

static void show_path(struct exe *x, const char *p)
{
	if (visible(x, p) || ar_sandbox_path_is_secret(x->h->home, p) ||
	    x->n_shown == AR_ARRAY_SIZE(x->shown))
		return;
	x->shown[x->n_shown++] = ar_xstrdup(p);
	if (x->show)
		sb_bind(x->m, oci_arena_strdup(x->m->a, p), false);
}

/* dirname, malloc'd */
static char *dir_of(const char *p)
{
	char *d = ar_xstrdup(p), *s = strrchr(d, '/');

	if (s && s != d)
		*s = '\0';
	else
		d[1] = '\0';
	return d;
}

static void show_install(struct exe *x, const char *found, int depth);

/* `#!/usr/bin/env [-S] NAME` or `#!/PATH`: the interpreter shown. */
static void show_interpreter(struct exe *x, const char *real, int depth)
{
	char buf[256], *s, *w;
	_cleanup_close_ int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
	_cleanup_free_ char *interp = NULL;
	char *save = NULL;

	if (n < 3 || buf[0] != '#' || buf[1] != '!')
		return;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	s = buf + 2;
	w = strtok_r(s, " \t", &save);
	if (!w)
		return;
	if (strcmp(w, "/usr/bin/env") == 0 || strcmp(w, "/bin/env") == 0) {
		while ((w = strtok_r(NULL, " \t", &save)) && w[0] == '-')
			;
		if (!w || strchr(w, '='))
			return;
		interp = lookup(x, w);
	} else {
		interp = ar_xstrdup(w);
	}
	if (interp)
		show_install(x, interp, depth + 1);
}

static void show_install(struct exe *x, const char *found, int depth)
{
	_cleanup_free_ char *real = realpath(found, NULL);
	_cleanup_free_ char *bin = dir_of(found);
	_cleanup_free_ char *prefix = dir_of(bin);
	_cleanup_free_ char *local = ar_xasprintf("%s/.local", x->h->home);
	const char *base = strrchr(bin, '/');

	if (!real || depth > 2)
		return;
	if (!visible(x, found) || !visible(x, real)) {
		if (base && strcmp(base, "/bin") == 0 &&
		    strcmp(prefix, x->h->home) != 0 &&
		    strcmp(prefix, local) != 0 &&
		    ar_path_under(prefix, x->h->home) &&
		    ar_path_under(real, prefix)) {
			show_path(x, prefix);
		} else {
			show_path(x, found);
			if (strcmp(real, found) != 0) {
				_cleanup_free_ char *pkg = dir_of(real);

				/* the package a script belongs to */
				while (ar_path_under(pkg, x->h->home) &&
				       strcmp(pkg, x->h->home) != 0) {
					_cleanup_free_ char *pj = ar_xasprintf(
						"%s/package.json", pkg);
					char *up;

					if (access(pj, F_OK) == 0)
						break;
					up = dir_of(pkg);
					free(pkg);
					pkg = up;
				}
				if (ar_path_under(pkg, x->h->home) &&
				    strcmp(pkg, x->h->home) != 0)
					show_path(x, pkg);
				else
					show_path(x, real);
			}
		}
	}
	show_interpreter(x, real, depth);
}

static const char *env_get(char **env, const char *name)
{
	size_t n = strlen(name);

	for (char **e = env; e && *e; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* "A B" or "--ro A --ro B" */
static char *shown_list(const struct exe *x, const char *sep)
{
	char *out = ar_xstrdup("");

	for (size_t i = 0; i < x->n_shown; i++) {
		char *n =
			ar_xasprintf("%s%s%s", out, i ? sep : "", x->shown[i]);

		free(out);
		out = n;
	}
	return out;
}

/* Does PATH find `cmd` somewhere the sandbox shows (its mounts, not
 * what this file would show)? */
static bool found_inside(struct exe *x, const char *cmd)
{
	size_t k = x->n_shown;
	bool found = false;

	x->n_shown = 0;
	for (const char *path = x->path_env; !strchr(cmd, '/') && *path;) {
		size_t n = strcspn(path, ":");
		_cleanup_free_ char *p =
			ar_xasprintf("%.*s/%s", (int)n, path, cmd);
		_cleanup_free_ char *r = realpath(p, NULL);

		if (p[0] == '/' && access(p, X_OK) == 0 && r && visible(x, p) &&
		    visible(x, r)) {
			found = true;
			break;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	x->n_shown = k;
	return found;
}

int sb_exe_mounts(struct sb_mounts *m, const struct ar_sandbox_host *h,
		  const char *ws, const char *cmd, bool show,
		  struct ar_error *err)
{
	struct exe x = { .m = m, .h = h, .ws = ws, .show = show };
	_cleanup_free_ char *found = NULL, *list = NULL;
	int r = 0;

	x.path_env = env_get(h->environ, "PATH");
	if (!x.path_env)
		x.path_env = "/usr/local/bin:/usr/bin:/bin";
	found = lookup(&x, cmd);
	if (!found)
		return 0;
	if (!show) {
		_cleanup_free_ char *real = realpath(found, NULL);

		/* without a profile: only the command's own file, when
		 * hidden (the miss the runtime would report less clearly) */
		if (!real || (visible(&x, found) && visible(&x, real)))
			return 0;
	}
	show_install(&x, found, 0);
	if (x.n_shown == 0)
		return 0;
	if (show) {
		list = shown_list(&x, ", ");
		ar_log(AR_LOG_INFO,
		       "sandbox: `%s` is installed under your home directory: shown read-only: %s",
		       cmd, list);
	} else if (!found_inside(&x, cmd)) {
		list = shown_list(&x, " --ro ");
		r = ar_error_set_plain(
			err, ENOENT,
			"sandbox: %s not found inside: it is under your home, which the sandbox hides (%s); --ro %s shows it (a --profile for the agent shows it by itself)",
			cmd, found, list);
	}
	for (size_t i = 0; i < x.n_shown; i++)
		free(x.shown[i]);
	return r;
}
