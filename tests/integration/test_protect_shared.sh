#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Placeholders shared by several sandboxes on one workspace, and their
# lifetime: the empty read-only directories mounted where a protected
# path is missing (.vscode, .mcp.json, .claude, .git/hooks...) have a
# mount point on the host. The first sandbox to exit must not remove it
# while another sandbox still has its read-only mount there (removing a
# mount point detaches the mount in every other mount namespace: the
# second agent could then create .vscode/tasks.json and .mcp.json on the
# host); a sandbox killed with SIGKILL must not leave them for good; a
# directory the user made is never removed.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# bg_sandbox VAR MODE LOG CMD...: `agentrun sandbox -- CMD` from $WS in
# the background as MODE (root or user), output to LOG; VAR gets the pid
# of agentrun itself (every step before it is an exec).
bg_sandbox()
{
	local var=$1 mode=$2 log=$3
	shift 3
	sb_bg_exec "$var" "$mode" "$log" -- "$@"
}

# as the workspace's owner on the host
host()
{
	if [ "$OWNER" = root ]; then
		"$@"
	else
		as_test_user "$@"
	fi
}

# shared_setup OWNER: a workspace (a git directory inside) owned by
# OWNER (root or user), with a sig/ directory for the sandboxes' steps.
shared_setup()
{
	OWNER=$1
	sb_home "$OWNER"
	mkdir -p "$WS/sig"
	sb_home_own
	SIG=$WS/sig
}

# What a missing protected path gets a placeholder for (sb_home's
# workspace: .git is an empty directory).
PLACEHOLDERS=".vscode .idea .devcontainer .devcontainer.json .mcp.json .claude .git/hooks .git/info .git/config.worktree"

no_placeholder_left()
{
	local p left=
	for p in $PLACEHOLDERS; do
		[ ! -e "$WS/$p" ] || left="$left $p"
	done
	[ -z "$left" ] || fail "left in the workspace:$left ($(ls -la "$WS"))"
}

HOLD='touch sig/$1-ready; while [ ! -e sig/$1-exit ]; do sleep 0.1; done'

ATTACK='touch sig/b-ready; while [ ! -e sig/b-go ]; do sleep 0.1; done
mkdir -p .vscode 2>/dev/null && echo "{}" >.vscode/tasks.json 2>/dev/null && echo TASKS-WRITTEN
echo "{}" >.mcp.json 2>/dev/null && echo MCP-WRITTEN
mkdir -p .devcontainer 2>/dev/null && echo "{}" >.devcontainer/devcontainer.json 2>/dev/null && echo DEVCONTAINER-WRITTEN
echo "{}" >.devcontainer.json 2>/dev/null && echo DEVCONTAINER-JSON-WRITTEN
mkdir -p .claude 2>/dev/null && echo "{}" >.claude/settings.json 2>/dev/null && echo CLAUDE-WRITTEN
mkdir -p .git/hooks 2>/dev/null && echo x >.git/hooks/pre-commit 2>/dev/null && echo HOOK-WRITTEN
ls -a .vscode .idea 2>&1 | tr "\n" " "; echo
true'

# Two sandboxes on one workspace: A (MODE_A) holds, B (MODE_B) starts,
# A exits, then B tries to create .vscode/tasks.json, .mcp.json,
# .claude/settings.json and a hook.
t_two_sandboxes()
{
	local mode_a=$1 mode_b=$2 owner=$3 pa pb
	shared_setup "$owner"
	bg_sandbox pa "$mode_a" "$TEST_TMP/a.log" sh -c "$HOLD" _ a
	defer kill -9 "$pa"
	wait_until 60 test -e "$SIG/a-ready"
	bg_sandbox pb "$mode_b" "$TEST_TMP/b.log" sh -c "$ATTACK"
	defer kill -9 "$pb"
	wait_until 60 test -e "$SIG/b-ready"
	[ -d "$WS/.vscode" ] || fail "no .vscode placeholder while both run"
	touch "$SIG/a-exit"
	wait "$pa" || fail "sandbox A failed: $(cat "$TEST_TMP/a.log")"
	touch "$SIG/b-go"
	wait "$pb" || fail "sandbox B failed: $(cat "$TEST_TMP/b.log")"
	local out
	out=$(cat "$TEST_TMP/b.log")
	assert_not_contains "$out" "WRITTEN" "the second agent wrote a protected path"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail ".vscode/tasks.json stayed on the host"
	[ ! -f "$WS/.mcp.json" ] || fail ".mcp.json stayed on the host"
	[ ! -e "$WS/.devcontainer/devcontainer.json" ] && [ ! -f "$WS/.devcontainer.json" ] ||
		fail "dev container config stayed on the host"
	[ ! -e "$WS/.claude/settings.json" ] || fail ".claude/settings.json stayed on the host"
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "a hook stayed on the host"
	no_placeholder_left
}

# agentrun as MODE from $WS (sandbox --name/--detach, sandbox stop)
ar_as()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --root "$AR_ROOT" "$@")
	else
		as_test_user env HOME="$H" bash -c 'cd "$1" && shift && exec "$@"' \
			_ "$WS" "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	fi
}

# A detached sandbox (its monitor holds the placeholders) stopped while
# a foreground one runs: the same as two foreground ones.
t_detached_then_stopped()
{
	local pb name=ph$RANDOM
	shared_setup "$1"
	assert_status 0 ar_as sandbox --no-tty --name "$name" --detach -- \
		sh -c "$HOLD" _ a
	defer ar_as sandbox stop "$name"
	wait_until 60 test -e "$SIG/a-ready"
	bg_sandbox pb "$MODE" "$TEST_TMP/b.log" sh -c "$ATTACK"
	defer kill -9 "$pb"
	wait_until 60 test -e "$SIG/b-ready"
	assert_status 0 ar_as sandbox stop "$name"
	touch "$SIG/b-go"
	wait "$pb" || fail "sandbox B failed: $(cat "$TEST_TMP/b.log")"
	assert_not_contains "$(cat "$TEST_TMP/b.log")" "WRITTEN" "the second agent wrote a protected path"
	[ ! -e "$WS/.vscode/tasks.json" ] && [ ! -f "$WS/.mcp.json" ] ||
		fail "written on the host"
	no_placeholder_left
}

# SIGKILL of agentrun: the sandbox's processes die with it, and its
# keeper removes the placeholders. Killed with its keeper too, they stay
# until the next start, which removes them; what the user made meanwhile
# (content in one, an own directory in place of another) stays.
KEEPALIVE='date +%s%N >sig/alive; touch sig/a-ready; while :; do date +%s%N >sig/alive; sleep 0.1; done'

# killed_with_keeper MODE: a sandbox (KEEPALIVE) started, then agentrun
# and its keeper killed together (SIGKILL, the keeper first)
killed_with_keeper()
{
	local pa keep
	rm -f "$SIG/a-ready"
	bg_sandbox pa "$1" "$TEST_TMP/a2.log" sh -c "$KEEPALIVE"
	wait_until 60 test -e "$SIG/a-ready"
	keep=$(pgrep -P "$pa" -x agentrun-keep) || fail "no keeper process"
	kill -9 "$keep" "$pa"
	wait "$pa" || true
	sleep 1
}

t_sigkill()
{
	local mode=$1 pa a1 a2
	shared_setup "$mode"
	bg_sandbox pa "$mode" "$TEST_TMP/a.log" sh -c "$KEEPALIVE"
	wait_until 60 test -e "$SIG/a-ready"
	[ -d "$WS/.vscode" ] && [ -d "$WS/.mcp.json" ] && [ -d "$WS/.idea" ] ||
		fail "no placeholders while it runs: $(ls -la "$WS")"
	kill -9 "$pa"
	wait "$pa" || true
	sleep 1
	a1=$(cat "$SIG/alive")
	sleep 1
	a2=$(cat "$SIG/alive")
	assert_eq "$a2" "$a1" "the sandbox's command kept running after agentrun's SIGKILL"
	wait_until 30 test ! -e "$WS/.vscode"
	no_placeholder_left
	# agentrun and its keeper killed: left for the next start
	killed_with_keeper "$mode"
	[ -d "$WS/.vscode" ] && [ -d "$WS/.mcp.json" ] && [ -d "$WS/.idea" ] ||
		fail "the placeholders went without their keeper: $(ls -la "$WS")"
	# the user, meanwhile: content in one leftover, an own empty
	# directory in place of another
	host sh -c 'echo "<x/>" >"$1/.idea/workspace.xml"' _ "$WS"
	host rmdir "$WS/.claude"
	host mkdir "$WS/.claude"
	assert_status 0 sb_run -- true
	assert_eq "$(cat "$WS/.idea/workspace.xml" 2>&1)" "<x/>" "the user's file in .idea"
	[ -d "$WS/.claude" ] || fail "the user's own .claude was removed"
	PLACEHOLDERS=".vscode .devcontainer .devcontainer.json .mcp.json .git/hooks .git/info .git/config.worktree" \
		no_placeholder_left
}

# The host user writes into a placeholder while the sandbox runs: the
# agent does not see it, and it is never removed.
t_host_writes_into_placeholder()
{
	local mode=$1 pa
	shared_setup "$mode"
	bg_sandbox pa "$mode" "$TEST_TMP/a.log" sh -c \
		'touch sig/a-ready; while [ ! -e sig/a-exit ]; do sleep 0.1; done; ls -A .vscode; echo END'
	defer kill -9 "$pa"
	wait_until 60 test -e "$SIG/a-ready"
	host sh -c 'echo "{\"user\":1}" >"$1/.vscode/settings.json"' _ "$WS"
	touch "$SIG/a-exit"
	wait "$pa" || fail "sandbox failed: $(cat "$TEST_TMP/a.log")"
	assert_not_contains "$(cat "$TEST_TMP/a.log")" "settings.json" "the agent saw the host's file"
	assert_eq "$(cat "$WS/.vscode/settings.json")" '{"user":1}'
	PLACEHOLDERS=".idea .devcontainer .devcontainer.json .mcp.json .claude .git/hooks .git/info .git/config.worktree" \
		no_placeholder_left
}

# A hostile agent clears its parent-death signal to outlive agentrun's
# SIGKILL: the sandbox's pid 1 keeps its own, so the agent dies with
# agentrun, and the keeper removes the placeholders (last one out, after
# another sandbox's start and exit).
SURVIVOR='
import ctypes, os, time
ctypes.CDLL(None).prctl(1, 0)  # PR_SET_PDEATHSIG = 0
open("sig/alive", "w").write(str(time.time()))
open("sig/a-ready", "w").close()
while not os.path.exists("sig/a-exit"):
    open("sig/alive", "w").write(str(time.time()))
    if os.path.exists("sig/a-try") and not os.path.exists("sig/a-result"):
        r = []
        for p, d in ((".vscode/tasks.json", ".vscode"), (".mcp.json", None), (".git/hooks/pre-commit", ".git/hooks")):
            try:
                if d:
                    os.makedirs(d, exist_ok=True)
                open(p, "w").write("{}")
                r.append(p + " WRITTEN")
            except OSError as e:
                r.append(p + " " + e.strerror)
        open("sig/a-result.tmp", "w").write("\n".join(r))
        os.rename("sig/a-result.tmp", "sig/a-result")
    time.sleep(0.1)
'

t_survivor()
{
	local mode=$1 pa a1 a2
	[ -x /usr/bin/python3 ] || skip "needs /usr/bin/python3"
	shared_setup "$mode"
	bg_sandbox pa "$mode" "$TEST_TMP/a.log" /usr/bin/python3 -c "$SURVIVOR"
	defer touch "$SIG/a-exit"
	wait_until 60 test -e "$SIG/a-ready"
	kill -9 "$pa"
	wait "$pa" || true
	# the sandbox's pid 1 (the init) keeps the parent-death signal the
	# agent cleared for itself: the whole sandbox dies with agentrun
	# (on 5a4a275 the agent was pid 1, cleared it and lived on)
	wait_until 30 sh -c '! pgrep -f "PR_SET_PDEATHSI[G] = 0" >/dev/null' ||
		fail "the agent outlived agentrun's SIGKILL"
	a1=$(cat "$SIG/alive")
	sleep 1
	assert_eq "$(cat "$SIG/alive")" "$a1" "the agent still runs"
	# another sandbox starts and exits meanwhile; its placeholders stay
	# the keeper's until it is done
	assert_status 0 sb_run -- true
	# the keeper, last one out (agentrun is gone), removes them
	wait_until 60 test ! -e "$WS/.vscode"
	no_placeholder_left
	[ ! -e "$WS/.vscode/tasks.json" ] && [ ! -f "$WS/.mcp.json" ] &&
		[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "written on the host"
}

# A project's own .claude without settings.json/settings.local.json
# (settings.local.json is per user and usually missing): the names are
# held by file placeholders, empty regular files (Claude Code reads an
# empty one as {}; a directory there is a "Settings Error" at every
# start) made on the host for the run and removed by the last one out.
# Before, agentrun wrote {} files into the user's project, left there for
# good. The agent writes a hook into them, replaces and removes them.
CLAUDE_ATTACK='for f in settings.json settings.local.json; do
	echo "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch /tmp/pwned\"}]}]}}" >.claude/$f 2>/dev/null && echo "$f WRITTEN"
	rm -f .claude/$f 2>/dev/null && echo "$f REMOVED"
	echo "{\"hooks\":1}" >.claude/$f.new && mv -f .claude/$f.new .claude/$f 2>/dev/null && echo "$f REPLACED"
	rm -f .claude/$f.new
	printf "%s:%s:" "$f" "$(wc -c <.claude/$f)"; test -f .claude/$f && echo FILE
done
mv .claude .claude-moved 2>/dev/null && echo MOVED
true'

t_claude_file_placeholders()
{
	local mode=$1
	shared_setup "$mode"
	host mkdir "$WS/.claude"
	assert_status 0 sb_run -- sh -c "$CLAUDE_ATTACK"
	assert_not_contains "$OUT" "WRITTEN"
	assert_not_contains "$OUT" "REMOVED"
	assert_not_contains "$OUT" "REPLACED"
	assert_not_contains "$OUT" "MOVED"
	[ -d "$WS/.claude" ] || fail "the user's .claude is gone"
	[ ! -e "$WS/.claude/settings.json" ] && [ ! -e "$WS/.claude/settings.local.json" ] ||
		fail "left in the user's .claude: $(ls -la "$WS/.claude"; cat "$WS/.claude"/settings*.json)"
	# empty inside (Claude Code reads {})
	assert_contains "$OUT" "settings.json:0:FILE"
	assert_contains "$OUT" "settings.local.json:0:FILE"
	# the user's own settings.json is theirs: held read-only, kept
	host sh -c 'echo "{\"user\":1}" >"$1/.claude/settings.json"' _ "$WS"
	assert_status 0 sb_run -- sh -c "$CLAUDE_ATTACK"
	assert_contains "$OUT" "settings.json:11:FILE"
	assert_eq "$(cat "$WS/.claude/settings.json")" '{"user":1}'
	[ ! -e "$WS/.claude/settings.local.json" ] || fail "settings.local.json left"
}

# The same after a SIGKILL of agentrun (the keeper removes them), and of
# agentrun and its keeper (the next start removes them); a file the host
# wrote into one meanwhile (in place) is the user's and stays.
t_claude_file_placeholders_sigkill()
{
	local mode=$1 pa
	shared_setup "$mode"
	host mkdir "$WS/.claude"
	bg_sandbox pa "$mode" "$TEST_TMP/a.log" sh -c "$KEEPALIVE"
	wait_until 60 test -e "$SIG/a-ready"
	[ -f "$WS/.claude/settings.json" ] ||
		fail "no file placeholder while it runs: $(ls -la "$WS/.claude")"
	kill -9 "$pa"
	wait "$pa" || true
	wait_until 30 test ! -e "$WS/.claude/settings.json"
	[ ! -e "$WS/.claude/settings.local.json" ] || fail "settings.local.json left after the keeper"
	[ -d "$WS/.claude" ] || fail "the user's .claude is gone"
	# agentrun and its keeper killed: left for the next start
	killed_with_keeper "$mode"
	[ -f "$WS/.claude/settings.json" ] || fail "the placeholder went without its keeper"
	# the user writes into one of them meanwhile
	host sh -c 'echo "{\"user\":2}" >"$1/.claude/settings.local.json"' _ "$WS"
	assert_status 0 sb_run -- true
	[ ! -e "$WS/.claude/settings.json" ] || fail "settings.json left after the next start"
	assert_eq "$(cat "$WS/.claude/settings.local.json")" '{"user":2}'
	assert_status 1 "$PY" -c 'import os, sys
try: os.getxattr(sys.argv[1], "user.agentrun.placeholder")
except OSError: sys.exit(1)' "$WS/.claude/settings.local.json"
}

run_test "placeholders: two sandboxes, the first exits, the second cannot write .vscode/.mcp.json (rootless)" t_two_sandboxes user user user
run_test "placeholders: two sandboxes, the first exits, the second cannot write .vscode/.mcp.json (root)" t_two_sandboxes root root root
run_test "placeholders: root's sandbox exits first, the user's stays held" t_two_sandboxes root user user
run_test "placeholders: the user's sandbox exits first, root's stays held" t_two_sandboxes user root user
run_test "placeholders: a detached sandbox stopped while another runs (rootless)" t_detached_then_stopped user
run_test "placeholders: a detached sandbox stopped while another runs (root)" t_detached_then_stopped root
run_test "placeholders: after a SIGKILL, removed by the keeper or at the next start; the user's own kept (rootless)" t_sigkill user
run_test "placeholders: after a SIGKILL, removed by the keeper or at the next start; the user's own kept (root)" t_sigkill root
run_test "placeholders: a file the host writes into one stays, unseen inside (rootless)" t_host_writes_into_placeholder user
run_test "placeholders: a file the host writes into one stays, unseen inside (root)" t_host_writes_into_placeholder root
run_test "placeholders: an agent that clears its parent-death signal dies with agentrun's SIGKILL; the keeper removes them (rootless)" t_survivor user
run_test "placeholders: an agent that clears its parent-death signal dies with agentrun's SIGKILL; the keeper removes them (root)" t_survivor root
run_test "file placeholders: .claude/settings*.json held for the run, none left in the project (rootless)" t_claude_file_placeholders user
run_test "file placeholders: .claude/settings*.json held for the run, none left in the project (root)" t_claude_file_placeholders root
run_test "file placeholders: removed after a SIGKILL by the keeper or at the next start; the user's content kept (rootless)" t_claude_file_placeholders_sigkill user
run_test "file placeholders: removed after a SIGKILL by the keeper or at the next start; the user's content kept (root)" t_claude_file_placeholders_sigkill root
finish
