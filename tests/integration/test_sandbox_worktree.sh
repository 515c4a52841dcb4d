#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A workspace that is a git worktree or a submodule: its `.git` file
# points outside it; the sandbox shows that gitdir (and a worktree's
# common directory) with the protections of a .git (config, hooks,
# redirect files read-only, the directories pinned), and nothing else of
# the main repository. A forged `.git` file shows nothing. As the
# unprivileged test user.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

G=(git -c user.email=t@example.com -c user.name=t -c init.defaultBranch=main
	-c protocol.file.allow=always -c safe.directory='*')

# wt_setup: $H/main (a repository with a file), $H/wt its linked worktree
wt_setup()
{
	require_cmd git
	sb_home user
	rm -rf "$WS"
	"${G[@]}" init -q "$H/main"
	echo "main-only" >"$H/main/main-file.txt"
	"${G[@]}" -C "$H/main" add main-file.txt
	"${G[@]}" -C "$H/main" commit -qm init
	"${G[@]}" -C "$H/main" worktree add -q "$H/wt" -b feature
	sb_home_own
	WS=$H/wt
}

t_worktree()
{
	wt_setup
	assert_status 0 sb_run -- sh -c '
		git status --short --branch
		echo new >new.txt
		git add new.txt && git -c user.email=t@example.com -c user.name=t commit -qm "from the sandbox" && echo COMMITTED
		ls '"$H/main"' 2>&1
		echo "[core]" >>'"$H/main/.git/config"' 2>/dev/null && echo CONFIG-WRITTEN
		touch '"$H/main/.git/hooks/post-checkout"' 2>/dev/null && echo HOOK-WRITTEN
		echo x >'"$H/main/.git/worktrees/wt/commondir"' 2>/dev/null && echo COMMONDIR-WRITTEN
		mv -T '"$H/main/.git/worktrees/wt"' '"$H/main/.git/worktrees/moved"' 2>/dev/null && echo MOVED
		echo done'
	assert_contains "$OUT" "## feature"
	assert_contains "$OUT" COMMITTED
	assert_not_contains "$OUT" main-file.txt "the main working tree is not shown"
	assert_not_contains "$OUT" CONFIG-WRITTEN
	assert_not_contains "$OUT" HOOK-WRITTEN
	assert_not_contains "$OUT" COMMONDIR-WRITTEN
	assert_not_contains "$OUT" MOVED
	assert_contains "$OUT" done
	# the commit is in the repository, the host's git is intact
	assert_eq "$("${G[@]}" -C "$H/main" log -1 --format=%s feature)" "from the sandbox"
	assert_status 0 "${G[@]}" -C "$H/wt" status --short
	[ ! -e "$H/main/.git/hooks/post-checkout" ] || fail "hook created"
}

# A .git file naming some other directory of the user's (the agent may
# have written it in an earlier run): nothing of it is shown.
t_forged_gitfile()
{
	require_cmd git
	sb_home user
	rm -rf "$WS/.git"
	mkdir -p "$H/private/objects" "$H/fake/worktrees/x/objects" "$H/other/objects"
	echo "ref: refs/heads/main" >"$H/private/HEAD"
	echo PRIVATE >"$H/private/secret.txt"
	# a worktree layout whose commondir leads elsewhere
	echo "ref: refs/heads/main" >"$H/fake/worktrees/x/HEAD"
	echo "$WS/.git" >"$H/fake/worktrees/x/gitdir"
	echo "$H/other" >"$H/fake/worktrees/x/commondir"
	echo "ref: refs/heads/main" >"$H/other/HEAD"
	echo OTHER >"$H/other/secret.txt"
	sb_home_own
	echo "gitdir: $H/private" >"$WS/.git"
	chown "$TEST_UID:$TEST_GID" "$WS/.git"
	assert_status 0 sb_run -- sh -c "cat $H/private/secret.txt 2>/dev/null; echo end"
	assert_not_contains "$OUT" PRIVATE
	echo "gitdir: $H/fake/worktrees/x" >"$WS/.git"
	assert_status 0 sb_run -- sh -c "cat $H/other/secret.txt $H/fake/worktrees/x/HEAD 2>/dev/null; echo end"
	assert_not_contains "$OUT" OTHER
	assert_not_contains "$OUT" "ref:"
	# a secret store is never shown, whatever the layout
	mkdir -p "$H/.ssh"
	echo "gitdir: $H/.ssh" >"$WS/.git"
	assert_status 0 sb_run -- sh -c "ls -A $H/.ssh 2>&1; echo end"
	assert_not_contains "$OUT" id_
}

t_submodule()
{
	require_cmd git
	sb_home user
	rm -rf "$WS"
	"${G[@]}" init -q "$H/subsrc"
	echo sub >"$H/subsrc/s.txt"
	"${G[@]}" -C "$H/subsrc" add s.txt
	"${G[@]}" -C "$H/subsrc" commit -qm sub
	"${G[@]}" init -q "$H/super"
	"${G[@]}" -C "$H/super" submodule -q add "$H/subsrc" sub
	"${G[@]}" -C "$H/super" commit -qm "with sub"
	sb_home_own
	WS=$H/super/sub
	assert_status 0 sb_run -- sh -c '
		git status --short --branch && echo STATUS-OK
		git log --oneline | head -1
		touch '"$H/super/.git/modules/sub/hooks/pre-commit"' 2>/dev/null && echo HOOK-WRITTEN
		echo "[x]" >>'"$H/super/.git/modules/sub/config"' 2>/dev/null && echo CONFIG-WRITTEN
		echo done'
	assert_contains "$OUT" STATUS-OK
	assert_contains "$OUT" " sub"
	assert_not_contains "$OUT" HOOK-WRITTEN
	assert_not_contains "$OUT" CONFIG-WRITTEN
}

# `git worktree add` inside: a worktree in the workspace is kept and works
# on the host; one outside it is made in the sandbox's file system, gone
# at exit, and said (the host's git lists it prunable).
t_worktree_add_inside()
{
	local mode=$1
	require_cmd git
	sb_home "$mode"
	rm -rf "$WS"
	"${G[@]}" init -q "$WS"
	"${G[@]}" -C "$WS" commit -qm init --allow-empty
	sb_home_own
	[ "$mode" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	assert_status 0 sb_run -- sh -c 'git worktree add -q .worktrees/in && git worktree add -q /tmp/out-wt && echo MADE'
	assert_contains "$OUT" MADE
	assert_contains "$ERR" "git worktree \`out-wt\` was made at /tmp/out-wt, outside the workspace"
	assert_not_contains "$ERR" "git worktree \`in\`"
	[ -f "$WS/.worktrees/in/.git" ] || fail "the worktree inside the workspace is gone"
	assert_status 0 git -c safe.directory='*' -C "$WS" worktree list
	assert_contains "$OUT" "$WS/.worktrees/in"
}

run_test "a worktree workspace: git works, the common dir protected, the main tree hidden" t_worktree
run_test "a forged .git file shows nothing" t_forged_gitfile
run_test "a submodule workspace: git works, its gitdir protected" t_submodule
run_test "git worktree add inside (root): kept in the workspace, said when outside" t_worktree_add_inside root
run_test "git worktree add inside (user): kept in the workspace, said when outside" t_worktree_add_inside user
finish
