/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: reading the upper layer of an overlayfs
 * (mounted with userxattr in the sandbox's user namespace) and applying it
 * to the real workspace. See overlay.h.
 *
 * Upper layer format (Documentation/filesystems/overlayfs.rst): a
 * whiteout (deleted entry) is a character device 0/0; a directory that
 * replaced a lower one has the xattr user.overlay.opaque = "y"; anything
 * else is a new or copied-up entry. Copy-up also happens for a file that
 * was only opened for writing, so regular files and symlinks are compared
 * with the lower layer before being reported as modified.
 */
#define _GNU_SOURCE
#include "overlay.h"

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "utils.h"

/* ---- the sandbox directory ---- */

char *ar_overlay_base_dir(void)
{
	const char *x = getenv("XDG_DATA_HOME");
	const char *home = getenv("HOME");

	if (x && x[0] == '/')
		return ar_xasprintf("%s/agentrun/sandboxes", x);
	return ar_xasprintf("%s/.local/share/agentrun/sandboxes",
			    home && *home ? home : "/tmp");
}

static bool valid_name(const char *n)
{
	if (!*n || strlen(n) > 64 || n[0] == '.')
		return false;
	for (; *n; n++)
		if (!((*n >= 'a' && *n <= 'z') || (*n >= 'A' && *n <= 'Z') ||
		      (*n >= '0' && *n <= '9') || *n == '-' || *n == '_' ||
		      *n == '.'))
			return false;
	return true;
}

static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 && (path[n] == '/' || !path[n]);
}

static void fill(struct ar_overlay *ov, const char *name, const char *dir)
{
	ov->name = ar_xstrdup(name);
	ov->dir = ar_xstrdup(dir);
	ov->upper = ar_xasprintf("%s/upper", dir);
	ov->work = ar_xasprintf("%s/work", dir);
}

int ar_overlay_create(const char *name, const char *workspace,
		      struct ar_overlay *out, struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_free_ char *dir = NULL, *meta = NULL;
	_cleanup_close_ int dfd = -1;

	memset(out, 0, sizeof(*out));
	if (!valid_name(name))
		return ar_error_set_plain(
			err, EINVAL,
			"sandbox name `%s`: use letters, digits, '-', '_' and '.' (at most 64)",
			name);
	if (ar_mkdir_p(base, 0700) < 0)
		return ar_error_set(err, errno, "create `%s`", base);
	dir = ar_xasprintf("%s/%s", base, name);
	if (under(dir, workspace))
		return ar_error_set_plain(
			err, EINVAL,
			"--overlay: the sandbox directory `%s` would be inside the workspace `%s`; set XDG_DATA_HOME elsewhere",
			dir, workspace);
	if (mkdir(dir, 0700) < 0)
		return ar_error_set(
			err, errno, "--overlay: sandbox `%s` (%s)", name,
			errno == EEXIST ?
				"exists: commit or discard it, or pick another --name" :
				dir);
	fill(out, name, dir);
	out->workspace = ar_xstrdup(workspace);
	if (mkdir(out->upper, 0755) < 0 || mkdir(out->work, 0700) < 0)
		return ar_error_set(err, errno, "create `%s/{upper,work}`",
				    dir);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	meta = ar_xasprintf("%s\n", workspace);
	if (dfd < 0 || ar_write_file_atomic_at(dfd, "workspace", meta,
					       strlen(meta), 0600, err) < 0)
		return ar_error_wrap(err, "sandbox `%s`", name);
	return 0;
}

int ar_overlay_open(const char *name, struct ar_overlay *out,
		    struct ar_error *err)
{
	_cleanup_free_ char *base = ar_overlay_base_dir();
	_cleanup_free_ char *dir = NULL, *meta = NULL;
	_cleanup_close_ int dfd = -1;
	size_t len;

	memset(out, 0, sizeof(*out));
	if (!valid_name(name))
		return ar_error_set_plain(err, EINVAL, "sandbox name `%s`",
					  name);
	dir = ar_xasprintf("%s/%s", base, name);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return ar_error_set(err, errno, "sandbox `%s` (%s)", name, dir);
	if (ar_read_file_at(dfd, "workspace", PATH_MAX + 1, &meta, &len, err) <
	    0)
		return ar_error_wrap(err, "sandbox `%s`", name);
	meta[strcspn(meta, "\n")] = '\0';
	if (meta[0] != '/')
		return ar_error_set_plain(
			err, EINVAL, "sandbox `%s`: bad workspace file", name);
	fill(out, name, dir);
	out->workspace = ar_steal_ptr(&meta);
	return 0;
}

void ar_overlay_release(struct ar_overlay *ov)
{
	free(ov->name);
	free(ov->dir);
	free(ov->workspace);
	free(ov->upper);
	free(ov->work);
	memset(ov, 0, sizeof(*ov));
}

/* ---- reading the upper layer ---- */

struct walk {
	struct ar_changes *c;
	size_t cap;
	const struct ar_overlay *ov;
};

static void add(struct walk *w, enum ar_change_kind k, const char *rel,
		bool dir)
{
	if (w->c->n == w->cap) {
		w->cap = w->cap ? w->cap * 2 : 32;
		w->c->v = ar_xrealloc(w->c->v, w->cap * sizeof(*w->c->v));
	}
	w->c->v[w->c->n++] = (struct ar_change){ k, ar_xstrdup(rel), dir };
}

static bool is_whiteout(const struct stat *st)
{
	return S_ISCHR(st->st_mode) && st->st_rdev == makedev(0, 0);
}

static bool is_opaque(const char *path)
{
	char v[4];
	ssize_t n = lgetxattr(path, "user.overlay.opaque", v, sizeof(v));

	return n == 1 && v[0] == 'y';
}

static bool same_file(const char *a, const char *b, const struct stat *sa,
		      const struct stat *sb)
{
	_cleanup_close_ int fa = -1, fb = -1;
	char ba[65536], bb[65536];

	if ((sa->st_mode & 07777) != (sb->st_mode & 07777) ||
	    sa->st_size != sb->st_size)
		return false;
	if (S_ISLNK(sa->st_mode)) {
		ssize_t na = readlink(a, ba, sizeof(ba));
		ssize_t nb = readlink(b, bb, sizeof(bb));

		return na == nb && na >= 0 && memcmp(ba, bb, (size_t)na) == 0;
	}
	fa = open(a, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	fb = open(b, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fa < 0 || fb < 0)
		return false;
	for (;;) {
		ssize_t na = ar_read_all(fa, ba, sizeof(ba));
		ssize_t nb = ar_read_all(fb, bb, sizeof(bb));

		if (na != nb || na < 0)
			return false;
		if (na == 0)
			return true;
		if (memcmp(ba, bb, (size_t)na) != 0)
			return false;
	}
}

static int walk_dir(struct walk *w, const char *rel, bool lower_present);

/* Everything below a new directory is new. */
static int walk_entry(struct walk *w, const char *rel, bool lower_present)
{
	_cleanup_free_ char *up = ar_xasprintf("%s/%s", w->ov->upper, rel);
	_cleanup_free_ char *lo = ar_xasprintf("%s/%s", w->ov->workspace, rel);
	struct stat su, sl;
	bool lower = lower_present && lstat(lo, &sl) == 0;

	if (lstat(up, &su) < 0)
		return 0;
	if (is_whiteout(&su)) {
		if (lower)
			add(w, AR_CHANGE_DELETED, rel, S_ISDIR(sl.st_mode));
		return 0;
	}
	if (S_ISDIR(su.st_mode)) {
		if (!lower || !S_ISDIR(sl.st_mode)) {
			if (lower)
				add(w, AR_CHANGE_DELETED, rel, false);
			add(w, AR_CHANGE_ADDED, rel, true);
			return walk_dir(w, rel, false);
		}
		if (is_opaque(up)) {
			/* the lower directory's entries are gone, except
			 * those the upper one has again */
			_cleanup_close_ int fd =
				open(lo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
			struct dirent *de;

			if (d)
				fd = -1;
			while (d && (de = readdir(d))) {
				_cleanup_free_ char *r = NULL, *u = NULL;
				struct stat st, sl2;

				if (!strcmp(de->d_name, ".") ||
				    !strcmp(de->d_name, ".."))
					continue;
				r = ar_xasprintf("%s/%s", rel, de->d_name);
				u = ar_xasprintf("%s/%s", w->ov->upper, r);
				if (lstat(u, &st) == 0)
					continue;
				_cleanup_free_ char *l2 = ar_xasprintf(
					"%s/%s", w->ov->workspace, r);
				add(w, AR_CHANGE_DELETED, r,
				    lstat(l2, &sl2) == 0 &&
					    S_ISDIR(sl2.st_mode));
			}
			if (d)
				closedir(d);
		}
		return walk_dir(w, rel, true);
	}
	if (!lower) {
		add(w, AR_CHANGE_ADDED, rel, false);
		return 0;
	}
	if (S_ISDIR(sl.st_mode)) {
		add(w, AR_CHANGE_DELETED, rel, true);
		add(w, AR_CHANGE_ADDED, rel, false);
		return 0;
	}
	if (!same_file(up, lo, &su, &sl))
		add(w, AR_CHANGE_MODIFIED, rel, false);
	return 0;
}

static int walk_dir(struct walk *w, const char *rel, bool lower_present)
{
	_cleanup_free_ char *up =
		rel[0] ? ar_xasprintf("%s/%s", w->ov->upper, rel) :
			 ar_xstrdup(w->ov->upper);
	DIR *d = opendir(up);
	struct dirent *de;
	int r = 0;

	if (!d)
		return errno == ENOENT ? 0 : -1;
	while (r == 0 && (de = readdir(d))) {
		_cleanup_free_ char *child = NULL;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		child = rel[0] ? ar_xasprintf("%s/%s", rel, de->d_name) :
				 ar_xstrdup(de->d_name);
		r = walk_entry(w, child, lower_present);
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

	memset(out, 0, sizeof(*out));
	if (walk_dir(&w, "", true) < 0) {
		ar_changes_free(out);
		return ar_error_set(err, errno, "read `%s`", ov->upper);
	}
	if (out->n)
		qsort(out->v, out->n, sizeof(*out->v), cmp_change);
	return 0;
}

void ar_changes_free(struct ar_changes *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].path);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

int ar_overlay_print_changes(const struct ar_overlay *ov, FILE *out,
			     struct ar_error *err)
{
	struct ar_changes c;

	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	for (size_t i = 0; i < c.n; i++)
		fprintf(out, "%c %s%s\n", (char)c.v[i].kind, c.v[i].path,
			c.v[i].dir ? "/" : "");
	ar_changes_free(&c);
	return 0;
}

/* ---- path selection ---- */

static char *relative_arg(const struct ar_overlay *ov, const char *p)
{
	size_t n = strlen(ov->workspace);

	if (p[0] == '/') {
		if (!under(p, ov->workspace))
			return NULL;
		p += n;
		while (*p == '/')
			p++;
	}
	_cleanup_free_ char *r = ar_xstrdup(p);
	size_t l = strlen(r);

	while (l > 0 && r[l - 1] == '/')
		r[--l] = '\0';
	return ar_steal_ptr(&r);
}

static bool selected(const char *path, char *const *rels, size_t n)
{
	if (n == 0)
		return true;
	for (size_t i = 0; i < n; i++)
		if (!rels[i][0] || under(path, rels[i]))
			return true;
	return false;
}

static int resolve_args(const struct ar_overlay *ov, char *const *paths,
			size_t n, char ***out, struct ar_error *err)
{
	char **r = ar_xcalloc(n + 1, sizeof(char *));

	for (size_t i = 0; i < n; i++) {
		r[i] = relative_arg(ov, paths[i]);
		if (!r[i]) {
			ar_strv_free(r);
			return ar_error_set_plain(
				err, EINVAL,
				"`%s` is not inside the workspace `%s`",
				paths[i], ov->workspace);
		}
	}
	*out = r;
	return 0;
}

/* ---- diff ---- */

static int run_diff(const char *a, const char *b, const char *la,
		    const char *lb, struct ar_error *err)
{
	char *argv[] = { "diff",     "-Nu",	"--label",
			 (char *)la, "--label", (char *)lb,
			 (char *)a,  (char *)b, NULL };
	extern char **environ;
	pid_t pid;
	int st, r;

	fflush(stdout);
	r = posix_spawnp(&pid, "diff", NULL, NULL, argv, environ);
	if (r)
		return ar_error_set(err, r, "run diff(1)");
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return ar_error_set(err, errno, "wait for diff");
	if (!WIFEXITED(st) || WEXITSTATUS(st) > 1)
		return ar_error_set_plain(err, EIO, "diff(1) failed on `%s`",
					  lb);
	return 0;
}

int ar_overlay_diff(const struct ar_overlay *ov, char *const *paths,
		    size_t n_paths, struct ar_error *err)
{
	_cleanup_strv_ char **rels = NULL;
	struct ar_changes c;
	int r = 0;

	if (resolve_args(ov, paths, n_paths, &rels, err) < 0 ||
	    ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	for (size_t i = 0; i < c.n && r == 0; i++) {
		const struct ar_change *ch = &c.v[i];
		_cleanup_free_ char *lo = NULL, *up = NULL, *la = NULL,
				    *lb = NULL;
		struct stat st;

		if (ch->dir || !selected(ch->path, rels, n_paths))
			continue;
		lo = ar_xasprintf("%s/%s", ov->workspace, ch->path);
		up = ar_xasprintf("%s/%s", ov->upper, ch->path);
		la = ar_xasprintf("a/%s", ch->path);
		lb = ar_xasprintf("b/%s", ch->path);
		if ((ch->kind != AR_CHANGE_DELETED && lstat(up, &st) == 0 &&
		     !S_ISREG(st.st_mode)) ||
		    (ch->kind == AR_CHANGE_DELETED && lstat(lo, &st) == 0 &&
		     !S_ISREG(st.st_mode))) {
			printf("%c %s (not a regular file)\n", (char)ch->kind,
			       ch->path);
			continue;
		}
		r = run_diff(ch->kind == AR_CHANGE_ADDED ? "/dev/null" : lo,
			     ch->kind == AR_CHANGE_DELETED ? "/dev/null" : up,
			     la, lb, err);
	}
	ar_changes_free(&c);
	return r;
}

/* ---- commit ---- */

/* Open the directory holding `rel` under the workspace without following
 * symlinks (RESOLVE_NO_SYMLINKS by hand): *leaf points into rel. */
static int open_parent(int wsfd, const char *rel, const char **leaf)
{
	_cleanup_free_ char *copy = ar_xstrdup(rel);
	char *slash = strrchr(copy, '/');
	int fd = fcntl(wsfd, F_DUPFD_CLOEXEC, 3);
	char *save = NULL;

	*leaf = strrchr(rel, '/') ? strrchr(rel, '/') + 1 : rel;
	if (!slash || fd < 0)
		return fd;
	*slash = '\0';
	for (char *c = strtok_r(copy, "/", &save); c;
	     c = strtok_r(NULL, "/", &save)) {
		int next;

		if (!strcmp(c, "..") || !strcmp(c, ".")) {
			close(fd);
			errno = EINVAL;
			return -1;
		}
		next = openat(fd, c,
			      O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

static int rm_one(const char *path, const struct stat *sb, int flag,
		  struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 &&
			       errno != ENOENT ?
		       -1 :
		       0;
}

static int remove_tree_at(int pfd, const char *leaf, const char *full)
{
	struct stat st;

	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlinkat(pfd, leaf, 0);
	return nftw(full, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* Copy `up` into a temp file next to the target and rename it over. */
static int install_file(int pfd, const char *leaf, const char *up,
			const struct stat *su)
{
	char tmp[64];
	_cleanup_close_ int in = -1, out = -1;
	char buf[65536];
	ssize_t n;

	snprintf(tmp, sizeof(tmp), ".agentrun-commit-%d-%lx", (int)getpid(),
		 (unsigned long)random());
	if (S_ISLNK(su->st_mode)) {
		char target[PATH_MAX];
		ssize_t l = readlink(up, target, sizeof(target) - 1);

		if (l < 0)
			return -1;
		target[l] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return -1;
	} else {
		in = open(up, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		out = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			     0600);
		if (in < 0 || out < 0)
			return -1;
		while ((n = ar_read_all(in, buf, sizeof(buf))) > 0)
			if (ar_write_all(out, buf, (size_t)n) < 0)
				goto fail;
		if (n < 0 || fchmod(out, su->st_mode & 07777) < 0 ||
		    fsync(out) < 0)
			goto fail;
	}
	if (renameat(pfd, tmp, pfd, leaf) < 0)
		goto fail;
	return 0;
fail : {
	int saved = errno;

	unlinkat(pfd, tmp, 0);
	errno = saved;
}
	return -1;
}

static int apply_one(const struct ar_overlay *ov, int wsfd,
		     const struct ar_change *ch, struct ar_error *err)
{
	_cleanup_free_ char *lo =
		ar_xasprintf("%s/%s", ov->workspace, ch->path);
	_cleanup_free_ char *up = ar_xasprintf("%s/%s", ov->upper, ch->path);
	_cleanup_close_ int pfd = -1;
	const char *leaf;
	struct stat su, sl;

	pfd = open_parent(wsfd, ch->path, &leaf);
	if (pfd < 0)
		return ar_error_set(err, errno, "commit `%s`: parent directory",
				    ch->path);
	if (ch->kind == AR_CHANGE_DELETED) {
		if (remove_tree_at(pfd, leaf, lo) < 0)
			return ar_error_set(err, errno, "commit: delete `%s`",
					    lo);
		return 0;
	}
	if (lstat(up, &su) < 0)
		return ar_error_set(err, errno, "commit `%s`", up);
	if (ch->dir) {
		if (fstatat(pfd, leaf, &sl, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(sl.st_mode))
			return 0;
		if (mkdirat(pfd, leaf, su.st_mode & 07777) < 0)
			return ar_error_set(err, errno, "commit: mkdir `%s`",
					    lo);
		return 0;
	}
	if (install_file(pfd, leaf, up, &su) < 0)
		return ar_error_set(err, errno, "commit: write `%s`", lo);
	return 0;
}

int ar_overlay_commit(const struct ar_overlay *ov, char *const *paths,
		      size_t n_paths, struct ar_error *err)
{
	_cleanup_strv_ char **rels = NULL;
	_cleanup_close_ int wsfd = -1;
	struct ar_changes c;
	int r = 0;

	if (resolve_args(ov, paths, n_paths, &rels, err) < 0 ||
	    ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	wsfd = open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (wsfd < 0) {
		ar_changes_free(&c);
		return ar_error_set(err, errno, "workspace `%s`",
				    ov->workspace);
	}
	srandom((unsigned)time(NULL) ^ (unsigned)getpid());
	for (size_t i = 0; i < c.n && r == 0; i++) {
		if (!selected(c.v[i].path, rels, n_paths))
			continue;
		r = apply_one(ov, wsfd, &c.v[i], err);
	}
	/* The upper layer keeps its copies: a committed entry now matches
	 * the lower layer and is no longer a change (a whiteout without a
	 * lower entry is none either), which also keeps an opaque directory
	 * right when only part of it was committed. */
	ar_changes_free(&c);
	return r;
}

int ar_overlay_discard(const struct ar_overlay *ov, struct ar_error *err)
{
	_cleanup_free_ char *w = ar_xasprintf("%s/work", ov->work);

	/* overlayfs leaves work/work with mode 000: make it readable */
	chmod(w, 0700);
	if (nftw(ov->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) < 0)
		return ar_error_set(err, errno, "discard `%s`", ov->dir);
	return 0;
}
