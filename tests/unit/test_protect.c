/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests for protect.c's matching: which protected path a write by
 * path is an attempt on (sb_protect_attempt), the audit log's rule. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "../../runtime/sandbox/protect.h"
#include "unit.h"

/* A plan as sb_protect_plan makes it for /ws with a nested repository
 * sub/ and a linked worktree's gitdir outside the workspace. */
static struct sb_protect_entry entries[] = {
	{ "/ws/.vscode", SB_PROT_ABSENT, "editor config" },
	{ "/ws/.mcp.json", SB_PROT_RO, "MCP servers" },
	{ "/ws/.gitmodules", SB_PROT_WATCH, "git submodule config" },
	{ "/ws/.git", SB_PROT_PIN, "git directory" },
	{ "/ws/.git/config", SB_PROT_RO, "git config" },
	{ "/ws/.git/hooks", SB_PROT_RO, "git hooks" },
	{ "/ws/.git/commondir", SB_PROT_WATCH, "git redirect file" },
	{ "/ws/.git/modules/m", SB_PROT_PIN, "git directory" },
	{ "/ws/.git/modules/m/hooks", SB_PROT_RO, "git hooks" },
	{ "/ws/sub/.git", SB_PROT_PIN, "git directory" },
	{ "/ws/sub/.git/hooks", SB_PROT_RO, "git hooks" },
	{ "/ws/wt/.git", SB_PROT_RO, "gitdir file" },
	{ "/main/.git/worktrees/wt", SB_PROT_PIN, "git directory" },
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

UNIT_MAIN()
