/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The audit log's "files" event (audit_files.h). */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "audit.h"
#include "audit_files.h"
#include "overlay/overlay.h"
#include "protect/protect.h"
#include "utils.h"

static void scan_add(struct sb_scan *s, const char *path, const struct stat *st)
{
	struct sb_scan_entry *e;

	if (s->n >= SB_SCAN_MAX) {
		s->truncated = true;
		return;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->v = ar_xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	e = &s->v[s->n++];
	e->path = ar_xstrdup(path);
	e->ino = st->st_ino;
	e->size = (uint64_t)st->st_size;
	e->mtime_ns =
		(int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
	e->type = st->st_mode & S_IFMT;
}

/* dfd: the directory (taken over); rel: its path ("" for the root). */
static void scan_dir(struct sb_scan *s, int dfd, const char *rel, dev_t dev,
		     int depth)
{
	DIR *d = fdopendir(dfd);
	struct dirent *e;

	if (!d) {
		close(dfd);
		return;
	}
	while ((e = readdir(d)) && !s->truncated) {
		_cleanup_free_ char *p = NULL;
		struct stat st;
		int cfd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		p = *rel ? ar_xasprintf("%s/%s", rel, e->d_name) :
			   ar_xstrdup(e->d_name);
		scan_add(s, p, &st);
		/* git's object store (many files, nothing the host runs) is
		 * left out; the rest of a gitdir (config, hooks, refs) is
		 * scanned */
		if (!S_ISDIR(st.st_mode) || st.st_dev != dev || depth > 64 ||
		    (strcmp(e->d_name, "objects") == 0 &&
		     faccessat(dirfd(d), "HEAD", F_OK, AT_SYMLINK_NOFOLLOW) ==
			     0))
			continue;
		cfd = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd >= 0)
			scan_dir(s, cfd, p, dev, depth + 1);
	}
	closedir(d);
}

static int cmp_entry(const void *a, const void *b)
{
	return strcmp(((const struct sb_scan_entry *)a)->path,
		      ((const struct sb_scan_entry *)b)->path);
}

void sb_scan_take(const char *root, struct sb_scan *out)
{
	struct stat st;
	int fd;

	memset(out, 0, sizeof(*out));
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	scan_dir(out, fd, "", st.st_dev, 0);
	if (out->n) /* qsort(NULL, 0) is undefined */
		qsort(out->v, out->n, sizeof(*out->v), cmp_entry);
}

void sb_scan_free(struct sb_scan *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].path);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

size_t sb_scan_diff(const struct sb_scan *b, const struct sb_scan *a,
		    void (*fn)(char kind, const char *path, bool dir,
			       void *data),
		    void *data)
{
	size_t i = 0, j = 0, n = 0;

	while (i < b->n || j < a->n) {
		int c = i >= b->n ? 1 :
			j >= a->n ? -1 :
				    strcmp(b->v[i].path, a->v[j].path);

		if (c < 0) {
			fn('D', b->v[i].path, b->v[i].type == S_IFDIR, data);
			i++;
			n++;
		} else if (c > 0) {
			fn('A', a->v[j].path, a->v[j].type == S_IFDIR, data);
			j++;
			n++;
		} else {
			const struct sb_scan_entry *x = &b->v[i], *y = &a->v[j];

			/* a directory's mtime changes with its entries,
			 * which are reported themselves */
			if (x->type != y->type || x->ino != y->ino ||
			    (x->type != S_IFDIR &&
			     (x->size != y->size ||
			      x->mtime_ns != y->mtime_ns))) {
				fn('M', y->path, y->type == S_IFDIR, data);
				n++;
			}
			i++;
			j++;
		}
	}
	return n;
}

struct files_ctx {
	struct ar_jbuf *b;
	size_t listed;
	bool more;
	const struct sb_protect *protect; /* NULL: none */
	const char *root;
};

static void add_change(char kind, const char *path, bool dir, void *data)
{
	struct files_ctx *c = data;
	const char *k = kind == 'A' ? "added" :
			kind == 'D' ? "deleted" :
				      "modified";
	_cleanup_free_ char *abs =
		c->protect ? ar_xasprintf("%s/%s", c->root, path) : NULL;
	const struct sb_protect_entry *e =
		abs ? sb_protect_find(c->protect, abs) : NULL;

	/* a placeholder's mount point (placeholder.h): missing before the
	 * plan, made by agentrun after it, before the first scan, removed
	 * by agentrun after the run; not the agent's (it cannot remove a
	 * mount point) */
	if (kind == 'D' && e && e->kind == SB_PROT_ABSENT &&
	    strcmp(e->path, abs) == 0)
		return;
	if (c->listed >= SB_SCAN_MAX_LISTED) {
		c->more = true;
		return;
	}
	ar_jbuf_addf(c->b,
		     "%s{\"change\":\"%s\",\"path\":", c->listed ? "," : "", k);
	ar_jbuf_cstr(c->b, path);
	if (dir)
		ar_jbuf_lit(c->b, ",\"dir\":true");
	if (e) {
		ar_jbuf_lit(c->b, ",\"protected\":");
		ar_jbuf_cstr(c->b, e->why);
	}
	ar_jbuf_lit(c->b, "}");
	c->listed++;
}

void sb_audit_files_scan(struct ar_audit *a, const struct sb_scan *before,
			 const char *root, const struct sb_protect *protect)
{
	struct sb_scan after;
	struct ar_jbuf b = { 0 };
	struct files_ctx c = { &b, 0, false, protect, root };

	sb_scan_take(root, &after);
	ar_audit_begin(&b, "files");
	ar_jbuf_lit(&b, ",\"source\":\"scan\",\"workspace\":");
	ar_jbuf_cstr(&b, root);
	ar_jbuf_lit(&b, ",\"changes\":[");
	sb_scan_diff(before, &after, add_change, &c);
	ar_jbuf_addf(&b, "],\"truncated\":%s",
		     c.more || before->truncated || after.truncated ? "true" :
								      "false");
	ar_audit_emit(a, &b);
	sb_scan_free(&after);
}

void sb_audit_files_overlay(struct ar_audit *a, const struct ar_overlay *ov)
{
	struct ar_error err = AR_ERROR_INIT;
	struct ar_changes ch = { 0 };
	struct ar_jbuf b = { 0 };
	struct files_ctx c = { &b, 0, false, NULL, NULL };

	ar_audit_begin(&b, "files");
	ar_jbuf_lit(&b, ",\"source\":\"overlay\",\"sandbox\":");
	ar_jbuf_cstr(&b, ov->name);
	ar_jbuf_lit(&b, ",\"changes\":[");
	if (ar_overlay_changes(ov, &ch, &err) == 0) {
		for (size_t i = 0; i < ch.n; i++)
			add_change((char)ch.v[i].kind, ch.v[i].path,
				   ch.v[i].dir, &c);
		ar_changes_free(&ch);
	}
	ar_jbuf_addf(&b, "],\"truncated\":%s", c.more ? "true" : "false");
	if (err.msg[0]) {
		ar_jbuf_key(&b, "error");
		ar_jbuf_cstr(&b, err.msg);
	}
	ar_audit_emit(a, &b);
}
