/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for protect.c: which protected path a write by path is an
 * attempt on (sb_protect_attempt, the audit log's rule), and the plan's
 * holders (the directories above protected paths) and order; the home
 * directory's paths the host runs code from (sb_protect_home_why). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../runtime/sandbox/protect/protect.h"
#include "unit.h"
#include "utils.h"

/* A plan as sb_protect_plan makes it for /ws with a nested repository
 * sub/ and a linked worktree's gitdir outside the workspace. */
static struct sb_protect_entry entries[] = {
	{ "/ws/.vscode", SB_PROT_ABSENT, "editor config", false, false, false },
	{ "/ws/.mcp.json", SB_PROT_RO, "MCP servers", false, false, false },
	{ "/ws/.gitmodules", SB_PROT_WATCH, "git submodule config", false,
	  false, false },
	{ "/ws/.git", SB_PROT_PIN, "git directory", false, false, false },
	{ "/ws/.git/config", SB_PROT_RO, "git config", false, false, false },
	{ "/ws/.git/hooks", SB_PROT_RO, "git hooks", false, false, false },
	{ "/ws/.git/commondir", SB_PROT_WATCH, "git redirect file", false,
	  false, false },
	{ "/ws/.git/modules/m", SB_PROT_PIN, "git directory", false, false,
	  false },
	{ "/ws/.git/modules/m/hooks", SB_PROT_RO, "git hooks", false, false,
	  false },
	{ "/ws/sub/.git", SB_PROT_PIN, "git directory", false, false, false },
	{ "/ws/sub/.git/hooks", SB_PROT_RO, "git hooks", false, false, false },
	{ "/ws/wt/.git", SB_PROT_RO, "gitdir file", false, false, false },
	{ "/main/.git/worktrees/wt", SB_PROT_PIN, "git directory", false, false,
	  false },
};

static const struct sb_protect plan = {
	.v = entries,
	.n = sizeof(entries) / sizeof(entries[0]),
};

/* The path of the entry hit, or "-". */
static const char *hit(const char *path, bool move, bool *below)
{
	const struct sb_protect_entry *e =
		sb_protect_attempt(&plan, path, move, below);

	return e ? e->path : "-";
}

UNIT_TEST(protect_attempt_at_or_below_read_only_and_placeholders)
{
	bool below;

	CHECK_STR_EQ(hit("/ws/.git/hooks/pre-commit", false, &below),
		     "/ws/.git/hooks");
	CHECK(!below);
	CHECK_STR_EQ(hit("/ws/.git/hooks", false, &below), "/ws/.git/hooks");
	CHECK_STR_EQ(hit("/ws/.git/config", false, &below), "/ws/.git/config");
	CHECK_STR_EQ(hit("/ws/.vscode/tasks.json", false, &below),
		     "/ws/.vscode");
	CHECK_STR_EQ(hit("/ws/.vscode", false, &below), "/ws/.vscode");
	CHECK_STR_EQ(hit("/ws/.mcp.json", false, &below), "/ws/.mcp.json");
	/* watched files: creating them is the attempt */
	CHECK_STR_EQ(hit("/ws/.gitmodules", false, &below), "/ws/.gitmodules");
	CHECK_STR_EQ(hit("/ws/.git/commondir", false, &below),
		     "/ws/.git/commondir");
	/* the deepest entry wins: a submodule's hooks, not its gitdir */
	CHECK_STR_EQ(hit("/ws/.git/modules/m/hooks/x", false, &below),
		     "/ws/.git/modules/m/hooks");
	CHECK_STR_EQ(hit("/ws/wt/.git", false, &below), "/ws/wt/.git");
}

UNIT_TEST(protect_attempt_git_writes_below_a_pin_are_none)
{
	bool below;

	/* what git commit writes */
	CHECK_STR_EQ(hit("/ws/.git/index.lock", false, &below), "-");
	CHECK_STR_EQ(hit("/ws/.git/index", true, &below), "-");
	CHECK_STR_EQ(hit("/ws/.git/objects/ab/cdef", false, &below), "-");
	CHECK_STR_EQ(hit("/ws/.git/refs/heads/main.lock", true, &below), "-");
	CHECK_STR_EQ(hit("/ws/.git/config.lock", false, &below), "-");
	CHECK_STR_EQ(hit("/main/.git/worktrees/wt/index", true, &below), "-");
	/* a name that only starts like a protected one */
	CHECK_STR_EQ(hit("/ws/.git/hooksx", false, &below), "-");
	CHECK_STR_EQ(hit("/ws/.vscode2/x", false, &below), "-");
	CHECK_STR_EQ(hit("/ws/src/main.c", true, &below), "-");
	/* git removes empty directories up to the gitdir: rmdir of a pin is
	 * not an attempt (it fails: the directory holds mount points) */
	CHECK_STR_EQ(hit("/ws/.git", false, &below), "-");
	CHECK_STR_EQ(hit("/ws/sub/.git", false, &below), "-");
}

UNIT_TEST(protect_attempt_moves)
{
	bool below;

	/* renaming a pinned git directory */
	CHECK_STR_EQ(hit("/ws/.git", true, &below), "/ws/.git");
	CHECK(!below);
	CHECK_STR_EQ(hit("/ws/.git/modules/m", true, &below),
		     "/ws/.git/modules/m");
	/* renaming a directory that holds protected paths carries them */
	CHECK_STR_EQ(hit("/ws/sub", true, &below), "/ws/sub/.git");
	CHECK(below);
	CHECK_STR_EQ(hit("/ws/.git/modules", true, &below),
		     "/ws/.git/modules/m");
	CHECK(below);
	/* not without a move (mkdir, open of a file below a directory) */
	CHECK_STR_EQ(hit("/ws/sub", false, &below), "-");
	CHECK(!below);
	CHECK_STR_EQ(hit("/ws/src", true, &below), "-");
	CHECK(!below);
}

UNIT_TEST(protect_attempt_no_plan_or_no_path)
{
	struct sb_protect empty = { 0 };
	bool below = true;

	CHECK(sb_protect_attempt(NULL, "/ws/.git/config", false, &below) ==
	      NULL);
	CHECK(!below);
	CHECK(sb_protect_attempt(&empty, "/ws/.git/config", true, &below) ==
	      NULL);
	CHECK(sb_protect_attempt(&plan, NULL, false, &below) == NULL);
	/* a relative path (unresolved) never matches */
	CHECK(sb_protect_attempt(&plan, ".git/config", false, &below) == NULL);
}

static const struct sb_protect_entry *at(const struct sb_protect *p,
					 const char *ws, const char *rel)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", ws, rel);
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->v[i].path, path) == 0)
			return &p->v[i];
	return NULL;
}

/* The plan pins the directories between the workspace and a protected
 * path (a rename would carry the mount along), lists parents first, and
 * a holder marks no change below it as protected. */
UNIT_TEST(protect_plan_holders_parent_first)
{
	char tmpl[] = "/tmp/agentrun-unit-protect-XXXXXX", cmd[256];
	const char *dirs[] = { ".git/hooks",	 ".git/modules/m/hooks",
			       "sub/.git/hooks", "a/b/.git/hooks",
			       ".claude",	 "src" };
	struct ar_error err = AR_ERROR_INIT;
	struct sb_protect p;
	const struct sb_protect_entry *e;
	char *ws, *x;
	bool below;

	CHECK(mkdtemp(tmpl) != NULL);
	ws = realpath(tmpl, NULL);
	CHECK(ws != NULL);
	if (!ws)
		return;
	for (size_t i = 0; i < AR_ARRAY_SIZE(dirs); i++) {
		x = ar_xasprintf("%s/%s", ws, dirs[i]);
		CHECK(ar_mkdir_p(x, 0755) == 0);
		free(x);
	}
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && touch .git/HEAD .git/config .git/modules/m/HEAD "
		 ".claude/settings.json && mkdir -p .git/modules/m/objects",
		 ws);
	CHECK(system(cmd) == 0);
	CHECK_INT_EQ(
		sb_protect_plan(&p, ws, "/nonexistent-home", NULL, 0, &err), 0);
	for (size_t i = 0; i < 4; i++) {
		static const char *const holders[] = { "sub", "a", "a/b",
						       ".git/modules" };

		e = at(&p, ws, holders[i]);
		CHECK(e && e->kind == SB_PROT_PIN && e->holder);
	}
	e = at(&p, ws, ".claude");
	CHECK(e && e->holder);
	CHECK(at(&p, ws, ".claude/settings.json") != NULL);
	/* an existing .claude: its names, none a scratch .claude; the
	 * missing .claude of a nested repository: a scratch one */
	e = at(&p, ws, ".claude/settings.local.json");
	CHECK(e && e->kind == SB_PROT_ABSENT && !e->claude_dir);
	e = at(&p, ws, "sub/.claude");
	CHECK(e && e->kind == SB_PROT_ABSENT && e->claude_dir);
	e = at(&p, ws, ".git");
	CHECK(e && !e->holder);
	CHECK(at(&p, ws, "src") == NULL);
	/* parent before child */
	for (size_t i = 0; i < p.n; i++)
		for (size_t j = i + 1; j < p.n; j++)
			CHECK(!ar_path_under(p.v[i].path, p.v[j].path) ||
			      strcmp(p.v[i].path, p.v[j].path) == 0);
	/* a change below a holder is not a protected change, nor a write
	 * below it an attempt; renaming it is */
	x = ar_xasprintf("%s/sub/src.c", ws);
	CHECK(sb_protect_find(&p, x) == NULL);
	CHECK(sb_protect_attempt(&p, x, true, &below) == NULL);
	free(x);
	x = ar_xasprintf("%s/sub", ws);
	e = sb_protect_attempt(&p, x, true, &below);
	CHECK(e && e->holder && !below);
	CHECK(sb_protect_attempt(&p, x, false, &below) == NULL);
	free(x);
	sb_protect_release(&p);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", ws);
	CHECK(system(cmd) == 0);
	free(ws);
}

/* By name alone (commit of an --overlay run): the shallowest protected
 * prefix of a workspace-relative path, at any depth. */
static const char *rel_root(const char *rel, char *buf)
{
	size_t n = 0;
	const char *why = sb_protect_rel_why(rel, &n);

	if (!why)
		return "-";
	snprintf(buf, 256, "%.*s", (int)n, rel);
	return buf;
}

UNIT_TEST(protect_rel_why_names)
{
	char b[256];

	CHECK_STR_EQ(rel_root(".git/hooks/pre-commit", b), ".git");
	CHECK_STR_EQ(rel_root(".git", b), ".git");
	CHECK_STR_EQ(rel_root("evil/.git/config", b), "evil/.git");
	CHECK_STR_EQ(rel_root("a/b/.git", b), "a/b/.git");
	CHECK_STR_EQ(rel_root(".vscode/tasks.json", b), ".vscode");
	CHECK_STR_EQ(rel_root("sub/.vscode", b), "sub/.vscode");
	CHECK_STR_EQ(rel_root(".mcp.json", b), ".mcp.json");
	CHECK_STR_EQ(rel_root("x/.zed/settings.json", b), "x/.zed");
	CHECK_STR_EQ(rel_root(".envrc", b), ".envrc");
	CHECK_STR_EQ(rel_root("pkg/.envrc", b), "pkg/.envrc");
	CHECK_STR_EQ(rel_root(".env", b), "-");
	CHECK_STR_EQ(rel_root(".helix/languages.toml", b), ".helix");
	CHECK_STR_EQ(rel_root(".cursor/mcp.json", b), ".cursor");
	CHECK_STR_EQ(rel_root("app/mise.toml", b), "app/mise.toml");
	CHECK_STR_EQ(rel_root(".mise/config.toml", b), ".mise");
	CHECK_STR_EQ(rel_root("src/mise.c", b), "-");
	CHECK_STR_EQ(rel_root("zed/settings.json", b), "-");
	CHECK_STR_EQ(rel_root(".devcontainer/devcontainer.json", b),
		     ".devcontainer");
	CHECK_STR_EQ(rel_root("app/.devcontainer.json", b),
		     "app/.devcontainer.json");
	{
		size_t n = 0;
		const char *why = sb_protect_rel_why(".devcontainer.json", &n);

		CHECK(why && strstr(why, "initializeCommand") != NULL);
	}
	CHECK_STR_EQ(rel_root(".gitmodules", b), ".gitmodules");
	CHECK_STR_EQ(rel_root("x/.bashrc", b), "x/.bashrc");
	CHECK_STR_EQ(rel_root(".claude/settings.json", b),
		     ".claude/settings.json");
	CHECK_STR_EQ(rel_root(".claude/commands/x.md", b), ".claude/commands");
	CHECK_STR_EQ(rel_root("p/.claude/agents", b), "p/.claude/agents");
	/* the shallowest wins */
	CHECK_STR_EQ(rel_root(".vscode/.git/config", b), ".vscode");
	/* not protected */
	CHECK_STR_EQ(rel_root(".claude", b), "-");
	CHECK_STR_EQ(rel_root(".claude/notes.md", b), "-");
	CHECK_STR_EQ(rel_root(".gitignore", b), "-");
	CHECK_STR_EQ(rel_root(".github/workflows/ci.yml", b), "-");
	CHECK_STR_EQ(rel_root("src/git/config", b), "-");
	CHECK_STR_EQ(rel_root("x.git/y", b), "-");
	CHECK_STR_EQ(rel_root("", b), "-");
}

UNIT_TEST(protect_gitdir_why_code_running_or_data)
{
	CHECK(sb_protect_gitdir_why("config") != NULL);
	CHECK(sb_protect_gitdir_why("hooks/pre-commit") != NULL);
	CHECK(sb_protect_gitdir_why("hooks") != NULL);
	CHECK(sb_protect_gitdir_why("info/attributes") != NULL);
	CHECK(sb_protect_gitdir_why("commondir") != NULL);
	CHECK(sb_protect_gitdir_why("config.worktree") != NULL);
	CHECK(sb_protect_gitdir_why("modules/m/config") != NULL);
	CHECK(sb_protect_gitdir_why("rebase-merge/git-rebase-todo") != NULL);
	CHECK(sb_protect_gitdir_why("worktrees/w/commondir") != NULL);
	CHECK(sb_protect_gitdir_why("worktrees/w/gitdir") != NULL);
	CHECK(sb_protect_gitdir_why("worktrees/w/HEAD") == NULL);
	CHECK(sb_protect_gitdir_why("objects/ab/cdef") == NULL);
	CHECK(sb_protect_gitdir_why("refs/heads/main") == NULL);
	CHECK(sb_protect_gitdir_why("index") == NULL);
	CHECK(sb_protect_gitdir_why("logs/HEAD") == NULL);
	CHECK(sb_protect_gitdir_why("HEAD") == NULL);
	CHECK(sb_protect_gitdir_why("configx") == NULL);
	CHECK(sb_protect_gitdir_why("") == NULL);
}

UNIT_MAIN()

/* The home directory's paths the host runs code from (what learn mode
 * never grants and a read-write bind warns about): a path at or below
 * one gets its reason and the one it is below; a parent or a neighbour
 * gets none. Pure: no file system access. */
UNIT_TEST(protect_home_why)
{
	static const struct {
		const char *path, *at, *why;
	} cases[] = {
		{ "/h/.bashrc", "/h/.bashrc", "shell rc file" },
		{ "/h/.local/bin/git", "/h/.local/bin", "programs on PATH" },
		{ "/h/.config/systemd/user/x.service", "/h/.config/systemd",
		  "systemd user units" },
		{ "/h/.config/git/config", "/h/.config/git", "git config" },
		{ "/h/.gemini/settings.json", "/h/.gemini/settings.json",
		  NULL },
		{ "/h/.codex/config.toml", "/h/.codex/config.toml", NULL },
		{ "/h/.claude/settings.json", "/h/.claude/settings.json",
		  NULL },
		{ "/h/.claude/local/claude", "/h/.claude/local", NULL },
		{ "/h/.ssh/authorized_keys", "/h/.ssh", "secret store" },
		{ "/h/.config/opencode/plugin/x.js",
		  "/h/.config/opencode/plugin", NULL },
	};
	static const char *const none[] = {
		"/h/.config",	       "/h/.config/tool/state",
		"/h/.local",	       "/h/.gemini/oauth_creds.json",
		"/h/.codex/auth.json", "/h/.claude/projects/x",
		"/h/.bashrc.d",	       "/h/.local/binx",
		"/elsewhere/.bashrc",  "/h/.config/opencode/.gitignore",
	};

	for (size_t i = 0; i < AR_ARRAY_SIZE(cases); i++) {
		char *at = NULL;
		const char *why = sb_protect_home_why("/h", cases[i].path, &at);

		CHECK(why != NULL);
		CHECK(at && strcmp(at, cases[i].at) == 0);
		if (why && cases[i].why)
			CHECK_STR_EQ(why, cases[i].why);
		free(at);
	}
	for (size_t i = 0; i < AR_ARRAY_SIZE(none); i++)
		CHECK(sb_protect_home_why("/h", none[i], NULL) == NULL);
}
