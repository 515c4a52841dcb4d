#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The record of a run (runtime/sandbox/protect/run_record.h): when
# agentrun and its keeper are both killed, the next `agentrun sandbox`
# start checks the run from its record in ~/.local/state/agentrun/
# unchecked/ (docs/sandbox.md, "A killed sandbox"). Root and rootless,
# each as a hostile agent:
#   - a live `sandbox allow --rw DIR` (the control plane): the agent plants
#     a repository with a hook, an fsmonitor and a core.hooksPath in DIR,
#     then agentrun and its keeper are SIGKILLed together: the next start
#     walks DIR too (the grant is in the record, on disk before it was
#     mounted);
#   - the records tampered with from inside (--workspace ~, a --rw of a
#     parent of the state directory, a live grant of it): the agent
#     deletes its own record (its run would never be checked), forges one
#     naming a directory of the user's (a later start would "check" it
#     and quarantine the user's own hook), or moves the state directory
#     away and makes a new one. The state directory is read-only inside
#     every sandbox, and no directory between a writable root and it can
#     be renamed (mounts on each).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd git

kill_quiet()
{
	kill -9 "$1" 2>/dev/null || true
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
	defer kill_quiet "${!var}"
	wait_until 30 ctl requests "$name"
}

setup()
{
	sb_home "$1"
	rm -rf "$WS/.git"
	D=$H/proj2
	mkdir -p "$D/sub" "$H/.local/state/agentrun/unchecked"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
	host git -C "$D" init -q
	host sh -c 'cd "$1" && echo a >a && git add a && git commit -qm a' _ "$D"
}

# the sandbox's command: waits for $WS/stop
WAIT='while [ ! -e stop ]; do sleep 0.1; done'

# EVIL DIR MARK: a new repository in DIR with a pre-commit hook, an
# fsmonitor and a core.hooksPath (whose pre-commit also writes MARK)
EVIL='cd "$1" && git init -q && echo e >e && git add e && git commit -qm e &&
	git config core.fsmonitor "echo fsmonitor >>$2; false" &&
	printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/pre-commit &&
	chmod +x .git/hooks/pre-commit && mkdir -p .githooks &&
	cp .git/hooks/pre-commit .githooks/pre-commit &&
	git config core.hooksPath .githooks && echo planted'

host_commit()
{
	host sh -c 'cd "$1" && echo u >>u && git add u && git commit -qm u >/dev/null 2>&1; git status >/dev/null 2>&1; true' _ "$1"
}

records()
{
	ls -A "$H/.local/state/agentrun/unchecked" 2>/dev/null || true
}

# agentrun (pid $1) and its keeper SIGKILLed at once: nothing checks
kill_both()
{
	local pid=$1 keep
	keep=$(pgrep -P "$pid" -x agentrun-keep) || fail "no keeper process"
	# the keeper first: killed while agentrun lives, it has checked
	# nothing (agentrun first, a preempted test would let it check)
	kill -KILL $keep
	kill -KILL "$pid"
	wait "$pid" 2>/dev/null || true
	wait_until 30 test ! -e "/proc/$keep"
	wait_until 10 no_pid pgrep -f "stop ]; do sleep"
}

no_pid()
{
	[ -z "$("$@")" ]
}

# 1. A live --rw grant, then agentrun and its keeper killed together.
t_grant()
{
	local name=rg$RANDOM pid
	setup "$1"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$D"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	assert_contains "$OUT" planted
	kill_both "$pid"
	[ -x "$D/sub/.git/hooks/pre-commit" ] || fail "the hook is gone already: nothing should have checked the run yet"
	[ -n "$(records)" ] || fail "no record of the killed run"
	# the user's next sandbox checks the run, the live grant included
	assert_status 0 sb_run -- true
	echo "# $(grep -F 'earlier run' <<<"$ERR" || true)"
	assert_contains "$ERR" "ended without its end-of-run check"
	host_commit "$D/sub"
	[ ! -e "$MARK" ] || fail "the host ran what the killed sandbox left in its live --rw grant: $(cat "$MARK")"
	[ ! -x "$D/sub/.git/hooks/pre-commit" ] || fail "the hook in the live --rw grant is still armed"
	assert_contains "$ERR" "$D/sub/.git/hooks/pre-commit"
	assert_eq "$(records)" "" "records left"
}

# (the same, the grant revoked before the kill: its changes still count)
t_grant_revoked()
{
	local name=rv$RANDOM pid
	setup "$1"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$D"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	assert_status 0 ctl revoke "$name" --rw "$D"
	kill_both "$pid"
	assert_status 0 sb_run -- true
	host_commit "$D/sub"
	[ ! -e "$MARK" ] || fail "the host ran what the killed sandbox left in a revoked --rw grant: $(cat "$MARK")"
	assert_contains "$ERR" "$D/sub/.git/hooks/pre-commit"
}

# -- the records tampered with from inside -------------------------------

# FORGE STATE VICTIM: the agent's attempts at STATE (agentrun's state
# directory as the sandbox shows it): a record naming VICTIM (every
# change since 1970 counts), written where it is, then after moving the
# state directory (and its parent) away and making new ones; prints what
# it managed
FORGE='st=$1 v=$2
rec() { printf "agentrun-unchecked-run 1\000""0\000""0\000""1\000%s\000" "$v" >"$1" 2>/dev/null && echo "wrote $1"; }
rec "$st/unchecked/1.000000001-1"
mv "$st/unchecked" "$st/u.old" 2>/dev/null && echo "moved $st/unchecked"
mv "$st" "$st.old" 2>/dev/null && echo "moved $st"
mv "${st%/*}" "${st%/*}.old" 2>/dev/null && echo "moved ${st%/*}"
mkdir -p "$st/unchecked" 2>/dev/null && rec "$st/unchecked/1.000000002-1"
true'

# the user's own repository $D gets a hook of the user's, made now
user_hook()
{
	host sh -c 'printf "#!/bin/sh\nexit 0\n" >"$1/.git/hooks/pre-commit" && chmod +x "$1/.git/hooks/pre-commit"' _ "$D"
}

# after the forging sandbox: the next start checks nothing of $D's
not_forged()
{
	local st=$H/.local/state/agentrun
	echo "# the agent: $(tr '\n' ';' <<<"$1")"
	assert_status 0 sb_run -- true
	[ -x "$D/.git/hooks/pre-commit" ] || fail "the user's own hook was taken by a forged record: $ERR"
	assert_not_contains "$ERR" "earlier run on \`$D\`"
	assert_not_contains "$1" "wrote"
	assert_not_contains "$1" "moved"
	[ -d "$st/unchecked" ] || fail "the state directory is gone: $(ls -la "$H/.local" "$H/.local/state" 2>&1)"
	assert_eq "$(records)" "" "records left after the run"
}

# 2a. --workspace ~: forge
t_forge_home()
{
	setup "$1"
	user_hook
	assert_status 0 sb_run --workspace "$H" -- sh -c "$FORGE" _ "$H/.local/state/agentrun" "$D"
	not_forged "$OUT"
}

# 2a'. --workspace ~ with --rw ~/.local (an opt-out of the protected
# paths below it, bound over the workspace): forge
t_forge_optout()
{
	setup "$1"
	user_hook
	assert_status 0 sb_run --workspace "$H" --rw "$H/.local" -- sh -c "$FORGE" _ "$H/.local/state/agentrun" "$D"
	not_forged "$OUT"
}

# 2b. a start-time --rw of a parent of the state directory: forge
t_forge_rw()
{
	setup "$1"
	user_hook
	assert_status 0 sb_run --rw "$H/.local" -- sh -c "$FORGE" _ "$H/.local/state/agentrun" "$D"
	not_forged "$OUT"
}

# 2c. a live --rw grant of a parent of the state directory: forge
t_forge_grant()
{
	local name=fg$RANDOM pid
	setup "$1"
	user_hook
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status 0 ctl allow "$name" --rw "$H/.local/state"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$FORGE" _ "$H/.local/state/agentrun" "$D"
	local out=$OUT
	touch "$WS/stop"
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/a.log")"
	not_forged "$out"
}

# 2d. --workspace ~: the agent deletes its own record (and moves the
# state directory away), then agentrun and its keeper are killed: the
# next start still checks the run
t_delete_home()
{
	local name=dl$RANDOM pid
	setup "$1"
	sb_pid pid "$name" "$TEST_TMP/a.log" --workspace "$H" -- sh -c "$WAIT"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c "$EVIL" _ "$D/sub" "$MARK"
	assert_status 0 ctl exec "$name" --no-tty -- sh -c 'st=$1
		rm -f "$st"/unchecked/* 2>/dev/null && echo "removed"
		mv "$st" "$st.old" 2>/dev/null && echo "moved $st"
		mv "${st%/*}" "${st%/*}.old" 2>/dev/null && echo "moved ${st%/*}"
		true' _ "$H/.local/state/agentrun"
	echo "# the agent: $(tr '\n' ';' <<<"$OUT")"
	kill_both "$pid"
	[ -x "$D/sub/.git/hooks/pre-commit" ] || fail "the hook is gone already: nothing should have checked the run yet"
	assert_status 0 sb_run -- true
	host_commit "$D/sub"
	[ ! -e "$MARK" ] || fail "the host ran what the killed sandbox left after deleting its record: $(cat "$MARK")"
	assert_contains "$ERR" "ended without its end-of-run check"
	assert_contains "$ERR" "$D/sub/.git/hooks/pre-commit"
	assert_eq "$(records)" "" "records left"
}

# 2e. the state directory itself, or a directory in it, is never given
t_refused()
{
	local name=rf$RANDOM pid st
	setup "$1"
	st=$H/.local/state/agentrun
	assert_status '!0' sb_run --rw "$st" -- true
	assert_contains "$ERR" "agentrun's own state directory"
	assert_status '!0' sb_run --rw "$st/unchecked" -- true
	assert_contains "$ERR" "agentrun's own state directory"
	assert_status '!0' sb_run --workspace "$st" -- true
	assert_contains "$ERR" "agentrun's own state directory"
	sb_pid pid "$name" "$TEST_TMP/a.log" -- sh -c "$WAIT"
	assert_status '!0' ctl allow "$name" --rw "$st"
	assert_contains "$ERR" "agentrun's own state directory"
	touch "$WS/stop"
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/a.log")"
}

for mode in root user; do
	run_test "record ($mode): a live --rw grant is in the record: the next start walks it" t_grant $mode
	run_test "record ($mode): a revoked live --rw grant is in the record too" t_grant_revoked $mode
	run_test "record ($mode): --workspace ~: the agent cannot forge a record" t_forge_home $mode
	run_test "record ($mode): --workspace ~ --rw ~/.local: the agent cannot forge a record" t_forge_optout $mode
	run_test "record ($mode): --rw of a parent of the state directory: the agent cannot forge a record" t_forge_rw $mode
	run_test "record ($mode): a live --rw grant of a parent of the state directory: the agent cannot forge a record" t_forge_grant $mode
	run_test "record ($mode): --workspace ~: the agent cannot delete its run's record" t_delete_home $mode
	run_test "record ($mode): the state directory is never given read-write" t_refused $mode
done
finish
