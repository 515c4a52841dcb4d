#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults (issue 31): an OCI hook that hangs. Its `timeout` is honoured at
# every stage with an error naming the hook and the timeout, and the hook
# is ended whole: a hook that started a child of its own (a daemon it
# forgot, `sleep &`) leaves no process behind, and agentrun's output
# (captured through a pipe by the caller, as every engine does) is not held
# open past the timeout. A failing create-time hook leaves no container;
# poststart/poststop time out with a warning and the lifecycle goes on.
. "$(dirname "$0")/../lib.sh"

# a hook that never ends and leaves a child holding its stdout and stderr
HANG='sleep 9873 & exec sleep 9873'

hook_procs()
{
	pgrep -f "sleep 9873" || true
}

no_hook_procs()
{
	[ -z "$(hook_procs)" ]
}

# t_hang STAGE MODE: MODE root or user (rootless)
t_hang()
{
	local stage=$1 mode=$2 b=$TEST_TMP/b-$1-$2 id start end out
	require_root
	if [ "$mode" = root ]; then
		make_bundle "$b"
	else
		require_subids
		require_agentrun_as_test_user
		make_bundle_as_test_user "$b" --rootless
	fi
	config_set "$b" '.process.args=["true"] | .process.terminal=false
	  | .hooks[$s] = [{path: "/bin/sh", args: ["sh", "-c", $h], timeout: 2}]' \
		--arg s "$stage" --arg h "$HANG"
	[ "$mode" = root ] || chown "$TEST_UID:$TEST_GID" "$b/config.json"
	id=$(unique_id)
	if [ "$mode" = root ]; then
		defer ar delete --force "$id"
	else
		defer ar_user delete --force "$id"
	fi
	start=$(date +%s)
	# through a pipe: the caller reads until agentrun's stderr closes
	if [ "$mode" = root ]; then
		out=$(ar run --bundle "$b" "$id" 2>&1 | cat) || true
	else
		out=$(ar_user run --bundle "$b" "$id" 2>&1 | cat) || true
	fi
	end=$(date +%s)
	echo "# $stage: $((end - start)) s; output: $out"
	[ $((end - start)) -lt 15 ] || fail "the run took $((end - start)) s with a 2 s hook timeout"
	assert_contains "$out" "hooks.$stage[0]"
	assert_contains "$out" "timed out after 2 seconds"
	wait_until 5 no_hook_procs
	case $stage in
	poststart | poststop) ;; # a warning: the container ran
	*)
		local left
		if [ "$mode" = root ]; then left=$(ls "$AR_ROOT"); else left=$(ls "$AR_USER_ROOT"); fi
		assert_eq "$left" "" "state left behind"
		;;
	esac
}

# The hook's children escape its process group: one in a session of its
# own (setsid) with a child of its own, one double-forked into a new
# session (its parent gone at once: an orphan, reparented away from the
# hook). Each `sleep` carries a marker unique to the test; after the
# timeout none is left.
escaped()
{
	pgrep -f "^sleep 1000\.$1\$" || true
}

no_escaped()
{
	[ -z "$(escaped "$1")" ]
}

t_escape()
{
	local stage=$1 mode=$2 b=$TEST_TMP/e-$1-$2 id n hook out left
	require_root
	require_cmd setsid
	if [ "$mode" = root ]; then
		make_bundle "$b"
	else
		require_subids
		require_agentrun_as_test_user
		make_bundle_as_test_user "$b" --rootless
	fi
	n=$RANDOM$RANDOM
	hook="setsid sh -c 'sleep 1000.$n & exec sleep 1000.$n' </dev/null >/dev/null 2>&1 &
	sh -c '(setsid sleep 1000.$n </dev/null >/dev/null 2>&1 &)'
	exec sleep 9873"
	config_set "$b" '.process.args=["true"] | .process.terminal=false
	  | .hooks[$s] = [{path: "/bin/sh", args: ["sh", "-c", $h], timeout: 2}]' \
		--arg s "$stage" --arg h "$hook"
	[ "$mode" = root ] || chown "$TEST_UID:$TEST_GID" "$b/config.json"
	id=$(unique_id)
	# what a failed run leaves is killed by its marker
	defer sh -c "pkill -KILL -f '^sleep 1000\.$n\$'; true"
	if [ "$mode" = root ]; then
		defer ar delete --force "$id"
		out=$(ar run --bundle "$b" "$id" 2>&1 | cat) || true
	else
		defer ar_user delete --force "$id"
		out=$(ar_user run --bundle "$b" "$id" 2>&1 | cat) || true
	fi
	echo "# $stage: $out"
	assert_contains "$out" "hooks.$stage[0]"
	assert_contains "$out" "timed out after 2 seconds"
	# killed at the timeout, not reaped by chance later
	left=$(escaped "$n")
	[ -z "$left" ] || fail "the hook's processes outlived its timeout: $(ps -o pid,ppid,sid,args -p "$(tr '\n' , <<<"$left" | sed 's/,$//')")"
	wait_until 5 no_hook_procs
}

# the supervisor changes nothing the hook sees: the same ignored and
# blocked signals with a timeout as without
t_same_signals()
{
	local b=$TEST_TMP/sig id out
	require_root
	make_bundle "$b"
	config_set "$b" '.process.args=["true"] | .process.terminal=false
	  | .hooks.poststop = [
	      {path: "/bin/sh", args: ["sh", "-c", "grep -E \"^Sig(Ign|Blk)\" /proc/self/status >$0/timed", $d], timeout: 5},
	      {path: "/bin/sh", args: ["sh", "-c", "grep -E \"^Sig(Ign|Blk)\" /proc/self/status >$0/plain", $d]}]' \
		--arg d "$TEST_TMP"
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$(cat "$TEST_TMP/timed")" "$(cat "$TEST_TMP/plain")"
}

run_test "faults: a hook with a timeout gets the signal dispositions of one without" t_same_signals
for mode in root user; do
	for stage in createRuntime prestart createContainer poststart poststop; do
		run_test "faults ($mode): a $stage hook that hangs is ended whole at its timeout" t_hang $stage $mode
	done
	for stage in prestart poststop; do
		run_test "faults ($mode): a $stage hook whose children escape into new sessions: none left after its timeout" t_escape $stage $mode
	done
	# in the container's pid namespace, which dies with its init:
	# passed before the supervisor too (a guard; root only, for time)
	[ "$mode" = user ] && continue
	for stage in createContainer startContainer; do
		run_test "faults ($mode): a $stage hook whose children escape into new sessions: none left after its timeout" t_escape $stage $mode
	done
done
finish
