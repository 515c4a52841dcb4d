/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: `agentrun diff`, a unified diff git can apply
 * (modes, renames, the files of deleted directories) and --stat.
 */
#define _GNU_SOURCE
#include "overlay.h"
#include "overlay_internal.h"
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>
#include "log.h"
#include "utils.h"

/* ---- diff ---- */

struct diffstat {
	char *path;
	size_t add, del;
	bool binary;
};

/* diff(1) -u of two open files (-1: empty), its output in *out. */
static int run_diff(int a, int b, const char *la, const char *lb, char **out,
		    size_t *len, struct ar_error *err)
{
	_cleanup_free_ char *pa = a >= 0 ? ar_xasprintf("/proc/self/fd/%d", a) :
					   ar_xstrdup("/dev/null");
	_cleanup_free_ char *pb = b >= 0 ? ar_xasprintf("/proc/self/fd/%d", b) :
					   ar_xstrdup("/dev/null");
	char *argv[] = { "diff",     "-u", "--label", (char *)la, "--label",
			 (char *)lb, pa,   pb,	      NULL };
	extern char **environ;
	posix_spawn_file_actions_t fa;
	int p[2], st, r;
	pid_t pid;
	size_t cap = 0;
	char buf[65536];
	ssize_t n;

	*out = NULL;
	*len = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return ar_error_set(err, errno, "pipe");
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[1], 1);
	/* the child reads a and b through /proc/self/fd: keep them open */
	if (a >= 0)
		posix_spawn_file_actions_adddup2(&fa, a, a);
	if (b >= 0)
		posix_spawn_file_actions_adddup2(&fa, b, b);
	r = posix_spawnp(&pid, "diff", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(p[1]);
	if (r) {
		close(p[0]);
		return ar_error_set(err, r, "run diff(1)");
	}
	while ((n = read(p[0], buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (*len + (size_t)n + 1 > cap) {
			cap = (*len + (size_t)n + 1) * 2;
			*out = ar_xrealloc(*out, cap);
		}
		memcpy(*out + *len, buf, (size_t)n);
		*len += (size_t)n;
	}
	close(p[0]);
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return ar_error_set(err, errno, "wait for diff");
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return ar_error_set_plain(err, EIO, "diff(1) failed on `%s`",
					  lb);
	if (*out)
		(*out)[*len] = '\0';
	return 0;
}

/* The body of a symlink's diff: its target, no final newline. */
static int link_body(int dirfd, const char *name, char **out)
{
	char t[PATH_MAX];
	ssize_t n = readlinkat(dirfd, name, t, sizeof(t) - 1);

	if (n < 0)
		return -1;
	t[n] = '\0';
	*out = ar_xstrdup(t);
	return 0;
}

/* One side of a file diff: an open regular file or a symlink target. */
struct side {
	mode_t mode; /* 0: absent */
	int fd;
	char *link;
};

static void side_release(struct side *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->link);
	s->fd = -1;
	s->link = NULL;
}

static int side_open(int root, const char *rel, mode_t mode, struct side *s)
{
	_cleanup_close_ int pfd = -1;
	const char *leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	_cleanup_free_ char *dir = ov_parent_of(rel);
	struct stat st;

	s->mode = mode;
	s->fd = -1;
	s->link = NULL;
	if (!mode)
		return 0;
	pfd = ov_open_dir_beneath(root, dir);
	if (pfd < 0)
		return -1;
	if (S_ISLNK(mode))
		return link_body(pfd, leaf, &s->link);
	s->fd = ov_open_regular(pfd, leaf, &st);
	if (s->fd >= 0)
		s->mode = st.st_mode;
	return s->fd < 0 ? -1 : 0;
}

static void count_lines(const char *body, struct diffstat *ds)
{
	const char *l = body;
	int header = 2;

	if (!body)
		return;
	if (strncmp(body, "Binary files ", 13) == 0) {
		ds->binary = true;
		return;
	}
	while (*l) {
		const char *nl = strchr(l, '\n');

		if (header > 0 &&
		    (strncmp(l, "--- ", 4) == 0 || strncmp(l, "+++ ", 4) == 0))
			header--;
		else if (l[0] == '+')
			ds->add++;
		else if (l[0] == '-')
			ds->del++;
		if (!nl)
			break;
		l = nl + 1;
	}
}

static char *link_diff(const char *la, const char *lb, const char *a,
		       const char *b)
{
	return ar_xasprintf("--- %s\n+++ %s\n@@ -%s +%s @@\n%s%s%s%s%s%s", la,
			    lb, a ? "1" : "0,0", b ? "1" : "0,0", a ? "-" : "",
			    a ? a : "",
			    a ? "\n\\ No newline at end of file\n" : "",
			    b ? "+" : "", b ? b : "",
			    b ? "\n\\ No newline at end of file\n" : "");
}

/* The diff of one path between two sides (same type or one absent). */
static int diff_sides(const char *path, struct side *a, struct side *b,
		      FILE *out, struct diffstat *ds, struct ar_error *err)
{
	_cleanup_free_ char *qa = ov_quote_prefixed("a/", path);
	_cleanup_free_ char *qb = ov_quote_prefixed("b/", path);
	_cleanup_free_ char *body = NULL;
	const char *la = a->mode ? qa : "/dev/null";
	const char *lb = b->mode ? qb : "/dev/null";
	size_t len = 0;

	if (out) {
		fprintf(out, "diff --git %s %s\n", qa, qb);
		if (!a->mode)
			fprintf(out, "new file mode %06o\n",
				ov_git_mode(b->mode));
		else if (!b->mode)
			fprintf(out, "deleted file mode %06o\n",
				ov_git_mode(a->mode));
		else if (ov_git_mode(a->mode) != ov_git_mode(b->mode))
			fprintf(out, "old mode %06o\nnew mode %06o\n",
				ov_git_mode(a->mode), ov_git_mode(b->mode));
	}
	if (S_ISLNK(a->mode) || S_ISLNK(b->mode)) {
		if (!a->link || !b->link || strcmp(a->link, b->link))
			body = link_diff(la, lb, a->link, b->link);
	} else if (run_diff(a->fd, b->fd, la, lb, &body, &len, err) < 0) {
		return -1;
	}
	if (body && strncmp(body, "Binary files ", 13) == 0) {
		free(body);
		body = ar_xasprintf("Binary files %s and %s differ\n", la, lb);
	}
	count_lines(body, ds);
	if (out && body)
		fputs(body, out);
	return 0;
}

/* An exact rename, as git writes it (the content is the same). */
static int diff_rename(const struct ar_change *ch, FILE *out)
{
	_cleanup_free_ char *qa = ov_quote_prefixed("a/", ch->from);
	_cleanup_free_ char *qb = ov_quote_prefixed("b/", ch->path);
	_cleanup_free_ char *f = ar_quote_path(ch->from);
	_cleanup_free_ char *t = ar_quote_path(ch->path);

	if (!out)
		return 0;
	fprintf(out, "diff --git %s %s\n", qa, qb);
	if (ov_git_mode(ch->lo_mode) != ov_git_mode(ch->up_mode))
		fprintf(out, "old mode %06o\nnew mode %06o\n",
			ov_git_mode(ch->lo_mode), ov_git_mode(ch->up_mode));
	fprintf(out, "similarity index 100%%\nrename from %s\nrename to %s\n",
		f, t);
	return 0;
}

static int diff_change(int up, int lo, const struct ar_change *ch, FILE *out,
		       struct diffstat *ds, struct ar_error *err)
{
	struct side a = { 0, -1, NULL }, b = { 0, -1, NULL };
	mode_t am = ch->kind == AR_CHANGE_ADDED ? 0 : ch->lo_mode;
	mode_t bm = ch->kind == AR_CHANGE_DELETED ? 0 : ch->up_mode;
	int r = 0;

	if (ch->dir || ch->special || ch->renamed)
		return 0;
	if (ch->kind == AR_CHANGE_RENAMED)
		return diff_rename(ch, out);
	if (side_open(lo, ch->path, am, &a) < 0 ||
	    side_open(up, ch->path, bm, &b) < 0) {
		r = ar_error_set(err, errno, "diff: read `%s`", ch->path);
	} else if (am && bm && ((am ^ bm) & S_IFMT)) {
		/* a type change is a deletion and an addition, as git has it */
		struct side none = { 0, -1, NULL };

		r = diff_sides(ch->path, &a, &none, out, ds, err);
		if (r == 0)
			r = diff_sides(ch->path, &none, &b, out, ds, err);
	} else {
		r = diff_sides(ch->path, &a, &b, out, ds, err);
	}
	side_release(&a);
	side_release(&b);
	return r;
}

static void print_stat(FILE *out, struct diffstat *v, size_t n)
{
	size_t width = 0, most = 0, adds = 0, dels = 0, files = 0;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(v[i].path);

		width = l > width ? l : width;
		most = v[i].add + v[i].del > most ? v[i].add + v[i].del : most;
	}
	for (size_t i = 0; i < n; i++) {
		size_t a = v[i].add, d = v[i].del;

		files++;
		adds += a;
		dels += d;
		if (v[i].binary) {
			fprintf(out, " %-*s | Bin\n", (int)width, v[i].path);
			continue;
		}
		if (most > 50) { /* scale the bar as git does */
			a = a ? (a * 50 + most - 1) / most : 0;
			d = d ? (d * 50 + most - 1) / most : 0;
		}
		fprintf(out, " %-*s | %5zu%s", (int)width, v[i].path,
			v[i].add + v[i].del, a + d ? " " : "");
		for (size_t k = 0; k < a; k++)
			fputc('+', out);
		for (size_t k = 0; k < d; k++)
			fputc('-', out);
		fputc('\n', out);
	}
	fprintf(out, " %zu file%s changed", files, files == 1 ? "" : "s");
	if (adds || !dels)
		fprintf(out, ", %zu insertion%s(+)", adds,
			adds == 1 ? "" : "s");
	if (dels || !adds)
		fprintf(out, ", %zu deletion%s(-)", dels, dels == 1 ? "" : "s");
	fputc('\n', out);
}

/* Git's own data of git directories that no PATH names: one comment
 * line per directory instead of their diffs (git apply skips comment
 * lines between patches). */
static void diff_groups(const struct ar_overlay *ov, const struct ar_changes *c,
			const bool *grouped, FILE *out)
{
	_cleanup_free_ bool *done = ar_xcalloc(c->n + 1, sizeof(bool));

	for (size_t i = 0; grouped && i < c->n; i++) {
		const char *r = c->v[i].protect_root;
		_cleanup_free_ char *q = NULL;
		size_t n = 0;

		if (!grouped[i] || done[i])
			continue;
		for (size_t j = i; j < c->n; j++)
			if (grouped[j] && !done[j] &&
			    strcmp(c->v[j].protect_root, r) == 0)
				done[j] = true, n++;
		q = ar_quote_path(r[0] ? r : ".");
		fprintf(out,
			"# agentrun: protected: %s/ (git directory): %zu change%s to git's own data (objects, refs, index, logs...) not shown; `agentrun diff %s %s` shows them\n",
			q, n, n == 1 ? "" : "s", ov->name, q);
	}
}

int ov_diff_selected(const struct ar_overlay *ov, const struct ar_changes *c,
		     const bool *sel, const bool *grouped, bool stat, FILE *out,
		     struct ar_error *err)
{
	size_t prot = 0;
	_cleanup_close_ int up = open(ov->upper, DIR_FLAGS);
	_cleanup_close_ int lo =
		open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct diffstat *ds = ar_xcalloc(c->n + 1, sizeof(*ds));
	size_t nds = 0;
	int r = 0;

	if (up < 0 || lo < 0)
		r = ar_error_set(err, errno, "sandbox `%s`: open the layers",
				 ov->name);
	for (size_t i = 0; i < c->n && r == 0; i++) {
		const struct ar_change *ch = &c->v[i];

		if (sel[i] && ch->protect_why && !ch->renamed)
			prot++;
		if (!sel[i] || (ch->dir && !ch->special) ||
		    (grouped && grouped[i]))
			continue;
		if (ch->special) {
			_cleanup_free_ char *q = ar_quote_path(ch->path);

			if (!stat)
				fprintf(out,
					"Only in sandbox: %s (%s: not committed)\n",
					q, ov_kind_name(ch->up_mode));
			continue;
		}
		if (ch->renamed)
			continue;
		if (ch->kind == AR_CHANGE_RENAMED) {
			_cleanup_free_ char *f = ar_quote_path(ch->from);
			_cleanup_free_ char *t = ar_quote_path(ch->path);

			ds[nds].path = ar_xasprintf("%s%s => %s",
						    ch->protect_why ? "! " : "",
						    f, t);
		} else {
			_cleanup_free_ char *q = ar_quote_path(ch->path);

			ds[nds].path = ar_xasprintf(
				"%s%s", ch->protect_why ? "! " : "", q);
		}
		if (ch->protect_why && !stat)
			fprintf(out,
				"# agentrun: protected: %s (%s): held back by `agentrun commit` unless named\n",
				ds[nds].path + 2, ch->protect_why);
		r = diff_change(up, lo, ch, stat ? NULL : out, &ds[nds], err);
		nds++;
	}
	if (r == 0 && stat && nds)
		print_stat(out, ds, nds);
	if (r == 0 && !stat)
		diff_groups(ov, c, grouped, out);
	if (r == 0 && prot) {
		ov_print_protected_summary(out, stat ? "! " : "# agentrun: ", c,
					   sel, prot);
		fputs(": held back by `agentrun commit` (the host may run them)\n",
		      out);
	}
	for (size_t i = 0; i < nds; i++)
		free(ds[i].path);
	free(ds);
	return r;
}

int ar_overlay_diff(const struct ar_overlay *ov, char *const *paths,
		    size_t n_paths, bool stat, FILE *out, struct ar_error *err)
{
	_cleanup_free_ bool *sel = NULL;
	struct ar_changes c;
	int r;

	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	r = ov_select_changes(ov, paths, n_paths, &c, &sel, err);
	if (r == 0) {
		char **rels = ov_relative_args(ov, paths, n_paths);
		_cleanup_free_ bool *grouped =
			ov_grouped(&c, sel, rels, n_paths);

		r = ov_diff_selected(ov, &c, sel, grouped, stat, out, err);
		for (size_t k = 0; k < n_paths; k++)
			free(rels[k]);
		free(rels);
	}
	ar_changes_free(&c);
	fflush(out);
	return r;
}
