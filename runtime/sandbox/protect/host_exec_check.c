/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * What the host would execute, at the end of every plain run
 * (host_exec_check.h).
 *
 * The walk: one pass over the workspace (same filesystem, no symbolic
 * links, nothing in object stores). A directory is "the run's" when its
 * inode changed at or after the start (st_ctim: set by the kernel on
 * every create, remove, rename, write, chmod; a process cannot set it
 * back). A directory whose link count says it has no subdirectory and
 * that did not change is not opened (find's leaf optimisation): nothing
 * below it can be a repository or hold one. Every directory that is read
 * is looked at as git would on the host:
 *   - a `.git` entry (directory, gitdir file, symbolic link): a
 *     repository whose top is this directory (git's discovery at a cd,
 *     the recursion of the outer `git status` into a gitlink);
 *   - HEAD, objects/ and refs/ in it: a bare-layout git directory (git's
 *     discovery takes the directory itself; core.worktree gives it a
 *     worktree);
 * and every git directory found: config and config.worktree (and the
 * files they include), commondir, hooks, core.hooksPath, the hook
 * frameworks an installed hook names, a rebase or sequencer todo,
 * .git/modules (every gitdir below), .git/worktrees; at a repository's top the editor
 * and agent config. What the run created or changed there is
 * neutralised: config keys that run code are commented out (the user's
 * other keys, objects and files stay), any other file is moved to the
 * quarantine. Nothing is deleted: each original is copied into the
 * quarantine first and listed in its MANIFEST.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "git_code.h"
#include "host_exec_check.h"
#include "log.h"
#include "quarantine.h"
#include "utils.h"

#define HX_MAX_DEPTH 200 /* directories below the workspace */
#define HX_MAX_FILE (1 << 20) /* a config, hook or todo read whole */
#define HX_MAX_TOKENS 256 /* words of a hook looked up as paths */
#define DELIM " \t\r;|&()<>\"'`=$,{}"

/* ---- prevention: commondir placeholders ---- */

static bool is_placeholder_text(int fd)
{
	char buf[4];
	ssize_t n = pread(fd, buf, sizeof(buf), 0);

	return n == 2 && buf[0] == '.' && buf[1] == '\n';
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* dir is COMMON/worktrees/NAME */
static bool in_worktrees(const char *dir)
{
	const char *slash = strrchr(dir, '/');
	size_t n;

	if (!slash)
		return false;
	n = (size_t)(slash - dir);
	return n >= 10 && strncmp(slash - 10, "/worktrees", 10) == 0;
}

static void hold(struct sb_hostexec *hx, const char *path, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || flock(fd, LOCK_SH) < 0) {
		close(fd);
		return;
	}
	hx->ph = ar_xrealloc(hx->ph, (hx->n_ph + 1) * sizeof(*hx->ph));
	hx->ph[hx->n_ph++] = (struct sb_hostexec_placeholder){ ar_xstrdup(path),
							       fd, st.st_dev,
							       st.st_ino };
}

void sb_hostexec_prevent(struct sb_hostexec *hx, struct sb_protect *p)
{
	memset(hx, 0, sizeof(*hx));
	/* the clock the kernel stamps inodes with (current_time(): the
	 * coarse clock, or a finer one that is never behind it): every
	 * change after this call is stamped later than it; the container
	 * starts tens of milliseconds later still, so a change of the host
	 * in the same tick, before this call, is not taken for the run's */
	clock_gettime(CLOCK_REALTIME_COARSE, &hx->start);
	hx->armed = true;
	for (size_t i = 0; i < p->n; i++) {
		struct sb_protect_entry *e = &p->v[i];
		_cleanup_free_ char *dir = NULL;
		_cleanup_close_ int dfd = -1;
		struct stat st;
		int fd;

		if (strcmp(base_name(e->path), "commondir") != 0 ||
		    (e->kind != SB_PROT_WATCH && e->kind != SB_PROT_RO))
			continue;
		dir = ar_xstrdup(e->path);
		*strrchr(dir, '/') = '\0';
		/* a linked worktree's gitdir (COMMON/worktrees/NAME) has a
		 * real one */
		if (in_worktrees(dir))
			continue;
		dfd = open(dir,
			   O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0 || fstat(dfd, &st) < 0)
			continue;
		if (e->kind == SB_PROT_RO) {
			/* left by a sandbox killed before its exit, or held
			 * by one still running: share it */
			fd = openat(dfd, "commondir",
				    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
			if (fd >= 0 && is_placeholder_text(fd))
				hold(hx, e->path, fd);
			else if (fd >= 0)
				close(fd);
			continue;
		}
		fd = openat(dfd, "commondir",
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
				    O_CLOEXEC,
			    0644);
		if (fd < 0)
			continue; /* stays watched */
		/* root on a user's checkout: the owner's, like the rest */
		if (fchown(fd, st.st_uid, st.st_gid) < 0 ||
		    write(fd, ".\n", 2) != 2) {
			close(fd);
			unlinkat(dfd, "commondir", 0);
			continue;
		}
		close(fd);
		fd = openat(dfd, "commondir",
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		hold(hx, e->path, fd);
		e->kind = SB_PROT_RO;
	}
}

void sb_hostexec_release(struct sb_hostexec *hx, bool keep)
{
	for (size_t i = 0; i < hx->n_ph; i++) {
		struct sb_hostexec_placeholder *ph = &hx->ph[i];
		struct stat st;

		/* the last one out: no other sandbox holds it */
		if (!keep && flock(ph->fd, LOCK_EX | LOCK_NB) == 0 &&
		    is_placeholder_text(ph->fd) && lstat(ph->path, &st) == 0 &&
		    st.st_dev == ph->dev && st.st_ino == ph->ino)
			unlink(ph->path);
		close(ph->fd);
		free(ph->path);
	}
	free(hx->ph);
	memset(hx, 0, sizeof(*hx));
}

/* ---- the check ---- */

struct hx_ctx {
	struct sb_hostexec *hx;
	const struct sb_hostexec_input *in;
	int wsfd;
	char **optin; /* --rw paths strictly below the workspace */
	size_t n_optin;
	struct sb_quarantine q;
	/* git directories already checked */
	struct {
		dev_t dev;
		ino_t ino;
	} * seen;
	size_t n_seen;
	bool too_deep;
	size_t n_read, n_leaves; /* directories read, leaves not opened */
	/* the workspace's filesystem counts subdirectories in a
	 * directory's link count (2: none) */
	bool leaf_ok;
	/* the start's search for repositories (protect.h) read every
	 * directory down to SB_PROTECT_DEPTH outside node_modules: it
	 * was not cut short */
	bool start_complete;
	/* core.hooksPath of the user's global config (a relative one
	 * names a directory in every repository's worktree) */
	char *global_hooks;
	/* while a --rw directory is walked: the workspace below it, walked
	 * already */
	const char *skip;
	/* changes at or after it are the run's: its start, or the time a
	 * live --rw grant was made (while that one is walked) */
	struct timespec since;
	/* one directory at a time, not its subdirectories: the changed
	 * ones the kernel told of (check_changed) */
	bool flat;
};

static bool changed(const struct hx_ctx *c, const struct stat *st)
{
	const struct timespec *s = &c->since;

	return st->st_ctim.tv_sec > s->tv_sec ||
	       (st->st_ctim.tv_sec == s->tv_sec &&
		st->st_ctim.tv_nsec > s->tv_nsec);
}

/* The check of a killed run at the next start (no plan: run_record.c):
 * path is in a directory still marked as a placeholder (the killed run's,
 * swept only after this check). The agent could not write there; what is
 * inside is the host's, e.g. the user's .idea/workspace.xml. Only the
 * workspace's own placeholder names count (sb_protect_placeholder_name):
 * those the agent could neither make nor mark (read-only for the run); a
 * directory it made elsewhere, marked by it with the xattr, is checked as
 * any other (test_faults_kill: the agent marks its repository). */
static bool in_leftover_placeholder(const struct hx_ctx *c, const char *path)
{
	_cleanup_free_ char *d = ar_xstrdup(path);
	const char *ws = c->in->workspace;
	size_t wl = strlen(ws);

	while (ar_path_under(d, ws) && strcmp(d, ws) != 0) {
		const char *rel = d + wl + (ws[wl - 1] == '/' ? 0 : 1);
		bool top = sb_protect_placeholder_name(rel);
		struct stat st;
		/* a directory, or a file placeholder (.claude/settings.json) */
		_cleanup_close_ int fd =
			top && lstat(d, &st) == 0 &&
					(S_ISDIR(st.st_mode) ||
					 S_ISREG(st.st_mode)) ?
				open(d, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
						O_CLOEXEC) :
				-1;
		char *slash;

		if (fd >= 0 && sb_placeholder_marked(fd))
			return true;
		slash = strrchr(d, '/');
		if (!slash || slash == d)
			break;
		*slash = '\0';
	}
	return false;
}

/* Left alone: opted in with --rw, or read-only or under a placeholder
 * for the whole run (the agent could not write there: a change is the
 * host's own, e.g. an editor's .vscode/settings.json). */
static bool opted_in(const struct hx_ctx *c, const char *path)
{
	const struct sb_protect_entry *e =
		sb_protect_find(c->in->protect, path);

	if (e && (e->kind == SB_PROT_RO || e->kind == SB_PROT_ABSENT))
		return true;
	if (!c->in->protect && in_leftover_placeholder(c, path))
		return true;
	for (size_t i = 0; i < c->n_optin; i++)
		if (ar_path_under(path, c->optin[i]))
			return true;
	return false;
}

/* Into the quarantine, unless the user opted the path in (a --rw path
 * below the workspace: its files are the user's to keep). */
static void set_aside(struct hx_ctx *c, int dfd, const char *name,
		      const char *path, const char *why)
{
	if (!opted_in(c, path))
		sb_quarantine_set_aside(&c->q, dfd, name, path, why);
}

/* (its callers have checked opted_in) */
static void neutralise_text(struct hx_ctx *c, int dfd, const char *name,
			    const char *path, const struct stat *st,
			    const char *text, const char *why)
{
	sb_quarantine_neutralise(&c->q, dfd, name, path, st, text, why);
}

static bool is_placeholder(const struct hx_ctx *c, const struct stat *st)
{
	for (size_t i = 0; i < c->hx->n_ph; i++)
		if (c->hx->ph[i].dev == st->st_dev &&
		    c->hx->ph[i].ino == st->st_ino)
			return true;
	return false;
}

static char *read_at(int dfd, const char *name, size_t *len)
{
	_cleanup_close_ int fd = openat(
		dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	char *buf;
	size_t n = 0;
	struct stat st;

	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > HX_MAX_FILE)
		return NULL;
	buf = ar_xmalloc((size_t)st.st_size + 1);
	while (n < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)st.st_size - n);

		if (r <= 0)
			break;
		n += (size_t)r;
	}
	buf[n] = '\0';
	*len = n;
	return buf;
}

static int open_beneath(int wsfd, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS |
			   RESOLVE_NO_XDEV,
	};
	int fd = (int)syscall(SYS_openat2, wsfd, rel, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS)
		fd = openat(wsfd, rel, flags | O_CLOEXEC | O_NOFOLLOW);
	return fd;
}

/* The directory holding `path` (absolute, below the workspace) and the
 * last name; -1 when outside or missing. */
static int open_parent(struct hx_ctx *c, const char *path, char **name)
{
	const char *ws = c->in->workspace;
	_cleanup_free_ char *dir = NULL;
	char *slash;
	size_t wl = strlen(ws);

	if (!ar_path_under(path, ws) || strlen(path) <= wl + 1)
		return -1;
	dir = ar_xstrdup(path + wl + 1);
	slash = strrchr(dir, '/');
	*name = ar_xstrdup(slash ? slash + 1 : dir);
	if (!slash)
		return dup(c->wsfd);
	*slash = '\0';
	return open_beneath(c->wsfd, dir, O_RDONLY | O_DIRECTORY);
}

/* "/a/./b/../c" -> "/a/c" (lexical; the result is opened beneath the
 * workspace, symbolic links refused there). Malloc'd. */
static char *normalise(const char *path)
{
	char *out = ar_xmalloc(strlen(path) + 2), *o = out;
	const char *s = path;

	*o = '\0';
	while (*s) {
		const char *e;
		size_t n;

		while (*s == '/')
			s++;
		e = strchrnul(s, '/');
		n = (size_t)(e - s);
		if (n == 0 || (n == 1 && s[0] == '.')) {
		} else if (n == 2 && s[0] == '.' && s[1] == '.') {
			char *up = strrchr(out, '/');

			o = up ? up : out;
			*o = '\0';
		} else {
			*o++ = '/';
			memcpy(o, s, n);
			o += n;
			*o = '\0';
		}
		s = e;
	}
	if (out[0] == '\0')
		strcpy(out, "/");
	return out;
}

static char *join(const char *dir, const char *rel)
{
	_cleanup_free_ char *full = rel[0] == '/' ?
					    ar_xstrdup(rel) :
					    ar_xasprintf("%s/%s", dir, rel);

	return normalise(full);
}

static void check_config(struct hx_ctx *c, int dfd, const char *name,
			 const char *path, int depth);

/* include.path values of a config at `path` that lead into the
 * workspace: checked like the config itself. */
static void check_includes(struct hx_ctx *c, const char *path, const char *text,
			   size_t len, int depth)
{
	_cleanup_strv_ char **inc = sb_git_config_includes(text, len);
	_cleanup_free_ char *dir = ar_xstrdup(path);

	*strrchr(dir, '/') = '\0';
	for (size_t i = 0; inc && inc[i]; i++) {
		_cleanup_free_ char *target = NULL, *name = NULL;
		_cleanup_close_ int pfd = -1;

		if (inc[i][0] == '~' && inc[i][1] == '/')
			target = join(c->in->home, inc[i] + 2);
		else
			target = join(dir, inc[i]);
		pfd = open_parent(c, target, &name);
		if (pfd >= 0)
			check_config(c, pfd, name, target, depth + 1);
	}
}

/* A git config file: the run's changes lose their code-running keys. */
static void check_config(struct hx_ctx *c, int dfd, const char *name,
			 const char *path, int depth)
{
	_cleanup_free_ char *text = NULL, *out = NULL, *keys = NULL;
	size_t len = 0;
	struct stat st;
	int n;

	if (depth > 8 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (!S_ISREG(st.st_mode)) {
		if (changed(c, &st) && !S_ISDIR(st.st_mode))
			set_aside(c, dfd, name, path,
				  "git config that is not a file");
		return;
	}
	text = read_at(dfd, name, &len);
	if (!text) {
		if (changed(c, &st))
			set_aside(c, dfd, name, path, "git config, unreadable");
		return;
	}
	if (changed(c, &st) && !opted_in(c, path)) {
		n = sb_git_config_neutralise(text, len, &out, &keys);
		if (n < 0) {
			set_aside(c, dfd, name, path,
				  "git config this check cannot read");
			return;
		}
		if (n > 0) {
			_cleanup_free_ char *why = ar_xasprintf("%s", keys);

			neutralise_text(c, dfd, name, path, &st, out, why);
			free(text);
			text = out;
			out = NULL;
			len = strlen(text);
		}
	}
	check_includes(c, path, text, len, depth);
}

static void check_hook_targets(struct hx_ctx *c, int topfd, const char *top,
			       const char *text);

/* Hook files in dfd (a hooks directory): the run's are set aside, the
 * others name the worktree files they run. */
static void check_hooks_dir(struct hx_ctx *c, int dfd, const char *path,
			    int topfd, const char *top, bool all)
{
	DIR *d = ar_dir_at(dfd, ".", 0);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *p = NULL, *text = NULL;
		size_t len, nl = strlen(e->d_name);
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (!all && nl > 7 &&
		    strcmp(e->d_name + nl - 7, ".sample") == 0)
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    S_ISDIR(st.st_mode))
			continue;
		p = ar_xasprintf("%s/%s", path, e->d_name);
		if (changed(c, &st) && !opted_in(c, p)) {
			set_aside(c, dirfd(d), e->d_name, p, "git hook");
			continue;
		}
		if (topfd >= 0 && S_ISREG(st.st_mode) &&
		    (text = read_at(dirfd(d), e->d_name, &len)))
			check_hook_targets(c, topfd, top, text);
	}
	closedir(d);
}

/* A file below the top the run changed: set aside. script: only an
 * executable file or one named like a script (a word of a hook that
 * names a README is not what the hook runs). */
static bool script_like(const char *name, const struct stat *st)
{
	static const char *const ext[] = { ".sh", ".bash", ".zsh", ".py",
					   ".js", ".mjs",  ".cjs", ".ts",
					   ".rb", ".pl",   ".php", ".lua" };
	const char *dot = strrchr(name, '.');

	if (st->st_mode & 0111)
		return true;
	for (size_t i = 0; dot && i < AR_ARRAY_SIZE(ext); i++)
		if (strcmp(dot, ext[i]) == 0)
			return true;
	return false;
}

static void check_top_file_as(struct hx_ctx *c, const char *top,
			      const char *rel, const char *why, bool script)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/%s", top, rel);
	_cleanup_free_ char *name = NULL;
	_cleanup_close_ int pfd = open_parent(c, path, &name);
	struct stat st;

	if (pfd >= 0 && fstatat(pfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISDIR(st.st_mode) && changed(c, &st) &&
	    (!script || script_like(name, &st)))
		set_aside(c, pfd, name, path, why);
}

static void check_top_file(struct hx_ctx *c, int topfd, const char *top,
			   const char *rel, const char *why)
{
	(void)topfd;
	check_top_file_as(c, top, rel, why, false);
}

/* Files the run changed in top/rel, `levels` deep. */
static void check_top_tree(struct hx_ctx *c, int dfd, const char *path,
			   const char *why, int levels)
{
	DIR *d = ar_dir_at(dfd, ".", 0);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *p = NULL;
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		p = ar_xasprintf("%s/%s", path, e->d_name);
		if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int sub = -1;

			if (levels > 1 &&
			    (sub = openat(dirfd(d), e->d_name,
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						  O_CLOEXEC)) >= 0)
				check_top_tree(c, sub, p, why, levels - 1);
			continue;
		}
		if (changed(c, &st))
			set_aside(c, dirfd(d), e->d_name, p, why);
	}
	closedir(d);
}

static void check_top_dir(struct hx_ctx *c, const char *top, const char *rel,
			  const char *why, int levels)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/%s", top, rel);
	_cleanup_close_ int fd = -1;
	size_t wl = strlen(c->in->workspace);

	if (!ar_path_under(path, c->in->workspace))
		return;
	fd = open_beneath(c->wsfd, path + wl + 1, O_RDONLY | O_DIRECTORY);
	if (fd >= 0)
		check_top_tree(c, fd, path, why, levels);
}

/* What an installed hook runs from the worktree: a hook framework's
 * config, or a file it names. */
static void check_hook_targets(struct hx_ctx *c, int topfd, const char *top,
			       const char *text)
{
	static const char *const lefthook[] = {
		"lefthook.yml",	       ".lefthook.yml",
		"lefthook.yaml",       ".lefthook.yaml",
		"lefthook.toml",       ".lefthook.toml",
		"lefthook.json",       ".lefthook.json",
		"lefthook-local.yml",  ".lefthook-local.yml",
		"lefthook-local.yaml", ".lefthook-local.yaml",
		"lefthook-local.toml", ".lefthook-local.toml",
		"lefthook-local.json", ".lefthook-local.json",
	};
	_cleanup_free_ char *copy = NULL;
	char *save = NULL;
	int n = 0;

	if (strstr(text, "pre-commit.com") || strstr(text, "pre_commit") ||
	    strstr(text, "hook-impl")) {
		check_top_file(
			c, topfd, top, ".pre-commit-config.yaml",
			"pre-commit framework config an installed hook reads");
		check_top_file(
			c, topfd, top, ".pre-commit-config.yml",
			"pre-commit framework config an installed hook reads");
	}
	if (strstr(text, "lefthook")) {
		for (size_t i = 0; i < AR_ARRAY_SIZE(lefthook); i++)
			check_top_file(
				c, topfd, top, lefthook[i],
				"lefthook config an installed hook reads");
		check_top_dir(c, top, ".lefthook",
			      "lefthook script an installed hook runs", 3);
		check_top_dir(c, top, ".lefthook-local",
			      "lefthook script an installed hook runs", 3);
	}
	/* the words of the hook (not of its comment lines) that name a
	 * script below the top */
	copy = ar_xstrdup(text);
	for (char *line = strtok_r(copy, "\n", &save);
	     line && n < HX_MAX_TOKENS; line = strtok_r(NULL, "\n", &save)) {
		char *wsave = NULL;

		line += strspn(line, " \t");
		if (line[0] == '#')
			continue;
		for (char *w = strtok_r(line, DELIM, &wsave);
		     w && n < HX_MAX_TOKENS;
		     w = strtok_r(NULL, DELIM, &wsave)) {
			while (w[0] == '.' && w[1] == '/')
				w += 2;
			while (*w == '/')
				w++; /* "$(git rev-parse --show-toplevel)/x" */
			if (!*w || strstr(w, "..") || !strpbrk(w, "/."))
				continue;
			n++;
			check_top_file_as(c, top, w, "a script a git hook runs",
					  true);
		}
	}
}

/* core.hooksPath of a repository whose top is `top`: the directory and,
 * for husky's ".husky/_", the directory above it (.husky/pre-commit). */
static void check_hookspath(struct hx_ctx *c, const char *gitdir_path, int gfd,
			    int topfd, const char *top)
{
	_cleanup_free_ char *text = NULL, *hp = NULL, *dir = NULL;
	size_t len = 0, wl = strlen(c->in->workspace);

	text = read_at(gfd, "config", &len);
	hp = text ? sb_git_config_hookspath(text, len) : NULL;
	if (!hp && c->global_hooks)
		hp = ar_xstrdup(c->global_hooks);
	if (!hp || !*hp)
		return;
	if (hp[0] == '~' && hp[1] == '/')
		dir = join(c->in->home, hp + 2);
	else
		dir = join(top ? top : gitdir_path, hp);
	while (ar_path_under(dir, c->in->workspace) && strlen(dir) > wl &&
	       (!top || strcmp(dir, top) != 0)) {
		_cleanup_close_ int fd = open_beneath(c->wsfd, dir + wl + 1,
						      O_RDONLY | O_DIRECTORY);
		char *slash;

		if (fd >= 0)
			check_hooks_dir(c, fd, dir, topfd, top, true);
		/* one level up, when it is below the top (.husky/_) */
		slash = strrchr(dir, '/');
		if (!top || !slash || strcmp(base_name(dir), "_") != 0)
			break;
		*slash = '\0';
	}
}

static void check_gitdir(struct hx_ctx *c, int gfd, const char *path, int topfd,
			 const char *top);
static void check_dotgit(struct hx_ctx *c, int dfd, const char *dir);

/* .git/modules: every directory holding HEAD is a submodule's gitdir */
static void check_modules(struct hx_ctx *c, int dfd, const char *path,
			  int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 8 || !(d = ar_dir_at(dfd, ".", 0)))
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *p = NULL;
		_cleanup_close_ int sub = -1;
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		sub = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		p = ar_xasprintf("%s/%s", path, e->d_name);
		if (fstatat(sub, "HEAD", &st, AT_SYMLINK_NOFOLLOW) == 0)
			check_gitdir(c, sub, p, -1, NULL);
		else
			check_modules(c, sub, p, depth + 1);
	}
	closedir(d);
}

static void check_worktrees(struct hx_ctx *c, int gfd, const char *path)
{
	_cleanup_free_ char *wpath = ar_xasprintf("%s/worktrees", path);
	DIR *d = ar_dir_at(gfd, "worktrees", O_NOFOLLOW);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		_cleanup_free_ char *p = NULL;
		_cleanup_close_ int sub = -1;

		if (e->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		p = ar_xasprintf("%s/%s", wpath, e->d_name);
		check_gitdir(c, sub, p, -1, NULL);
	}
	closedir(d);
}

/* commondir: a linked worktree's names its common directory two levels
 * up; anything else sends git to another directory's config. */
static void check_commondir(struct hx_ctx *c, int gfd, const char *path)
{
	_cleanup_free_ char *cd = ar_xasprintf("%s/commondir", path);
	_cleanup_free_ char *text = NULL, *target = NULL, *expect = NULL;
	size_t len = 0;
	struct stat st;

	if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    is_placeholder(c, &st) || !changed(c, &st) || opted_in(c, cd))
		return;
	text = S_ISREG(st.st_mode) ? read_at(gfd, "commondir", &len) : NULL;
	if (text) {
		_cleanup_free_ char *parent = ar_xstrdup(path);
		char *slash = strrchr(parent, '/');

		text[strcspn(text, "\n")] = '\0';
		target = join(path, text);
		if (slash && strcmp(base_name(parent), "worktrees") != 0) {
			*slash = '\0';
			if (strcmp(base_name(parent), "worktrees") == 0) {
				slash = strrchr(parent, '/');
				*slash = '\0';
				expect = ar_xstrdup(parent);
			}
		}
	}
	if (expect && target && strcmp(expect, target) == 0)
		return;
	set_aside(
		c, gfd, "commondir", cd,
		"git redirect file: git would read another directory's config");
}

/* A rebase or cherry-pick in progress: its todo's exec lines. */
static void check_todo(struct hx_ctx *c, int gfd, const char *path,
		       const char *rel)
{
	_cleanup_free_ char *p = ar_xasprintf("%s/%s", path, rel);
	_cleanup_free_ char *name = NULL, *text = NULL, *out = NULL;
	_cleanup_close_ int dfd = open_parent(c, p, &name);
	size_t len = 0;
	struct stat st;

	(void)gfd;
	if (dfd < 0 || fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !changed(c, &st) || opted_in(c, p))
		return;
	if (!S_ISREG(st.st_mode) || !(text = read_at(dfd, name, &len))) {
		set_aside(c, dfd, name, p, "a rebase todo");
		return;
	}
	if (sb_git_todo_neutralise(text, len, &out) > 0)
		neutralise_text(
			c, dfd, name, p, &st, out,
			"`exec` lines of a rebase in progress (git rebase --continue)");
}

static bool seen(struct hx_ctx *c, int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return true;
	for (size_t i = 0; i < c->n_seen; i++)
		if (c->seen[i].dev == st.st_dev && c->seen[i].ino == st.st_ino)
			return true;
	c->seen = ar_xrealloc(c->seen, (c->n_seen + 1) * sizeof(*c->seen));
	c->seen[c->n_seen].dev = st.st_dev;
	c->seen[c->n_seen++].ino = st.st_ino;
	return false;
}

/* Editor and agent config at a repository's top (the plan holds the
 * ones of the repositories it found; these are the others'). */
static void check_top(struct hx_ctx *c, int topfd, const char *top)
{
	const char *name, *why;

	/* each name a directory (files 3 levels deep) or a file */
	for (size_t i = 0; sb_protect_top_config(i, &name, &why); i++) {
		check_top_dir(c, top, name, why, 3);
		check_top_file(c, topfd, top, name, why);
	}
	check_top_file(c, topfd, top, ".claude/settings.json",
		       "agent config (hooks, commands, permissions)");
	check_top_file(c, topfd, top, ".claude/settings.local.json",
		       "agent config (hooks, commands, permissions)");
	check_top_dir(c, top, ".claude/commands", "agent commands", 3);
	check_top_dir(c, top, ".claude/agents", "agent definitions", 3);
}

static void check_gitdir(struct hx_ctx *c, int gfd, const char *path, int topfd,
			 const char *top)
{
	_cleanup_close_ int hfd = -1, mfd = -1;
	_cleanup_free_ char *hpath = ar_xasprintf("%s/hooks", path);
	_cleanup_free_ char *cfg = ar_xasprintf("%s/config", path);
	_cleanup_free_ char *cfgw = ar_xasprintf("%s/config.worktree", path);
	_cleanup_free_ char *mpath = ar_xasprintf("%s/modules", path);
	struct stat st;

	if (seen(c, gfd))
		return;
	check_config(c, gfd, "config", cfg, 0);
	check_config(c, gfd, "config.worktree", cfgw, 0);
	check_commondir(c, gfd, path);
	if (fstatat(gfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		if (!S_ISDIR(st.st_mode) && changed(c, &st))
			set_aside(c, gfd, "hooks", hpath,
				  "git hooks directory replaced");
		else if ((hfd = openat(gfd, "hooks",
				       O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					       O_CLOEXEC)) >= 0)
			check_hooks_dir(c, hfd, hpath, topfd, top, false);
	}
	check_hookspath(c, path, gfd, topfd, top);
	check_todo(c, gfd, path, "rebase-merge/git-rebase-todo");
	check_todo(c, gfd, path, "sequencer/todo");
	/* a repository inside the git directory (git at a cd into it) */
	check_dotgit(c, gfd, path);
	mfd = openat(gfd, "modules",
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (mfd >= 0)
		check_modules(c, mfd, mpath, 0);
	check_worktrees(c, gfd, path);
	if (top)
		check_top(c, topfd, top);
}

/* A gitdir file's target, absolute and normalised, or NULL. */
static char *gitfile_target(int dfd, const char *dir)
{
	size_t len = 0;
	_cleanup_free_ char *text = read_at(dfd, ".git", &len);
	char *s;

	if (!text || strncmp(text, "gitdir:", 7) != 0)
		return NULL;
	s = text + 7;
	while (*s == ' ')
		s++;
	s[strcspn(s, "\r\n")] = '\0';
	return *s ? join(dir, s) : NULL;
}

static bool plan_gitdir(const struct hx_ctx *c, const char *path)
{
	const struct sb_protect *p = c->in->protect;

	for (size_t i = 0; p && i < p->n; i++)
		if (p->v[i].kind == SB_PROT_PIN && !p->v[i].holder &&
		    strcmp(p->v[i].path, path) == 0)
			return true;
	return false;
}

/* The workspace is a linked worktree or a submodule: its git directory
 * (and a worktree's common directory) is outside, protected by the plan;
 * their core.hooksPath and hooks still name files of this worktree. */
static void outside_gitdir(struct hx_ctx *c, const char *t, int topfd,
			   const char *top)
{
	_cleanup_close_ int gfd =
		open(t, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int cfd = -1, hfd = -1;
	_cleanup_free_ char *cd = NULL, *common = NULL, *hooks = NULL;
	size_t len = 0;

	if (gfd < 0)
		return;
	cd = read_at(gfd, "commondir", &len);
	if (cd) {
		cd[strcspn(cd, "\n")] = '\0';
		common = join(t, cd);
		if (plan_gitdir(c, common))
			cfd = open(common, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
						   O_CLOEXEC);
	}
	if (cfd < 0) {
		free(common);
		common = ar_xstrdup(t);
		cfd = dup(gfd);
	}
	if (cfd < 0)
		return;
	check_hookspath(c, common, cfd, topfd, top);
	hooks = ar_xasprintf("%s/hooks", common);
	hfd = openat(cfd, "hooks",
		     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd >= 0)
		check_hooks_dir(c, hfd, hooks, topfd, top, false);
}

/* dir/.git, whatever it is */
static void check_dotgit(struct hx_ctx *c, int dfd, const char *dir)
{
	_cleanup_free_ char *path = ar_xasprintf("%s/.git", dir);
	struct stat st;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	if (S_ISDIR(st.st_mode)) {
		_cleanup_close_ int gfd =
			openat(dfd, ".git",
			       O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

		if (gfd >= 0)
			check_gitdir(c, gfd, path, dfd, dir);
		return;
	}
	if (S_ISREG(st.st_mode)) {
		_cleanup_free_ char *t = gitfile_target(dfd, dir);
		_cleanup_free_ char *name = NULL;
		_cleanup_close_ int pfd = -1, gfd = -1;

		if (t && ar_path_under(t, c->in->workspace) &&
		    (pfd = open_parent(c, t, &name)) >= 0 &&
		    (gfd = openat(pfd, name,
				  O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					  O_CLOEXEC)) >= 0) {
			check_gitdir(c, gfd, t, dfd, dir);
			return;
		}
		/* outside the workspace: the run may only point it at a
		 * git directory the plan protected */
		if (t && plan_gitdir(c, t))
			outside_gitdir(c, t, dfd, dir);
		else if (changed(c, &st))
			set_aside(
				c, dfd, ".git", path,
				"gitdir file naming a directory this check cannot see");
		return;
	}
	if (changed(c, &st))
		set_aside(c, dfd, ".git", path,
			  "`.git` that is not a directory or a gitdir file");
}

static bool is_dot(const char *n)
{
	return n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2]));
}

/* One directory of the walk (fd owned). */
/* covered: this directory is one the start's search read (or the
 * workspace), so its subdirectories down to SB_PROTECT_DEPTH, but
 * node_modules, had their `.git` looked at when the run started. */
static void walk(struct hx_ctx *c, int fd, const char *path, dev_t dev,
		 int depth, bool covered)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;
	char **subs = NULL;
	size_t n = 0, cap = 0;
	bool head = false, objects = false, refs = false, dotgit = false;
	bool bare;

	if (!d) {
		close(fd);
		return;
	}
	c->n_read++;
	while ((e = readdir(d))) {
		if (is_dot(e->d_name))
			continue;
		if (strcmp(e->d_name, ".git") == 0) {
			dotgit = true;
			continue;
		}
		if (strcmp(e->d_name, "HEAD") == 0 && e->d_type != DT_DIR)
			head = true;
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(e->d_name, "objects") == 0)
			objects = true;
		if (strcmp(e->d_name, "refs") == 0)
			refs = true;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			subs = ar_xrealloc(subs, cap * sizeof(char *));
		}
		subs[n++] = ar_xstrdup(e->d_name);
	}
	bare = head && objects && refs;
	if (bare)
		check_gitdir(c, dirfd(d), path, -1, NULL);
	if (dotgit)
		check_dotgit(c, dirfd(d), path);
	for (size_t i = 0; i < n && c->flat; i++)
		free(subs[i]);
	if (c->flat)
		n = 0;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *name = subs[i];
		_cleanup_free_ char *sub = NULL;
		struct stat st;
		int cfd;
		bool sub_covered = covered && c->start_complete &&
				   depth + 1 <= SB_PROTECT_DEPTH &&
				   strcmp(name, "node_modules") != 0;

		if (bare && strcmp(name, "objects") == 0)
			continue; /* the object store: nothing git runs */
		if (fstatat(dirfd(d), name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		if (c->leaf_ok && st.st_nlink == 2 && !changed(c, &st)) {
			/* no subdirectory, same entries as at the start: only
			 * a gitdir file rewritten in place can matter; where
			 * the start's search looked (sub_covered), a `.git`
			 * file there then is bound read-only for the run (it
			 * cannot have been rewritten), and one made since
			 * would have changed the directory */
			char g[NAME_MAX + 8];
			struct stat gst;

			if (sub_covered) {
				c->n_leaves++;
				continue;
			}

			snprintf(g, sizeof(g), "%s/.git", name);
			if (fstatat(dirfd(d), g, &gst, AT_SYMLINK_NOFOLLOW) <
			    0) {
				c->n_leaves++;
				continue;
			}
		}
		sub = ar_xasprintf("%s/%s", path, name);
		if (c->skip && strcmp(sub, c->skip) == 0)
			continue;
		if (depth >= HX_MAX_DEPTH) {
			c->too_deep = true;
			continue;
		}
		cfd = openat(dirfd(d), name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			if (changed(c, &st)) {
				_cleanup_free_ char *p = sb_quarantine_esc(sub);

				c->q.found++;
				ar_warn("sandbox: the run left `%s`, which this check cannot read (%s): do not run git in it before looking at it",
					p, strerror(errno));
			}
			continue;
		}
		walk(c, cfd, sub, dev, depth + 1, sub_covered);
	}
	free(subs);
	closedir(d);
}

static void global_hookspath(struct hx_ctx *c)
{
	const char *xdg = NULL;
	_cleanup_free_ char *a = NULL, *b = NULL;
	const char *files[2];

	for (char *const *e = c->in->environ; e && *e; e++)
		if (strncmp(*e, "XDG_CONFIG_HOME=/", 17) == 0)
			xdg = *e + 16;
	files[0] = a = xdg ? ar_xasprintf("%s/git/config", xdg) :
			     ar_xasprintf("%s/.config/git/config", c->in->home);
	files[1] = b = ar_xasprintf("%s/.gitconfig", c->in->home);
	/* ~/.gitconfig is read after the XDG file: its value wins */
	for (size_t i = 0; i < 2; i++) {
		size_t len = 0;
		/* the user's own, often a link into a dotfiles checkout */
		_cleanup_free_ char *real = realpath(files[i], NULL);
		_cleanup_free_ char *text =
			real ? read_at(AT_FDCWD, real, &len) : NULL;
		char *hp = text ? sb_git_config_hookspath(text, len) : NULL;

		if (hp) {
			free(c->global_hooks);
			c->global_hooks = hp;
		}
	}
}

static bool leaf_fs(int fd)
{
	struct statfs sfs;

	return fstatfs(fd, &sfs) == 0 &&
	       (sfs.f_type == EXT4_SUPER_MAGIC ||
		sfs.f_type == XFS_SUPER_MAGIC || sfs.f_type == TMPFS_MAGIC ||
		sfs.f_type == F2FS_SUPER_MAGIC);
}

/* One --rw directory `real` outside the workspace, walked like it. */
static void walk_dir(struct hx_ctx *c, const char *real)
{
	const struct sb_hostexec_input *in = c->in;
	struct sb_hostexec_input sub = *in;
	int wsfd = c->wsfd;
	bool leaf_ok = c->leaf_ok;
	struct stat st;
	int fd = open(real, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return; /* a file, or gone */
	if (fstat(fd, &st) < 0) {
		close(fd);
		return;
	}
	sub.workspace = real;
	c->in = &sub;
	c->wsfd = fd;
	c->leaf_ok = leaf_fs(fd);
	c->skip = ar_path_under(in->workspace, real) ? in->workspace : NULL;
	walk(c, fcntl(fd, F_DUPFD_CLOEXEC, 0), real, st.st_dev, 0, false);
	close(fd);
	c->in = in;
	c->wsfd = wsfd;
	c->leaf_ok = leaf_ok;
	c->skip = NULL;
}

static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* Each --rw directory outside the workspace (the agent could write
 * anywhere in it), walked like the workspace: same start time, same
 * rules, nothing opted in there; the start's search did not look there
 * (no leaf is skipped for that). A directory below another one given,
 * or holding the workspace (which is skipped), is walked once. Then
 * each live --rw grant (in->late), from the time it was granted, unless
 * a start-time one or an earlier grant above it was walked already. */
static void walk_rw_dirs(struct hx_ctx *c)
{
	const struct sb_hostexec_input *in = c->in;
	char **real = ar_xcalloc(in->n_rw + 1, sizeof(char *));

	for (size_t i = 0; i < in->n_rw; i++)
		real[i] = sb_protect_lexical(in->home, in->rw[i]);
	for (size_t i = 0; i < in->n_rw; i++) {
		bool dup_of = false;

		if (!real[i] || ar_path_under(real[i], in->workspace))
			continue;
		for (size_t j = 0; j < in->n_rw && !dup_of; j++)
			dup_of = j != i && real[j] &&
				 !ar_path_under(real[j], in->workspace) &&
				 ar_path_under(real[i], real[j]) &&
				 (strcmp(real[i], real[j]) != 0 || j < i);
		if (!dup_of)
			walk_dir(c, real[i]);
	}
	for (size_t i = 0; i < in->n_late; i++) {
		const struct sb_hostexec_dir *d = &in->late[i];
		bool dup_of = ar_path_under(d->dir, in->workspace);

		for (size_t j = 0; j < in->n_rw && !dup_of; j++)
			dup_of = real[j] &&
				 !ar_path_under(real[j], in->workspace) &&
				 ar_path_under(d->dir, real[j]);
		for (size_t j = 0; j < in->n_late && !dup_of; j++) {
			const struct sb_hostexec_dir *e = &in->late[j];

			dup_of = j != i && ar_path_under(d->dir, e->dir) &&
				 (ts_before(&e->since, &d->since) ||
				  (!ts_before(&d->since, &e->since) &&
				   (strcmp(d->dir, e->dir) != 0 || j < i)));
		}
		if (dup_of)
			continue;
		c->since = d->since;
		walk_dir(c, d->dir);
		c->since = c->hx->start;
	}
	for (size_t i = 0; i < in->n_rw; i++)
		free(real[i]);
	free(real);
}

static void add_dir(char ***v, size_t *n, size_t *cap, char *path)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = ar_xrealloc(*v, *cap * sizeof(char *));
	}
	(*v)[(*n)++] = path;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The workspace checked from the kernel's list of its changed
 * directories (change_watch.h), not by reading every one: each changed
 * directory and each above it up to the workspace (a hook written in
 * .git/hooks is checked with its repository: a directory holding `.git`
 * or a git directory is checked whole, check_gitdir), one at a time
 * (flat: a changed subdirectory is on the list itself, a new one with
 * what was made in it). And every repository the start's search found
 * (protect.h), changed or not: a config there may include a file the
 * run changed elsewhere, as the walk would have seen. */
static void check_changed(struct hx_ctx *c, char **dirs, size_t nd, dev_t dev)
{
	const char *ws = c->in->workspace;
	const struct sb_protect *p = c->in->protect;
	size_t wl = strlen(ws), n = 0, cap = 0;
	char **v = NULL;

	add_dir(&v, &n, &cap, ar_xstrdup(ws));
	for (size_t i = 0; i < nd; i++) {
		char *s;

		/* each directory above it, to the workspace */
		while ((s = strrchr(dirs[i], '/')) &&
		       (size_t)(s - dirs[i]) > wl) {
			add_dir(&v, &n, &cap, dirs[i]);
			dirs[i] = ar_xasprintf("%.*s", (int)(s - dirs[i]),
					       dirs[i]);
		}
		if (strlen(dirs[i]) > wl)
			add_dir(&v, &n, &cap, dirs[i]);
		else
			free(dirs[i]);
		dirs[i] = NULL;
	}
	for (size_t i = 0; p && i < p->n; i++) {
		const char *g = strstr(p->v[i].path, "/.git/");

		if (g && (size_t)(g - p->v[i].path) >= wl)
			add_dir(&v, &n, &cap,
				ar_xasprintf("%.*s", (int)(g - p->v[i].path),
					     p->v[i].path));
	}
	qsort(v, n, sizeof(char *), cmp_str);
	c->flat = true;
	for (size_t i = 0; i < n; i++) {
		struct stat st;
		int fd;

		if (i > 0 && strcmp(v[i], v[i - 1]) == 0)
			continue;
		fd = strcmp(v[i], ws) == 0 ?
			     dup(c->wsfd) :
			     open_beneath(c->wsfd, v[i] + wl + 1,
					  O_RDONLY | O_DIRECTORY | O_NOFOLLOW);
		if (fd < 0)
			continue; /* gone since, or not a directory now */
		if (fstat(fd, &st) < 0 || st.st_dev != dev) {
			close(fd);
			continue;
		}
		walk(c, fd, v[i], dev, 0, false);
	}
	c->flat = false;
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static double cpu_ms(const struct rusage *r)
{
	return (double)(r->ru_utime.tv_sec + r->ru_stime.tv_sec) * 1e3 +
	       (double)(r->ru_utime.tv_usec + r->ru_stime.tv_usec) / 1e3;
}

size_t sb_hostexec_check(struct sb_hostexec *hx,
			 const struct sb_hostexec_input *in, double *ms)
{
	struct hx_ctx c = { .hx = hx, .in = in, .since = hx->start };
	struct timespec t0, t1;
	struct rusage ru0, ru1;
	struct statfs sfs;
	struct stat st;
	char **dirs = NULL;
	size_t n_dirs = 0;
	int fd;

	sb_quarantine_init(&c.q, in->environ, in->home);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	getrusage(RUSAGE_SELF, &ru0);
	if (!hx->armed) {
		if (in->watch &&
		    sb_watch_end(in->watch, in->workspace, &dirs, &n_dirs) == 0)
			for (size_t i = 0; i < n_dirs; i++)
				free(dirs[i]);
		free(dirs);
		return 0;
	}
	c.optin = ar_xcalloc(in->n_rw + 1, sizeof(char *));
	for (size_t i = 0; i < in->n_rw; i++) {
		char *q = sb_protect_lexical(in->home, in->rw[i]);

		if (q && ar_path_under(q, in->workspace) &&
		    strcmp(q, in->workspace) != 0)
			c.optin[c.n_optin++] = q;
		else
			free(q);
	}
	global_hookspath(&c);
	c.wsfd = open(in->workspace, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = c.wsfd >= 0 ? dup(c.wsfd) : -1;
	if (fd >= 0 && fstatfs(fd, &sfs) == 0)
		c.leaf_ok = sfs.f_type == EXT4_SUPER_MAGIC ||
			    sfs.f_type == XFS_SUPER_MAGIC ||
			    sfs.f_type == TMPFS_MAGIC ||
			    sfs.f_type == F2FS_SUPER_MAGIC;
	c.start_complete = in->protect && !in->protect->truncated &&
			   !in->protect->incomplete && !in->protect->off;
	if (in->watch &&
	    sb_watch_end(in->watch, in->workspace, &dirs, &n_dirs) == 0 &&
	    fd >= 0 && fstat(fd, &st) == 0) {
		close(fd);
		check_changed(&c, dirs, n_dirs, st.st_dev);
	} else if (fd >= 0 && fstat(fd, &st) == 0) {
		walk(&c, fd, in->workspace, st.st_dev, 0, true);
	} else if (fd >= 0) {
		close(fd);
	}
	free(dirs);
	walk_rw_dirs(&c);
	if (c.too_deep)
		ar_warn("sandbox: the workspace is more than %d directories deep: what lies below was not checked for repositories the host's git would run",
			HX_MAX_DEPTH);
	if (c.q.found)
		ar_warn("sandbox: %zu path%s the host would have executed %s neutralised (" AR_SANDBOX_DOC
			", \"The end-of-run check\")%s%s",
			c.q.found, c.q.found == 1 ? "" : "s",
			c.q.found == 1 ? "was" : "were",
			c.q.dir && c.q.dir[0] ? "; originals and MANIFEST in " :
						"",
			c.q.dir && c.q.dir[0] ? c.q.dir : "");
	sb_quarantine_close(&c.q);
	if (c.wsfd >= 0)
		close(c.wsfd);
	for (size_t i = 0; i < c.n_optin; i++)
		free(c.optin[i]);
	free(c.optin);
	free(c.seen);
	free(c.global_hooks);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	getrusage(RUSAGE_SELF, &ru1);
	if (ms)
		*ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		      (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	ar_debug(
		"sandbox: end-of-run check: %zu directories read, %zu unchanged leaves not opened, %.1f ms (%.1f ms CPU)",
		c.n_read, c.n_leaves,
		(double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			(double)(t1.tv_nsec - t0.tv_nsec) / 1e6,
		cpu_ms(&ru1) - cpu_ms(&ru0));
	return c.q.found;
}
