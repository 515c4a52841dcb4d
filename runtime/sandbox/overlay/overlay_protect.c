/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: the changes `agentrun commit` holds back.
 * A change at or below a path the host may run code from (the names the
 * plain mode protects, protect.h: sb_protect_rel_why, at any depth) or
 * below a git directory of any layout (a `.git` entry, a directory
 * holding HEAD and objects/ + refs/ or commondir, in either layer) is
 * marked, and so is one below the repository's core.hooksPath (its
 * hooks live in the worktree: husky's `.husky`) or a file one of its
 * installed hooks names (a script it calls, a hook framework's config);
 * `changes` and `diff` mark its line and count them, `commit` applies
 * it only when named. Git's own data inside a git directory
 * (objects, refs, index, logs: what `git commit` inside writes) is
 * listed as one line per directory. The layers are read through file
 * descriptors that never follow a symlink (overlay_fd.c).
 */
#define _GNU_SOURCE
#include "overlay.h"
#include "overlay_internal.h"
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include "protect/direnv.h"
#include "protect/protect.h"
#include "utils.h"

/* name in dir (an open directory, or -1) is a directory (dir) or a
 * regular file, or a symlink either way: git follows links there
 * (is_git_directory checks objects/ and refs/ with access(2)). */
static bool has(int dir, const char *name, bool want_dir)
{
	struct stat st;

	if (dir < 0 || fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	return S_ISLNK(st.st_mode) ||
	       (want_dir ? S_ISDIR(st.st_mode) : S_ISREG(st.st_mode));
}

/* Git would take directory rel for a git directory (is_git_directory:
 * HEAD, and objects/ and refs/ or a commondir naming them), looking at
 * both layers (what either has: errs towards holding back). */
static bool gitdir_layout(int up, int lo, const char *rel)
{
	_cleanup_close_ int u = ov_open_dir_beneath(up, rel);
	_cleanup_close_ int l = lo >= 0 ? ov_open_dir_beneath(lo, rel) : -1;

	if (!has(u, "HEAD", false) && !has(l, "HEAD", false))
		return false;
	if (has(u, "commondir", false) || has(l, "commondir", false))
		return true;
	return (has(u, "objects", true) || has(l, "objects", true)) &&
	       (has(u, "refs", true) || has(l, "refs", true));
}

/* The directories above the current change and whether each is a git
 * directory, reused by the next change (they come sorted). */
struct anc {
	char **dir;
	bool *git;
	size_t n, cap;
};

/* The shallowest git directory at or above `path` (its own directory
 * included when `dir`), or NULL (malloc'd). */
static char *layout_root(struct anc *a, int up, int lo, const char *path,
			 bool dir)
{
	size_t k = 0, len = 0;

	for (;; k++) {
		const char *from;
		size_t nl;

		if (k >= a->n || strlen(a->dir[k]) != len ||
		    strncmp(a->dir[k], path, len) != 0) {
			while (a->n > k)
				free(a->dir[--a->n]);
			if (a->n == a->cap) {
				a->cap = a->cap ? 2 * a->cap : 16;
				a->dir = ar_xrealloc(a->dir,
						     a->cap * sizeof(*a->dir));
				a->git = ar_xrealloc(a->git,
						     a->cap * sizeof(*a->git));
			}
			a->dir[a->n] = ar_xasprintf("%.*s", (int)len, path);
			a->git[a->n] = gitdir_layout(up, lo, a->dir[a->n]);
			a->n++;
		}
		if (a->git[k])
			return ar_xstrdup(a->dir[k]);
		if (!path[len])
			return NULL;
		from = len ? path + len + 1 : path;
		nl = strcspn(from, "/");
		if (!from[nl] && !dir)
			return NULL; /* the file itself */
		len = (size_t)(from - path) + nl;
	}
}

/* core.hooksPath of the workspace's repository (its .git/config in the
 * workspace, read without following a link; a plain reading of git's
 * syntax: [core] then hooksPath = VALUE, optionally quoted), relative to
 * the workspace when it names a directory inside it, else NULL. */
static char *hooks_path(int lo, const char *ws)
{
	_cleanup_close_ int g = lo >= 0 ? ov_open_dir_beneath(lo, ".git") : -1;
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *text = NULL;
	struct ar_error err = { 0 };
	struct stat st;
	bool core = false;
	char *found = NULL, *save = NULL;

	if (g < 0 || (fd = ov_open_regular(g, "config", &st)) < 0 ||
	    ar_read_fd(fd, "config", 1 << 20, 0, &text, NULL, &err) < 0)
		return NULL;
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		char *v;
		size_t n;

		l += strspn(l, " \t");
		if (*l == '[') {
			core = strncasecmp(l, "[core]", 6) == 0;
			continue;
		}
		if (!core || strncasecmp(l, "hookspath", 9) != 0)
			continue;
		v = l + 9 + strspn(l + 9, " \t");
		if (*v != '=')
			continue;
		v += 1 + strspn(v + 1, " \t");
		n = strcspn(v, "#;");
		while (n && (v[n - 1] == ' ' || v[n - 1] == '\t'))
			n--;
		if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
			v++, n -= 2;
		free(found);
		found = ar_xasprintf("%.*s", (int)n, v);
	}
	if (!found)
		return NULL;
	{
		_cleanup_free_ char *f = found;
		const char *r = f;
		size_t n;

		if (r[0] == '/') {
			if (!ar_path_under(r, ws) || !strcmp(r, ws))
				return NULL;
			r += strlen(ws) + 1;
		}
		while (r[0] == '.' && r[1] == '/')
			r += 2;
		if (!r[0] || r[0] == '~' || strstr(r, ".."))
			return NULL;
		n = strlen(r);
		while (n && r[n - 1] == '/')
			n--;
		return ar_xasprintf("%.*s", (int)n, r);
	}
}

/* Paths protected because of what the host's git is set to run: the
 * core.hooksPath directory, the worktree files an installed hook names. */
struct extra {
	char **root;
	const char **why;
	size_t n, cap;
};

static void extra_add(struct extra *x, const char *root, const char *why)
{
	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->root[i], root) == 0)
			return;
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 8;
		x->root = ar_xrealloc(x->root, x->cap * sizeof(*x->root));
		x->why = ar_xrealloc(x->why, x->cap * sizeof(*x->why));
	}
	x->root[x->n] = ar_xstrdup(root);
	x->why[x->n++] = why;
}

/* rel is a file or a symlink in the tree at root (nothing followed). */
static bool file_rel(int root, const char *rel)
{
	_cleanup_free_ char *dir = ov_parent_of(rel);
	_cleanup_close_ int pfd = ov_open_dir_beneath(root, dir);
	const char *leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct stat st;

	return pfd >= 0 && fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode));
}

/* Every word of an installed hook (hooks: the workspace's hooks
 * directory, relative) that names a file of the workspace (in either
 * layer; not a directory: `eslint src` does not make src/ protected),
 * as git runs hooks from the top of the worktree: a hook framework's
 * config (pre-commit's `--config=.pre-commit-config.yaml`, lefthook.yml)
 * or a script the hook calls. Samples are skipped. */
static void hook_refs(int up, int lo, const char *hooks, struct extra *x)
{
	/* its hook names no file: `lefthook run pre-commit` */
	static const char *const lefthook[] = {
		"lefthook.yml",	       ".lefthook.yml",	 "lefthook.yaml",
		".lefthook.yaml",      "lefthook.toml",	 ".lefthook.toml",
		"lefthook.json",       ".lefthook.json", "lefthook-local.yml",
		".lefthook-local.yml", ".lefthook",
	};
	_cleanup_close_ int d = ov_open_dir_beneath(lo, hooks);
	DIR *dir = d >= 0 ? ar_dir_at(d, ".", 0) : NULL;
	struct dirent *e;

	while (dir && (e = readdir(dir))) {
		_cleanup_close_ int fd = -1;
		char buf[65536];
		size_t l = strlen(e->d_name), words = 0;
		ssize_t n;
		struct stat st;

		if (e->d_name[0] == '.' ||
		    (l > 7 && strcmp(e->d_name + l - 7, ".sample") == 0))
			continue;
		fd = ov_open_regular(d, e->d_name, &st);
		if (fd < 0 || (n = ar_read_all(fd, buf, sizeof(buf) - 1)) <= 0)
			continue;
		buf[n] = '\0';
		for (char *w = buf; *w && words < 4096;) {
			size_t k = strspn(w, "abcdefghijklmnopqrstuvwxyz"
					     "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
					     "0123456789._/@+-");
			char save = w[k];
			char *t = w;

			if (!k) {
				w++;
				continue;
			}
			w[k] = '\0';
			words++;
			while (t[0] == '.' && t[1] == '/')
				t += 2;
			l = strlen(t);
			while (l && t[l - 1] == '/')
				t[--l] = '\0';
			if (l && t[0] != '/' && t[0] != '-' &&
			    !strstr(t, "..") &&
			    strcspn(t, "abcdefghijklmnopqrstuvwxyz"
				       "ABCDEFGHIJKLMNOPQRSTUVWXYZ") < l &&
			    (file_rel(lo, t) || file_rel(up, t)))
				extra_add(x, t,
					  "a file an installed git hook names");
			if (l >= 8 && strcmp(t + l - 8, "lefthook") == 0)
				for (size_t i = 0; i < AR_ARRAY_SIZE(lefthook);
				     i++)
					extra_add(
						x, lefthook[i],
						"lefthook config (an installed git hook runs lefthook)");
			w[k] = save;
			w += k;
		}
	}
	if (dir)
		closedir(dir);
}

/* What the host's .envrc at the workspace's top (the lower layer: the
 * one the user allowed) loads at cd (protect/direnv.h): its files, and
 * .direnv for a Nix dev shell. The .envrc itself is protected by name
 * (sb_protect_rel_why). */
static void envrc_refs(int lo, struct extra *x)
{
	struct sb_direnv_loads l;

	if (sb_direnv_read_at(lo, ".envrc", &l) < 0)
		return;
	for (size_t i = 0; i < l.n; i++)
		extra_add(x, l.files[i].path, SB_DIRENV_WHY_LOADED);
	if (l.nix)
		extra_add(x, ".direnv", SB_DIRENV_WHY_CACHE);
	sb_direnv_loads_release(&l);
}

static void mark(struct ar_change *ch, struct anc *a, int up, int lo,
		 const struct extra *x)
{
	size_t n = 0;
	const char *why = sb_protect_rel_why(ch->path, &n);
	_cleanup_free_ char *lay = layout_root(
		a, up, lo, ch->path,
		ch->dir || S_ISDIR(ch->up_mode) || S_ISDIR(ch->lo_mode));
	bool gitdir = false;
	const char *in;

	if (lay && (!why || strlen(lay) <= n)) {
		ch->protect_root = ar_steal_ptr(&lay);
		why = "git directory";
		gitdir = true;
	} else if (why) {
		ch->protect_root = ar_xasprintf("%.*s", (int)n, ch->path);
		gitdir = strcmp(why, "git directory") == 0;
	}
	for (size_t i = 0; i < x->n; i++) {
		if (!ar_path_under(ch->path, x->root[i]) ||
		    (ch->protect_root &&
		     strlen(x->root[i]) >= strlen(ch->protect_root)))
			continue;
		free(ch->protect_root);
		ch->protect_root = ar_xstrdup(x->root[i]);
		why = x->why[i];
		gitdir = false;
	}
	if (!why)
		return;
	ch->protect_why = why;
	if (!gitdir)
		return;
	n = strlen(ch->protect_root);
	in = ch->path + n + (n && ch->path[n] == '/' ? 1 : 0);
	if (!*in && !ch->dir && !S_ISDIR(ch->up_mode) && n) {
		ch->protect_why = "gitdir file";
	} else if (*in && sb_protect_gitdir_why(in)) {
		ch->protect_why = sb_protect_gitdir_why(in);
	} else {
		ch->git_internal = true;
	}
}

void ov_mark_protected(int up, int lo, const char *ws, struct ar_changes *c)
{
	_cleanup_free_ char *hooks = hooks_path(lo, ws);
	struct extra x = { 0 };
	struct anc a = { 0 };

	if (hooks)
		extra_add(&x, hooks, "git hooks (core.hooksPath)");
	hook_refs(up, lo, hooks ? hooks : ".git/hooks", &x);
	envrc_refs(lo, &x);
	for (size_t i = 0; i < c->n; i++)
		mark(&c->v[i], &a, up, lo, &x);
	for (size_t i = 0; i < a.n; i++)
		free(a.dir[i]);
	for (size_t i = 0; i < x.n; i++)
		free(x.root[i]);
	free(a.dir);
	free(a.git);
	free(x.root);
	free(x.why);
}

void ov_protect_pair(struct ar_change *r, struct ar_change *d)
{
	struct ar_change *from = r->protect_why ? r : d;
	struct ar_change *to = r->protect_why ? d : r;

	if (!from->protect_why || to->protect_why)
		return;
	to->protect_why = from->protect_why;
	to->protect_root = ar_xstrdup(from->protect_root);
}

/* path (relative) at or below root ("": the workspace itself) */
static bool rel_under(const char *path, const char *root)
{
	return !root[0] || ar_path_under(path, root);
}

bool ov_named(const struct ar_change *ch, char *const *rels, size_t n)
{
	for (size_t k = 0; k < n; k++)
		if (ch->protect_root && rels[k][0] &&
		    rel_under(rels[k], ch->protect_root) &&
		    (ar_path_under(ch->path, rels[k]) ||
		     (ch->from && ar_path_under(ch->from, rels[k]))))
			return true;
	return false;
}

bool *ov_grouped(const struct ar_changes *c, const bool *sel, char *const *rels,
		 size_t n)
{
	bool *g = ar_xcalloc(c->n + 1, sizeof(bool));

	for (size_t i = 0; i < c->n; i++) {
		const struct ar_change *ch = &c->v[i];

		if (!sel[i] || !ch->git_internal)
			continue;
		g[i] = true;
		for (size_t k = 0; k < n; k++)
			if (rels[k][0] && rel_under(rels[k], ch->protect_root))
				g[i] = false;
	}
	return g;
}

void ov_print_protected_summary(FILE *out, const char *lead,
				const struct ar_changes *c, const bool *sel,
				size_t count)
{
	enum { MAX_SHOWN = 20 };
	const char *shown[MAX_SHOWN];
	size_t n = 0, more = 0;

	fprintf(out, "%s%zu protected change%s", lead, count,
		count == 1 ? "" : "s");
	for (size_t i = 0; i < c->n; i++) {
		const char *r = c->v[i].protect_root;
		bool seen = false;

		if (!sel[i] || !r || c->v[i].renamed)
			continue;
		for (size_t k = 0; k < n && !seen; k++)
			seen = strcmp(shown[k], r) == 0;
		if (seen)
			continue;
		if (n == MAX_SHOWN) {
			more++;
			continue;
		}
		shown[n++] = r;
	}
	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *q = ar_quote(shown[k][0] ? shown[k] : ".");

		fprintf(out, "%s%s", k ? ", " : " (", q);
	}
	if (more)
		fprintf(out, " and %zu more", more);
	fputs(n ? ")" : "", out);
}
