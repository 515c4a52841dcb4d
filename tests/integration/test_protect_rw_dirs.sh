#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# What the host would execute, left by the run in a start-time `--rw DIR`
# outside the workspace: the end-of-run check walks each such directory
# as it walks the workspace (same start time, same rules): a repository
# created or changed there during the run has its code-running config
# keys commented out and its new hooks quarantined. The user's next git
# command in DIR must run nothing; the path is named on stderr. The
# agent's legitimate work in DIR stays.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# setup MODE: $WS and $RW (outside the workspace), a git identity
setup()
{
	require_cmd git
	sb_home "$1"
	rm -rf "$WS/.git"
	RW=$H/other
	mkdir -p "$RW/sub"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
}

nothing_ran()
{
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code ($1): $(cat "$MARK")"
}

EVIL='cd "$1" && git init -q && echo e >e && git add e && git commit -qm e &&
	git config core.fsmonitor "echo fsmonitor >>$2; false" &&
	printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/pre-commit &&
	chmod +x .git/hooks/pre-commit'

# host_commit DIR: the user's next commit there
host_commit()
{
	host sh -c 'cd "$1" && echo u >>u && git add u && git commit -qm u >/dev/null 2>&1; git status >/dev/null 2>&1; true' _ "$1"
}

# A new repository in a subdirectory of the --rw directory.
t_new_repo_sub()
{
	setup "$1"
	assert_status 0 sb_run --rw "$RW" -- sh -c "$EVIL" _ "$RW/sub" "$MARK"
	host_commit "$RW/sub"
	nothing_ran "a new repository in a --rw directory"
	assert_contains "$ERR" "$RW/sub/.git/config"
	assert_contains "$ERR" "$RW/sub/.git/hooks/pre-commit"
	assert_eq "$(host git -C "$RW/sub" log --format=%s | tail -1)" "e"
}

# A new repository at the top of the --rw directory.
t_new_repo_top()
{
	setup "$1"
	assert_status 0 sb_run --rw "$RW" -- sh -c "$EVIL" _ "$RW" "$MARK"
	host_commit "$RW"
	nothing_ran "a new repository at a --rw directory's top"
	assert_contains "$ERR" "$RW/.git/config"
}

# The user's repository in the --rw directory, a hook and an fsmonitor
# added by the run: the user's own commits work on.
t_existing_repo_changed()
{
	setup "$1"
	host sh -c 'cd "$1" && git init -q && echo a >a && git add a && git commit -qm a' _ "$RW/sub"
	assert_status 0 sb_run --rw "$RW/sub" -- sh -c '
		cd "$1" && git config core.fsmonitor "echo fsmonitor >>$2; false" &&
		printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/post-commit &&
		chmod +x .git/hooks/post-commit' _ "$RW/sub" "$MARK"
	host_commit "$RW/sub"
	nothing_ran "a changed repository in a --rw directory"
	assert_contains "$ERR" "$RW/sub/.git/config"
	assert_eq "$(host git -C "$RW/sub" log -1 --format=%s)" "u"
}

# A --rw directory holding the workspace, and one below it given too:
# each directory is walked once, the workspace's rules stay its own.
t_rw_holds_workspace()
{
	setup "$1"
	mkdir -p "$H/up/ws2" "$H/up/x"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$H/up"
	WS=$H/up/ws2
	assert_status 0 sb_run --rw "$H/up" --rw "$H/up/x" -- sh -c "$EVIL" _ "$H/up/x" "$MARK"
	host_commit "$H/up/x"
	nothing_ran "a new repository beside the workspace, in a --rw directory above it"
	assert_contains "$ERR" "$H/up/x/.git/config"
	[ "$(grep -c "$H/up/x/.git/config" <<<"$ERR")" = 1 ] || fail "named more than once: $ERR"
}

# Legitimate work in the --rw directory: a commit, nothing neutralised.
t_legit()
{
	setup "$1"
	host sh -c 'cd "$1" && git init -q && echo a >a && git add a && git commit -qm a' _ "$RW"
	assert_status 0 sb_run --rw "$RW" -- sh -c 'cd "$1" && echo b >b && git add b && git commit -qm b && echo ok' _ "$RW"
	assert_contains "$OUT" ok
	assert_not_contains "$ERR" "neutralised"
	assert_eq "$(host git -C "$RW" log -1 --format=%s)" "b"
}

for m in user root; do
	run_test "protect rw dirs: a new repository in a --rw directory, hook and fsmonitor ($m)" t_new_repo_sub $m
	run_test "protect rw dirs: a new repository at a --rw directory's top ($m)" t_new_repo_top $m
	run_test "protect rw dirs: the user's repository in a --rw directory changed ($m)" t_existing_repo_changed $m
	run_test "protect rw dirs: a --rw directory holding the workspace, one below it ($m)" t_rw_holds_workspace $m
	run_test "protect rw dirs: legitimate commits in a --rw directory ($m)" t_legit $m
done
finish
