/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The file syscalls of the --audit/--learn listener, decoded and
 * resolved (audit_paths.h). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "audit_paths.h"
#include "utils.h"

#ifndef __NR_openat2
#define __NR_openat2 437
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif

#define NONE (-1)
#define CWD (-2) /* the path is relative to the cwd (no dirfd argument) */

/* How each syscall's arguments are laid out: the directory fd and path
 * argument indexes of its (up to two) paths, where its flags are, and
 * whether a symbolic link as the last component is followed. */
enum follow {
	F_NO, /* never (unlink, rename, mkdir, lchown, ...) */
	F_YES, /* always (truncate, chmod, setxattr, ...) */
	F_OPEN, /* unless O_NOFOLLOW, or O_CREAT|O_EXCL */
	F_NOFOLLOW_FLAG, /* unless AT_SYMLINK_NOFOLLOW in the flags */
	F_FOLLOW_FLAG, /* only with AT_SYMLINK_FOLLOW in the flags */
};

static const struct fspec {
	const char *name;
	enum sb_fop op;
	signed char dfd[2], path[2];
	signed char flags; /* argument index of the flags, or NONE */
	enum follow follow[2];
	bool write;
} specs[] = {
	{ "open", SB_FOP_OPEN, { CWD, NONE }, { 0, NONE }, 1, { F_OPEN }, 0 },
	{ "openat", SB_FOP_OPEN, { 0, NONE }, { 1, NONE }, 2, { F_OPEN }, 0 },
	{ "openat2", SB_FOP_OPEN, { 0, NONE }, { 1, NONE }, NONE, { F_OPEN }, 0 },
	{ "creat", SB_FOP_OPEN, { CWD, NONE }, { 0, NONE }, NONE, { F_YES }, 1 },
	{ "truncate",
	  SB_FOP_TRUNCATE,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_YES },
	  1 },
	{ "mkdir", SB_FOP_MKDIR, { CWD, NONE }, { 0, NONE }, NONE, { F_NO }, 1 },
	{ "mkdirat", SB_FOP_MKDIR, { 0, NONE }, { 1, NONE }, NONE, { F_NO }, 1 },
	{ "mknod", SB_FOP_MKNOD, { CWD, NONE }, { 0, NONE }, NONE, { F_NO }, 1 },
	{ "mknodat", SB_FOP_MKNOD, { 0, NONE }, { 1, NONE }, NONE, { F_NO }, 1 },
	{ "unlink",
	  SB_FOP_UNLINK,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_NO },
	  1 },
	{ "unlinkat", SB_FOP_UNLINK, { 0, NONE }, { 1, NONE }, 2, { F_NO }, 1 },
	{ "rmdir", SB_FOP_RMDIR, { CWD, NONE }, { 0, NONE }, NONE, { F_NO }, 1 },
	{ "rename",
	  SB_FOP_RENAME,
	  { CWD, CWD },
	  { 0, 1 },
	  NONE,
	  { F_NO, F_NO },
	  1 },
	{ "renameat",
	  SB_FOP_RENAME,
	  { 0, 2 },
	  { 1, 3 },
	  NONE,
	  { F_NO, F_NO },
	  1 },
	{ "renameat2", SB_FOP_RENAME, { 0, 2 }, { 1, 3 }, 4, { F_NO, F_NO }, 1 },
	{ "link", SB_FOP_LINK, { CWD, CWD }, { 0, 1 }, NONE, { F_NO, F_NO }, 1 },
	{ "linkat",
	  SB_FOP_LINK,
	  { 0, 2 },
	  { 1, 3 },
	  4,
	  { F_FOLLOW_FLAG, F_NO },
	  1 },
	/* the target (argument 0) is the link's content, not a path the
	 * call touches */
	{ "symlink",
	  SB_FOP_SYMLINK,
	  { CWD, NONE },
	  { 1, NONE },
	  NONE,
	  { F_NO },
	  1 },
	{ "symlinkat",
	  SB_FOP_SYMLINK,
	  { 1, NONE },
	  { 2, NONE },
	  NONE,
	  { F_NO },
	  1 },
	{ "chmod", SB_FOP_CHMOD, { CWD, NONE }, { 0, NONE }, NONE, { F_YES }, 1 },
	{ "fchmodat",
	  SB_FOP_CHMOD,
	  { 0, NONE },
	  { 1, NONE },
	  NONE,
	  { F_YES },
	  1 },
	{ "fchmodat2",
	  SB_FOP_CHMOD,
	  { 0, NONE },
	  { 1, NONE },
	  3,
	  { F_NOFOLLOW_FLAG },
	  1 },
	{ "chown", SB_FOP_CHOWN, { CWD, NONE }, { 0, NONE }, NONE, { F_YES }, 1 },
	{ "lchown", SB_FOP_CHOWN, { CWD, NONE }, { 0, NONE }, NONE, { F_NO }, 1 },
	{ "fchownat",
	  SB_FOP_CHOWN,
	  { 0, NONE },
	  { 1, NONE },
	  4,
	  { F_NOFOLLOW_FLAG },
	  1 },
	{ "setxattr",
	  SB_FOP_SETXATTR,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_YES },
	  1 },
	{ "lsetxattr",
	  SB_FOP_SETXATTR,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_NO },
	  1 },
	{ "removexattr",
	  SB_FOP_REMOVEXATTR,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_YES },
	  1 },
	{ "lremovexattr",
	  SB_FOP_REMOVEXATTR,
	  { CWD, NONE },
	  { 0, NONE },
	  NONE,
	  { F_NO },
	  1 },
	{ "execve", SB_FOP_EXEC, { CWD, NONE }, { 0, NONE }, NONE, { F_YES }, 0 },
	{ "execveat",
	  SB_FOP_EXEC,
	  { 0, NONE },
	  { 1, NONE },
	  4,
	  { F_NOFOLLOW_FLAG },
	  0 },
};

static const char *const op_names[] = {
	[SB_FOP_OPEN] = "open",
	[SB_FOP_TRUNCATE] = "truncate",
	[SB_FOP_MKDIR] = "mkdir",
	[SB_FOP_MKNOD] = "mknod",
	[SB_FOP_UNLINK] = "unlink",
	[SB_FOP_RMDIR] = "rmdir",
	[SB_FOP_RENAME] = "rename",
	[SB_FOP_LINK] = "link",
	[SB_FOP_SYMLINK] = "symlink",
	[SB_FOP_CHMOD] = "chmod",
	[SB_FOP_CHOWN] = "chown",
	[SB_FOP_SETXATTR] = "setxattr",
	[SB_FOP_REMOVEXATTR] = "removexattr",
	[SB_FOP_EXEC] = "exec",
};

const char *const sb_fcall_write_names[] = {
	"open",	    "openat",	 "openat2",	"creat",	"truncate",
	"mkdir",    "mkdirat",	 "mknod",	"mknodat",	"unlink",
	"unlinkat", "rmdir",	 "rename",	"renameat",	"renameat2",
	"link",	    "linkat",	 "symlink",	"symlinkat",	"chmod",
	"fchmodat", "fchmodat2", "chown",	"lchown",	"fchownat",
	"setxattr", "lsetxattr", "removexattr", "lremovexattr", NULL,
};

static bool follows(enum follow f, uint64_t flags)
{
	switch (f) {
	case F_YES:
		return true;
	case F_OPEN:
		return !(flags & O_NOFOLLOW) &&
		       (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL);
	case F_NOFOLLOW_FLAG:
		return !(flags & AT_SYMLINK_NOFOLLOW);
	case F_FOLLOW_FLAG:
		return (flags & AT_SYMLINK_FOLLOW) != 0;
	case F_NO:
	default:
		return false;
	}
}

bool sb_fcall_decode(const char *name, const uint64_t args[6], int mem,
		     struct sb_fcall *out)
{
	const struct fspec *s = NULL;

	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < AR_ARRAY_SIZE(specs) && !s; i++)
		if (strcmp(specs[i].name, name) == 0)
			s = &specs[i];
	if (!s)
		return false;
	out->syscall = s->name;
	out->op = s->op;
	out->op_name = op_names[s->op];
	out->write = s->write;
	if (s->flags != NONE)
		out->flags = args[(int)s->flags];
	if (strcmp(name, "openat2") == 0) {
		struct open_how how;

		memset(&how, 0, sizeof(how));
		if (mem < 0 || !args[2] ||
		    pread(mem, &how, sizeof(how), (off_t)args[2]) !=
			    (ssize_t)sizeof(how))
			memset(&how, 0, sizeof(how));
		out->flags = how.flags;
		if (how.resolve & RESOLVE_NO_SYMLINKS)
			out->flags |= O_NOFOLLOW;
	}
	if (strcmp(name, "creat") == 0)
		out->flags = O_CREAT | O_WRONLY | O_TRUNC;
	if (s->op == SB_FOP_OPEN)
		out->write = (out->flags & SB_OPEN_WRITE_FLAGS) != 0;
	if (s->op == SB_FOP_UNLINK && (out->flags & AT_REMOVEDIR)) {
		out->op = SB_FOP_RMDIR;
		out->op_name = op_names[SB_FOP_RMDIR];
	}
	for (size_t i = 0; i < 2 && s->path[i] != NONE; i++) {
		struct sb_fpath *p = &out->p[out->n++];

		p->dfd = s->dfd[i] == CWD ? AT_FDCWD :
					    (int)args[(int)s->dfd[i]];
		p->addr = args[(int)s->path[i]];
		p->follow = follows(s->follow[i], out->flags);
		p->move = out->op == SB_FOP_RENAME;
	}
	return true;
}

/* ---- reading the process ---- */

char *sb_read_str(int mem, uint64_t addr)
{
	char *s;
	size_t len = 0;

	if (addr == 0 || mem < 0)
		return NULL;
	s = ar_xmalloc(SB_MAX_STR + 1);
	/* page by page: a read never crosses a page it does not need */
	while (len < SB_MAX_STR) {
		size_t chunk = 4096 - ((addr + len) & 4095);
		ssize_t r;
		char *nul;

		if (chunk > SB_MAX_STR - len)
			chunk = SB_MAX_STR - len;
		r = pread(mem, s + len, chunk, (off_t)(addr + len));
		if (r <= 0) {
			free(s);
			return NULL;
		}
		nul = memchr(s + len, '\0', (size_t)r);
		if (nul)
			return s;
		len += (size_t)r;
	}
	s[len] = '\0'; /* truncated */
	return s;
}

char *sb_proc_link(pid_t pid, const char *what)
{
	char p[128], buf[4096];
	ssize_t r;

	snprintf(p, sizeof(p), "/proc/%d/%s", (int)pid, what);
	r = readlink(p, buf, sizeof(buf) - 1);
	if (r < 0)
		return NULL;
	buf[r] = '\0';
	return ar_xstrdup(buf);
}

/* The directory a dirfd argument names, for relative paths. */
static char *dir_of(pid_t pid, int dfd)
{
	char what[32];

	if (dfd == AT_FDCWD)
		return sb_proc_link(pid, "cwd");
	snprintf(what, sizeof(what), "fd/%d", dfd);
	return sb_proc_link(pid, what);
}

/* An absolute path with ".", ".." and repeated slashes resolved by
 * name. */
static char *normalize(const char *path)
{
	char *out = ar_xmalloc(strlen(path) + 2), *o = out;

	for (const char *p = path; *p;) {
		const char *e;
		size_t l;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		e = strchrnul(p, '/');
		l = (size_t)(e - p);
		if (l == 1 && p[0] == '.') {
			/* nothing */
		} else if (l == 2 && p[0] == '.' && p[1] == '.') {
			while (o > out && *--o != '/')
				;
		} else {
			*o++ = '/';
			memcpy(o, p, l);
			o += l;
		}
		p = e;
	}
	if (o == out)
		*o++ = '/';
	*o = '\0';
	return out;
}

/* path joined to the directory it is relative to (absolute), or NULL */
static char *joined(pid_t pid, int dfd, const char *path)
{
	_cleanup_free_ char *base = NULL;

	if (path[0] == '/')
		return ar_xstrdup(path);
	base = dir_of(pid, dfd);
	if (!base || base[0] != '/')
		return NULL;
	return path[0] ? ar_xasprintf("%s/%s", base, path) :
			 ar_steal_ptr(&base);
}

char *sb_path_lexical(pid_t pid, int dfd, const char *path)
{
	_cleanup_free_ char *j = NULL;

	if (!path)
		return NULL;
	j = joined(pid, dfd, path);
	return j ? normalize(j) : NULL;
}

/* The path of one of our own fds (opened in the process's root: the
 * path is the process's). */
static char *fd_path(int fd)
{
	char what[64];

	snprintf(what, sizeof(what), "fd/%d", fd);
	return sb_proc_link(getpid(), what);
}

static int open_in_root(int root, const char *path)
{
	struct open_how how = {
		.flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(__NR_openat2, root, path, &how, sizeof(how));
}

/* The next component of p (slashes skipped): its start, *len its length. */
static const char *component(const char *p, size_t *len)
{
	while (*p == '/')
		p++;
	*len = strcspn(p, "/");
	return p;
}

static bool is_comp(const char *c, size_t len, const char *name)
{
	return len == strlen(name) && memcmp(c, name, len) == 0;
}

/* A path through the calling task's own /proc entries: /proc/self/cwd,
 * /proc/self/root, /proc/self/fd/N (and /proc/thread-self/...), which
 * the kernel follows as the task's own directories (magic links that
 * openat2(RESOLVE_NO_MAGICLINKS) from agentrun cannot follow, and whose
 * "self" is not agentrun's). Returns the path they stand for (what the
 * link names, then the rest), or NULL when `text` is no such path or
 * the link names no directory path. */
static char *proc_self_rewrite(pid_t pid, const char *text)
{
	_cleanup_free_ char *base = NULL;
	const char *c = text;
	size_t l;
	char what[32];

	c = component(c, &l);
	if (!is_comp(c, l, "proc"))
		return NULL;
	c = component(c + l, &l);
	if (!is_comp(c, l, "self") && !is_comp(c, l, "thread-self"))
		return NULL;
	c = component(c + l, &l);
	if (is_comp(c, l, "cwd")) {
		base = sb_proc_link(pid, "cwd");
	} else if (is_comp(c, l, "root")) {
		base = ar_xstrdup("/");
	} else if (is_comp(c, l, "fd")) {
		c = component(c + l, &l);
		if (l == 0 || l > 10 || strspn(c, "0123456789") < l)
			return NULL;
		snprintf(what, sizeof(what), "fd/%.*s", (int)l, c);
		base = sb_proc_link(pid, what);
	} else {
		return NULL;
	}
	if (!base || base[0] != '/')
		return NULL;
	return ar_xasprintf("%s/%s", base, c + l);
}

/* The directory `dir` (absolute, in the process's root) could not be
 * opened: the first of its components that is a symbolic link (one
 * that leads through /proc/self, say) replaced by its target, the rest
 * and `last` kept. NULL when none is (the directory does not exist). */
static char *expand_dir_link(int root, const char *dir, const char *last)
{
	_cleanup_free_ char *prefix = ar_xstrdup("/");
	const char *c = dir;
	size_t l;

	for (;;) {
		_cleanup_close_ int pfd = open_in_root(root, prefix);
		_cleanup_free_ char *next = NULL, *ppath = NULL;
		_cleanup_close_ int nfd = -1;
		char comp[256], target[4096];
		struct stat st;
		ssize_t r;

		c = component(c, &l);
		if (l == 0 || l >= sizeof(comp) || pfd < 0)
			return NULL;
		memcpy(comp, c, l);
		comp[l] = '\0';
		c += l;
		next = strcmp(prefix, "/") == 0 ?
			       ar_xasprintf("/%s", comp) :
			       ar_xasprintf("%s/%s", prefix, comp);
		nfd = open_in_root(root, next);
		if (nfd >= 0) {
			free(prefix);
			prefix = ar_steal_ptr(&next);
			continue;
		}
		if (fstatat(pfd, comp, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISLNK(st.st_mode))
			return NULL;
		r = readlinkat(pfd, comp, target, sizeof(target) - 1);
		if (r <= 0)
			return NULL;
		target[r] = '\0';
		if (target[0] == '/')
			return ar_xasprintf("%s%s/%s", target, c, last);
		ppath = fd_path(pfd);
		if (!ppath)
			return NULL;
		return ar_xasprintf("%s/%s%s/%s", ppath, target, c, last);
	}
}

char *sb_path_resolve(pid_t pid, int dfd, const char *path, bool follow)
{
	_cleanup_close_ int root = -1;
	_cleanup_free_ char *text = NULL;
	char rp[64];

	if (!path)
		return NULL;
	text = joined(pid, dfd, path);
	if (!text)
		return NULL;
	snprintf(rp, sizeof(rp), "/proc/%d/root", (int)pid);
	root = open(rp, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		return normalize(text);
	for (int links = 0; links <= 40; links++) {
		_cleanup_free_ char *dir = NULL, *dpath = NULL, *self = NULL;
		_cleanup_close_ int dfd2 = -1;
		char *slash, *last;
		size_t len;
		struct stat st;

		self = proc_self_rewrite(pid, text);
		if (self) {
			free(text);
			text = ar_steal_ptr(&self);
		}
		len = strlen(text);
		while (len > 1 && text[len - 1] == '/')
			text[--len] = '\0';
		slash = strrchr(text, '/');
		last = slash + 1;
		if (!*last || strcmp(last, ".") == 0 ||
		    strcmp(last, "..") == 0) {
			/* the whole path names a directory */
			dfd2 = open_in_root(root, text);
			dpath = dfd2 >= 0 ? fd_path(dfd2) : NULL;
			return dpath ? ar_steal_ptr(&dpath) : normalize(text);
		}
		dir = slash == text ?
			      ar_xstrdup("/") :
			      ar_xasprintf("%.*s", (int)(slash - text), text);
		dfd2 = open_in_root(root, dir);
		if (dfd2 < 0) {
			/* a link in the middle (to /proc/self/cwd, say) */
			_cleanup_free_ char *x =
				expand_dir_link(root, dir, last);

			if (x) {
				free(text);
				text = ar_steal_ptr(&x);
				continue;
			}
		}
		dpath = dfd2 >= 0 ? fd_path(dfd2) : NULL;
		if (!dpath || dpath[0] != '/')
			return normalize(text); /* the call fails: ENOENT */
		if (follow &&
		    fstatat(dfd2, last, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t r = readlinkat(dfd2, last, target,
					       sizeof(target) - 1);

			if (r <= 0)
				break;
			target[r] = '\0';
			free(text);
			text = target[0] == '/' ?
				       ar_xstrdup(target) :
				       ar_xasprintf("%s/%s", dpath, target);
			continue;
		}
		return strcmp(dpath, "/") == 0 ?
			       ar_xasprintf("/%s", last) :
			       ar_xasprintf("%s/%s", dpath, last);
	}
	return normalize(text); /* ELOOP: the call fails too */
}
