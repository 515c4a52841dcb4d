/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What a direnv `.envrc` loads (direnv.h), and its reading. The commands are direnv's
 * stdlib (direnv-stdlib(1)); a line is split into commands at `;`, `&`
 * and `|`, and shell keywords before a command (`if has nix; then use
 * flake; fi`) are skipped. Quotes around a word are dropped.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "direnv.h"
#include "error.h"
#include "utils.h"

#define DIRENV_MAX_FILES 64

static void add(struct sb_direnv_loads *l, const char *dir, const char *name,
		bool nix)
{
	char *p;

	if (l->n >= DIRENV_MAX_FILES)
		return;
	p = dir && *dir ? ar_xasprintf("%s/%s", dir, name) : ar_xstrdup(name);
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->files[i].path, p) == 0) {
			free(p);
			return;
		}
	l->files = ar_xrealloc(l->files, (l->n + 1) * sizeof(*l->files));
	l->files[l->n++] = (struct sb_direnv_file){ p, nix };
}

/* A word naming a file of the project: quotes dropped, "./" dropped;
 * NULL for what is not known before the shell runs or not inside. */
static char *project_path(const char *w)
{
	size_t n = strlen(w);
	char *s;

	if (n >= 2 && (w[0] == '"' || w[0] == '\'') && w[n - 1] == w[0]) {
		w++;
		n -= 2;
	}
	while (n >= 2 && w[0] == '.' && w[1] == '/') {
		w += 2;
		n -= 2;
		while (n && *w == '/') {
			w++;
			n--;
		}
	}
	if (!n || w[0] == '/' || w[0] == '~' || w[0] == '-')
		return NULL;
	s = ar_xasprintf("%.*s", (int)n, w);
	while (n > 1 && s[n - 1] == '/')
		s[--n] = '\0';
	if (strpbrk(s, "$`*?[{\"'\\") || strcmp(s, "..") == 0 ||
	    strncmp(s, "../", 3) == 0 || strstr(s, "/../") ||
	    (n >= 3 && strcmp(s + n - 3, "/..") == 0)) {
		free(s);
		return NULL;
	}
	if (strcmp(s, ".") == 0)
		s[0] = '\0';
	return s;
}

/* One command: its words. */
static void command(struct sb_direnv_loads *l, char **w, size_t n)
{
	static const char *const keywords[] = { "if",	 "then", "else", "elif",
						"do",	 "!",	 "{",	 "(",
						"while", "until" };
	size_t k = 0;

	while (k < n) {
		bool kw = false;

		for (size_t i = 0; i < AR_ARRAY_SIZE(keywords); i++)
			kw = kw || strcmp(w[k], keywords[i]) == 0;
		if (!kw)
			break;
		k++;
	}
	if (k >= n)
		return;
	if (strcmp(w[k], "dotenv") == 0 ||
	    strcmp(w[k], "dotenv_if_exists") == 0) {
		_cleanup_free_ char *p = k + 1 < n ? project_path(w[k + 1]) :
						     ar_xstrdup(".env");

		if (p && *p)
			add(l, NULL, p, false);
	} else if (strcmp(w[k], "source_env") == 0 ||
		   strcmp(w[k], "source_env_if_exists") == 0) {
		_cleanup_free_ char *p = k + 1 < n ? project_path(w[k + 1]) :
						     NULL;

		if (p && *p)
			add(l, NULL, p, false);
	} else if ((strcmp(w[k], "use") == 0 && k + 1 < n &&
		    strcmp(w[k + 1], "flake") == 0) ||
		   strcmp(w[k], "use_flake") == 0) {
		size_t a = k + (strcmp(w[k], "use") == 0 ? 2 : 1);
		_cleanup_free_ char *dir = NULL;

		l->nix = true;
		if (a < n && w[a][0] != '-') {
			/* a flake reference: a local path (before '#') */
			_cleanup_free_ char *ref = ar_xstrdup(w[a]);
			char *hash = strchr(ref, '#');

			if (hash)
				*hash = '\0';
			if (strncmp(ref, "path:", 5) == 0)
				memmove(ref, ref + 5, strlen(ref + 5) + 1);
			if (!*ref || ref[0] == '.')
				dir = project_path(*ref ? ref : ".");
			if (!dir)
				return; /* a remote flake */
		}
		add(l, dir, "flake.nix", true);
		add(l, dir, "flake.lock", true);
	} else if ((strcmp(w[k], "use") == 0 && k + 1 < n &&
		    strcmp(w[k + 1], "nix") == 0) ||
		   strcmp(w[k], "use_nix") == 0) {
		bool named = false;

		l->nix = true;
		for (size_t a = k + (strcmp(w[k], "use") == 0 ? 2 : 1); a < n;
		     a++) {
			size_t len = strlen(w[a]);
			_cleanup_free_ char *p = NULL;

			if (len > 4 && strcmp(w[a] + len - 4, ".nix") == 0 &&
			    (p = project_path(w[a]))) {
				add(l, NULL, p, true);
				named = true;
			}
		}
		if (!named) {
			add(l, NULL, "shell.nix", true);
			add(l, NULL, "default.nix", true);
		}
	}
}

void sb_direnv_parse(const char *text, struct sb_direnv_loads *out)
{
	_cleanup_free_ char *copy = ar_xstrdup(text);
	char *save = NULL;

	memset(out, 0, sizeof(*out));
	for (char *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		char *hash = NULL, *cmd = line;

		/* a comment: '#' at the start of a word */
		for (char *p = line; *p; p++)
			if (*p == '#' && (p == line || p[-1] == ' ' ||
					  p[-1] == '\t' || p[-1] == ';')) {
				hash = p;
				break;
			}
		if (hash)
			*hash = '\0';
		while (cmd) {
			char *end = strpbrk(cmd, ";&|");
			char *words[16];
			size_t n = 0;
			char *wsave = NULL;

			if (end)
				*end = '\0';
			for (char *w = strtok_r(cmd, " \t\r", &wsave);
			     w && n < AR_ARRAY_SIZE(words);
			     w = strtok_r(NULL, " \t\r", &wsave))
				words[n++] = w;
			command(out, words, n);
			cmd = end ? end + 1 : NULL;
		}
	}
}

int sb_direnv_read_at(int dirfd, const char *path, struct sb_direnv_loads *out)
{
	_cleanup_close_ int fd = openat(
		dirfd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_free_ char *text = NULL;
	struct ar_error err = AR_ERROR_INIT;
	struct stat st;
	size_t len;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    ar_read_fd(fd, path, SB_DIRENV_MAX, 4096, &text, &len, &err) < 0) {
		ar_error_clear(&err);
		return -1;
	}
	sb_direnv_parse(text, out);
	return 0;
}

void sb_direnv_loads_release(struct sb_direnv_loads *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->files[i].path);
	free(l->files);
	memset(l, 0, sizeof(*l));
}
