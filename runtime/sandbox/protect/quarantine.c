/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The quarantine of the end-of-run check (quarantine.h): what the run
 * left that the host would execute is moved here or rewritten in place,
 * never deleted; each original is copied first and listed in MANIFEST.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "quarantine.h"
#include "utils.h"

void sb_quarantine_init(struct sb_quarantine *q, char *const *env,
			const char *home)
{
	*q = (struct sb_quarantine){ .environ = env, .home = home, .fd = -1 };
}

void sb_quarantine_close(struct sb_quarantine *q)
{
	if (q->manifest)
		fclose(q->manifest);
	if (q->fd >= 0)
		close(q->fd);
	free(q->dir);
	q->manifest = NULL;
	q->fd = -1;
	q->dir = NULL;
}

/* A path as printed: control characters escaped (the names are the
 * agent's). Malloc'd. */
char *sb_quarantine_esc(const char *s)
{
	char *out = ar_xmalloc(4 * strlen(s) + 1), *o = out;

	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch < 0x20 || ch == 0x7f)
			o += sprintf(o, "\\x%02x", ch);
		else
			*o++ = (char)ch;
	}
	*o = '\0';
	return out;
}

static int quarantine_open(struct sb_quarantine *q)
{
	const char *state = NULL;
	_cleanup_free_ char *base = NULL;
	_cleanup_close_ int bfd = -1;
	char name[64];
	struct tm tm;
	time_t now = time(NULL);
	int fd;

	if (q->fd >= 0)
		return 0;
	if (q->dir)
		return -1; /* tried and failed */
	for (char *const *e = q->environ; e && *e; e++)
		if (strncmp(*e, "XDG_STATE_HOME=/", 16) == 0)
			state = *e + 15;
	base = state ? ar_xasprintf("%s/agentrun/quarantine", state) :
		       ar_xasprintf("%s/.local/state/agentrun/quarantine",
				    q->home);
	gmtime_r(&now, &tm);
	bfd = ar_open_dir_p(base);
	for (int i = 0; bfd >= 0 && i < 100; i++) {
		size_t n = strftime(name, sizeof(name), "%Y%m%dT%H%M%SZ", &tm);

		snprintf(name + n, sizeof(name) - n, "-%d%s%.0d", (int)getpid(),
			 i ? "-" : "", i);
		if (mkdirat(bfd, name, 0700) == 0)
			break;
		name[0] = '\0';
		if (errno != EEXIST)
			break;
	}
	q->dir = bfd >= 0 && name[0] ? ar_xasprintf("%s/%s", base, name) :
				       ar_xstrdup("");
	if (!q->dir[0]) {
		ar_warn("sandbox: cannot make the quarantine directory below `%s`: what the run left is neutralised in place, without a copy",
			base);
		return -1;
	}
	fd = openat(bfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	q->fd = fd;
	fd = openat(q->fd, "MANIFEST",
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	q->manifest = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (q->manifest)
		fprintf(q->manifest,
			"# agentrun sandbox: what the run left that the host would execute (" AR_SANDBOX_DOC
			")\n# ACTION\tPATH\tCOPY\tWHY\n");
	else if (fd >= 0)
		close(fd);
	return 0;
}

/* A copy of dfd/name in the quarantine (a file's bytes; a link's
 * target as text); its name there, or NULL. */
static char *save_copy(struct sb_quarantine *q, int dfd, const char *name,
		       const struct stat *st)
{
	char qname[32];
	_cleanup_close_ int src = -1, dst = -1;
	char buf[65536];
	ssize_t n;

	if (quarantine_open(q) < 0)
		return NULL;
	snprintf(qname, sizeof(qname), "%04u.data", ++q->n);
	dst = openat(q->fd, qname,
		     O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     0600);
	if (dst < 0)
		return NULL;
	if (S_ISLNK(st->st_mode)) {
		n = readlinkat(dfd, name, buf, sizeof(buf));
		if (n < 0 || write(dst, buf, (size_t)n) != n)
			return NULL;
		return ar_xasprintf("%s/%s", q->dir, qname);
	}
	src = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (src < 0)
		return NULL;
	while ((n = read(src, buf, sizeof(buf))) > 0)
		if (write(dst, buf, (size_t)n) != n)
			return NULL;
	if (n < 0)
		return NULL;
	return ar_xasprintf("%s/%s", q->dir, qname);
}

static void record(struct sb_quarantine *q, const char *action,
		   const char *path, const char *copy, const char *why)
{
	_cleanup_free_ char *p = sb_quarantine_esc(path),
			    *w = sb_quarantine_esc(why);

	q->found++;
	if (q->manifest)
		fprintf(q->manifest, "%s\t%s\t%s\t%s\n", action, p,
			copy ? copy : "-", w);
	if (strcmp(action, "keys-removed") == 0)
		ar_warn("sandbox: the run left `%s` with %s, which the host's git would run: commented out%s%s",
			p, w, copy ? "; the original is kept as " : "",
			copy ? copy : "");
	else
		ar_warn("sandbox: the run left `%s` (%s), which the host would run: %s %s",
			p, w,
			strcmp(action, "renamed") == 0 ?
				"renamed (no quarantine could be made) to" :
				"moved aside to",
			copy);
}

void sb_quarantine_set_aside(struct sb_quarantine *q, int dfd, const char *name,
			     const char *path, const char *why)
{
	_cleanup_free_ char *copy = NULL;
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    S_ISDIR(st.st_mode))
		return;
	copy = save_copy(q, dfd, name, &st);
	if (!copy) {
		/* no copy: never delete; a name no tool reads instead */
		_cleanup_free_ char *aside =
			ar_xasprintf("%s.agentrun-quarantined", name);

		if (renameat2(dfd, name, dfd, aside, RENAME_NOREPLACE) == 0) {
			_cleanup_free_ char *to =
				ar_xasprintf("%s.agentrun-quarantined", path);

			record(q, "renamed", path, to, why);
			return;
		}
	} else if (unlinkat(dfd, name, 0) == 0) {
		record(q, "moved", path, copy, why);
		return;
	}
	{
		_cleanup_free_ char *p = sb_quarantine_esc(path);

		ar_warn("sandbox: the run left `%s` (%s), which the host would run, and it could not be moved aside: %s; remove it before using git there",
			p, why, strerror(errno));
		q->found++;
	}
}

/* dfd/name (the file `st` describes, a single link) given `text` in
 * place: the inode stays, so a read-only bind another sandbox on the
 * workspace has over it stays too (a rename over it would detach that
 * mount in the other sandbox's namespace, and its agent could write the
 * key back while it runs). Truncated first: a reader sees the old text,
 * nothing, or a prefix of the new, never the old keys after the new. */
static int rewrite_in_place(int dfd, const char *name, const struct stat *st,
			    const char *text)
{
	/* O_NONBLOCK: a FIFO planted there does not wait for a reader */
	_cleanup_close_ int fd = openat(
		dfd, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	size_t len = strlen(text), off = 0;
	struct stat now;

	if (fd < 0)
		return -1;
	if (fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || now.st_nlink != 1 ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino ||
	    ftruncate(fd, 0) < 0)
		return -1;
	while (off < len) {
		ssize_t n = pwrite(fd, text + off, len - off, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -2; /* truncated: the copy is in the quarantine */
		off += (size_t)n;
	}
	return 0;
}

/* Replace dfd/name by `text`, same owner and mode: in place when it is
 * a single link (rewrite_in_place), else atomically by a rename. */
static int rewrite(int dfd, const char *name, const struct stat *st,
		   const char *text)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = strlen(text);

	if (rewrite_in_place(dfd, name, st, text) == 0)
		return 0;
	tmp = ar_xasprintf("%s.agentrun-%d", name, (int)getpid());
	fd = openat(dfd, tmp,
		    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    st->st_mode & 07777);
	if (fd < 0)
		return -1;
	if (fchown(fd, st->st_uid, st->st_gid) < 0) {
		/* not root: it is ours already */
	}
	if (fchmod(fd, st->st_mode & 07777) < 0 ||
	    write(fd, text, len) != (ssize_t)len ||
	    renameat(dfd, tmp, dfd, name) < 0) {
		unlinkat(dfd, tmp, 0);
		return -1;
	}
	return 0;
}

void sb_quarantine_neutralise(struct sb_quarantine *q, int dfd,
			      const char *name, const char *path,
			      const struct stat *st, const char *text,
			      const char *why)
{
	_cleanup_free_ char *copy = save_copy(q, dfd, name, st);

	if (rewrite(dfd, name, st, text) < 0) {
		sb_quarantine_set_aside(q, dfd, name, path, why);
		return;
	}
	record(q, "keys-removed", path, copy, why);
}
