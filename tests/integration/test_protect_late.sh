#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the host would execute, created or changed during the run, where
# the start-time plan of protected paths cannot see it (issue 26, items
# 1, 3, 4): a repository the agent makes (a gitlink the outer git status
# recurses into, a bare-layout directory), a repository deeper than the
# start scan, hook targets in the worktree (husky's core.hooksPath, the
# pre-commit framework's config, a script a hook runs), a commondir the
# host's git would honour while the sandbox still runs, a rebase left in
# progress with `exec` lines. The host's next git status / commit /
# rebase --continue must run nothing; what the run left is named on
# stderr and kept in the quarantine. The agent's legitimate work stays.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# repo_setup MODE: $WS a repository with two commits and a src/ directory.
repo_setup()
{
	require_cmd git
	sb_home "$1"
	rm -rf "$WS/.git"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[protocol "file"]\n\tallow = always\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
	QDIR=$H/.local/state/agentrun/quarantine
	host git -C "$WS" init -q
	host sh -c 'cd "$1" && echo a >a.txt && mkdir src && echo s >src/s.c && git add -A &&
		git commit -qm one && echo b >b.txt && git add b.txt && git commit -qm two' _ "$WS"
}

# nothing_ran WHAT: the mark file is absent
nothing_ran()
{
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code ($1): $(cat "$MARK")"
}

# 1. A repository made in the run, staged in the outer one as a gitlink
# (no .gitmodules), with an fsmonitor: the host's git status at the top
# recurses into it.
t_gitlink_fsmonitor()
{
	repo_setup "$1"
	assert_status 0 sb_run -- sh -c '
		git init -q evil && cd evil && echo e >e && git add e && git commit -qm e && cd .. &&
		git add evil 2>/dev/null &&
		git -C evil config core.fsmonitor "echo fsmonitor evil >>$1; false" &&
		git -C evil config core.pager "echo pager >>$1; cat" &&
		git -C evil config alias.st "!echo alias >>$1" &&
		git -C evil config user.name Kept' _ "$MARK"
	host sh -c 'cd "$1" && git status >/dev/null 2>&1; git diff >/dev/null 2>&1;
		cd evil && git status >/dev/null 2>&1; git log -1 >/dev/null 2>&1; git st >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "gitlink fsmonitor"
	assert_contains "$ERR" "$WS/evil/.git/config"
	assert_contains "$ERR" "core.fsmonitor"
	# the work stays: objects, files, the harmless keys
	assert_eq "$(host git -C "$WS/evil" log -1 --format=%s)" "e"
	assert_eq "$(cat "$WS/evil/e")" "e"
	assert_eq "$(host git -C "$WS/evil" config user.name)" "Kept"
	# the original config is kept in the quarantine, named in its manifest
	assert_contains "$(cat "$QDIR"/*/MANIFEST)" "$WS/evil/.git/config"
}

# 1. An existing directory turned into a bare-layout git directory
# (HEAD, objects/, refs/, core.worktree=..): no `.git` name anywhere.
t_bare_layout()
{
	repo_setup "$1"
	assert_status 0 sb_run -- sh -c '
		cd src && mkdir objects refs && echo "ref: refs/heads/main" >HEAD &&
		printf "[core]\n\trepositoryformatversion = 0\n\tbare = false\n\tworktree = ..\n\tfsmonitor = echo fsmonitor bare >>%s; false\n" "$1" >config' _ "$MARK"
	host sh -c 'cd "$1/src" && git status >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "bare layout"
	assert_contains "$ERR" "$WS/src/config"
	assert_eq "$(cat "$WS/src/s.c")" "s"
}

# 1. A repository below the depth the start scan reaches: it was not
# protected during the run; what the agent planted is neutralised.
t_deep_repo()
{
	repo_setup "$1"
	local d=$WS/a/b/c/d/e/deep
	mkdir -p "$d"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS/a"
	host sh -c 'cd "$1" && git init -q && echo d >d && git add d && git commit -qm d' _ "$d"
	assert_status 0 sb_run -- sh -c '
		g=a/b/c/d/e/deep/.git
		git --git-dir=$g config core.fsmonitor "echo fsmonitor deep >>$1; false" &&
		printf "#!/bin/sh\necho hook deep >>$1\n" >$g/hooks/pre-commit && chmod +x $g/hooks/pre-commit' _ "$MARK"
	host sh -c 'cd "$1" && git status >/dev/null 2>&1; echo x >>d && git commit -qam x >/dev/null 2>&1; true' _ "$d"
	nothing_ran "deep repository"
	assert_contains "$ERR" "$d/.git/config"
	assert_contains "$ERR" "$d/.git/hooks/pre-commit"
	assert_eq "$(host git -C "$d" log --format=%s | tail -1)" "d"
}

# Editor and dev container config of a repository the agent makes in the
# run (the start-time plan has no placeholder there): a VS Code task that
# runs when the folder opens, a dev container whose initializeCommand the
# host runs, Zed's and Helix's language server commands, the MCP servers
# of Cursor, Gemini CLI and opencode. They are moved aside and named.
t_new_repo_editor_config()
{
	repo_setup "$1"
	assert_status 0 sb_run -- sh -c '
		git init -q newrepo && cd newrepo && echo n >n && git add n && git commit -qm n &&
		mkdir .vscode .devcontainer &&
		echo "{\"tasks\":[{\"command\":\"echo task >>$1\",\"runOptions\":{\"runOn\":\"folderOpen\"}}]}" >.vscode/tasks.json &&
		echo "{\"initializeCommand\":\"echo init >>$1\"}" >.devcontainer/devcontainer.json &&
		echo "{\"initializeCommand\":\"echo init >>$1\"}" >.devcontainer.json &&
		mkdir .zed .helix .cursor .gemini &&
		echo "{\"lsp\":{\"x\":{\"binary\":{\"path\":\"sh\"}}}}" >.zed/settings.json &&
		printf "[language-server.x]\ncommand = \"sh\"\n" >.helix/languages.toml &&
		echo "{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}" >.cursor/mcp.json &&
		echo "{\"mcpServers\":{\"x\":{\"command\":\"sh\"}}}" >.gemini/settings.json &&
		echo "{\"mcp\":{\"x\":{\"command\":[\"sh\"]}}}" >opencode.json' _ "$MARK"
	assert_contains "$ERR" "$WS/newrepo/.vscode"
	assert_contains "$ERR" "$WS/newrepo/.devcontainer"
	assert_contains "$ERR" "$WS/newrepo/.devcontainer.json"
	assert_contains "$ERR" "initializeCommand runs on the host"
	assert_contains "$ERR" "$WS/newrepo/.zed/settings.json"
	assert_contains "$ERR" "$WS/newrepo/.helix/languages.toml"
	assert_contains "$ERR" "$WS/newrepo/.cursor/mcp.json"
	assert_contains "$ERR" "$WS/newrepo/.gemini/settings.json"
	assert_contains "$ERR" "$WS/newrepo/opencode.json"
	local f
	for f in .devcontainer.json .devcontainer/devcontainer.json .vscode/tasks.json .zed/settings.json \
		.helix/languages.toml .cursor/mcp.json .gemini/settings.json opencode.json; do
		[ ! -e "$WS/newrepo/$f" ] ||
			fail "the new repository's $f stayed: $(ls -a "$WS/newrepo" 2>&1)"
	done
	# the work stays
	assert_eq "$(host git -C "$WS/newrepo" log -1 --format=%s)" "n"
}

# 3. husky: core.hooksPath = .husky; the agent rewrites .husky/pre-commit.
t_husky()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && mkdir .husky && printf "#!/bin/sh\ntrue\n" >.husky/pre-commit &&
		chmod +x .husky/pre-commit && git add .husky && git commit -qm husky &&
		git config core.hooksPath .husky' _ "$WS"
	assert_status 0 sb_run -- sh -c 'printf "#!/bin/sh\necho husky >>%s\n" "$1" >.husky/pre-commit' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "husky hook"
	assert_contains "$ERR" "$WS/.husky/pre-commit"
}

# 3. The pre-commit framework: its installed hook reads
# .pre-commit-config.yaml from the worktree; the agent adds a local hook.
# (The installed hook is a stand-in with the framework's marker lines: it
# runs the `entry:` of each hook of the config.)
t_precommit_framework()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && printf "repos: []\n" >.pre-commit-config.yaml && git add . && git commit -qm pc &&
		cat >.git/hooks/pre-commit <<-"EOF" && chmod +x .git/hooks/pre-commit
		#!/usr/bin/env bash
		# File generated by pre-commit: https://pre-commit.com
		# ID: 138fd403232d2ddd5efb44317e38bf03
		INSTALL_PYTHON=/usr/bin/python3
		ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)
		[ -f .pre-commit-config.yaml ] || exit 0
		sed -n "s/^ *entry: *//p" .pre-commit-config.yaml | sh
		EOF
		' _ "$WS"
	assert_status 0 sb_run -- sh -c 'printf "repos:\n- repo: local\n  hooks:\n  - id: x\n    name: x\n    language: system\n    entry: echo precommit >>%s\n" "$1" >.pre-commit-config.yaml' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "pre-commit framework"
	assert_contains "$ERR" "$WS/.pre-commit-config.yaml"
}

# 3. A protected hook that runs a worktree script: the agent rewrites
# the script.
t_hook_script()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && mkdir -p scripts && printf "#!/bin/sh\ntrue\n" >scripts/lint.sh && git add . && git commit -qm lint &&
		printf "#!/bin/sh\nsh ./scripts/lint.sh\n" >.git/hooks/pre-commit && chmod +x .git/hooks/pre-commit' _ "$WS"
	assert_status 0 sb_run -- sh -c 'printf "#!/bin/sh\necho script >>%s\n" "$1" >scripts/lint.sh' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "a worktree script a hook runs"
	assert_contains "$ERR" "$WS/scripts/lint.sh"
}

# 3. husky in a linked worktree: the workspace's .git is a gitdir file,
# core.hooksPath is in the main repository's config outside it.
t_husky_worktree()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && mkdir .husky && printf "#!/bin/sh\ntrue\n" >.husky/pre-commit &&
		chmod +x .husky/pre-commit && git add .husky && git commit -qm husky &&
		git config core.hooksPath .husky && git worktree add -q "$2" -b feature' _ "$WS" "$H/wt"
	local main=$WS
	WS=$H/wt
	assert_status 0 sb_run -- sh -c 'printf "#!/bin/sh\necho husky-wt >>%s\n" "$1" >.husky/pre-commit' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "husky in a linked worktree"
	assert_contains "$ERR" "$WS/.husky/pre-commit"
	assert_eq "$(host git -C "$main" log -1 --format=%s feature)" "c"
}

# 3. husky 9: core.hooksPath = .husky/_, whose generated hooks run
# .husky/<hook>; the agent rewrites .husky/pre-commit.
t_husky9()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && mkdir -p .husky/_ && printf "#!/bin/sh\ntrue\n" >.husky/pre-commit &&
		printf "#!/bin/sh\nsh \"\$(dirname \"\$0\")/../\$(basename \"\$0\")\"\n" >.husky/_/pre-commit &&
		chmod +x .husky/_/pre-commit && git add .husky && git commit -qm husky &&
		git config core.hooksPath .husky/_' _ "$WS"
	assert_status 0 sb_run -- sh -c 'printf "echo husky9 >>%s\n" "$1" >.husky/pre-commit' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "husky 9 hook"
	assert_contains "$ERR" "$WS/.husky/pre-commit"
}

# 3. A global core.hooksPath relative to each worktree (~/.gitconfig):
# the agent writes the hook into the worktree.
t_global_hookspath()
{
	repo_setup "$1"
	printf '[core]\n\thooksPath = .githooks\n' >>"$H/.gitconfig"
	assert_status 0 sb_run -- sh -c 'mkdir .githooks && printf "#!/bin/sh\necho global >>%s\n" "$1" >.githooks/pre-commit && chmod +x .githooks/pre-commit' _ "$MARK"
	host sh -c 'cd "$1" && echo c >>a.txt && git commit -qam c >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "a global relative core.hooksPath"
	assert_contains "$ERR" "$WS/.githooks/pre-commit"
}

# --rw opts a hook target back in: the agent's change stays, unreported;
# a file a hook only mentions in a comment is not a hook target.
t_rw_opt_in()
{
	repo_setup "$1"
	host sh -c 'cd "$1" && mkdir .husky && printf "#!/bin/sh\ntrue\n" >.husky/pre-commit &&
		chmod +x .husky/pre-commit && echo r >README.md && git add . && git commit -qm husky &&
		git config core.hooksPath .husky &&
		printf "#!/bin/sh\n# see README.md\ntrue\n" >.git/hooks/pre-push' _ "$WS"
	assert_status 0 sb_run --rw "$WS/.husky" -- sh -c 'printf "#!/bin/sh\necho mine\n" >.husky/pre-commit; echo s >>README.md'
	assert_eq "$(cat "$WS/.husky/pre-commit")" "#!/bin/sh
echo mine"
	assert_eq "$(cat "$WS/README.md")" "r
s"
	assert_not_contains "$ERR" "neutralised"
}

# No quarantine can be made (~/.local/state is a file): nothing is
# deleted; a hook is renamed to a name git does not run, a config keeps
# its keys as comments.
t_no_quarantine()
{
	repo_setup "$1"
	mkdir -p "$H/.local" && echo x >"$H/.local/state"
	sb_home_own
	assert_status 0 sb_run -- sh -c '
		git init -q evil && git -C evil config core.fsmonitor "echo fsmonitor >>$1; false" &&
		printf "#!/bin/sh\necho hook >>$1\n" >evil/.git/hooks/pre-commit && chmod +x evil/.git/hooks/pre-commit' _ "$MARK"
	host sh -c 'cd "$1/evil" && git status >/dev/null 2>&1; echo e >e && git add e && git commit -qm e >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "no quarantine"
	assert_contains "$ERR" "cannot make the quarantine directory"
	assert_contains "$(cat "$WS/evil/.git/hooks/pre-commit.agentrun-quarantined")" "echo hook"
	assert_contains "$(cat "$WS/evil/.git/config")" "#agentrun# fsmonitor"
}

# 4. A commondir the agent makes is honoured by the host's git while the
# sandbox runs: the host's git status during the run must not read the
# config it names.
t_commondir_during_run()
{
	repo_setup "$1"
	local sync=$WS/sync
	mkdir "$sync"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$sync"
	sb_run -- sh -c '
		mkdir -p evil && cp -r .git/objects .git/refs evil/ &&
		printf "[core]\n\tfsmonitor = echo commondir >>%s; false\n" "$1" >evil/config
		echo ../evil >.git/commondir 2>/dev/null && echo CREATED >sync/created
		touch sync/ready
		i=0; while [ ! -e sync/done ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done' _ "$MARK" \
		>"$TEST_TMP/cd.out" 2>"$TEST_TMP/cd.err" &
	local pid=$!
	wait_until 30 test -e "$sync/ready"
	host sh -c 'cd "$1" && git status >/dev/null 2>&1; true' _ "$WS"
	touch "$sync/done"
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/cd.err")"
	nothing_ran "commondir during the run"
	[ ! -e "$sync/created" ] || fail "the agent created .git/commondir"
	[ ! -e "$WS/.git/commondir" ] || fail ".git/commondir left after the run: $(cat "$WS/.git/commondir")"
	host git -C "$WS" status --short >/dev/null
}

# Two sandboxes on one workspace share the commondir placeholder: the
# first to exit leaves it to the second (whose agent still cannot make
# its own), the last removes it; one left by a killed sandbox (".") is
# taken over and removed.
t_commondir_shared()
{
	repo_setup "$1"
	local sync=$WS/sync
	mkdir "$sync"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$sync"
	sb_run -- sh -c '
		touch sync/ready
		i=0; while [ ! -e sync/go ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
		echo ../evil >.git/commondir 2>/dev/null && echo CREATED >sync/created
		true' >"$TEST_TMP/b.out" 2>"$TEST_TMP/b.err" &
	local pid=$!
	wait_until 30 test -e "$sync/ready"
	assert_eq "$(cat "$WS/.git/commondir")" "."
	assert_status 0 sb_run -- true
	assert_eq "$(cat "$WS/.git/commondir")" "." "the first sandbox out removed the second's placeholder"
	touch "$sync/go"
	wait "$pid" || fail "the second sandbox failed: $(cat "$TEST_TMP/b.err")"
	[ ! -e "$sync/created" ] || fail "the second agent created .git/commondir"
	[ ! -e "$WS/.git/commondir" ] || fail "the last sandbox out left .git/commondir"
	# left by a sandbox killed before its exit
	printf '.\n' >"$WS/.git/commondir"
	assert_status 0 sb_run -- true
	[ ! -e "$WS/.git/commondir" ] || fail "a placeholder left by a killed sandbox stays"
}

# A rebase left in progress with `exec` lines in its todo: the host's
# `git rebase --continue` would run them.
t_rebase_todo_exec()
{
	repo_setup "$1"
	assert_status 0 sb_run -- sh -c '
		GIT_SEQUENCE_EDITOR="sed -i -e \"1i break\" -e \"1a exec echo rebase >>$1\"" git rebase -q -i HEAD~1 >/dev/null 2>&1
		test -e .git/rebase-merge/git-rebase-todo && echo IN-PROGRESS' _ "$MARK"
	assert_contains "$OUT" IN-PROGRESS
	host sh -c 'cd "$1" && git rebase --continue >/dev/null 2>&1; git status >/dev/null 2>&1; true' _ "$WS"
	nothing_ran "rebase todo exec"
	assert_contains "$ERR" "$WS/.git/rebase-merge/git-rebase-todo"
}

# Legitimate work survives: a repository the agent makes, with commits,
# a branch, a harmless config; git inside works for status, add, commit,
# log, diff, branch, stash, worktree, submodule, rebase; nothing is
# reported.
t_legit_work()
{
	repo_setup "$1"
	assert_status 0 sb_run -- sh -c '
		set -e
		git init -q lib && cd lib && echo l >l && git add l && git commit -qm l1 &&
		echo m >>l && git commit -qam l2 && git branch topic && git config user.name Lib && cd ..
		git status --short >/dev/null
		echo c >c.txt && git add c.txt && git commit -qm three
		git log --oneline | grep -q three
		echo d >>c.txt && git diff | grep -q "^+d"
		git stash -q && git stash pop -q && git commit -qam four
		git branch feature
		git worktree add -q wt-inside feature 2>/dev/null && git worktree remove wt-inside
		git -c protocol.file.allow=always submodule add -q ./lib lib >/dev/null 2>&1 || git add lib
		git commit -qm sub
		GIT_SEQUENCE_EDITOR=true git rebase -q -i HEAD~2
		git rev-parse --git-common-dir >/dev/null
		echo ok'
	assert_contains "$OUT" ok
	assert_not_contains "$ERR" "neutralised"
	assert_eq "$(host git -C "$WS/lib" log -1 --format=%s)" "l2"
	assert_eq "$(host git -C "$WS/lib" config user.name)" "Lib"
	assert_eq "$(host git -C "$WS" log -1 --format=%s)" "sub"
	[ ! -e "$WS/.git/commondir" ] || fail ".git/commondir left"
	host git -C "$WS" status --short >/dev/null
}

# A leaf directory (no subdirectory) holding a gitdir file, rewritten in
# place to name a git directory of the agent's (no directory changes):
# where the start's search reached (4 levels), the file is bound
# read-only and the rewrite fails; deeper, the end-of-run check finds it
# by its change time and sets it aside. The end-of-run check skips
# looking at the `.git` of unchanged leaves only where the start's
# search looked (issue 30: workspace size).
t_leaf_gitfile_rewritten()
{
	repo_setup "$1"
	local near=$WS/src/lib/mod far=$WS/a/b/c/d/e/mod
	mkdir -p "$near" "$far" "$WS/store"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS/src" "$WS/a" "$WS/store"
	host git init -q --separate-git-dir="$WS/store/near" "$near"
	host git init -q --separate-git-dir="$WS/store/far" "$far"
	host sh -c 'echo n >"$1/n" && echo f >"$2/f"' _ "$near" "$far"
	cp "$near/.git" "$TEST_TMP/near.before"
	assert_status 0 sb_run -- sh -c '
		mkdir -p /tmp/evil/hooks && git init -q --bare /tmp/evil.git
		printf "#!/bin/sh
echo leaf >>%s
" "$1" >/tmp/evil.git/hooks/pre-commit
		chmod +x /tmp/evil.git/hooks/pre-commit
		for d in src/lib/mod a/b/c/d/e/mod; do
			printf "gitdir: /tmp/evil.git
" >$d/.git 2>/dev/null && echo "rewrote $d"
		done; true' _ "$MARK"
	assert_not_contains "$OUT" "rewrote src/lib/mod"
	cmp -s "$near/.git" "$TEST_TMP/near.before" || fail "the near gitdir file was rewritten: $(cat "$near/.git")"
	assert_contains "$OUT" "rewrote a/b/c/d/e/mod"
	assert_contains "$ERR" "$far/.git"
	[ ! -e "$far/.git" ] || ! grep -q evil "$far/.git" || fail "the far gitdir file still names the agent's: $(cat "$far/.git")"
	host sh -c 'cd "$1" && git add -A >/dev/null 2>&1 && git commit -qm x >/dev/null 2>&1; true' _ "$far"
	nothing_ran "a leaf's gitdir file"
}

for m in user root; do
	run_test "protect late: a leaf's gitdir file rewritten in place, near and deep ($m)" t_leaf_gitfile_rewritten $m
	run_test "protect late: a gitlink repository made in the run, with an fsmonitor ($m)" t_gitlink_fsmonitor $m
	run_test "protect late: a directory turned into a bare-layout git directory ($m)" t_bare_layout $m
	run_test "protect late: a repository deeper than the start scan ($m)" t_deep_repo $m
	run_test "protect late: editor and dev container config of a repository made in the run ($m)" t_new_repo_editor_config $m
	run_test "protect late: husky's core.hooksPath, .husky/pre-commit rewritten ($m)" t_husky $m
	run_test "protect late: the pre-commit framework's config, a local hook added ($m)" t_precommit_framework $m
	run_test "protect late: husky in a linked worktree workspace ($m)" t_husky_worktree $m
	run_test "protect late: husky 9's core.hooksPath .husky/_, .husky/pre-commit rewritten ($m)" t_husky9 $m
	run_test "protect late: a global core.hooksPath relative to the worktree ($m)" t_global_hookspath $m
	run_test "protect late: a worktree script a hook runs, rewritten ($m)" t_hook_script $m
	run_test "protect late: a commondir is refused while the sandbox runs ($m)" t_commondir_during_run $m
	run_test "protect late: two sandboxes share the commondir placeholder; the last one out removes it ($m)" t_commondir_shared $m
	run_test "protect late: a rebase left in progress with exec lines ($m)" t_rebase_todo_exec $m
	run_test "protect late: the agent's own repository and git inside keep working ($m)" t_legit_work $m
done
run_test "protect late: --rw opts a hook target back in; a README a hook mentions is no target" t_rw_opt_in user
run_test "protect late: no quarantine possible: nothing deleted, the hook renamed" t_no_quarantine user
finish
