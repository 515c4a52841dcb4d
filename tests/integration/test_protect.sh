#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Protected paths inside the workspace: a hostile command in the sandbox
# tries to leave code that the host runs later (git hooks and config,
# git redirect files, a replaced .git, editor and agent config, nested
# repositories and submodules); the host's next `git status` and
# `git commit` must not run it. Git itself keeps working inside.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# repo_setup MODE: $WS a real repository with one commit, a pre-existing
# .vscode/settings.json, a nested repository sub/ and a submodule mod/.
repo_setup()
{
	require_cmd git
	sb_home "$1"
	protect_repo
}

ATTACK='
m=$1
for g in .git sub/.git .git/modules/mod; do
	printf "#!/bin/sh\necho hook $g >>$m\n" >$g/hooks/pre-commit 2>/dev/null && chmod +x $g/hooks/pre-commit
	printf "#!/bin/sh\necho hook $g >>$m\n" >$g/hooks/post-checkout 2>/dev/null
	git --git-dir=$g config core.fsmonitor "echo fsmonitor $g >>$m; false" 2>/dev/null
	git --git-dir=$g config core.hooksPath /tmp 2>/dev/null
	git --git-dir=$g config core.pager "echo pager >>$m; cat" 2>/dev/null
	echo "[core]" >>$g/config 2>/dev/null
	printf "[include]\n\tpath = /tmp/x\n" >>$g/config 2>/dev/null
	printf "[core]\n\tfsmonitor = echo worktree >>$m\n" >$g/config.worktree 2>/dev/null
	mkdir -p $g/info 2>/dev/null; echo "* filter=x" >$g/info/attributes 2>/dev/null
done
# a commondir redirecting to a config of ours
mkdir -p evil/hooks; printf "[core]\n\tfsmonitor = echo commondir >>$m; false\n" >evil/config
mkdir -p .vscode 2>/dev/null; echo "{\"tasks\":1}" >.vscode/tasks.json 2>/dev/null
echo x >>.vscode/settings.json 2>/dev/null
echo "{\"mcpServers\":{}}" >.mcp.json 2>/dev/null
mkdir -p .claude/commands 2>/dev/null; echo "{\"hooks\":1}" >.claude/settings.json 2>/dev/null
mkdir .idea 2>/dev/null; echo x >.idea/workspace.xml 2>/dev/null
# a dev container whose initializeCommand the host runs (VS Code, the
# devcontainer CLI) before any container exists
mkdir -p .devcontainer 2>/dev/null; echo "{\"initializeCommand\":\"echo devcontainer >>$m\"}" >.devcontainer/devcontainer.json 2>/dev/null
echo "{\"initializeCommand\":\"echo devcontainer >>$m\"}" >.devcontainer.json 2>/dev/null
true
'

t_git_attacks()
{
	repo_setup "${1:-user}"
	assert_status 0 sb_run -- sh -c "$ATTACK" _ "$MARK"
	host_git_runs_nothing
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "pre-commit hook written"
	[ ! -e "$WS/sub/.git/hooks/pre-commit" ] || fail "nested repo hook written"
	[ ! -e "$WS/.git/modules/mod/hooks/pre-commit" ] || fail "submodule hook written"
	[ ! -e "$WS/.git/config.worktree" ] || fail "config.worktree created"
	[ ! -e "$WS/.git/info/attributes" ] || fail "info/attributes created"
	[ -d "$WS/.git" ] && [ -d "$WS/sub/.git" ] || fail ".git replaced"
	assert_eq "$(cat "$WS/mod/.git")" "gitdir: ../.git/modules/mod"
	assert_not_contains "$(cat "$WS/.git/config")" "fsmonitor"
	assert_not_contains "$(cat "$WS/.git/config")" "include"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail ".vscode/tasks.json written"
	assert_eq "$(cat "$WS/.vscode/settings.json")" "{}"
	[ ! -e "$WS/.mcp.json" ] || fail ".mcp.json created"
	[ ! -e "$WS/.claude" ] || fail ".claude created (or its placeholder left)"
	[ ! -e "$WS/.idea" ] || fail ".idea created (or its placeholder left)"
	[ ! -e "$WS/.devcontainer" ] || fail ".devcontainer created (or its placeholder left)"
	[ ! -e "$WS/.devcontainer.json" ] || fail ".devcontainer.json created (or its placeholder left)"
	host_git_runs_nothing
}

# Editors and tools that run a project's config on the host: Zed and
# Helix start the language server commands of .zed/settings.json and
# .helix/languages.toml when a file is opened; mise runs a trusted
# mise.toml's hooks and [env] _.source at every cd (trust goes by path);
# Cursor runs the MCP servers of .cursor/mcp.json. An existing
# .zed/settings.json and mise.toml stay the host's, a missing .helix or
# .cursor cannot be made, a new .mise.toml (untrusted: mise asks) is
# named at the exit.
EDITOR_TOOLS='
m=$1
echo "{\"lsp\":{\"x\":{\"binary\":{\"path\":\"sh\",\"arguments\":[\"-c\",\"echo zed >>$m\"]}}}}" >.zed/settings.json 2>/dev/null
echo "[]" >.zed/tasks.json 2>/dev/null
mkdir -p .helix 2>/dev/null; printf "[language-server.x]\ncommand = \"sh\"\nargs = [\"-c\", \"echo helix >>$m\"]\n" >.helix/languages.toml 2>/dev/null
mkdir -p .cursor 2>/dev/null; echo "{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}" >.cursor/mcp.json 2>/dev/null
printf "[hooks]\nenter = \"echo mise >>$m\"\n" >>mise.toml 2>/dev/null
mv mise.toml mise.old 2>/dev/null || rm -f mise.toml 2>/dev/null
printf "[hooks]\nenter = \"echo mise >>$m\"\n" >.mise.toml
true
'

t_editor_tool_config()
{
	require_cmd git
	sb_home "$1"
	protect_repo .zed
	echo '[tools]' >"$WS/mise.toml"
	sb_home_own
	assert_status 0 sb_run -- sh -c "$EDITOR_TOOLS" _ "$MARK"
	assert_eq "$(cat "$WS/.zed/settings.json")" "{}"
	[ ! -e "$WS/.zed/tasks.json" ] || fail ".zed/tasks.json written"
	[ ! -e "$WS/.helix" ] || fail ".helix created (or its placeholder left)"
	[ ! -e "$WS/.cursor" ] || fail ".cursor created (or its placeholder left)"
	assert_eq "$(cat "$WS/mise.toml")" "[tools]"
	[ ! -e "$WS/mise.old" ] || fail "mise.toml renamed"
	assert_contains "$ERR" "the command created \`$WS/.mise.toml\` (tool config (mise"
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code: $(cat "$MARK")"
}

# direnv runs an .envrc the user allowed at every cd into the project,
# and with it the files the .envrc loads, which direnv does not check: a
# PROMPT_COMMAND in the .env of `dotenv_if_exists` runs in the user's
# shell, a `source_env_if_exists .envrc.local` sources the agent's
# script, `use flake` evaluates flake.nix and sources the dev shell's
# hook cached in .direnv. Those present are read-only, missing ones
# cannot be made (an empty read-only file while the sandbox runs), a new
# flake.lock is named at the exit; a package's own .envrc below the top
# counts too. Then the host's real direnv loads none of the agent's.
DIRENV_ATTACK='
m=$1
echo "PROMPT_COMMAND=\"echo dotenv >>$m\"" >.env 2>/dev/null
echo "echo envrc-local >>$m" >.envrc.local 2>/dev/null
echo "echo envrc >>$m" >>.envrc 2>/dev/null
mv .envrc envrc.old 2>/dev/null
echo "{ outputs = _: { shellHook = \"echo flake >>$m\"; }; }" >flake.nix 2>/dev/null
mkdir -p .direnv 2>/dev/null; echo "echo cache >>$m" >.direnv/flake-profile-x.rc 2>/dev/null
echo "BASH_ENV=$m" >>pkg/.env.pkg 2>/dev/null
mv pkg pkg-moved 2>/dev/null && mkdir pkg && echo "dotenv .env.pkg" >pkg/.envrc && echo "BASH_ENV=$m" >pkg/.env.pkg
echo "PROMPT_COMMAND=\"echo link >>$m\"" >>.env.link 2>/dev/null
echo "{}" >flake.lock
true
'

t_direnv()
{
	require_cmd git
	sb_home "$1"
	protect_repo
	printf 'dotenv_if_exists\nsource_env_if_exists .envrc.local\nif has nix; then use flake; fi\ndotenv .env.link\n' >"$WS/.envrc"
	# a dotenv file that is a link: the file it leads to is held
	echo 'B=1' >"$WS/.env.dev"
	ln -s .env.dev "$WS/.env.link"
	echo '{ outputs = _: { }; }' >"$WS/flake.nix"
	# a package with its own .envrc (and subdirectories: the scan
	# reads its listing)
	mkdir -p "$WS/pkg/src"
	echo 'dotenv .env.pkg' >"$WS/pkg/.envrc"
	echo 'A=1' >"$WS/pkg/.env.pkg"
	sb_home_own
	assert_status 0 sb_run -- sh -c "$DIRENV_ATTACK" _ "$MARK"
	[ ! -e "$WS/.env" ] || fail ".env created (or its placeholder left): $(cat "$WS/.env")"
	[ ! -e "$WS/.envrc.local" ] || fail ".envrc.local created (or its placeholder left)"
	[ ! -e "$WS/.direnv" ] || fail ".direnv created (or its placeholder left)"
	[ ! -e "$WS/envrc.old" ] || fail ".envrc renamed"
	assert_eq "$(cat "$WS/.envrc")" "$(printf 'dotenv_if_exists\nsource_env_if_exists .envrc.local\nif has nix; then use flake; fi\ndotenv .env.link')"
	assert_eq "$(cat "$WS/.env.dev")" "B=1"
	assert_eq "$(cat "$WS/flake.nix")" '{ outputs = _: { }; }'
	assert_eq "$(cat "$WS/pkg/.env.pkg")" "A=1"
	[ ! -e "$WS/pkg-moved" ] || fail "the package holding a protected .env was renamed"
	assert_contains "$ERR" "the command created \`$WS/flake.lock\` (a file .envrc loads"
	if command -v direnv >/dev/null; then
		# the user's direnv, with the .envrc allowed as it was
		host direnv allow "$WS" 2>/dev/null
		assert_eq "$(host direnv exec "$WS" sh -c 'echo "[$PROMPT_COMMAND]"' 2>/dev/null)" "[]"
		host direnv exec "$WS" true >/dev/null 2>&1
	fi
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code: $(cat "$MARK")"
}

# A .envrc (written by the agent in an earlier run, when there was none
# to protect) that names a file through a link to the user's ~/.ssh: the
# plan must not bind that file into the sandbox to hold it read-only.
t_direnv_link_on_the_way()
{
	sb_home "$1"
	mkdir -p "$H/.ssh"
	echo SECRET-KEY >"$H/.ssh/id_test"
	echo 'dotenv conf/id_test' >"$WS/.envrc"
	ln -s "$H/.ssh" "$WS/conf"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'cat conf/id_test 2>/dev/null; cat "$0/.ssh/id_test" 2>/dev/null; true' "$H"
	assert_not_contains "$OUT" SECRET-KEY
}

# The same in an --overlay run: `agentrun commit` holds back the .envrc
# (at any depth) and what the host's .envrc at the top loads; the
# ordinary file lands.
t_direnv_commit()
{
	require_cmd git
	sb_home "$1"
	protect_repo
	printf 'dotenv_if_exists .env.local\nuse flake\n' >"$WS/.envrc"
	sb_home_own
	local name=de$RANDOM
	sb_run --overlay --name "$name" -- sh -c '
		echo "PROMPT_COMMAND=x" >.env.local
		echo "{ }" >flake.nix
		mkdir -p .direnv sub && echo x >.direnv/flake-profile-x.rc
		echo "echo x" >>.envrc
		echo "dotenv" >sub/.envrc
		echo ok >plain.txt' 2>"$TEST_TMP/ov.err" || {
		grep -q "doctor check \`overlay\`" "$TEST_TMP/ov.err" &&
			skip "--overlay is not available here"
		fail "the overlay run failed: $(cat "$TEST_TMP/ov.err")"
	}
	sb_as_mode commit "$name" 2>"$TEST_TMP/c.err"
	assert_contains "$(cat "$TEST_TMP/c.err")" "held back"
	assert_eq "$(cat "$WS/plain.txt")" ok
	[ ! -e "$WS/.env.local" ] || fail ".env.local committed"
	[ ! -e "$WS/flake.nix" ] || fail "flake.nix committed"
	[ ! -e "$WS/.direnv" ] || fail ".direnv committed"
	[ ! -e "$WS/sub/.envrc" ] || fail "sub/.envrc committed"
	assert_eq "$(cat "$WS/.envrc")" "$(printf 'dotenv_if_exists .env.local\nuse flake')"
}

# Replace .git (rename or remove it, or rewrite a gitdir file) and
# git init one with a hook and an fsmonitor.
REPLACE='
m=$1
own() { git init -q "$1" && printf "#!/bin/sh\necho hook $1 >>$m\n" >"$1/.git/hooks/pre-commit" &&
	chmod +x "$1/.git/hooks/pre-commit" && git -C "$1" config core.fsmonitor "echo fsmonitor $1 >>$m; false"; }
mv .git .git-old 2>/dev/null || rm -rf .git 2>/dev/null; [ -e .git ] || own .
mv sub/.git sub/.git-old 2>/dev/null || rm -rf sub/.git 2>/dev/null; [ -e sub/.git ] || own sub
mkdir -p evil; (cd evil && git init -q && git config core.fsmonitor "echo fsmonitor mod >>$m; false")
rm -f mod/.git 2>/dev/null && echo "gitdir: ../evil/.git" >mod/.git
true
'

t_git_replaced()
{
	repo_setup user
	assert_status 0 sb_run -- sh -c "$REPLACE" _ "$MARK"
	host_git_runs_nothing
	# renaming fails; removing deletes what git can rebuild or the
	# agent could delete anyway (objects), not the pinned directory nor
	# its config and hooks
	[ ! -e "$WS/.git-old" ] && [ ! -e "$WS/sub/.git-old" ] || fail ".git renamed"
	[ -f "$WS/.git/config" ] && [ -f "$WS/sub/.git/config" ] || fail ".git replaced"
	assert_not_contains "$(cat "$WS/.git/config" "$WS/sub/.git/config")" "fsmonitor"
	assert_eq "$(cat "$WS/mod/.git")" "gitdir: ../.git/modules/mod"
}

# Rename a directory that holds protected paths (the mounts go along)
# and put one's own in its place: a nested repository, .claude with its
# settings, .git/modules with a submodule's gitdir, .git/worktrees.
HOLDERS='
m=$1
mv sub sub-moved 2>/dev/null && git init -q sub && printf "#!/bin/sh\necho hook sub >>$m\n" >sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit
mv .claude .claude-old 2>/dev/null && mkdir .claude && echo "{\"hooks\":\"evil\"}" >.claude/settings.json
mv .git/modules .git/modules-old 2>/dev/null && mkdir -p .git/modules && cp -r .git/modules-old/mod .git/modules/mod &&
	printf "#!/bin/sh\necho hook mod >>$m\n" >.git/modules/mod/hooks/pre-commit && chmod +x .git/modules/mod/hooks/pre-commit
mv .git/worktrees .git/worktrees-old 2>/dev/null && echo WORKTREES-MOVED
true
'

t_holders_pinned()
{
	repo_setup "${1:-user}"
	mkdir "$WS/.claude"
	echo "{}" >"$WS/.claude/settings.json"
	host git -C "$WS" worktree add -q "$H/wt" -b feature
	sb_home_own
	assert_status 0 sb_run -- sh -c "$HOLDERS" _ "$MARK"
	assert_not_contains "$OUT" WORKTREES-MOVED
	[ ! -e "$WS/sub-moved" ] && [ ! -e "$WS/.claude-old" ] &&
		[ ! -e "$WS/.git/modules-old" ] && [ ! -e "$WS/.git/worktrees-old" ] ||
		fail "a directory holding protected paths was renamed: $(ls -a "$WS" "$WS/.git")"
	assert_eq "$(cat "$WS/.claude/settings.json")" "{}"
	[ ! -e "$WS/sub/.git/hooks/pre-commit" ] && [ ! -e "$WS/.git/modules/mod/hooks/pre-commit" ] ||
		fail "a hook was planted"
	host_git_runs_nothing
	# git keeps working in them
	assert_status 0 sb_run -- sh -c 'cd sub && echo t >t && git add t && git commit -qm t && cd ../mod && git status --short'
}

# A missing commondir gets a placeholder file holding "." (git on the
# host reads it as "this directory": an empty one would break it),
# read-only: the agent cannot create its own; none is left after the exit.
t_commondir_removed()
{
	repo_setup user
	assert_status 0 sb_run -- sh -c 'mkdir -p evil && printf "[core]\n\tfsmonitor = echo commondir >>%s; false\n" "$1" >evil/config &&
		{ echo ../evil >.git/commondir 2>/dev/null || echo REFUSED; }
		{ rm -f .git/commondir 2>/dev/null || echo RM-REFUSED; }
		{ echo ../../evil >.git/modules/mod/commondir 2>/dev/null || echo MOD-REFUSED; }' _ "$MARK"
	assert_contains "$OUT" "REFUSED
RM-REFUSED
MOD-REFUSED"
	[ ! -e "$WS/.git/commondir" ] || fail "commondir left"
	[ ! -e "$WS/.git/modules/mod/commondir" ] || fail "the submodule's commondir left"
	host_git_runs_nothing
}

t_git_works_inside()
{
	repo_setup user
	assert_status 0 sb_run -- sh -c '
		set -e
		git status --short
		echo c >c.txt; git add c.txt; git commit -qm three
		git log --oneline | grep -q three
		echo d >>c.txt; git diff | grep -q "^+d"
		git stash -q; git stash pop -q
		git branch feature; git checkout -q feature; git checkout -q -
		git worktree add -q ../wt-inside 2>/dev/null || git worktree add -q "$PWD/wtree"
		git commit -qam four
		cd sub && echo s >s && git add s && git commit -qm s
		echo ok'
	assert_contains "$OUT" "ok"
	assert_eq "$(host git -C "$WS" log -1 --format=%s)" "four"
	# a config write fails clearly
	assert_status '!0' sb_run -- git config user.name X
	assert_contains "$ERR" "config"
}

t_rw_opts_back_in()
{
	repo_setup user
	assert_status 0 sb_run --rw "$WS/.git/hooks" --rw "$WS/.mcp.json" -- sh -c 'echo "#!/bin/sh" >.git/hooks/pre-commit && echo "{}" >.mcp.json'
	assert_contains "$ERR" "opted back in"
	[ -e "$WS/.git/hooks/pre-commit" ] || fail "--rw did not opt the hooks back in"
	[ -e "$WS/.mcp.json" ] || fail "--rw did not opt .mcp.json back in"
	# the rest stays protected
	assert_status 0 sb_run --rw "$WS/.git/hooks" -- sh -c 'git config core.fsmonitor x 2>/dev/null; true'
	assert_not_contains "$(cat "$WS/.git/config")" "fsmonitor"
}

t_symlinked_git_refused()
{
	repo_setup user
	mv "$WS/sub/.git" "$H/subgit"
	ln -s "$H/subgit" "$WS/sub/.git"
	assert_status 1 sb_run -- true
	assert_contains "$ERR" "sub/.git"
	assert_contains "$ERR" "symbolic link"
}

t_audit_records_git_writes()
{
	repo_setup user
	assert_status 0 sb_run --audit "$H/audit.jsonl" -- sh -c 'echo c >c && git add c && git commit -qm c; echo x >.git/hooks/pre-push 2>/dev/null; true'
	assert_contains "$(cat "$H/audit.jsonl")" '"protected"'
	assert_contains "$(cat "$H/audit.jsonl")" '.git/refs/heads'
}

# attempts LOG: the protected_attempt events of an audit log, one
# "op path" line each (path relative to $WS), sorted.
attempts()
{
	/usr/bin/python3 -c '
import json, sys
ws = sys.argv[2] + "/"
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
out = set()
for e in ev:
    if e["event"] == "protected_attempt":
        p = e["path"]
        out.add(e["op"] + " " + (p[len(ws):] if p.startswith(ws) else p))
print("\n".join(sorted(out)))' "$1" "$WS"
}

# A hostile agent under --audit: each attempt on a protected path is an
# event (op, the path as the kernel resolves it: through a symbolic link,
# relative to another cwd), the summary line counts them, nothing lands.
t_audit_records_attempts()
{
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (to read the JSON lines)"
	repo_setup "${1:-user}"
	rm -rf "$WS/.vscode"
	host git -C "$WS" commit -qam "no .vscode"
	local log=$H/audit-attempts.jsonl
	assert_status 0 sb_run --audit "$log" -- sh -c '
		echo x >.git/hooks/pre-commit
		git config core.fsmonitor "echo fsmonitor >>$1; false"
		mkdir .vscode; echo >.vscode/tasks.json
		ln -s .git/hooks h; echo x >h/post-checkout
		(cd .git/hooks && echo x >pre-push)
		mv .git .git-old
		true' _ "$MARK"
	assert_eq "$(attempts "$log")" "mkdir .vscode
open .git/hooks/post-checkout
open .git/hooks/pre-commit
open .git/hooks/pre-push
open .vscode/tasks.json
rename .git
rename .git/config"
	assert_contains "$ERR" "agentrun: 7 attempts on protected paths: .git/hooks/pre-commit (open), .git/config (rename), .vscode (mkdir) and other paths"
	assert_contains "$ERR" "see $log"
	# each event says what protects the path
	assert_eq "$(/usr/bin/python3 -c '
import json, sys
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "protected_attempt" and e["path"].endswith("/.git/config"):
        print(e["syscall"], e["how"], e["why"], e["arg"].endswith(".git/config"))' "$log")" \
		"rename read-only git config True"
	[ ! -e "$WS/.git/hooks/pre-commit" ] && [ ! -e "$WS/.git/hooks/pre-push" ] &&
		[ ! -e "$WS/.git/hooks/post-checkout" ] || fail "a hook was written"
	assert_not_contains "$(cat "$WS/.git/config")" "fsmonitor"
	[ ! -e "$WS/.vscode" ] || fail ".vscode created (or its placeholder left)"
	[ -d "$WS/.git" ] && [ ! -e "$WS/.git-old" ] || fail ".git renamed"
	host_git_runs_nothing
}

# Renaming a directory that holds protected paths (a nested repository)
# is an attempt on them: the event names the directory.
t_audit_rename_above()
{
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (to read the JSON lines)"
	repo_setup user
	local log=$H/audit-above.jsonl
	assert_status 0 sb_run --audit "$log" -- sh -c 'mv sub sub-moved 2>/dev/null; true'
	assert_eq "$(attempts "$log")" "rename sub"
	assert_contains "$(cat "$log")" "\"protected\":\"$WS/sub\",\"how\":\"pinned\",\"why\":\"directory holding protected paths\""
	[ -d "$WS/sub/.git" ] && [ ! -e "$WS/sub-moved" ] || fail "sub renamed"
}

# Git at work inside (status, add, commit, branch, stash, checkout, log)
# writes objects, refs, the index and logs below the pinned .git: not one
# protected_attempt event, no summary line.
t_audit_git_no_false_positive()
{
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (to read the JSON lines)"
	repo_setup "${1:-user}"
	local log=$H/audit-git.jsonl
	assert_status 0 sb_run --audit "$log" -- sh -c '
		set -e
		git status --short
		echo c >c.txt; git add c.txt; git commit -qm three
		git branch feature; git checkout -q feature
		echo d >>c.txt; git stash -q; git stash pop -q; git commit -qam four
		git checkout -q -; git log --oneline >/dev/null
		cd sub && echo s >s && git add s && git commit -qm s && cd ..
		echo ok'
	assert_contains "$OUT" "ok"
	assert_eq "$(attempts "$log")" ""
	assert_not_contains "$ERR" "attempt"
	# the audit log has the commit's writes under .git
	assert_contains "$(cat "$log")" '.git/refs/heads/feature'
	assert_eq "$(host git -C "$WS" log -1 --format=%s feature)" "four"
}

# The workspace is a linked worktree: its .git is a gitdir file. Removing
# it fails (a read-only bind) and is an event; a commit in the worktree
# is not.
t_audit_worktree_gitfile()
{
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3 (to read the JSON lines)"
	repo_setup user
	host git -C "$WS" worktree add -q "$H/wt" -b feature
	local main=$WS log=$H/audit-wt.jsonl
	WS=$H/wt
	assert_status 0 sb_run --audit "$log" -- sh -c '
		echo w >w.txt; git add w.txt; git commit -qm from-wt && echo COMMITTED
		rm -f .git 2>/dev/null || echo RM-FAILED
		true'
	assert_contains "$OUT" COMMITTED
	assert_contains "$OUT" RM-FAILED
	assert_eq "$(attempts "$log")" "unlink .git"
	assert_contains "$(cat "$log")" '"how":"read-only","why":"gitdir file"'
	assert_contains "$ERR" "agentrun: 1 attempt on protected paths: .git (unlink)"
	assert_eq "$(cat "$WS/.git")" "gitdir: $main/.git/worktrees/wt"
	assert_eq "$(host git -C "$main" log -1 --format=%s feature)" "from-wt"
}

# Root on a user's checkout: the workspace and the pinned .git are
# idmapped binds, so what git writes lands with the owner's ids; the
# hooks stay read-only.
t_root_on_user_workspace()
{
	repo_setup user
	MODE=root
	assert_status 0 sb_run -- sh -c 'echo r >r.txt && git -c safe.directory="*" add r.txt &&
		git -c safe.directory="*" commit -qm root-commit &&
		{ echo x >.git/hooks/pre-commit 2>/dev/null || echo hook-refused; }'
	assert_contains "$OUT" "hook-refused"
	assert_eq "$(find "$WS" -not -user "$TEST_UID" | head -n3)" "" "files not owned by the workspace owner"
	MODE=user
	assert_eq "$(host git -C "$WS" log -1 --format=%s)" "root-commit"
	host_git_runs_nothing
}

run_test "protect: git hooks, config, redirects, .git replacement, editor config (rootless)" t_git_attacks user
run_test "protect: git hooks, config, redirects, .git replacement, editor config (root)" t_git_attacks root
run_test "protect: Zed, Helix, Cursor and mise config (rootless)" t_editor_tool_config user
run_test "protect: Zed, Helix, Cursor and mise config (root)" t_editor_tool_config root
run_test "protect: direnv's .envrc and what it loads (rootless)" t_direnv user
run_test "protect: direnv's .envrc and what it loads (root)" t_direnv root
run_test "protect: a .envrc naming a file through a link to ~/.ssh binds nothing (rootless)" t_direnv_link_on_the_way user
run_test "protect: a .envrc naming a file through a link to ~/.ssh binds nothing (root)" t_direnv_link_on_the_way root
run_test "protect: commit holds back direnv's .envrc and what it loads (rootless)" t_direnv_commit user
run_test "protect: commit holds back direnv's .envrc and what it loads (root)" t_direnv_commit root
run_test "protect: root on a user's checkout: git writes land as the owner, hooks read-only" t_root_on_user_workspace
run_test "protect: .git cannot be renamed, removed or redirected" t_git_replaced
run_test "protect: a commondir cannot be created (a read-only \".\" placeholder), none is left" t_commondir_removed
run_test "protect: directories holding protected paths cannot be renamed (rootless)" t_holders_pinned user
run_test "protect: directories holding protected paths cannot be renamed (root)" t_holders_pinned root
run_test "protect: git works inside (status add commit log diff stash branch worktree)" t_git_works_inside
run_test "protect: --rw opts a protected path back in, with a warning" t_rw_opts_back_in
run_test "protect: a symlinked .git is refused" t_symlinked_git_refused
run_test "protect: the audit log records writes under .git" t_audit_records_git_writes
run_test "protect: --audit records each attempt on a protected path (rootless)" t_audit_records_attempts user
run_test "protect: --audit records each attempt on a protected path (root)" t_audit_records_attempts root
run_test "protect: --audit: git status/add/commit/branch/stash are no attempt (rootless)" t_audit_git_no_false_positive user
run_test "protect: --audit: git status/add/commit/branch/stash are no attempt (root)" t_audit_git_no_false_positive root
run_test "protect: --audit records removing a worktree's gitdir file" t_audit_worktree_gitfile
run_test "protect: --audit records renaming a directory that holds protected paths" t_audit_rename_above
finish
