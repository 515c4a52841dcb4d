#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A live `agentrun sandbox allow NAME --rw DIR` keeps every protection of
# a start-time `--rw DIR` (docs/sandbox.md, "Live grants"), rootless and
# as root. The attacks, each as a hostile agent:
#   - create the protected paths DIR lacks (a git hook in a repository
#     without .git/hooks, .vscode/tasks.json, .mcp.json, .idea): refused,
#     a placeholder holds each name while it is granted, removed after;
#   - a new repository with a hook and an fsmonitor in DIR: the
#     end-of-run check walks DIR (granted till the end, or revoked
#     before), and so does the keeper when agentrun is SIGKILLed;
#   - a second sandbox B on the same workspace with DIR as a start-time
#     --rw while A's agent planted there: A's keeper still neutralises
#     the plant (B's start does not make it the user's), and A's end
#     does not take away the placeholders B holds.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd git

ctl()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --root "$AR_ROOT" sandbox "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox "$@"
	fi
}

# sb_pid VAR NAME LOG OPTIONS... -- CMD: the sandbox NAME in the
# background, VAR its agentrun's pid (no shell between); waits until its
# control socket answers
sb_pid()
{
	local var=$1 name=$2 log=$3
	shift 3
	sb_bg_exec "$var" "$MODE" "$log" --name "$name" "$@"
	defer ctl stop -t 0 "$name"
	defer kill -9 "${!var}"
	wait_until 30 ctl requests "$name"
}

setup()
{
	sb_home "$1"
	rm -rf "$WS/.git"
	D=$H/proj2
	mkdir -p "$D/sub"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
	STOP=$WS/stop
}

# the sandbox's command: waits for $STOP
WAIT='while [ ! -e stop ]; do sleep 0.1; done'

EVIL='cd "$1" && git init -q && echo e >e && git add e && git commit -qm e &&
	git config core.fsmonitor "echo fsmonitor >>$2; false" &&
	printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/pre-commit &&
	chmod +x .git/hooks/pre-commit && echo planted'

host_commit()
{
	host sh -c 'cd "$1" && echo u >>u && git add u && git commit -qm u >/dev/null 2>&1; git status >/dev/null 2>&1; true' _ "$1"
}

nothing_ran()
{
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code ($1): $(cat "$MARK")"
}

no_placeholder_left()
{
	local p
	for p in .vscode .mcp.json .idea .git/hooks; do
		[ ! -e "$D/$p" ] || fail "a placeholder is left: $D/$p ($(ls -la "$D"))"
	done
}

# The protected paths $D lacks: the agent cannot create them.
t_placeholders()
{
	local name=ph$RANDOM pid
	setup "$1"
	host sh -c 'cd "$1" && git init -q && echo a >a && git add a && git commit -qm a' _ "$D"
	rm -rf "$D/.git/hooks"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$D"
	# the attacks
	inside "$name" "mkdir -p '$D/.git/hooks'; printf '#!/bin/sh\necho hook >>$MARK\n' >'$D/.git/hooks/pre-commit'; chmod +x '$D/.git/hooks/pre-commit'" || true
	[ ! -e "$D/.git/hooks/pre-commit" ] || fail "the agent created a git hook through a live --rw grant"
	inside "$name" "mkdir -p '$D/.vscode'; echo '{\"tasks\":[{\"runOptions\":{\"runOn\":\"folderOpen\"}}]}' >'$D/.vscode/tasks.json'" || true
	[ ! -e "$D/.vscode/tasks.json" ] || fail "the agent created .vscode/tasks.json through a live --rw grant"
	inside "$name" "echo '{}' >'$D/.mcp.json'; mkdir -p '$D/.idea' && echo x >'$D/.idea/x.xml'" || true
	[ ! -f "$D/.mcp.json" ] || fail "the agent created .mcp.json through a live --rw grant"
	[ ! -e "$D/.idea/x.xml" ] || fail "the agent wrote into .idea through a live --rw grant"
	# moving a placeholder away frees nothing
	inside "$name" "mv '$D/.vscode' '$D/old' && mkdir '$D/.vscode' && echo '{}' >'$D/.vscode/tasks.json'" || true
	[ ! -e "$D/.vscode/tasks.json" ] || fail "the agent moved the placeholder away"
	[ ! -e "$D/old" ] || fail "the agent renamed a placeholder"
	assert_contains "$OUT" "held by a read-only placeholder"
	# legitimate work, a commit included
	assert_status 0 inside "$name" "echo ok >'$D/sub/f' && cd '$D' && git add sub/f && git commit -qm b && echo committed"
	assert_eq "$(cat "$D/sub/f")" ok
	assert_eq "$(host git -C "$D" log -1 --format=%s)" b
	# revoke: the placeholders go
	assert_status 0 ctl revoke "$name" --rw "$D"
	no_placeholder_left
	# granted again, then the sandbox ends: they go too
	assert_status 0 ctl allow "$name" --rw "$D"
	[ -d "$D/.vscode" ] || fail "no placeholder at $D/.vscode"
	touch "$STOP"
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/a.log")"
	no_placeholder_left
	assert_not_contains "$(cat "$TEST_TMP/a.log")" "neutralised"
	host_commit "$D"
	nothing_ran "a hook through a live grant"
	assert_eq "$(host git -C "$D" log -1 --format=%s)" u
}

# A new repository in a live --rw grant (kept or revoked before the
# end): the end-of-run check neutralises it.
t_walk()
{
	local mode=$1 how=$2 name=walk$RANDOM pid
	setup "$mode"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$D"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	if [ "$how" = revoked ]; then
		assert_status 0 ctl revoke "$name" --rw "$D"
	fi
	touch "$STOP"
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/a.log")"
	host_commit "$D/sub"
	nothing_ran "a new repository in a live --rw grant ($how)"
	assert_contains "$(cat "$TEST_TMP/a.log")" "$D/sub/.git/hooks/pre-commit"
	assert_eq "$(host git -C "$D/sub" log --format=%s | tail -1)" "e"
}

# A SIGKILLed agentrun: its keeper walks the live grants too (made
# after its fork; revoked before the kill or not).
t_keeper()
{
	local how=$2 name=kp$RANDOM pid keep
	setup "$1"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$D"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	if [ "$how" = revoked ]; then
		assert_status 0 ctl revoke "$name" --rw "$D"
	fi
	keep=$(pgrep -P "$pid" -x agentrun-keep) || fail "no keeper process"
	kill -KILL "$pid"
	wait "$pid" || true
	wait_until 30 test ! -e "/proc/$keep"
	host_commit "$D/sub"
	nothing_ran "a new repository in a live --rw grant, agentrun SIGKILLed"
	assert_contains "$(cat "$TEST_TMP/a.log")" "ended before its sandbox: its keeper"
	assert_contains "$(cat "$TEST_TMP/a.log")" "$D/sub/.git/hooks/pre-commit"
	no_placeholder_left
}

# Sandbox A has $D as a live grant, its agent plants a repository there;
# sandbox B starts on the same workspace with $D as a start-time --rw
# (its walk of $D starts then: the plant is older). A SIGKILLed: its
# keeper neutralises the plant, B's start did not make it the user's;
# B's own plant is B's end-of-run check's.
t_second()
{
	local mode=$1 a=sa$RANDOM b=sb$RANDOM pa pb keep
	setup "$mode"
	sb_pid pa "$a" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$a" --rw "$D"
	assert_status 0 ctl exec "$a" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	sb_pid pb "$b" "$TEST_TMP/b.log" --rw "$D" -- sh -c "$WAIT"
	keep=$(pgrep -P "$pa" -x agentrun-keep) || fail "no keeper process"
	kill -KILL "$pa"
	wait "$pa" || true
	wait_until 30 test ! -e "/proc/$keep"
	host_commit "$D/sub"
	nothing_ran "A's plant, B running on the same workspace"
	assert_contains "$(cat "$TEST_TMP/a.log")" "$D/sub/.git/hooks/pre-commit"
	# B's agent plants its own
	mkdir -p "$D/sub2"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$D/sub2"
	assert_status 0 ctl exec "$b" --no-tty -- sh -c "$EVIL" _ "$D/sub2" "$MARK"
	touch "$STOP"
	wait "$pb" || fail "sandbox B failed: $(cat "$TEST_TMP/b.log")"
	host_commit "$D/sub2"
	nothing_ran "B's plant"
	assert_contains "$(cat "$TEST_TMP/b.log")" "$D/sub2/.git/hooks/pre-commit"
	no_placeholder_left
}

# A and B both have $D as a live grant: A's revoke and A's end leave B's
# placeholders (shared, the last one out removes them).
t_shared()
{
	local mode=$1 a=ha$RANDOM b=hb$RANDOM pa pb
	setup "$mode"
	sb_pid pa "$a" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	sb_pid pb "$b" "$TEST_TMP/b.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$a" --rw "$D"
	assert_status 0 ctl allow "$b" --rw "$D"
	assert_status 0 ctl revoke "$a" --rw "$D"
	[ -d "$D/.vscode" ] || fail "A's revoke took B's placeholder: $(ls -la "$D")"
	assert_status 0 ctl allow "$a" --rw "$D"
	kill -KILL "$pa"
	wait "$pa" || true
	sleep 1
	[ -d "$D/.vscode" ] || fail "A's end took B's placeholder: $(ls -la "$D")"
	inside "$b" "mkdir -p '$D/.vscode'; echo '{}' >'$D/.vscode/tasks.json'" || true
	[ ! -e "$D/.vscode/tasks.json" ] || fail "B's agent created .vscode/tasks.json after A ended"
	touch "$STOP"
	wait "$pb" || fail "sandbox B failed: $(cat "$TEST_TMP/b.log")"
	no_placeholder_left
}

# The same workspace: A's agent plants a repository (an fsmonitor in its
# config, a hook), B starts (its plan covers that config read-only), A
# ends and its end-of-run check neutralises the plant while B runs:
# B's cover must hold (a rename over the config would detach B's
# read-only mount, and B's agent could write the fsmonitor back for the
# host's git to run while B runs).
t_second_ws()
{
	local mode=$1 a=wa$RANDOM b=wb$RANDOM pa pb
	setup "$mode"
	sb_pid pa "$a" "$TEST_TMP/a.log" -- sh -c 'while [ ! -e stopA ]; do sleep 0.1; done'
	assert_status 0 ctl exec "$a" --no-tty -- sh -c "mkdir evil && $EVIL" _ "$WS/evil" "$MARK"
	sb_pid pb "$b" "$TEST_TMP/b.log" -- sh -c "$WAIT"
	touch "$WS/stopA"
	wait "$pa" || fail "sandbox A failed: $(cat "$TEST_TMP/a.log")"
	assert_contains "$(cat "$TEST_TMP/a.log")" "$WS/evil/.git/config"
	host_commit "$WS/evil"
	nothing_ran "A's plant, neutralised by A's end while B runs"
	# B's agent: the config is still read-only
	ctl exec "$b" --no-tty -- sh -c 'git -C "$1" config core.fsmonitor "echo fsmonitor >>$2; false"' _ "$WS/evil" "$MARK" || true
	host_commit "$WS/evil"
	nothing_ran "B's agent wrote A's neutralised config"
	touch "$STOP"
	wait "$pb" || fail "sandbox B failed: $(cat "$TEST_TMP/b.log")"
	host_commit "$WS/evil"
	nothing_ran "after B"
}

for m in user root; do
	run_test "live --rw grant: the missing protected paths get placeholders ($m)" t_placeholders $m
	run_test "live --rw grant: the end-of-run check walks it, granted to the end ($m)" t_walk $m live
	run_test "live --rw grant: the end-of-run check walks it, revoked before ($m)" t_walk $m revoked
	run_test "live --rw grant: agentrun SIGKILLed, the keeper walks it ($m)" t_keeper $m live
	run_test "live --rw grant: revoked, agentrun SIGKILLed, the keeper walks it ($m)" t_keeper $m revoked
	run_test "live --rw grant: a second sandbox on the same workspace, A's plant and B's ($m)" t_second $m
	run_test "live --rw grant: two sandboxes share the placeholders ($m)" t_shared $m
	run_test "second sandbox on the same workspace: A's end-of-run check keeps B's covers ($m)" t_second_ws $m
done
finish
