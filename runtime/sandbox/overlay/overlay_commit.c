/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Copy-on-write workspaces: `agentrun commit`, each change applied to the
 * workspace atomically through file descriptors (conflicts, special
 * files, holes, setuid bits: see overlay.h).
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
#include "crash_point.h"
#include "log.h"
#include "utils.h"

/* ---- commit ---- */

struct commit {
	struct ar_overlay *ov;
	const struct ar_commit_opts *o;
	FILE *out;
	int ws, up;
	unsigned long seq;
	size_t conflicts, failed;
	struct ar_error first; /* the first failure */
};

static void failed(struct commit *cc, const struct ar_change *ch,
		   const char *what, int e)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);

	fprintf(cc->out, "error: %s: %s: %s\n", q, what, strerror(e));
	if (!cc->failed++)
		ar_error_set(&cc->first, e, "commit: %s: %s", q, what);
}

/* Move the host's version of leaf aside as leaf.orig (or .orig.N). */
static int keep_orig(struct commit *cc, int pfd, const char *leaf,
		     const struct ar_change *ch)
{
	for (int i = 1; i < 100; i++) {
		_cleanup_free_ char *n =
			i == 1 ? ar_xasprintf("%s.orig", leaf) :
				 ar_xasprintf("%s.orig.%d", leaf, i);

		if (renameat2(pfd, leaf, pfd, n, RENAME_NOREPLACE) == 0) {
			_cleanup_free_ char *q = ar_quote_path(ch->path);
			_cleanup_free_ char *full = ar_xasprintf(
				"%.*s%s", (int)(leaf - ch->path), ch->path, n);
			_cleanup_free_ char *qn = ar_quote_path(full);

			fprintf(cc->out,
				"note: %s: the host's version is kept as %s\n",
				q, qn);
			return 0;
		}
		if (errno == ENOENT)
			return 0;
		if (errno != EEXIST)
			return -1;
	}
	errno = EEXIST;
	return -1;
}

static void temp_name(struct commit *cc, char *buf, size_t n)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(buf, n, ".agentrun-commit-%d-%lx-%lu", (int)getpid(),
		 (unsigned long)ts.tv_nsec, cc->seq++);
}

/* An O_TMPFILE file given the name `tmp` in pfd (then renamed over the
 * leaf: the named window is two system calls long). AT_EMPTY_PATH needs
 * CAP_DAC_READ_SEARCH; /proc/self/fd does not. */
static int link_unnamed(int fd, int pfd, const char *tmp)
{
	char proc[64];

	if (linkat(fd, "", pfd, tmp, AT_EMPTY_PATH) == 0)
		return 0;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, proc, pfd, tmp, AT_SYMLINK_FOLLOW);
}

static int copy_range(int in, int out, off_t off, off_t len)
{
	char buf[65536];

	while (len > 0) {
		loff_t i = off, o = off;
		ssize_t n = copy_file_range(in, &i, out, &o, (size_t)len, 0);

		if (n == 0)
			return 0; /* the file shrank */
		if (n < 0) {
			if (errno != EXDEV && errno != EINVAL &&
			    errno != ENOSYS && errno != EOPNOTSUPP)
				return -1;
			n = pread(in, buf,
				  (size_t)(len < (off_t)sizeof(buf) ?
						   len :
						   (off_t)sizeof(buf)),
				  off);
			if (n < 0)
				return -1;
			if (n == 0)
				return 0;
			for (ssize_t w = 0; w < n;) {
				ssize_t k = pwrite(out, buf + w,
						   (size_t)(n - w), off + w);

				if (k < 0)
					return -1;
				w += k;
			}
		}
		off += n;
		len -= n;
	}
	return 0;
}

/* Copy the data of `in` to `out`, leaving its holes holes. */
static int copy_sparse(int in, int out, off_t size)
{
	off_t off = 0;

	while (off < size) {
		off_t data = lseek(in, off, SEEK_DATA), hole;

		if (data < 0 && errno == ENXIO)
			break; /* a hole up to the end */
		if (data < 0) /* no SEEK_DATA here: all data */
			data = off, hole = size;
		else if ((hole = lseek(in, data, SEEK_HOLE)) < 0 || hole > size)
			hole = size;
		if (data >= size)
			break;
		if (copy_range(in, out, data, hole - data) < 0)
			return -1;
		off = hole;
	}
	return ftruncate(out, size);
}

static void owner_like(int fd, int pfd, const char *leaf)
{
	struct stat st;

	/* root commits keep the files the user's: the owner of the file
	 * replaced, or of its directory */
	if (geteuid() != 0)
		return;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    fstat(pfd, &st) < 0)
		return;
	if (fd >= 0)
		(void)!fchown(fd, st.st_uid, st.st_gid);
}

static void owner_like_at(int pfd, const char *name, const char *leaf)
{
	struct stat st;

	if (geteuid() != 0)
		return;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
	    fstat(pfd, &st) < 0)
		return;
	(void)!fchownat(pfd, name, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW);
}

static void note(struct commit *cc, const struct ar_change *ch,
		 const char *what)
{
	_cleanup_free_ char *q = ar_quote_path(ch->path);

	fprintf(cc->out, "note: %s: %s\n", q, what);
}

/* A conflict is applied only with --force; it is reported either way. */
static bool conflict_stops(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_free_ char *q = NULL;

	if (!ch->conflict || ch->dir)
		return false;
	if (cc->o->force)
		return false;
	q = ar_quote_path(ch->path);
	fprintf(cc->out,
		"conflict: %s: changed on the host since the sandbox started; not applied\n",
		q);
	cc->conflicts++;
	return true;
}

static int apply_delete(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_close_ int pfd = -1;
	const char *leaf;
	struct stat st;

	if (conflict_stops(cc, ch))
		return 0;
	pfd = ov_open_parent(cc->ws, -1, ch->path, &leaf);
	if (pfd < 0 && errno == ENOENT)
		return 0;
	if (pfd < 0)
		return failed(cc, ch, "open its directory", errno), -1;
	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 :
					 (failed(cc, ch, "stat", errno), -1);
	if (ch->dir) {
		if (unlinkat(pfd, leaf, AT_REMOVEDIR) < 0) {
			if (errno != ENOTEMPTY && errno != EEXIST)
				return failed(cc, ch, "remove", errno), -1;
			note(cc, ch, "directory kept: it is not empty");
			return 0;
		}
	} else if (ch->conflict) {
		if (keep_orig(cc, pfd, leaf, ch) < 0)
			return failed(cc, ch, "keep the host's version", errno),
			       -1;
	} else if (unlinkat(pfd, leaf, 0) < 0 && errno != ENOENT) {
		return failed(cc, ch, "remove", errno), -1;
	}
	if (!ch->renamed) /* shown with its R */
		ov_print_change(cc->out, ch);
	return 0;
}

static int put_dir(struct commit *cc, const struct ar_change *ch, int pfd,
		   const char *leaf, const struct stat *su)
{
	struct stat st;
	mode_t m = su->st_mode & 01777;

	if (su->st_mode & (S_ISUID | S_ISGID))
		note(cc, ch, "setuid/setgid bit dropped");
	_cleanup_close_ int fd = -1;

	if (fstatat(pfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (mkdirat(pfd, leaf, 0700) < 0)
			return failed(cc, ch, "mkdir", errno), -1;
		owner_like_at(pfd, leaf, "");
	} else if (!S_ISDIR(st.st_mode)) {
		return failed(cc, ch, "mkdir", EEXIST), -1;
	}
	fd = openat(pfd, leaf, DIR_FLAGS);
	if (fd < 0 || fchmod(fd, m) < 0)
		return failed(cc, ch, "chmod", errno), -1;
	return 0;
}

static int put_entry(struct commit *cc, const struct ar_change *ch)
{
	_cleanup_free_ char *dir = ov_parent_of(ch->path);
	_cleanup_close_ int upp = -1, pfd = -1, in = -1, out = -1;
	const char *leaf;
	struct stat su;
	char tmp[96];
	bool unnamed = false;

	if (ch->special) {
		_cleanup_free_ char *w = ar_xasprintf(
			"%s in the sandbox: skipped (never opened)",
			ov_kind_name(ch->up_mode));

		note(cc, ch, w);
		return 0;
	}
	if (conflict_stops(cc, ch))
		return 0;
	upp = ov_open_dir_beneath(cc->up, dir);
	if (upp < 0)
		return failed(cc, ch, "open it in the upper layer", errno), -1;
	pfd = ov_open_parent(cc->ws, cc->up, ch->path, &leaf);
	if (pfd < 0)
		return failed(cc, ch, "open its directory in the workspace",
			      errno),
		       -1;
	if (fstatat(upp, leaf, &su, AT_SYMLINK_NOFOLLOW) < 0)
		return failed(cc, ch, "stat it in the upper layer", errno), -1;
	if (ch->dir != !!S_ISDIR(su.st_mode))
		return failed(cc, ch, "changed since it was listed", ESTALE),
		       -1;
	if (ch->dir) {
		if (put_dir(cc, ch, pfd, leaf, &su) < 0)
			return -1;
		ov_print_change(cc->out, ch);
		return 0;
	}
	temp_name(cc, tmp, sizeof(tmp));
	if (S_ISLNK(su.st_mode)) {
		char target[PATH_MAX];
		ssize_t l = readlinkat(upp, leaf, target, sizeof(target) - 1);

		if (l < 0)
			return failed(cc, ch, "readlink", errno), -1;
		target[l] = '\0';
		if (symlinkat(target, pfd, tmp) < 0)
			return failed(cc, ch, "symlink", errno), -1;
		owner_like_at(pfd, tmp, leaf);
	} else if (S_ISREG(su.st_mode)) {
		in = ov_open_regular(upp, leaf, &su);
		if (in < 0)
			return failed(cc, ch, "open it in the upper layer",
				      errno),
			       -1;
		/* unnamed while it is written: a commit killed (or a
		 * filesystem full) midway leaves nothing in the workspace */
		out = openat(pfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		unnamed = out >= 0;
		if (out < 0)
			out = openat(pfd, tmp,
				     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					     O_CLOEXEC,
				     0600);
		if (out < 0)
			return failed(cc, ch, "create a temporary file", errno),
			       -1;
		owner_like(out, pfd, leaf);
		if (copy_sparse(in, out, su.st_size) < 0 ||
		    fchmod(out, su.st_mode & 0777) < 0 || fsync(out) < 0) {
			int e = errno;

			if (!unnamed)
				unlinkat(pfd, tmp, 0);
			return failed(cc, ch, "write", e), -1;
		}
		ar_crash_point("commit-temp-written");
		if (unnamed && link_unnamed(out, pfd, tmp) < 0)
			return failed(cc, ch, "link the written file", errno),
			       -1;
		if (su.st_mode & (S_ISUID | S_ISGID))
			note(cc, ch, "setuid/setgid bit dropped");
	} else {
		_cleanup_free_ char *w = ar_xasprintf(
			"%s in the sandbox: skipped (never opened)",
			ov_kind_name(su.st_mode));

		note(cc, ch, w);
		return 0;
	}
	if ((ch->conflict && keep_orig(cc, pfd, leaf, ch) < 0) ||
	    renameat(pfd, tmp, pfd, leaf) < 0) {
		int e = errno;

		unlinkat(pfd, tmp, 0);
		return failed(cc, ch, "rename into place", e), -1;
	}
	ov_print_change(cc->out, ch);
	return 0;
}

/* Interactive selection: y/n/d/q per change. */
static int ask(struct commit *cc, const struct ar_changes *c, bool *sel,
	       struct ar_error *err)
{
	FILE *in = cc->o->in ? cc->o->in : stdin;
	bool quit = false;

	for (size_t i = 0; i < c->n; i++) {
		const struct ar_change *ch = &c->v[i];
		char line[64];

		if (!sel[i] || ch->renamed)
			continue;
		if (quit) {
			sel[i] = false;
			continue;
		}
		for (;;) {
			fputs("\n", cc->out);
			ov_print_change(cc->out, ch);
			fputs("Commit this change [y,n,d,q,?]? ", cc->out);
			fflush(cc->out);
			if (!fgets(line, sizeof(line), in)) {
				quit = true;
				sel[i] = false;
				fputc('\n', cc->out);
				break;
			}
			if (line[0] == 'y') {
				break;
			} else if (line[0] == 'n') {
				sel[i] = false;
				break;
			} else if (line[0] == 'q') {
				quit = true;
				sel[i] = false;
				break;
			} else if (line[0] == 'd') {
				bool *one = ar_xcalloc(c->n, sizeof(bool));
				int r;

				one[i] = true;
				r = ov_diff_selected(cc->ov, c, one, NULL,
						     false, cc->out, err);
				free(one);
				if (r < 0)
					return -1;
			} else {
				fputs("y - commit this change\n"
				      "n - do not commit this change\n"
				      "d - show its diff\n"
				      "q - quit; do not commit this change or any of the remaining ones\n",
				      cc->out);
			}
		}
	}
	fputc('\n', cc->out);
	for (size_t i = 0; i < c->n; i++) /* an R takes its D along */
		if (c->v[i].kind == AR_CHANGE_RENAMED)
			sel[c->v[i].pair] = sel[i];
	return 0;
}

/* The selected protected changes the user did not name (nor opted in
 * with --include-protected), taken out of sel; NULL when none. An R and
 * its D go together. */
static bool *hold_back(const struct ar_changes *c, bool *sel, char **rels,
		       size_t n, bool include)
{
	_cleanup_free_ bool *held = ar_xcalloc(c->n + 1, sizeof(bool));
	bool any = false;

	if (include)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct ar_change *ch = &c->v[i];

		if (!sel[i] || !ch->protect_why || ch->renamed ||
		    ov_named(ch, rels, n))
			continue;
		held[i] = any = true;
		sel[i] = false;
		if (ch->kind == AR_CHANGE_RENAMED) {
			held[ch->pair] = true;
			sel[ch->pair] = false;
		}
	}
	return any ? ar_steal_ptr(&held) : NULL;
}

/* On stderr, after what was applied: each change held back (git's own
 * data as one line per git directory) and how to apply them. */
static void report_held(struct commit *cc, const struct ar_changes *c,
			const bool *held, char **rels, size_t n)
{
	_cleanup_free_ bool *grouped = ov_grouped(c, held, rels, n);
	FILE *e = cc->o->err ? cc->o->err : stderr;
	size_t count;

	fflush(cc->out);
	fprintf(e, "agentrun: commit: held back (they stay in sandbox `%s`):\n",
		cc->ov->name);
	count = ov_print_list(e, "  ", cc->ov->name, c, held, grouped);
	ov_print_protected_summary(e, "agentrun: commit: ", c, held, count);
	fprintf(e,
		" held back: the host may run code from them (git metadata, editor and agent config). Review with `agentrun diff %s PATH`; apply with `agentrun commit %s PATH` (PATH at or below the protected path) or `agentrun commit --include-protected %s`\n",
		cc->ov->name, cc->ov->name, cc->ov->name);
}

int ar_overlay_commit(struct ar_overlay *ov, char *const *paths, size_t n_paths,
		      const struct ar_commit_opts *o, struct ar_error *err)
{
	static const struct ar_commit_opts none = { 0 };
	_cleanup_free_ bool *sel = NULL, *held = NULL;
	_cleanup_free_ char **rels = NULL;
	_cleanup_close_ int ws = -1, up = -1;
	struct commit cc = { .ov = ov, .o = o ? o : &none };
	struct ar_changes c;
	size_t n_put = 0;
	int r = 0;

	cc.out = cc.o->out ? cc.o->out : stdout;
	if (ar_overlay_lock(ov, "commit", err) < 0)
		return -1;
	if (!ov->has_started)
		ar_warn("sandbox `%s` has no start token (made by an older agentrun): host edits since it started are not detected as conflicts",
			ov->name);
	if (ar_overlay_changes(ov, &c, err) < 0)
		return -1;
	ar_overlay_pair_renames(ov, &c);
	if (ov_select_changes(ov, paths, n_paths, &c, &sel, err) < 0) {
		ar_changes_free(&c);
		return -1;
	}
	rels = ov_relative_args(ov, paths, n_paths);
	held = hold_back(&c, sel, rels, n_paths, cc.o->include_protected);
	ws = open(ov->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	up = open(ov->upper, DIR_FLAGS);
	if (ws < 0 || up < 0) {
		r = ar_error_set(err, errno, "sandbox `%s`: open %s", ov->name,
				 ws < 0 ? ov->workspace : ov->upper);
		goto out;
	}
	cc.ws = ws;
	cc.up = up;
	if (cc.o->interactive && ask(&cc, &c, sel, err) < 0) {
		r = -1;
		goto out;
	}
	/* deletions first, deepest first; then the rest, parents first */
	for (size_t i = c.n; i-- > 0;)
		if (sel[i] && c.v[i].kind == AR_CHANGE_DELETED)
			apply_delete(&cc, &c.v[i]);
	for (size_t i = 0; i < c.n; i++)
		n_put += sel[i] && c.v[i].kind != AR_CHANGE_DELETED;
	for (size_t i = 0, done = 0; i < c.n; i++) {
		if (!sel[i] || c.v[i].kind == AR_CHANGE_DELETED)
			continue;
		put_entry(&cc, &c.v[i]);
		if (++done == n_put / 2)
			ar_crash_point("commit-half");
	}
	if (held)
		report_held(&cc, &c, held, rels, n_paths);
	if (cc.failed) {
		r = -1;
		*err = cc.first;
		ar_error_wrap(err,
			      "%zu change(s) failed, the others were applied",
			      cc.failed);
	} else if (cc.conflicts) {
		r = ar_error_set_plain(
			err, EEXIST,
			"commit: %zu conflict(s) not applied (the host changed them after the sandbox started): review with `agentrun diff %s PATH`; `agentrun commit --force %s PATH` applies them and keeps the host's version as PATH.orig",
			cc.conflicts, ov->name, ov->name);
	}
out:
	fflush(cc.out);
	for (size_t k = 0; rels && k < n_paths; k++)
		free(rels[k]);
	ar_changes_free(&c);
	return r;
}
