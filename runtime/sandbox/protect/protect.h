/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Protected paths inside the workspace (protect.c): the files through
 * which the host would later run what the agent wrote there (git
 * metadata, editor and agent config), computed once per start from the
 * workspace on disk and the options, then only read: by the config
 * builder (mounts), by the run (placeholders removed, late creations
 * reported after the exit) and by the audit log.
 *
 *   SB_PROT_RO       exists: a read-only bind over it (cannot be
 *                    written, replaced, renamed or removed: EROFS/EBUSY)
 *   SB_PROT_PIN      a gitdir directory: bound onto itself read-write, so
 *                    it cannot be renamed or removed (EBUSY) while git
 *                    keeps writing objects, refs, index and logs in it;
 *                    also (`holder`) every directory between the
 *                    workspace, or a pinned gitdir, and a protected path:
 *                    renaming it would carry the protected path's mount
 *                    along and free its name (mv .claude x; mkdir
 *                    .claude)
 *   SB_PROT_ABSENT   missing: an empty read-only directory is mounted
 *                    there for the run (its mount point is made on the
 *                    host, shared with the other sandboxes on the
 *                    workspace and removed by the last one out:
 *                    placeholder.h), so nothing can be created under
 *                    that name; also an existing directory that is
 *                    such a placeholder
 *   SB_PROT_WATCH    missing, and a placeholder would break the host's
 *                    git (`commondir`): checked after the exit; if the
 *                    agent created it, it is removed and reported
 */
#ifndef AGENTRUN_SANDBOX_PROTECT_H
#define AGENTRUN_SANDBOX_PROTECT_H

#include <stdbool.h>
#include <stddef.h>

#include "error.h"

enum sb_protect_kind {
	SB_PROT_RO,
	SB_PROT_PIN,
	SB_PROT_ABSENT,
	SB_PROT_WATCH,
};

struct sb_protect_entry {
	char *path; /* absolute, below the workspace */
	enum sb_protect_kind kind;
	const char *why; /* static: "git hooks", ... */
	bool holder; /* SB_PROT_PIN only for the protected paths below */
	/* SB_PROT_ABSENT of a whole missing project .claude: under --nested
	 * a writable scratch tmpfs (discarded with the run) holding a
	 * placeholder for each name of sb_protect_claude_names, so that a
	 * nested sandbox (Claude Code's bubblewrap) can make the mount
	 * points it binds over the names it protects */
	bool claude_dir;
	/* SB_PROT_ABSENT of .claude/settings.json or settings.local.json in
	 * an existing project .claude: the placeholder is an empty regular
	 * file (Claude Code reads it as {}; a directory there is a
	 * "Settings Error" at every start), held read-only, removed at the
	 * end (placeholder.h) */
	bool file;
};

struct sb_protect {
	struct sb_protect_entry *v;
	size_t n, cap;
	size_t repos; /* repositories found (the workspace's included) */
	bool truncated; /* the search for nested repositories stopped */
	/* a directory of the search could not be read (its subdirectories'
	 * .git not looked at) */
	bool incomplete;
	bool off; /* nothing protected (--rw of the workspace itself) */
};

/* How far below the workspace nested repositories are looked for, and
 * how many directories at most are read doing it. */
#define SB_PROTECT_DEPTH 4
#define SB_PROTECT_MAX_DIRS 20000

/* The plan for workspace `ws` (a real path) of the user whose home
 * directory is `home`, parent before child (a bind mount covers what was
 * mounted below it before it). The --rw values `rw` at or above a protected path
 * (inside the workspace) opt it back in, with a warning. Fails for a
 * protected path that is a symbolic link (a mount cannot hold a link)
 * unless it is opted out. The mounts are made from the plan by
 * sandbox_config.c. */
int sb_protect_plan(struct sb_protect *p, const char *ws, const char *home,
		    const char *const *rw, size_t n_rw, struct ar_error *err);
/* The plan of a read-write root outside the workspace (a start-time
 * --rw directory): only agentrun's own state directory (run_record.h),
 * read-only when it is below `root`, with its holders pinned; refused
 * (-1) when `root` is at or below it. sb_protect_plan does the same for
 * the workspace (and a live grant's directory). */
int sb_protect_state(struct sb_protect *p, const char *root, const char *home,
		     struct ar_error *err);
/* agentrun's own state directory: $XDG_STATE_HOME/agentrun, or
 * HOME/.local/state/agentrun (allocated): the records, the quarantine
 * (host_exec_check.h), egress.log. Read-only inside every sandbox, and
 * never granted read-write (sb_protect_state): an agent that
 * could write there would delete its own run's record (never checked
 * then) or forge one naming a directory of the user's (a later start
 * would "check" it and quarantine the user's own files). */
char *sb_protect_state_dir(const char *home, char *const *envp);
/* The names protected inside a project's .claude (settings.json,
 * settings.local.json, commands, agents); sets *n. */
const char *const *sb_protect_claude_names(size_t *n);
/* The i-th name at a repository's top whose editor or agent config the
 * host runs code from and that the plan holds with a placeholder when
 * missing (.vscode, .idea, .devcontainer, .zed, .helix, .mcp.json, ...),
 * or any agent CLI's project config (.gemini, .codex, .cursor,
 * opencode.json, ...), with why: what host_exec_check.c sets aside in a
 * repository the run made. False past the last. */
bool sb_protect_top_config(size_t i, const char **name, const char **why);

/* rel (relative to a workspace) is where the workspace's own run makes a
 * placeholder when it is missing: .vscode, .idea, .mcp.json, .claude
 * (and its protected names), .gemini, .codex, .git/hooks, .git/info, ... */
bool sb_protect_placeholder_name(const char *rel);
/* After the run: remove and report watched files the agent created
 * (the placeholders' mount points: placeholder.h). Returns how many
 * watched files were found. */
size_t sb_protect_after_run(const struct sb_protect *p);
/* The entry covering `path` (absolute), or NULL; a holder only when
 * `path` is the holder itself. */
const struct sb_protect_entry *sb_protect_find(const struct sb_protect *p,
					       const char *path);
/* The entry a call that changes `path` (absolute, resolved: the audit
 * log's write-intent syscalls) is an attempt on, or NULL: the deepest
 * entry `path` is at or below, except pinned git directories (git writes
 * objects, refs and the index below them, and removes empty directories
 * up to them). With `move` (a rename of `path`, which carries what is
 * below it along) a pinned directory counts itself, and an entry below
 * `path` counts too (*below set). Pure: no file system access. */
const struct sb_protect_entry *sb_protect_attempt(const struct sb_protect *p,
						  const char *path, bool move,
						  bool *below);
void sb_protect_release(struct sb_protect *p);
/* Why `rel` (relative to the workspace, no "." or ".." components) is
 * protected by its name alone, or NULL: a component `.git` (a git
 * directory or gitdir file), one of the names protected at the top of
 * each repository (.vscode, .mcp.json, .gitmodules, rc files, the other
 * agent CLIs' .gemini, .codex, .opencode, opencode.json, ...) or
 * .claude/{settings.json,settings.local.json,commands,agents}, at any
 * depth (the repositories an overlay run creates are not known from the
 * workspace). *root_len: the length of the shallowest protected prefix
 * of rel (".git" of "a/.git/hooks/x" is 6). Pure. */
const char *sb_protect_rel_why(const char *rel, size_t *root_len);
/* Why `rel`, relative to a git directory, makes the host's git run code
 * (config, hooks, info/, commondir, config.worktree, modules/, the
 * redirect files of worktrees/NAME/, an in-progress rebase or sequencer
 * whose todo can run commands), or NULL for git's own data (objects,
 * refs, index, logs, HEAD...). Pure. */
const char *sb_protect_gitdir_why(const char *rel);

/* The home directory's paths the host runs code from later: the ones
 * sb_protect_plan protects when the home directory is the workspace
 * (shell rc files, ~/.local/bin, ~/.config/{systemd,autostart,
 * environment.d,git}, git and editor config, the agent CLIs' own
 * command-running config and launchers) and the never-share list
 * (home_secrets.c). Learn mode never grants them read-write; a
 * read-write bind over one warns at start. */
typedef bool (*sb_protect_home_fn)(const char *path, const char *why,
				   void *data);
/* fn(absolute path, reason, data) for each, until it returns false
 * (then returns false). `path` is valid during the call only. */
bool sb_protect_home_each(const char *home, sb_protect_home_fn fn, void *data);
/* The reason when `path` (absolute) is one of them or below one, with
 * *at (malloc'd, when `at` is not NULL) that one; NULL when not. */
const char *sb_protect_home_why(const char *home, const char *path, char **at);
/* A --rw value: "~/x" -> HOME/x, an absolute path kept, then its real
 * path when it exists; NULL for a relative one. Malloc'd. */
char *sb_protect_lexical(const char *home, const char *q);

#endif
