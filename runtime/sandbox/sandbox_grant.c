/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's checks of a live --ro/--rw grant (sandbox_grant.h): the
 * same refusals as a start-time --ro/--rw (sandbox_plan.c user_bind),
 * and the protections a --rw tree keeps. */
#define _GNU_SOURCE
#include "sandbox_grant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "protect/home_secrets.h"
#include "protect/protect.h"
#include "sandbox_kernfs.h"
#include "utils.h"

struct prot_list {
	char **v;
	size_t n;
	const char *under;
};

/* flag 'r' (read-only) or 'p' (pinned) + path, when it exists and is
 * not a link (a mount cannot hold one); a read-only one wins */
static void prot_add(struct prot_list *l, char flag, const char *p)
{
	struct stat st;

	if (!ar_path_under(p, l->under) || strcmp(p, l->under) == 0 ||
	    lstat(p, &st) < 0 || S_ISLNK(st.st_mode))
		return;
	for (size_t i = 0; i < l->n; i++) {
		if (strcmp(l->v[i] + 1, p) == 0) {
			if (flag == 'r')
				l->v[i][0] = 'r';
			return;
		}
	}
	l->v = ar_xrealloc(l->v, (l->n + 2) * sizeof(char *));
	l->v[l->n++] = ar_xasprintf("%c%s", flag, p);
	l->v[l->n] = NULL;
}

static void prot_absent(struct prot_list *l, const char *p)
{
	l->v = ar_xrealloc(l->v, (l->n + 2) * sizeof(char *));
	l->v[l->n++] = ar_xasprintf("a%s", p);
	l->v[l->n] = NULL;
}

/* A read-only path and every directory between the grant and it,
 * pinned: renaming one would carry the read-only mount away and free
 * its name (mv .config x; mkdir -p .config/systemd) */
static void prot_add_ro(struct prot_list *l, const char *p)
{
	_cleanup_free_ char *d = ar_xstrdup(p);
	char *slash;

	prot_add(l, 'r', p);
	while ((slash = strrchr(d, '/')) && slash > d) {
		*slash = '\0';
		if (strcmp(d, l->under) == 0 || !ar_path_under(d, l->under))
			break;
		prot_add(l, 'p', d);
	}
}

static int by_name(const void *a, const void *b)
{
	/* by path, a parent first */
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

static bool home_each(const char *path, const char *why, void *data)
{
	struct prot_list *l = data;
	struct stat st;

	(void)why;
	if (lstat(path, &st) < 0 && ar_path_under(path, l->under) &&
	    strcmp(path, l->under) != 0)
		prot_absent(l, path); /* ~/.zshrc not there: said */
	else
		prot_add_ro(l, path);
	return true;
}

int sb_grant_check(const char *path, bool rw, bool force, char ***protect,
		   void *data, struct ar_error *err)
{
	const struct sb_grant_ctx *x = data;
	const char *what = rw ? "--rw" : "--ro";
	struct prot_list l = { .under = path };
	struct sb_protect pp = { 0 };

	*protect = NULL;
	if (sb_kernfs_refuse(what, path, path, err) < 0)
		return -1;
	if (x->workspace && (ar_path_under(path, x->workspace) ||
			     ar_path_under(x->workspace, path)))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox: %s `%s`: %s the workspace `%s`, which the sandbox has with its own protections: refused (grant a directory beside it)",
			what, path,
			ar_path_under(path, x->workspace) ? "is inside" :
							    "holds",
			x->workspace);
	if (!force && ar_sandbox_path_is_secret(x->home, path))
		return ar_error_set_plain(
			err, EPERM,
			"sandbox: %s `%s`: refusing to share a secret store (on the never-share list, see docs/sandbox.md; --force overrides)",
			what, path);
	for (const char *const *s = ar_sandbox_home_secrets; !force && *s;
	     s++) {
		_cleanup_free_ char *p = ar_xasprintf("%s/%s", x->home, *s);
		struct stat st;

		if (ar_path_under(p, path) && lstat(p, &st) == 0)
			return ar_error_set_plain(
				err, EPERM,
				"sandbox: %s `%s`: it holds `%s`, on the never-share list (docs/sandbox.md): refused; grant a directory without it, or --force",
				what, path, p);
	}
	if (!rw)
		return 0;
	/* the protected paths of a --rw tree, as its workspace's */
	if (sb_protect_plan(&pp, path, x->home, NULL, 0, err) < 0)
		return ar_error_wrap(err, "sandbox: --rw `%s`", path);
	for (size_t i = 0; i < pp.n; i++) {
		if (pp.v[i].kind == SB_PROT_RO)
			prot_add_ro(&l, pp.v[i].path);
		else if (pp.v[i].kind == SB_PROT_PIN)
			prot_add(&l, 'p', pp.v[i].path);
		else if (ar_path_under(pp.v[i].path, path))
			/* missing: no placeholder here, said in the reply */
			prot_absent(&l, pp.v[i].path);
	}
	sb_protect_release(&pp);
	sb_protect_home_each(x->home, home_each, &l);
	/* a parent before what is below it (a bind covers earlier ones) */
	if (l.n)
		qsort(l.v, l.n, sizeof(char *), by_name);
	*protect = l.v;
	return 0;
}
