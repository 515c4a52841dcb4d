#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Crash safety (issue 9): the runtime is killed with SIGKILL at chosen
# points of create and delete (the AGENTRUN_TEST_CRASH_AT hook of
# runtime/lib/state.c). Afterwards `state` must answer sensibly (a status,
# or a clear error -- never a crash), `list` must still work, and
# `delete --force` must clean up completely: no state directory, no
# process, no mount left.
. "$(dirname "$0")/../lib.sh"

leftover_procs()
{
	find /proc -mindepth 2 -maxdepth 2 -name root -lname "$TEST_TMP*" \
		2>/dev/null | sed 's|^/proc/\([0-9]*\)/.*|\1|' | sort -u
}

state_dirs()
{
	ls -A "$AR_ROOT" 2>/dev/null | grep -vx '.seccomp-cache' || true
}

# crash_case POINT PHASE: PHASE "create" crashes `create` at POINT; PHASE
# "delete" creates and starts, then crashes `delete --force` at POINT.
t_crash()
{
	require_root
	local point=$1 phase=$2 b=$TEST_TMP/b-$1 id st
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","1000"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	if [ "$phase" = create ]; then
		STATUS=0
		AGENTRUN_TEST_CRASH_AT=$point ar create --bundle "$b" "$id" \
			</dev/null >/dev/null 2>&1 || STATUS=$?
	else
		assert_status 0 ar create --bundle "$b" "$id"
		assert_status 0 ar start "$id"
		STATUS=0
		AGENTRUN_TEST_CRASH_AT=$point ar delete --force "$id" \
			</dev/null >/dev/null 2>&1 || STATUS=$?
	fi
	assert_eq "$STATUS" 137 "agentrun was not killed at $point"

	# state: a status, or a clear error; never a crash.
	STATUS=0
	st=$(ar state "$id" 2>"$TEST_TMP/err") || STATUS=$?
	if [ "$STATUS" = 0 ]; then
		jq -e '.status | test("^(creating|created|running|stopped)$")' \
			<<<"$st" >/dev/null || fail "state after the crash: $st"
	else
		[ "$STATUS" -lt 128 ] || fail "state crashed (exit $STATUS)"
		grep -q '^agentrun: ' "$TEST_TMP/err" ||
			fail "state: no clear error: $(cat "$TEST_TMP/err")"
	fi
	echo "state after the crash at $point: exit $STATUS: $st $(cat "$TEST_TMP/err")"
	assert_status 0 ar list

	assert_status 0 ar delete --force "$id"
	assert_eq "$(state_dirs)" "" "state left after delete --force"
	for _ in $(seq 50); do
		[ -z "$(leftover_procs)" ] && break
		sleep 0.1
	done
	assert_eq "$(leftover_procs)" "" "container processes left"
	if grep -qF "$b" /proc/self/mountinfo; then
		fail "mounts left: $(grep -F "$b" /proc/self/mountinfo)"
	fi
}

run_test "kill -9 in create after the state dir is made" t_crash state-dir-created create
run_test "kill -9 in create after state.json is written" t_crash state-written create
run_test "kill -9 in delete --force halfway through the state dir" t_crash state-remove-partial delete
finish
