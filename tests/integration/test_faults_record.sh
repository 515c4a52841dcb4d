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

host()
{
	if [ "$MODE" = root ]; then
		HOME=$H "$@"
	else
		as_test_user env HOME="$H" "$@"
	fi
}

inside()
{
	local name=$1
	shift
	ctl exec "$name" --no-tty -- sh -c "$*"
}

kill_quiet()
{
	kill -9 "$1" 2>/dev/null || true
}

# sb_pid VAR NAME LOG OPTIONS... -- CMD: the sandbox NAME in the
# background, VAR its agentrun's pid (no shell between); waits until its
# control socket answers
sb_pid()
{
	local var=$1 name=$2 log=$3 root=$AR_ROOT
	shift 3
	local pre=(env HOME="$H")
	if [ "$MODE" = user ]; then
		ensure_test_user
		pre=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID"
			--init-groups env -i
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
			HOME="$H" USER="$TEST_USER" LOGNAME="$TEST_USER"
			XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR" LANG=C.UTF-8)
		root=$AR_USER_ROOT
	fi
	"${pre[@]}" bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
		"$AGENTRUN" --root "$root" sandbox --no-tty --name "$name" "$@" \
		</dev/null >"$log" 2>&1 &
	printf -v "$var" %s "$!"
	defer ctl stop -t 0 "$name"
	defer kill_quiet "$!"
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
	kill -KILL "$pid" $keep
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

for mode in root user; do
	run_test "record ($mode): a live --rw grant is in the record: the next start walks it" t_grant $mode
	run_test "record ($mode): a revoked live --rw grant is in the record too" t_grant_revoked $mode
done
finish
