/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: reading the upper layer into a list of
 * changes (`agentrun changes`), names quoted as git quotes them, and the
 * selection of changes by path.
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

static bool ts_after(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec > b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec > b->tv_nsec);
}

/* ---- reading the upper layer ---- */

struct walk {
	struct ar_changes *c;
	size_t cap;
	const struct ar_overlay *ov;
};

static bool special_mode(mode_t m)
{
	return m && !S_ISREG(m) && !S_ISLNK(m) && !S_ISDIR(m);
}

static size_t add(struct walk *w, enum ar_change_kind k, const char *rel,
		  bool dir, mode_t up, mode_t lo, bool conflict)
{
	if (w->c->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 32;
		w->c->v = ar_xrealloc(w->c->v, w->cap * sizeof(*w->c->v));
	}
	w->c->v[w->c->n] = (struct ar_change){
		.kind = k,
		.path = ar_xstrdup(rel),
		.dir = dir,
		.conflict = conflict,
		.special = k != AR_CHANGE_DELETED && special_mode(up),
		.up_mode = up,
		.lo_mode = lo,
	};
	return w->c->n++;
}

/* The host changed this entry after the sandbox started (a ctime is
 * updated by every write, chmod, rename and link count change). */
static bool host_changed(const struct walk *w, const struct stat *sl)
{
	return w->ov->has_started && !S_ISDIR(sl->st_mode) &&
	       ts_after(&sl->st_ctim, &w->ov->started);
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static char *join(const char *rel, const char *name)
{
	return rel[0] ? ar_xasprintf("%s/%s", rel, name) : ar_xstrdup(name);
}

/* lofd/name (at rel) is gone: list it, and everything below it. Returns
 * whether any of it conflicts. */
static bool add_deleted(struct walk *w, int lofd, const char *name,
			const char *rel, const struct stat *sl)
{
	_cleanup_close_ int fd = -1;
	bool conflict = false;
	size_t i;
	DIR *d;
	struct dirent *de;

	if (!S_ISDIR(sl->st_mode)) {
		conflict = host_changed(w, sl);
		i = add(w, AR_CHANGE_DELETED, rel, false, 0, sl->st_mode,
			conflict);
		w->c->v[i].size = sl->st_size;
		return conflict;
	}
	i = add(w, AR_CHANGE_DELETED, rel, true, 0, sl->st_mode, false);
	fd = openat(lofd, name, DIR_FLAGS);
	d = fd >= 0 ? ar_dir_at(fd, ".", 0) : NULL;
	while (d && (de = readdir(d))) {
		_cleanup_free_ char *r = NULL;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(fd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		r = join(rel, de->d_name);
		conflict |= add_deleted(w, fd, de->d_name, r, &st);
	}
	if (d)
		closedir(d);
	w->c->v[i].conflict = conflict;
	return conflict;
}

static bool same_content(int a, int b)
{
	char ba[65536], bb[65536];

	for (;;) {
		ssize_t na = ar_read_all(a, ba, sizeof(ba));
		ssize_t nb = ar_read_all(b, bb, sizeof(bb));

		if (na != nb || na < 0)
			return false;
		if (na == 0)
			return true;
		if (memcmp(ba, bb, (size_t)na) != 0)
			return false;
	}
}

static bool same_entry(int upfd, int lofd, const char *name,
		       const struct stat *su, const struct stat *sl)
{
	_cleanup_close_ int fa = -1, fb = -1;
	struct stat a, b;

	/* setuid/setgid bits are never committed: not a change */
	if ((su->st_mode ^ sl->st_mode) & (S_IFMT | 01777))
		return false;
	if (special_mode(su->st_mode))
		return su->st_rdev == sl->st_rdev;
	if (su->st_size != sl->st_size)
		return false;
	if (S_ISLNK(su->st_mode)) {
		char ba[PATH_MAX], bb[PATH_MAX];
		ssize_t na = readlinkat(upfd, name, ba, sizeof(ba));
		ssize_t nb = readlinkat(lofd, name, bb, sizeof(bb));

		return na == nb && na >= 0 && memcmp(ba, bb, (size_t)na) == 0;
	}
	fa = ov_open_regular(upfd, name, &a);
	fb = ov_open_regular(lofd, name, &b);
	if (fa < 0 || fb < 0)
		return false;
	return same_content(fa, fb);
}

static int walk_dir(struct walk *w, int upfd, int lofd, const char *rel);

static int walk_entry(struct walk *w, int upfd, int lofd, const char *name,
		      const char *rel)
{
	struct stat su, sl;
	bool lower = lofd >= 0 &&
		     fstatat(lofd, name, &sl, AT_SYMLINK_NOFOLLOW) == 0;
	_cleanup_close_ int sub = -1, sublo = -1;
	char v[4];

	if (fstatat(upfd, name, &su, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (is_whiteout(&su)) {
		if (lower)
			add_deleted(w, lofd, name, rel, &sl);
		return 0;
	}
	if (!S_ISDIR(su.st_mode)) {
		if (!lower) {
			size_t i = add(w, AR_CHANGE_ADDED, rel, false,
				       su.st_mode, 0, false);

			w->c->v[i].size = su.st_size;
		} else if (S_ISDIR(sl.st_mode)) {
			bool c = add_deleted(w, lofd, name, rel, &sl);

			add(w, AR_CHANGE_ADDED, rel, false, su.st_mode, 0, c);
		} else if (!same_entry(upfd, lofd, name, &su, &sl)) {
			add(w, AR_CHANGE_MODIFIED, rel, false, su.st_mode,
			    sl.st_mode, host_changed(w, &sl));
		}
		return 0;
	}
	sub = openat(upfd, name, DIR_FLAGS);
	if (sub < 0)
		return -1; /* it was a directory a moment ago */
	if (!lower || !S_ISDIR(sl.st_mode)) {
		bool c = lower && add_deleted(w, lofd, name, rel, &sl);

		add(w, AR_CHANGE_ADDED, rel, true, su.st_mode, 0, c);
		return walk_dir(w, sub, -1, rel);
	}
	sublo = openat(lofd, name, DIR_FLAGS);
	if (sublo >= 0 &&
	    fgetxattr(sub, "user.overlay.opaque", v, sizeof(v)) == 1 &&
	    v[0] == 'y') {
		/* the lower directory's entries are gone, except those the
		 * upper one has again */
		DIR *d = ar_dir_at(sublo, ".", 0);
		struct dirent *de;

		while (d && (de = readdir(d))) {
			_cleanup_free_ char *r = NULL;
			struct stat st, sl2;

			if (!strcmp(de->d_name, ".") ||
			    !strcmp(de->d_name, "..") ||
			    fstatat(sub, de->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) == 0 ||
			    fstatat(sublo, de->d_name, &sl2,
				    AT_SYMLINK_NOFOLLOW) < 0)
				continue;
			r = join(rel, de->d_name);
			add_deleted(w, sublo, de->d_name, r, &sl2);
		}
		if (d)
			closedir(d);
	}
	if ((su.st_mode ^ sl.st_mode) & 01777)
		add(w, AR_CHANGE_MODIFIED, rel, true, su.st_mode, sl.st_mode,
		    false);
	return walk_dir(w, sub, sublo, rel);
}

static int walk_dir(struct walk *w, int upfd, int lofd, const char *rel)
{
	DIR *d = ar_dir_at(upfd, ".", 0);
	struct dirent *de;
	int r = 0;

	if (!d)
		return -1;
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *child = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = join(rel, de->d_name);
		r = walk_entry(w, upfd, lofd, de->d_name, child);
	}
	closedir(d);
	return r;
}

static int cmp_change(const void *a, const void *b)
{
	const struct ar_change *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	if (c)
		return c;
	/* a deletion before the addition that replaces it */
	return (x->kind != AR_CHANGE_DELETED) - (y->kind != AR_CHANGE_DELETED);
}

int ar_overlay_changes(const struct ar_overlay *ov, struct ar_changes *out,
		       struct ar_error *err)
{
	struct walk w = { .c = out, .ov = ov };
	_cleanup_close_ int up = -1, lo = -1;

	memset(out, 0, sizeof(*out));
	up = open(ov->upper, DIR_FLAGS);
	if (up < 0)
		return ar_error_set(err, errno, "read `%s`", ov->upper);
	lo = open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (lo < 0)
		return ar_error_set(err, errno, "workspace `%s`",
				    ov->workspace);
	if (walk_dir(&w, up, lo, "") < 0) {
		ar_changes_free(out);
		return ar_error_set(
			err, errno,
			"read `%s` (an entry changed while it was read)",
			ov->upper);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	ov_mark_protected(up, lo, ov->workspace, out);
	return 0;
}

void ar_changes_free(struct ar_changes *c)
{
	for (size_t i = 0; i < c->n; i++) {
		free(c->v[i].path);
		free(c->v[i].from);
		free(c->v[i].protect_root);
	}
	free(c->v);
	memset(c, 0, sizeof(*c));
}

/* Open rel under root as a regular file (never following a symlink). */
static int open_rel(int root, const char *rel)
{
	_cleanup_free_ char *dir = ov_parent_of(rel);
	_cleanup_close_ int pfd = ov_open_dir_beneath(root, dir);
	const char *leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	struct stat st;

	return pfd < 0 ? -1 : ov_open_regular(pfd, leaf, &st);
}

void ar_overlay_pair_renames(const struct ar_overlay *ov, struct ar_changes *c)
{
	_cleanup_close_ int up = open(ov->upper, DIR_FLAGS);
	_cleanup_close_ int lo =
		open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (up < 0 || lo < 0)
		return;
	for (size_t i = 0; i < c->n; i++) {
		struct ar_change *a = &c->v[i];

		if (a->kind != AR_CHANGE_ADDED || a->dir || a->special ||
		    !S_ISREG(a->up_mode) || a->size == 0)
			continue;
		for (size_t j = 0; j < c->n; j++) {
			struct ar_change *d = &c->v[j];
			_cleanup_close_ int fa = -1, fb = -1;

			if (d->kind != AR_CHANGE_DELETED || d->dir ||
			    d->renamed || !S_ISREG(d->lo_mode) ||
			    d->size != a->size)
				continue;
			fa = open_rel(up, a->path);
			fb = open_rel(lo, d->path);
			if (fa < 0 || fb < 0 || !same_content(fa, fb))
				continue;
			a->kind = AR_CHANGE_RENAMED;
			a->from = ar_xstrdup(d->path);
			a->lo_mode = d->lo_mode;
			a->conflict |= d->conflict;
			a->pair = j;
			d->renamed = true;
			d->pair = i;
			ov_protect_pair(a, d);
			break;
		}
	}
}

/* ---- names ---- */

char *ov_quote_prefixed(const char *prefix, const char *path)
{
	_cleanup_free_ char *raw = ar_xasprintf("%s%s", prefix, path);

	return ar_quote(raw);
}

char *ar_quote_path(const char *path)
{
	return ov_quote_prefixed("", path);
}

/* ---- path selection ---- */

char *ov_relative_arg(const struct ar_overlay *ov, const char *p)
{
	size_t n = strlen(ov->workspace);

	if (p[0] == '/') {
		if (!ar_path_under(p, ov->workspace))
			return NULL;
		p += n;
		while (*p == '/')
			p++;
	}
	while (p[0] == '.' && p[1] == '/')
		p += 2;
	_cleanup_free_ char *r = ar_xstrdup(strcmp(p, ".") ? p : "");
	size_t l = strlen(r);

	while (l > 0 && r[l - 1] == '/')
		r[--l] = '\0';
	return ar_steal_ptr(&r);
}

static bool matches(const char *path, const char *rel)
{
	return !rel[0] || ar_path_under(path, rel);
}

int ov_select_changes(const struct ar_overlay *ov, char *const *paths, size_t n,
		      const struct ar_changes *c, bool **sel,
		      struct ar_error *err)
{
	_cleanup_free_ bool *s = ar_xcalloc(c->n + 1, sizeof(bool));

	for (size_t i = 0; i < c->n && n == 0; i++)
		s[i] = true;
	for (size_t k = 0; k < n; k++) {
		_cleanup_free_ char *r = ov_relative_arg(ov, paths[k]);
		bool any = false;

		if (!r)
			return ar_error_set_plain(
				err, EINVAL,
				"`%s` is not inside the workspace `%s`",
				paths[k], ov->workspace);
		for (size_t i = 0; i < c->n; i++)
			if (matches(c->v[i].path, r))
				s[i] = any = true;
		if (!any) {
			_cleanup_free_ char *q = ar_quote_path(paths[k]);

			return ar_error_set_plain(
				err, ENOENT,
				"%s: no change of sandbox `%s` under this path",
				q, ov->name);
		}
	}
	for (size_t i = 0; i < c->n; i++)
		if (c->v[i].kind == AR_CHANGE_RENAMED &&
		    (s[i] || s[c->v[i].pair]))
			s[i] = s[c->v[i].pair] = true;
	*sel = ar_steal_ptr(&s);
	return 0;
}

char **ov_relative_args(const struct ar_overlay *ov, char *const *paths,
			size_t n)
{
	char **r = ar_xcalloc(n + 1, sizeof(char *));

	for (size_t k = 0; k < n; k++) {
		r[k] = ov_relative_arg(ov, paths[k]);
		if (!r[k]) /* refused by ov_select_changes before */
			r[k] = ar_xstrdup("/");
	}
	return r;
}

/* ---- changes ---- */

const char *ov_kind_name(mode_t m)
{
	if (S_ISFIFO(m))
		return "fifo";
	if (S_ISSOCK(m))
		return "socket";
	if (S_ISCHR(m))
		return "character device";
	if (S_ISBLK(m))
		return "block device";
	return "special file";
}

unsigned ov_git_mode(mode_t m)
{
	if (S_ISLNK(m))
		return 0120000;
	if (S_ISDIR(m))
		return 040000;
	return (m & 0111) ? 0100755 : 0100644;
}

void ov_print_change(FILE *out, const struct ar_change *ch)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);
	mode_t up = ch->up_mode, lo = ch->lo_mode;
	/* '!' (commit holds it back) wins over 'U' (the note stays) */
	char y = ch->protect_why ? '!' : ch->conflict ? 'U' : ' ';

	if (ch->kind == AR_CHANGE_RENAMED) {
		_cleanup_free_ char *f = ar_quote_path(ch->from);

		fprintf(out, "R%c %s -> %s", y, f, q);
	} else {
		fprintf(out, "%c%c %s%s", (char)ch->kind, y, q,
			ch->dir ? "/" : "");
	}
	if (ch->protect_why)
		fprintf(out, " (protected: %s)", ch->protect_why);
	if (ch->special)
		fprintf(out, " (%s: not committed)", ov_kind_name(up));
	else if (ch->kind == AR_CHANGE_MODIFIED && ((up ^ lo) & S_IFMT))
		fprintf(out, " (type %06o -> %06o)", ov_git_mode(lo),
			ov_git_mode(up));
	else if ((ch->kind == AR_CHANGE_MODIFIED ||
		  ch->kind == AR_CHANGE_RENAMED) &&
		 ((up ^ lo) & 01777))
		fprintf(out, " (mode %04o -> %04o)", lo & 01777, up & 01777);
	if (ch->kind != AR_CHANGE_DELETED && !ch->special &&
	    (up & (S_ISUID | S_ISGID)))
		fputs(" (setuid/setgid: dropped on commit)", out);
	if (ch->conflict && !ch->dir)
		fputs(" (conflict: changed on the host since the sandbox started)",
		      out);
	fputc('\n', out);
}

/* The changes of group i (git directory c->v[i].protect_root), marked
 * done; its letter: A the directory itself is new, D it is deleted, M
 * else. */
static size_t take_group(const struct ar_changes *c, const bool *grouped,
			 bool *done, size_t i, char *letter)
{
	const char *root = c->v[i].protect_root;
	size_t n = 0;

	*letter = 'M';
	for (size_t j = i; j < c->n; j++) {
		if (!grouped[j] || done[j] ||
		    strcmp(c->v[j].protect_root, root) != 0)
			continue;
		done[j] = true;
		n++;
		if (strcmp(c->v[j].path, root) == 0)
			*letter = c->v[j].kind == AR_CHANGE_ADDED ? 'A' :
				  *letter == 'M'		  ? 'D' :
								    *letter;
	}
	return n;
}

size_t ov_print_list(FILE *out, const char *prefix, const char *name,
		     const struct ar_changes *c, const bool *sel,
		     const bool *grouped)
{
	_cleanup_free_ bool *done = ar_xcalloc(c->n + 1, sizeof(bool));
	size_t prot = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct ar_change *ch = &c->v[i];
		char letter;
		size_t n;

		if (!sel[i] || ch->renamed || done[i])
			continue;
		if (ch->protect_why)
			prot++;
		if (!grouped || !grouped[i]) {
			fputs(prefix, out);
			ov_print_change(out, ch);
			continue;
		}
		n = take_group(c, grouped, done, i, &letter);
		prot += n - 1;
		{
			const char *r = ch->protect_root;
			_cleanup_free_ char *q = ar_quote_path(r[0] ? r : ".");

			fprintf(out,
				"%s%c! %s/ (%s git directory: %zu change%s to git's own data: objects, refs, index, logs...; `agentrun changes %s %s` lists them)\n",
				prefix, letter, q,
				letter == 'A' ? "new" :
				letter == 'D' ? "deleted" :
						"in the",
				n, n == 1 ? "" : "s", name, q);
		}
	}
	return prot;
}

int ar_overlay_print_changes(const struct ar_overlay *ov, char *const *paths,
			     size_t n_paths, FILE *out, struct ar_error *err)
{
	return ar_overlay_print_changes_all(ov, paths, n_paths, false, out,
					    err);
}

int ar_overlay_print_changes_all(const struct ar_overlay *ov,
				 char *const *paths, size_t n_paths, bool all,
				 FILE *out, struct ar_error *err)
{
	struct ar_changes c;
	_cleanup_free_ bool *sel = NULL, *grouped = NULL;
	_cleanup_free_ char **rels = NULL;
	size_t prot;

	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	if (ov_select_changes(ov, paths, n_paths, &c, &sel, err) < 0) {
		ar_changes_free(&c);
		return -1;
	}
	rels = ov_relative_args(ov, paths, n_paths);
	grouped = all ? NULL : ov_grouped(&c, sel, rels, n_paths);
	prot = ov_print_list(out, "", ov->name, &c, sel, grouped);
	if (prot) {
		ov_print_protected_summary(out, "! ", &c, sel, prot);
		fprintf(out,
			": marked `!`, held back by `agentrun commit` (the host may run them); `agentrun diff %s PATH` shows one, `agentrun commit %s PATH` (PATH at or below it) or `agentrun commit --include-protected %s` applies them\n",
			ov->name, ov->name, ov->name);
	}
	for (size_t k = 0; k < n_paths; k++)
		free(rels[k]);
	ar_changes_free(&c);
	return 0;
}
