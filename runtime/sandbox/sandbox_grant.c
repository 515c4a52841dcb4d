/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The sandbox's checks of a live --ro/--rw grant (sandbox_grant.h): the
 * same refusals as a start-time --ro/--rw (sandbox_plan.c user_bind),
 * and the protections a --rw tree keeps: its protected paths read-only,
 * a placeholder (placeholder.h, shared with every sandbox) for each
 * missing one, and the end-of-run walk from the time of the grant. */
#define _GNU_SOURCE
#include "sandbox_grant.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "protect/home_secrets.h"
#include "protect/protect.h"
#include "sandbox_kernfs.h"
#include "utils.h"

struct prot_list {
	char **v;
	size_t n;
	const char *under;
	/* where a placeholder is taken for a missing protected path */
	struct sb_placeholders *ph;
	int r;
	struct ar_error *err;
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
			if (flag != 'p')
				l->v[i][0] = flag;
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

/* A read-only path ('r', or 'h' a placeholder) and every directory
 * between the grant and it, pinned: renaming one would carry the
 * read-only mount away and free its name (mv .config x; mkdir -p
 * .config/systemd) */
static void prot_add_flag(struct prot_list *l, char flag, const char *p)
{
	_cleanup_free_ char *d = ar_xstrdup(p);
	char *slash;

	prot_add(l, flag, p);
	while ((slash = strrchr(d, '/')) && slash > d) {
		*slash = '\0';
		if (strcmp(d, l->under) == 0 || !ar_path_under(d, l->under))
			break;
		prot_add(l, 'p', d);
	}
}

static void prot_add_ro(struct prot_list *l, const char *p)
{
	prot_add_flag(l, 'r', p);
}

/* A missing protected path: a placeholder taken there (made and marked,
 * or joined: another sandbox's), held read-only like a start-time one;
 * watched when it cannot be made (its parent missing). */
static void prot_placeholder(struct prot_list *l, const char *p)
{
	size_t before = l->ph->n;
	struct stat st;

	if (l->r < 0)
		return;
	l->r = sb_placeholder_take(l->ph, p, true, false, l->err);
	if (l->r == 0 && l->ph->n > before && lstat(p, &st) == 0 &&
	    S_ISDIR(st.st_mode))
		prot_add_flag(l, 'h', p);
	else if (l->r == 0)
		prot_absent(l, p);
}

static int by_name(const void *a, const void *b)
{
	/* by path, a parent first */
	return strcmp(*(char *const *)a + 1, *(char *const *)b + 1);
}

static bool home_each(const char *path, const char *why, void *data)
{
	struct prot_list *l = data;
	_cleanup_free_ char *parent = ar_xstrdup(path);
	struct stat st;

	(void)why;
	*strrchr(parent, '/') = '\0';
	if (lstat(path, &st) == 0 || !ar_path_under(path, l->under) ||
	    strcmp(path, l->under) == 0)
		prot_add_ro(l, path);
	else if (lstat(parent, &st) == 0 && S_ISDIR(st.st_mode))
		prot_placeholder(l, path); /* as --workspace ~ has them */
	else
		prot_absent(l, path); /* ~/.config/systemd, no ~/.config */
	return l->r == 0;
}

int sb_grant_check(const char *path, bool rw, bool force, char ***protect,
		   void *data, struct ar_error *err)
{
	struct sb_grant_ctx *x = data;
	const char *what = rw ? "--rw" : "--ro";
	struct prot_list l = { .under = path, .err = err };
	struct sb_protect pp = { 0 };
	struct sb_grant_rw *g = &x->pending;

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
	/* the walk at the end looks at what changed from now on */
	sb_placeholders_release(&g->ph);
	free(g->d.dir);
	*g = (struct sb_grant_rw){ .ph = SB_PLACEHOLDERS_INIT };
	g->d.dir = ar_xstrdup(path);
	clock_gettime(CLOCK_REALTIME_COARSE, &g->d.since);
	l.ph = &g->ph;
	/* the protected paths of a --rw tree, as its workspace's */
	if (sb_protect_plan(&pp, path, x->home, NULL, 0, err) < 0)
		return ar_error_wrap(err, "sandbox: --rw `%s`", path);
	for (size_t i = 0; i < pp.n && l.r == 0; i++) {
		if (pp.v[i].kind == SB_PROT_RO)
			prot_add_ro(&l, pp.v[i].path);
		else if (pp.v[i].kind == SB_PROT_PIN)
			prot_add(&l, 'p', pp.v[i].path);
		else if (pp.v[i].kind == SB_PROT_ABSENT &&
			 ar_path_under(pp.v[i].path, path))
			/* missing: a placeholder, as at the start */
			prot_placeholder(&l, pp.v[i].path);
		else if (ar_path_under(pp.v[i].path, path))
			/* watched (a placeholder would break the host's
			 * tools): named at revoke and at the end if made */
			prot_absent(&l, pp.v[i].path);
	}
	sb_protect_release(&pp);
	if (l.r == 0)
		sb_protect_home_each(x->home, home_each, &l);
	if (l.r < 0) {
		for (size_t i = 0; i < l.n; i++)
			free(l.v[i]);
		free(l.v);
		sb_placeholders_release(&g->ph);
		return ar_error_wrap(err, "sandbox: --rw `%s`", path);
	}
	/* a parent before what is below it (a bind covers earlier ones) */
	if (l.n)
		qsort(l.v, l.n, sizeof(char *), by_name);
	*protect = l.v;
	/* on disk before the agent can write there: a run killed with its
	 * keeper is checked at the next start, this grant included */
	if (x->rec)
		sb_run_record_grant(x->rec, g->d.dir, &g->d.since);
	return 0;
}

void sb_grant_init(struct sb_grant_ctx *x, const char *workspace,
		   const char *home, struct sb_placeholders *keeper)
{
	*x = (struct sb_grant_ctx){ .workspace = workspace,
				    .home = home,
				    .keeper = keeper,
				    .pending = { .ph = SB_PLACEHOLDERS_INIT } };
	pthread_mutex_init(&x->lock, NULL);
}

void sb_grant_done(const char *path, bool rw, enum ctl_path_event ev,
		   void *data)
{
	struct sb_grant_ctx *x = data;
	struct sb_grant_rw *g = &x->pending;

	if (!rw)
		return;
	switch (ev) {
	case CTL_PATH_GRANTED:
		if (!g->d.dir || strcmp(g->d.dir, path) != 0)
			return;
		pthread_mutex_lock(&x->lock);
		x->rw = ar_xrealloc(x->rw, (x->n_rw + 1) * sizeof(*x->rw));
		g->live = true;
		x->rw[x->n_rw++] = *g;
		*g = (struct sb_grant_rw){ .ph = SB_PLACEHOLDERS_INIT };
		g = &x->rw[x->n_rw - 1];
		if (x->keeper)
			sb_placeholders_keep_grant(x->keeper, g->d.dir,
						   &g->d.since, &g->ph);
		pthread_mutex_unlock(&x->lock);
		return;
	case CTL_PATH_FAILED:
		sb_placeholders_release(&g->ph);
		free(g->d.dir);
		*g = (struct sb_grant_rw){ .ph = SB_PLACEHOLDERS_INIT };
		return;
	case CTL_PATH_REVOKED:
		pthread_mutex_lock(&x->lock);
		for (size_t i = 0; i < x->n_rw; i++) {
			g = &x->rw[i];
			if (!g->live || strcmp(g->d.dir, path) != 0)
				continue;
			if (x->keeper)
				sb_placeholders_keep_revoke(x->keeper,
							    g->d.dir);
			/* detached: the last one out removes each */
			sb_placeholders_release(&g->ph);
			g->live = false;
		}
		pthread_mutex_unlock(&x->lock);
		return;
	}
}

void sb_grant_end(struct sb_grant_ctx *x, bool ended)
{
	pthread_mutex_lock(&x->lock);
	for (size_t i = 0; i < x->n_rw; i++) {
		if (!x->rw[i].live)
			continue;
		if (ended)
			sb_placeholders_release(&x->rw[i].ph);
		else
			sb_placeholders_forget(&x->rw[i].ph);
		x->rw[i].live = false;
	}
	pthread_mutex_unlock(&x->lock);
}

struct sb_hostexec_dir *sb_grant_dirs(struct sb_grant_ctx *x, size_t *n)
{
	struct sb_hostexec_dir *v;

	pthread_mutex_lock(&x->lock);
	v = ar_xcalloc(x->n_rw + 1, sizeof(*v));
	for (size_t i = 0; i < x->n_rw; i++)
		v[i] = (struct sb_hostexec_dir){ ar_xstrdup(x->rw[i].d.dir),
						 x->rw[i].d.since };
	*n = x->n_rw;
	pthread_mutex_unlock(&x->lock);
	return v;
}

void sb_grant_dirs_free(struct sb_hostexec_dir *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i].dir);
	free(v);
}

void sb_grant_release(struct sb_grant_ctx *x)
{
	sb_grant_end(x, true);
	for (size_t i = 0; i < x->n_rw; i++)
		free(x->rw[i].d.dir);
	free(x->rw);
	sb_placeholders_release(&x->pending.ph);
	free(x->pending.d.dir);
	pthread_mutex_destroy(&x->lock);
	*x = (struct sb_grant_ctx){ 0 };
}
