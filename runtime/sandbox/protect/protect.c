/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Protected paths inside the workspace (protect.h): git metadata that
 * makes the host's git run code (config: core.fsmonitor, core.hooksPath,
 * core.pager, core.sshCommand, credential.helper, filter.*, include.path;
 * hooks; info/attributes; the redirect files commondir and
 * config.worktree; gitdir files; the gitdirs of submodules under
 * .git/modules), the same for every repository found below the
 * workspace, and editor, tool and agent config the host runs later
 * (.vscode, .idea, .devcontainer, .zed, .helix, mise's files, .mcp.json,
 * .claude settings, commands and agents, the other agent CLIs' project
 * config, direnv's .envrc and what it loads), plus the shell rc files
 * and the other dotfiles on Claude Code's sandbox-runtime
 * always-write-protected list. Everything is found with lstat/openat,
 * never following a symbolic link.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "direnv.h"
#include "home_secrets.h"
#include "log.h"
#include "placeholder.h"
#include "protect.h"
#include "utils.h"

/* Names at the top of each repository (and of the workspace). */
enum root_missing {
	MISSING_WATCH, /* report it when the run created it */
	MISSING_PLACEHOLDER, /* an empty read-only directory for the run */
};

static const struct {
	const char *name;
	enum root_missing missing;
	const char *why;
} root_names[] = {
	{ ".gitmodules", MISSING_WATCH, "git submodule config" },
	{ ".gitconfig", MISSING_WATCH, "git config" },
	{ ".vscode", MISSING_PLACEHOLDER, "editor config (tasks, settings)" },
	{ ".idea", MISSING_PLACEHOLDER, "editor config" },
	/* initializeCommand runs on the host (VS Code's Dev Containers,
	 * the devcontainer CLI) before any container exists */
	{ ".devcontainer", MISSING_PLACEHOLDER,
	  "dev container config (initializeCommand runs on the host)" },
	{ ".devcontainer.json", MISSING_PLACEHOLDER,
	  "dev container config (initializeCommand runs on the host)" },
	{ ".mcp.json", MISSING_PLACEHOLDER, "MCP servers the agent CLI runs" },
	/* editors that start the language servers a project's config names
	 * when a file of it is opened */
	{ ".zed", MISSING_PLACEHOLDER,
	  "editor config (Zed: language server commands, tasks)" },
	{ ".helix", MISSING_PLACEHOLDER,
	  "editor config (Helix: language server commands)" },
	/* mise runs a config's [env] _.source, hooks and templates at every
	 * cd into the project once the path is trusted (trust goes by path,
	 * not content, unless paranoid); a new file is untrusted: watched */
	{ "mise.toml", MISSING_WATCH,
	  "tool config (mise: env and hooks run at cd)" },
	{ ".mise.toml", MISSING_WATCH,
	  "tool config (mise: env and hooks run at cd)" },
	{ "mise.local.toml", MISSING_WATCH,
	  "tool config (mise: env and hooks run at cd)" },
	{ ".mise.local.toml", MISSING_WATCH,
	  "tool config (mise: env and hooks run at cd)" },
	{ ".mise", MISSING_WATCH,
	  "tool config (mise: env and hooks run at cd)" },
	{ ".ripgreprc", MISSING_WATCH, "ripgrep config" },
	{ ".bashrc", MISSING_WATCH, "shell rc file" },
	{ ".bash_profile", MISSING_WATCH, "shell rc file" },
	{ ".bash_login", MISSING_WATCH, "shell rc file" },
	{ ".bash_logout", MISSING_WATCH, "shell rc file" },
	{ ".profile", MISSING_WATCH, "shell rc file" },
	{ ".zshrc", MISSING_WATCH, "shell rc file" },
	{ ".zprofile", MISSING_WATCH, "shell rc file" },
	{ ".zshenv", MISSING_WATCH, "shell rc file" },
	{ ".zlogin", MISSING_WATCH, "shell rc file" },
};

/* The other agent CLIs' project config, at the top of each repository
 * (and of the workspace, unless it is the home directory, where these
 * names are the CLIs' own state: the profiles show them): what the CLI
 * run on the host in this project loads and runs (MCP server commands,
 * hooks, plugins, notify, lint and test commands). The files, and
 * .opencode (opencode writes a .gitignore into an existing one and
 * stops when it cannot), are watched rather than held by a placeholder,
 * which would stop the CLI inside. */
static const struct {
	const char *name;
	enum root_missing missing;
	const char *why;
} project_agent_names[] = {
	{ ".gemini", MISSING_PLACEHOLDER,
	  "agent config (Gemini CLI project settings: MCP servers, hooks)" },
	{ ".codex", MISSING_PLACEHOLDER,
	  "agent config (Codex project config: notify, MCP servers)" },
	{ ".cursor", MISSING_PLACEHOLDER,
	  "agent config (Cursor project config: MCP servers, hooks)" },
	{ ".opencode", MISSING_WATCH,
	  "agent config (opencode plugins, tools, commands)" },
	{ "opencode.json", MISSING_WATCH,
	  "agent config (opencode: MCP servers, formatters)" },
	{ "opencode.jsonc", MISSING_WATCH,
	  "agent config (opencode: MCP servers, formatters)" },
	{ ".aider.conf.yml", MISSING_WATCH,
	  "agent config (aider: lint and test commands)" },
};

/* Inside an existing .claude directory (a missing .claude is a
 * placeholder as a whole). */
static const char *const claude_names[] = {
	"settings.json",
	"settings.local.json",
	"commands",
	"agents",
};

const char *const *sb_protect_claude_names(size_t *n)
{
	*n = AR_ARRAY_SIZE(claude_names);
	return claude_names;
}

bool sb_protect_top_config(size_t i, const char **name, const char **why)
{
	for (size_t k = 0; k < AR_ARRAY_SIZE(root_names); k++) {
		if (root_names[k].missing != MISSING_PLACEHOLDER)
			continue;
		if (i-- == 0) {
			*name = root_names[k].name;
			*why = root_names[k].why;
			return true;
		}
	}
	if (i >= AR_ARRAY_SIZE(project_agent_names))
		return false;
	*name = project_agent_names[i].name;
	*why = project_agent_names[i].why;
	return true;
}

static void add(struct sb_protect *p, const char *path,
		enum sb_protect_kind kind, const char *why)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return;
	if (p->n == p->cap) {
		p->cap = p->cap ? 2 * p->cap : 32;
		p->v = ar_xrealloc(p->v, p->cap * sizeof(*p->v));
	}
	p->v[p->n++] = (struct sb_protect_entry){
		ar_xstrdup(path), kind, why, false, false, false
	};
}

struct plan_ctx {
	struct sb_protect *p;
	const char *ws;
	char **optout; /* --rw paths strictly below the workspace */
	size_t n_optout;
	bool *used; /* per optout: it matched something */
	struct ar_error *err;
	int r;
	size_t dirs;
	const char *home;
	bool leaf_ok; /* a directory's link count is 2 + its subdirectories */
};

static bool opted_out(struct plan_ctx *c, const char *path)
{
	bool out = false;

	for (size_t i = 0; i < c->n_optout; i++)
		if (ar_path_under(path, c->optout[i])) {
			c->used[i] = true;
			out = true;
		}
	return out;
}

/* One path: RO when it exists, else `missing`; a symbolic link cannot be
 * held by a mount and is refused (the fix: --rw it, or replace it). */
static void one(struct plan_ctx *c, const char *path, int missing_kind,
		const char *why)
{
	struct stat st;

	if (c->r < 0 || opted_out(c, path))
		return;
	if (lstat(path, &st) < 0) {
		if (missing_kind >= 0)
			add(c->p, path, (enum sb_protect_kind)missing_kind,
			    why);
		return;
	}
	if (S_ISLNK(st.st_mode)) {
		c->r = ar_error_set_plain(
			c->err, ELOOP,
			"sandbox: `%s` (%s) is a symbolic link, which the sandbox cannot hold read-only (the agent could point it elsewhere): replace it by what it points to, or pass --rw %s to let the agent change it",
			path, why, path);
		return;
	}
	/* a placeholder of another sandbox (or one left by a killed run)
	 * stays a placeholder, never a directory of the user's */
	if (missing_kind == SB_PROT_ABSENT &&
	    (S_ISDIR(st.st_mode) || S_ISREG(st.st_mode)) &&
	    sb_placeholder_is(path)) {
		size_t n = c->p->n;

		add(c->p, path, SB_PROT_ABSENT, why);
		if (c->p->n > n)
			c->p->v[n].file = S_ISREG(st.st_mode);
		return;
	}
	add(c->p, path, SB_PROT_RO, why);
}

static void gitdir(struct plan_ctx *c, const char *g, int depth);

/* .git/modules: every gitdir below it (a directory holding HEAD); the
 * names between are the submodules' names, which may contain '/'. */
static void modules(struct plan_ctx *c, const char *dir, int depth)
{
	DIR *d;
	struct dirent *e;
	int fd;

	if (depth > SB_PROTECT_DEPTH || c->r < 0)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((e = readdir(d)) && c->r == 0) {
		_cleanup_free_ char *sub = NULL, *head = NULL;
		struct stat st;

		if (e->d_name[0] == '.' &&
		    (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) <
			    0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		sub = ar_xasprintf("%s/%s", dir, e->d_name);
		head = ar_xasprintf("%s/HEAD", sub);
		if (lstat(head, &st) == 0 && S_ISREG(st.st_mode))
			gitdir(c, sub, depth + 1);
		else
			modules(c, sub, depth + 1);
	}
	closedir(d);
}

/* A git directory: pinned (cannot be renamed or removed) and its
 * code-running files read-only. */
static const struct {
	const char *name;
	int missing;
	const char *why;
} gitdir_names[] = {
	{ "config", SB_PROT_WATCH, "git config" },
	{ "hooks", SB_PROT_ABSENT, "git hooks" },
	{ "info", SB_PROT_ABSENT, "git info/attributes, info/exclude" },
	{ "config.worktree", SB_PROT_ABSENT, "git config" },
	{ "commondir", SB_PROT_WATCH, "git redirect file" },
};

bool sb_protect_placeholder_name(const char *rel)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(root_names); i++)
		if (root_names[i].missing == MISSING_PLACEHOLDER &&
		    strcmp(rel, root_names[i].name) == 0)
			return true;
	for (size_t i = 0; i < AR_ARRAY_SIZE(project_agent_names); i++)
		if (project_agent_names[i].missing == MISSING_PLACEHOLDER &&
		    strcmp(rel, project_agent_names[i].name) == 0)
			return true;
	if (strcmp(rel, ".claude") == 0)
		return true;
	if (strncmp(rel, ".claude/", 8) == 0)
		for (size_t i = 0; i < AR_ARRAY_SIZE(claude_names); i++)
			if (strcmp(rel + 8, claude_names[i]) == 0)
				return true;
	if (strncmp(rel, ".git/", 5) == 0)
		for (size_t i = 0; i < AR_ARRAY_SIZE(gitdir_names); i++)
			if (gitdir_names[i].missing == SB_PROT_ABSENT &&
			    strcmp(rel + 5, gitdir_names[i].name) == 0)
				return true;
	return false;
}

static void gitdir(struct plan_ctx *c, const char *g, int depth)
{
	_cleanup_free_ char *wt = NULL;
	_cleanup_free_ char *mod = NULL;
	DIR *d;
	struct dirent *e;

	if (c->r < 0 || opted_out(c, g))
		return;
	add(c->p, g, SB_PROT_PIN, "git directory");
	for (size_t i = 0; i < AR_ARRAY_SIZE(gitdir_names); i++) {
		_cleanup_free_ char *x =
			ar_xasprintf("%s/%s", g, gitdir_names[i].name);

		one(c, x, gitdir_names[i].missing, gitdir_names[i].why);
	}
	/* linked worktrees' gitdirs: their redirect files, read-only when
	 * present (git worktree add must still create new ones) */
	wt = ar_xasprintf("%s/worktrees", g);
	d = opendir(wt);
	while (d && (e = readdir(d)) && c->r == 0) {
		_cleanup_free_ char *a = NULL, *b = NULL;

		if (e->d_name[0] == '.')
			continue;
		a = ar_xasprintf("%s/%s/commondir", wt, e->d_name);
		b = ar_xasprintf("%s/%s/config.worktree", wt, e->d_name);
		one(c, a, -1, "git redirect file");
		one(c, b, -1, "git config");
	}
	if (d)
		closedir(d);
	mod = ar_xasprintf("%s/modules", g);
	modules(c, mod, depth);
}

/* A `.git` file: "gitdir: PATH" (relative to the file's directory). */
static char *gitfile_target(const char *root, const char *file)
{
	char buf[4096];
	_cleanup_close_ int fd =
		open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;
	char *s, *nl;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 8)
		return NULL;
	buf[n] = '\0';
	if (strncmp(buf, "gitdir:", 7) != 0)
		return NULL;
	s = buf + 7;
	while (*s == ' ')
		s++;
	nl = strchr(s, '\n');
	if (nl)
		*nl = '\0';
	if (*s == '/')
		return realpath(s, NULL);
	{
		_cleanup_free_ char *full = ar_xasprintf("%s/%s", root, s);

		return realpath(full, NULL);
	}
}

/* A file's first line, or NULL (never through a symbolic link). */
static char *first_line(const char *path)
{
	char buf[4096];
	_cleanup_close_ int fd =
		open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t n;

	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return NULL;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return ar_xstrdup(buf);
}

static bool has(const char *dir, const char *name, mode_t type)
{
	_cleanup_free_ char *x = ar_xasprintf("%s/%s", dir, name);
	struct stat st;

	return lstat(x, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

/* The workspace is a linked worktree or a submodule: its `.git` file
 * points outside it, to a gitdir that git's own layout ties to it. That
 * gitdir (and a worktree's common directory, which holds the objects,
 * refs, config and hooks) is shown, pinned, with the protections of a
 * .git directory. Anything else the file may name (the agent could have
 * written it in an earlier run) is not shown:
 *   worktree   T = COMMON/worktrees/NAME, T/gitdir names WS/.git, T/commondir
 *              resolves to COMMON, which holds HEAD and objects/
 *   submodule  T is below SUPER/.git/modules/ and holds HEAD and objects/
 * and neither T nor COMMON is on the never-share list. */
static void linked_gitdir(struct plan_ctx *c, const char *root, const char *t)
{
	_cleanup_free_ char *parent = ar_xstrdup(t), *self = NULL;
	_cleanup_free_ char *back = NULL, *backreal = NULL, *cd = NULL;
	_cleanup_free_ char *common = NULL, *cdpath = NULL;
	char *slash;

	if (!has(t, "HEAD", S_IFREG) || ar_sandbox_path_is_secret(c->home, t))
		return;
	slash = strrchr(parent, '/');
	if (!slash || slash == parent)
		return;
	*slash = '\0';
	if (strstr(t, "/.git/modules/") && has(t, "objects", S_IFDIR)) {
		gitdir(c, t, 0); /* a submodule */
		return;
	}
	slash = strrchr(parent, '/');
	if (!slash || strcmp(slash, "/worktrees") != 0)
		return;
	*slash = '\0'; /* parent: COMMON as the layout says */
	self = ar_xasprintf("%s/.git", root);
	back = first_line(cdpath = ar_xasprintf("%s/gitdir", t));
	backreal = back && back[0] == '/' ? realpath(back, NULL) : NULL;
	if (!backreal || strcmp(backreal, self) != 0)
		return;
	free(cdpath);
	cdpath = ar_xasprintf("%s/commondir", t);
	cd = first_line(cdpath);
	if (!cd)
		return;
	if (cd[0] == '/') {
		common = realpath(cd, NULL);
	} else {
		_cleanup_free_ char *rel = ar_xasprintf("%s/%s", t, cd);

		common = realpath(rel, NULL);
	}
	if (!common || strcmp(common, parent) != 0 ||
	    !has(common, "HEAD", S_IFREG) || !has(common, "objects", S_IFDIR) ||
	    ar_sandbox_path_is_secret(c->home, common))
		return;
	/* the pins (binds) first, parent before child: every read-only
	 * bind below them comes after both */
	add(c->p, common, SB_PROT_PIN, "git directory");
	add(c->p, t, SB_PROT_PIN, "git directory");
	gitdir(c, common, 0);
	gitdir(c, t, 0);
}

/* A file a direnv .envrc loads: read-only; missing, an empty read-only
 * file in its place (a file placeholder: `dotenv_if_exists` must not
 * find one of the agent's at the next cd), or watched when its
 * directory is missing too or it is a Nix file (an empty flake.lock or
 * shell.nix would fail the host's direnv while the sandbox runs). A
 * symbolic link (.env -> .env.local): the file it leads to, when that
 * is in the workspace (outside, the agent cannot write it). A symbolic
 * link on the way (`dotenv conf/.env`, conf a link an earlier run of
 * the agent may have made, with the .envrc): nothing is held, as a
 * bind there would show the sandbox what the link leads to. */
static void envrc_loaded(struct plan_ctx *c, const char *path, bool nix)
{
	static const char why[] = SB_DIRENV_WHY_LOADED;
	_cleanup_free_ char *parent = ar_xstrdup(path), *real = NULL;
	char *slash = strrchr(parent, '/');
	struct stat st;
	size_t n = c->p->n;
	int r;
	bool missing;

	if (!slash || slash == parent)
		return;
	*slash = '\0';
	real = realpath(parent, NULL);
	if (!real) {
		if (errno == ENOENT || errno == ENOTDIR)
			one(c, path, SB_PROT_WATCH, why);
		return;
	}
	if (strcmp(real, parent) != 0 || !ar_path_under(real, c->ws))
		return;
	r = lstat(path, &st);
	missing = r < 0 && errno == ENOENT;
	if (r < 0 && !missing)
		return;
	if (r == 0 && S_ISLNK(st.st_mode)) {
		_cleanup_free_ char *t = realpath(path, NULL);

		if (t && ar_path_under(t, c->ws) && lstat(t, &st) == 0 &&
		    S_ISREG(st.st_mode))
			one(c, t, -1, why);
		return;
	}
	if (missing && nix) {
		one(c, path, SB_PROT_WATCH, why);
		return;
	}
	one(c, path, SB_PROT_ABSENT, why);
	if (c->p->n > n && c->p->v[n].kind == SB_PROT_ABSENT)
		c->p->v[n].file = true;
}

/* A directory with a direnv .envrc (direnv.h): the .envrc itself (direnv
 * asks again for a changed one, but a user who allows it without reading
 * runs it), the files it loads, and for a Nix dev shell the hook
 * nix-direnv caches in .direnv. */
static void envrc(struct plan_ctx *c, const char *dir)
{
	_cleanup_free_ char *rc = ar_xasprintf("%s/.envrc", dir);
	struct sb_direnv_loads l;
	struct stat st;

	if (c->r < 0 || lstat(rc, &st) < 0 || !S_ISREG(st.st_mode))
		return;
	one(c, rc, -1, SB_DIRENV_WHY_RC);
	if (sb_direnv_read_at(AT_FDCWD, rc, &l) < 0)
		return;
	for (size_t i = 0; i < l.n && c->r == 0; i++) {
		_cleanup_free_ char *p =
			ar_xasprintf("%s/%s", dir, l.files[i].path);

		/* source_env DIR: DIR/.envrc */
		if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			char *q = ar_xasprintf("%s/.envrc", p);

			free(p);
			p = q;
		}
		envrc_loaded(c, p, l.files[i].nix);
	}
	if (l.nix) {
		_cleanup_free_ char *cache = ar_xasprintf("%s/.direnv", dir);

		one(c, cache, SB_PROT_ABSENT, SB_DIRENV_WHY_CACHE);
	}
	sb_direnv_loads_release(&l);
}

/* A repository (or the workspace) top: root dotfiles and its .git. */
static void repo_root(struct plan_ctx *c, const char *root, bool has_git)
{
	_cleanup_free_ char *claude = ar_xasprintf("%s/.claude", root);
	struct stat st;

	for (size_t i = 0; i < AR_ARRAY_SIZE(root_names); i++) {
		_cleanup_free_ char *x =
			ar_xasprintf("%s/%s", root, root_names[i].name);

		one(c, x,
		    root_names[i].missing == MISSING_PLACEHOLDER ?
			    SB_PROT_ABSENT :
			    SB_PROT_WATCH,
		    root_names[i].why);
	}
	for (size_t i = 0; strcmp(root, c->home) != 0 &&
			   i < AR_ARRAY_SIZE(project_agent_names);
	     i++) {
		_cleanup_free_ char *x = ar_xasprintf(
			"%s/%s", root, project_agent_names[i].name);

		one(c, x,
		    project_agent_names[i].missing == MISSING_PLACEHOLDER ?
			    SB_PROT_ABSENT :
			    SB_PROT_WATCH,
		    project_agent_names[i].why);
	}
	envrc(c, root);
	if (lstat(claude, &st) == 0 && S_ISDIR(st.st_mode) &&
	    !opted_out(c, claude) && !sb_placeholder_is(claude)) {
		for (size_t i = 0; i < AR_ARRAY_SIZE(claude_names); i++) {
			_cleanup_free_ char *x =
				ar_xasprintf("%s/%s", claude, claude_names[i]);
			size_t n = c->p->n, l = strlen(claude_names[i]);

			one(c, x, SB_PROT_ABSENT,
			    "agent config (hooks, commands, permissions)");
			/* a missing settings file: a file placeholder (a
			 * directory there stops Claude Code at every start:
			 * "Settings Error", EISDIR) */
			if (c->p->n > n && c->p->v[n].kind == SB_PROT_ABSENT &&
			    l > 5 &&
			    strcmp(claude_names[i] + l - 5, ".json") == 0)
				c->p->v[n].file = true;
		}
	} else {
		size_t n = c->p->n;

		one(c, claude, SB_PROT_ABSENT,
		    "agent config (hooks, commands, permissions)");
		if (c->p->n > n && c->p->v[n].kind == SB_PROT_ABSENT)
			c->p->v[n].claude_dir = true;
	}
	if (has_git) {
		_cleanup_free_ char *g = ar_xasprintf("%s/.git", root);

		c->p->repos++;
		if (c->r < 0 || opted_out(c, g) || lstat(g, &st) < 0)
			return;
		if (S_ISDIR(st.st_mode)) {
			gitdir(c, g, 0);
		} else if (S_ISREG(st.st_mode)) {
			_cleanup_free_ char *t = gitfile_target(root, g);

			add(c->p, g, SB_PROT_RO, "gitdir file");
			if (t && ar_path_under(t, c->ws) &&
			    strcmp(t, c->ws) != 0 && lstat(t, &st) == 0 &&
			    S_ISDIR(st.st_mode))
				gitdir(c, t, 0);
			else if (t && strcmp(root, c->ws) == 0)
				linked_gitdir(c, root, t);
		} else {
			one(c, g, -1, "git directory"); /* a link: refused */
		}
	}
}

/* The home directory's paths the host runs code from: what the user's
 * session runs at login or on the next shell start, and the agent CLIs'
 * own command-running config, launchers and install directories (the
 * shipped profiles show them read-only). Protected when the home
 * directory is (in) the workspace (home_root), never granted read-write
 * by learn mode and warned about when bound read-write
 * (sb_protect_home_each). */
static const struct {
	const char *name;
	const char *why;
} home_names[] = {
	{ ".bashrc", "shell rc file" },
	{ ".bash_profile", "shell rc file" },
	{ ".bash_login", "shell rc file" },
	{ ".bash_logout", "shell rc file" },
	{ ".profile", "shell rc file" },
	{ ".zshrc", "shell rc file" },
	{ ".zprofile", "shell rc file" },
	{ ".zshenv", "shell rc file" },
	{ ".zlogin", "shell rc file" },
	{ ".xprofile", "session startup file" },
	{ ".xsessionrc", "session startup file" },
	{ ".pam_environment", "session environment" },
	{ ".config/systemd", "systemd user units" },
	{ ".config/autostart", "desktop autostart entries" },
	{ ".config/environment.d", "session environment" },
	{ ".config/git", "git config" },
	{ ".local/bin", "programs on PATH" },
	{ ".claude/local", "Claude Code's launcher" },
	{ ".claude/plugins", "Claude Code plugins" },
	{ ".claude/skills", "Claude Code skills" },
	{ ".claude/CLAUDE.md", "agent instructions" },
	{ ".local/share/claude", "Claude Code's install" },
	{ ".gemini/settings.json", "Gemini CLI settings (MCP servers, hooks)" },
	{ ".gemini/extensions", "Gemini CLI extensions" },
	{ ".gemini/commands", "Gemini CLI commands" },
	{ ".gemini/.env", "Gemini CLI environment" },
	{ ".gemini/trustedFolders.json", "Gemini CLI trusted folders" },
	{ ".gemini/GEMINI.md", "agent instructions" },
	{ ".codex/config.toml", "Codex config (notify, MCP servers)" },
	{ ".codex/.env", "Codex environment" },
	{ ".codex/rules", "Codex command rules" },
	{ ".codex/skills", "Codex skills" },
	{ ".codex/prompts", "Codex prompts" },
	{ ".codex/AGENTS.md", "agent instructions" },
	{ ".config/opencode/opencode.json",
	  "opencode config (MCP servers, formatters)" },
	{ ".config/opencode/opencode.jsonc",
	  "opencode config (MCP servers, formatters)" },
	{ ".config/opencode/config.json",
	  "opencode config (MCP servers, formatters)" },
	{ ".config/opencode/AGENTS.md", "opencode instructions" },
	{ ".config/opencode/package.json", "opencode plugin dependencies" },
	{ ".config/opencode/node_modules", "opencode plugin dependencies" },
	{ ".config/opencode/plugin", "opencode plugins" },
	{ ".config/opencode/plugins", "opencode plugins" },
	{ ".config/opencode/tool", "opencode tools" },
	{ ".config/opencode/tools", "opencode tools" },
	{ ".config/opencode/command", "opencode commands" },
	{ ".config/opencode/commands", "opencode commands" },
	{ ".config/opencode/agent", "opencode agents" },
	{ ".config/opencode/agents", "opencode agents" },
	{ ".config/opencode/mode", "opencode modes" },
	{ ".config/opencode/modes", "opencode modes" },
	{ ".opencode/bin", "opencode's launcher" },
	{ ".local/share/opencode/bin", "opencode's language servers" },
	{ ".aider.conf.yml", "aider config (lint and test commands)" },
	{ ".aider.model.settings.yml", "aider config" },
	{ ".aider/oauth-keys.env", "aider environment" },
};

/* The home directory inside the workspace (--workspace ~): the paths
 * above. Missing ones get placeholders when their parent exists. */
static void home_root(struct plan_ctx *c, const char *home)
{
	for (size_t i = 0; i < AR_ARRAY_SIZE(home_names); i++) {
		_cleanup_free_ char *x =
			ar_xasprintf("%s/%s", home, home_names[i].name);
		_cleanup_free_ char *parent = ar_xstrdup(x);
		struct stat st;

		*strrchr(parent, '/') = '\0';
		one(c, x,
		    lstat(parent, &st) == 0 && S_ISDIR(st.st_mode) ?
			    SB_PROT_ABSENT :
			    SB_PROT_WATCH,
		    home_names[i].why);
	}
}

/* A symbolic link on the way to `lex` (an absolute path, no "." or
 * ".."), in a directory below `root` (a real path): the agent could point
 * it elsewhere. Its path (malloc'd), or NULL. */
static char *link_below(const char *lex, const char *root)
{
	_cleanup_free_ char *pfx = ar_xstrdup(lex);

	for (char *sl = strchr(pfx + 1, '/');; sl = strchr(sl + 1, '/')) {
		_cleanup_free_ char *parent = NULL;
		struct stat st;

		if (sl)
			*sl = '\0';
		if (lstat(pfx, &st) < 0)
			return NULL;
		if (S_ISLNK(st.st_mode)) {
			char *slash = strrchr(pfx, '/');

			*slash = '\0';
			parent = realpath(slash == pfx ? "/" : pfx, NULL);
			*slash = '/';
			if (parent && ar_path_under(parent, root))
				return ar_xstrdup(pfx);
		}
		if (!sl)
			return NULL;
		*sl = '/';
	}
}

char *sb_protect_state_dir(const char *home, char *const *envp)
{
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "XDG_STATE_HOME=/", 16) == 0)
			return ar_xasprintf("%s/agentrun", *e + 15);
	return ar_xasprintf("%s/.local/state/agentrun", home);
}

/* agentrun's own state directory (run_record.h: the records of runs
 * whose end-of-run check is owed, the quarantine): read-only when it is
 * below the writable root `c->ws` (the directories between pinned by
 * holders()), never opted back in; a root at or below it, or a symbolic
 * link to it the agent could re-point, is refused. Missing: nothing
 * (every start makes it before its plan: sandbox_plan.c). */
static void state_root(struct plan_ctx *c)
{
	_cleanup_free_ char *lex = sb_protect_state_dir(c->home, environ);
	_cleanup_free_ char *real = realpath(lex, NULL);
	_cleanup_free_ char *link = NULL;

	if (c->r < 0 || !real)
		return;
	if (ar_path_under(c->ws, real)) {
		c->r = ar_error_set_plain(
			c->err, EPERM,
			"sandbox: `%s` is %sagentrun's own state directory `%s` (the records of runs whose end-of-run check is owed, the quarantine): no sandbox may write there (" AR_SANDBOX_DOC
			", \"A killed sandbox\")",
			c->ws, strcmp(c->ws, real) == 0 ? "" : "inside ", real);
		return;
	}
	/* an opt-out above it is bound read-write over the workspace:
	 * sandbox_plan.c (state_mounts) holds it again below that bind */
	for (size_t i = 0; i < c->n_optout; i++)
		if (ar_path_under(c->optout[i], real)) {
			c->r = ar_error_set_plain(
				c->err, EPERM,
				"sandbox: --rw %s: agentrun's own state directory `%s` (the records of runs whose end-of-run check is owed) is never writable inside a sandbox (" AR_SANDBOX_DOC
				", \"A killed sandbox\")",
				c->optout[i], real);
			return;
		}
	link = link_below(lex, c->ws);
	if (link) {
		c->r = ar_error_set_plain(
			c->err, ELOOP,
			"sandbox: agentrun's own state directory `%s` is reached through the symbolic link `%s` inside `%s`, which the agent could point elsewhere: set XDG_STATE_HOME to its real path `%s`, or give the sandbox a directory without it",
			lex, link, c->ws, real);
		return;
	}
	if (ar_path_under(real, c->ws))
		add(c->p, real, SB_PROT_RO, "agentrun's run records");
}

static void holders(struct plan_ctx *c);
static void order(struct sb_protect *p);

int sb_protect_state(struct sb_protect *p, const char *root, const char *home,
		     struct ar_error *err)
{
	struct plan_ctx c = { .p = p, .ws = root, .err = err, .home = home };

	memset(p, 0, sizeof(*p));
	state_root(&c);
	if (c.r == 0) {
		holders(&c);
		order(p);
	}
	if (c.r < 0)
		sb_protect_release(p);
	return c.r;
}

/* HOME/name into buf (HOME/ already there, `hl` long), then fn. */
static bool home_one(char *buf, size_t size, size_t hl, const char *name,
		     const char *why, sb_protect_home_fn fn, void *data)
{
	size_t nl = strlen(name);

	if (hl + 1 + nl >= size)
		return true;
	memcpy(buf + hl + 1, name, nl + 1);
	return fn(buf, why, data);
}

bool sb_protect_home_each(const char *home, sb_protect_home_fn fn, void *data)
{
	char buf[4096];
	size_t hl = strlen(home);
	bool go = true;

	if (hl + 2 >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%s/", home);
	for (size_t i = 0; go && i < AR_ARRAY_SIZE(home_names); i++)
		go = home_one(buf, sizeof(buf), hl, home_names[i].name,
			      home_names[i].why, fn, data);
	for (size_t i = 0; go && i < AR_ARRAY_SIZE(root_names); i++)
		go = home_one(buf, sizeof(buf), hl, root_names[i].name,
			      root_names[i].why, fn, data);
	for (size_t i = 0; go && i < AR_ARRAY_SIZE(claude_names); i++) {
		char n[64];

		snprintf(n, sizeof(n), ".claude/%s", claude_names[i]);
		go = home_one(buf, sizeof(buf), hl, n,
			      "agent config (hooks, commands, permissions)", fn,
			      data);
	}
	if (go)
		go = home_one(buf, sizeof(buf), hl, ".git", "git directory", fn,
			      data);
	for (const char *const *s = ar_sandbox_home_secrets; go && *s; s++)
		go = home_one(buf, sizeof(buf), hl, *s, "secret store", fn,
			      data);
	return go;
}

struct home_at {
	const char *path;
	const char *why;
	char *at;
};

static bool home_at_one(const char *p, const char *why, void *data)
{
	struct home_at *a = data;

	if (!ar_path_under(a->path, p))
		return true;
	a->why = why;
	a->at = ar_xstrdup(p);
	return false;
}

const char *sb_protect_home_why(const char *home, const char *path, char **at)
{
	struct home_at a = { .path = path };

	sb_protect_home_each(home, home_at_one, &a);
	if (at)
		*at = a.at;
	else
		free(a.at);
	return a.why;
}

/* Repositories below the workspace, SB_PROTECT_DEPTH levels down, the
 * same filesystem, no symbolic links, not into .git or node_modules.
 * Per directory one fstatat of it (type, filesystem, link count) and
 * one of its ".git"; only a directory with subdirectories (a link
 * count above 2, where the filesystem counts them: leaf_ok) above the
 * last level is opened and read. A leaf's ".git" can only be a file (a
 * ".git" directory would be a subdirectory), found by the same
 * fstatat. A directory's .envrc is found in its listing, unless
 * repo_root already looked at the directory (`top`). */
static void walk(struct plan_ctx *c, int fd, const char *path, dev_t dev,
		 int depth, bool top)
{
	DIR *d = fdopendir(fd);
	struct dirent *e;

	if (!d) {
		close(fd);
		c->p->incomplete = true;
		return;
	}
	for (;;) {
		_cleanup_free_ char *sub = NULL;
		char g[NAME_MAX + 8];
		struct stat st, gst;
		bool repo = false;
		int cfd;

		errno = 0;
		e = c->r == 0 ? readdir(d) : NULL;
		if (!e) {
			if (errno)
				c->p->incomplete = true;
			break;
		}
		/* a direnv .envrc of this directory (a monorepo's package),
		 * seen in its listing: no call more per directory */
		if ((e->d_type == DT_REG || e->d_type == DT_UNKNOWN) &&
		    strcmp(e->d_name, ".envrc") == 0) {
			if (!top)
				envrc(c, path);
			continue;
		}
		if (e->d_type != DT_DIR && e->d_type != DT_UNKNOWN)
			continue;
		if (strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, ".git") == 0 ||
		    strcmp(e->d_name, "node_modules") == 0)
			continue;
		if (c->dirs >= SB_PROTECT_MAX_DIRS) {
			c->p->truncated = true;
			break;
		}
		if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) <
		    0) {
			if (errno != ENOENT)
				c->p->incomplete = true;
			continue;
		}
		if (!S_ISDIR(st.st_mode) || st.st_dev != dev)
			continue;
		c->dirs++;
		snprintf(g, sizeof(g), "%s/.git", e->d_name);
		if (fstatat(dirfd(d), g, &gst, AT_SYMLINK_NOFOLLOW) == 0) {
			sub = ar_xasprintf("%s/%s", path, e->d_name);
			repo_root(c, sub, true);
			repo = true;
		} else if (errno != ENOENT) {
			c->p->incomplete = true;
		}
		if (depth + 1 >= SB_PROTECT_DEPTH ||
		    (c->leaf_ok && st.st_nlink == 2))
			continue;
		cfd = openat(dirfd(d), e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (cfd < 0) {
			/* its subdirectories' .git not looked at: the
			 * end-of-run check must look at every one */
			c->p->incomplete = true;
			continue;
		}
		if (!sub)
			sub = ar_xasprintf("%s/%s", path, e->d_name);
		walk(c, cfd, sub, dev, depth + 1, repo);
	}
	closedir(d);
}

static const struct sb_protect_entry *entry_at(const struct sb_protect *p,
					       const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return &p->v[i];
	return NULL;
}

static bool below_pin(const struct sb_protect *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->v[i].kind == SB_PROT_PIN && !p->v[i].holder &&
		    strcmp(p->v[i].path, path) != 0 &&
		    ar_path_under(path, p->v[i].path))
			return true;
	return false;
}

/* The directories between the workspace (or, outside it, a pinned git
 * directory) and each mounted protected path: pinned as holders, so that
 * no rename carries a protected path away (mv sub x, mv .git/modules x,
 * mv .claude x) and frees its name for the agent's own. */
static void holders(struct plan_ctx *c)
{
	size_t n = c->p->n;

	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *a = NULL;

		if (c->p->v[i].kind == SB_PROT_WATCH)
			continue; /* nothing mounted there */
		a = ar_xstrdup(c->p->v[i].path);
		for (;;) {
			char *slash = strrchr(a, '/');
			struct stat st;

			if (!slash || slash == a)
				break;
			*slash = '\0';
			if (strcmp(a, c->ws) == 0 || entry_at(c->p, a) ||
			    (!ar_path_under(a, c->ws) && !below_pin(c->p, a)) ||
			    lstat(a, &st) < 0 || !S_ISDIR(st.st_mode))
				break;
			add(c->p, a, SB_PROT_PIN,
			    "directory holding protected paths");
			c->p->v[c->p->n - 1].holder = true;
		}
	}
}

static size_t depth_of(const char *path)
{
	size_t d = 0;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* Parent before child, otherwise in the order found (stable). */
static void order(struct sb_protect *p)
{
	for (size_t i = 1; i < p->n; i++) {
		struct sb_protect_entry t = p->v[i];
		size_t d = depth_of(t.path), j = i;

		while (j > 0 && depth_of(p->v[j - 1].path) > d) {
			p->v[j] = p->v[j - 1];
			j--;
		}
		p->v[j] = t;
	}
}

/* "~/x" -> HOME/x, absolute kept, then the real path when it exists
 * (a --rw of a protected path that does not exist yet is allowed). */
char *sb_protect_lexical(const char *home, const char *q)
{
	char *full, *r;

	if (q[0] == '~' && (q[1] == '/' || q[1] == '\0'))
		full = ar_xasprintf("%s%s", home, q + 1);
	else if (q[0] == '/')
		full = ar_xstrdup(q);
	else
		return NULL;
	r = realpath(full, NULL);
	if (r) {
		free(full);
		return r;
	}
	return full;
}

int sb_protect_plan(struct sb_protect *p, const char *ws, const char *home,
		    const char *const *rw, size_t n_rw, struct ar_error *err)
{
	struct plan_ctx c = { .p = p, .ws = ws, .err = err, .home = home };
	struct stat st;
	int fd;

	memset(p, 0, sizeof(*p));
	c.optout = ar_xcalloc(n_rw + 1, sizeof(char *));
	c.used = ar_xcalloc(n_rw + 1, sizeof(bool));
	for (size_t i = 0; i < n_rw; i++) {
		char *q = sb_protect_lexical(home, rw[i]);

		if (q && ar_path_under(q, ws) && strcmp(q, ws) != 0)
			c.optout[c.n_optout++] = q;
		else
			free(q);
	}
	if (ar_path_under(home, ws))
		home_root(&c, home);
	state_root(&c);
	{
		_cleanup_free_ char *g = ar_xasprintf("%s/.git", ws);

		repo_root(&c, ws, lstat(g, &st) == 0);
	}
	fd = open(ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0 && c.r == 0) {
		struct statfs sfs;

		c.leaf_ok = fstatfs(fd, &sfs) == 0 &&
			    (sfs.f_type == EXT4_SUPER_MAGIC ||
			     sfs.f_type == XFS_SUPER_MAGIC ||
			     sfs.f_type == TMPFS_MAGIC ||
			     sfs.f_type == F2FS_SUPER_MAGIC);
		if (fstat(fd, &st) == 0)
			walk(&c, fd, ws, st.st_dev, 0, true);
		else
			close(fd);
	} else if (fd >= 0) {
		close(fd);
	}
	if (c.r == 0) {
		holders(&c);
		order(p);
	}
	for (size_t i = 0; i < c.n_optout; i++) {
		if (c.used[i] && c.r == 0)
			ar_warn("sandbox: --rw %s: protected path(s) opted back in: the agent can change what is there, and the host may run it later (git hooks and config, editor and agent config; " AR_SANDBOX_DOC
				")",
				c.optout[i]);
		free(c.optout[i]);
	}
	free(c.optout);
	free(c.used);
	if (p->truncated)
		ar_warn("sandbox: stopped looking for nested git repositories after %d directories; repositories deeper in the workspace are not protected",
			SB_PROTECT_MAX_DIRS);
	if (c.r < 0) {
		sb_protect_release(p);
		return -1;
	}
	return 0;
}

size_t sb_protect_after_run(const struct sb_protect *p)
{
	size_t found = 0;

	for (size_t i = 0; p && i < p->n; i++) {
		const struct sb_protect_entry *e = &p->v[i];
		struct stat st;
		const char *base;

		/* placeholders: placeholder.c, the last one out */
		if (e->kind != SB_PROT_WATCH || lstat(e->path, &st) < 0)
			continue;
		found++;
		base = strrchr(e->path, '/');
		base = base ? base + 1 : e->path;
		/* never legitimate in a repository's own gitdir: it sends
		 * git to another directory's config */
		if (strcmp(base, "commondir") == 0 && !S_ISDIR(st.st_mode) &&
		    unlink(e->path) == 0)
			ar_warn("sandbox: the command created `%s` (%s), which would make git on the host read another directory's config; removed",
				e->path, e->why);
		else
			ar_warn("sandbox: the command created `%s` (%s), which the host may run code from: review it before using it",
				e->path, e->why);
	}
	return found;
}

const struct sb_protect_entry *sb_protect_find(const struct sb_protect *p,
					       const char *path)
{
	const struct sb_protect_entry *best = NULL;

	for (size_t i = 0; p && i < p->n; i++)
		if (ar_path_under(path, p->v[i].path) &&
		    (!p->v[i].holder || strcmp(path, p->v[i].path) == 0) &&
		    (!best || strlen(p->v[i].path) > strlen(best->path)))
			best = &p->v[i];
	return best;
}

const struct sb_protect_entry *sb_protect_attempt(const struct sb_protect *p,
						  const char *path, bool move,
						  bool *below)
{
	const struct sb_protect_entry *best = NULL;

	*below = false;
	if (!p || !path || path[0] != '/')
		return NULL;
	for (size_t i = 0; i < p->n; i++) {
		const struct sb_protect_entry *e = &p->v[i];
		bool hit = e->kind == SB_PROT_PIN ?
				   move && strcmp(path, e->path) == 0 :
				   ar_path_under(path, e->path);

		if (hit && (!best || strlen(e->path) > strlen(best->path)))
			best = e;
	}
	if (best || !move)
		return best;
	for (size_t i = 0; i < p->n; i++)
		if (ar_path_under(p->v[i].path, path)) {
			*below = true;
			return &p->v[i];
		}
	return NULL;
}

void sb_protect_release(struct sb_protect *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].path);
	free(p->v);
	memset(p, 0, sizeof(*p));
}

/* ---- by name alone (agentrun commit of an --overlay run) ---- */

/* The component of `s` (up to '/' or the end) equals `name`. */
static bool comp_is(const char *s, size_t len, const char *name)
{
	return strlen(name) == len && strncmp(s, name, len) == 0;
}

const char *sb_protect_rel_why(const char *rel, size_t *root_len)
{
	const char *s = rel;

	while (*s) {
		size_t len = strcspn(s, "/");
		const char *next = s[len] ? s + len + 1 : s + len;

		if (comp_is(s, len, ".git")) {
			*root_len = (size_t)(s - rel) + len;
			return "git directory";
		}
		if (comp_is(s, len, ".envrc")) {
			*root_len = (size_t)(s - rel) + len;
			return SB_DIRENV_WHY_RC;
		}
		for (size_t i = 0; i < AR_ARRAY_SIZE(root_names); i++)
			if (comp_is(s, len, root_names[i].name)) {
				*root_len = (size_t)(s - rel) + len;
				return root_names[i].why;
			}
		for (size_t i = 0; i < AR_ARRAY_SIZE(project_agent_names); i++)
			if (comp_is(s, len, project_agent_names[i].name)) {
				*root_len = (size_t)(s - rel) + len;
				return project_agent_names[i].why;
			}
		if (comp_is(s, len, ".claude") && *next) {
			size_t l2 = strcspn(next, "/");

			for (size_t i = 0; i < AR_ARRAY_SIZE(claude_names); i++)
				if (comp_is(next, l2, claude_names[i])) {
					*root_len = (size_t)(next - rel) + l2;
					return "agent config (hooks, commands, permissions)";
				}
		}
		s = next;
	}
	return NULL;
}

const char *sb_protect_gitdir_why(const char *rel)
{
	static const struct {
		const char *name;
		const char *why;
	} more[] = {
		{ "modules", "git submodule directories" },
		{ "rebase-merge",
		  "git operation in progress (its todo runs commands)" },
		{ "rebase-apply",
		  "git operation in progress (its todo runs commands)" },
		{ "sequencer",
		  "git operation in progress (its todo runs commands)" },
	};
	size_t len = strcspn(rel, "/");

	for (size_t i = 0; i < AR_ARRAY_SIZE(gitdir_names); i++)
		if (comp_is(rel, len, gitdir_names[i].name))
			return gitdir_names[i].why;
	for (size_t i = 0; i < AR_ARRAY_SIZE(more); i++)
		if (comp_is(rel, len, more[i].name))
			return more[i].why;
	/* worktrees/NAME/{commondir,config.worktree,gitdir}: redirects */
	if (comp_is(rel, len, "worktrees") && rel[len]) {
		const char *leaf = strchr(rel + len + 1, '/');

		if (leaf && !strchr(leaf + 1, '/') &&
		    (!strcmp(leaf + 1, "commondir") ||
		     !strcmp(leaf + 1, "gitdir") ||
		     !strcmp(leaf + 1, "config.worktree")))
			return "git redirect file";
	}
	return NULL;
}
