#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun doctor`: one line per check with the fix; the kernel switches
# are simulated through the AGENTRUN_DOCTOR_PROC test knob.
. "$(dirname "$0")/../lib.sh"

# fake_proc DIR: a proc root with the switches of a permissive kernel.
fake_proc()
{
	mkdir -p "$1/sys/kernel/seccomp" "$1/sys/user" "$1/self"
	echo 1 >"$1/sys/kernel/unprivileged_userns_clone"
	echo 15000 >"$1/sys/user/max_user_namespaces"
	cp /proc/sys/kernel/seccomp/actions_avail "$1/sys/kernel/seccomp/"
	cp /proc/self/cgroup "$1/self/cgroup"
	chmod -R a+rX "$1"
}

doctor_user()
{
	require_agentrun_as_test_user
	as_test_user env AGENTRUN_DOCTOR_PROC="${FAKE:-}" "$AGENTRUN" doctor
}

t_all_checks_listed()
{
	require_agentrun_as_test_user
	assert_status 0 as_test_user "$AGENTRUN" doctor
	local id
	for id in userns subids overlay idmap seccomp landlock cgroup vm; do
		grep -Eq "^(ok|warn|FAIL|skip) +$id " <<<"$OUT" ||
			fail "no line for the $id check in: $OUT"
	done
	grep -Eq "^ok +userns " <<<"$OUT" || fail "userns not ok: $OUT"
	grep -Eq "^ok +seccomp " <<<"$OUT" || fail "seccomp not ok: $OUT"
	[ "$(wc -l <<<"$OUT")" = 8 ] || fail "expected 8 lines: $OUT"
}

t_disabled_userns_sysctl()
{
	FAKE=$TEST_TMP/proc-$RANDOM
	fake_proc "$FAKE"
	assert_status 0 doctor_user
	echo 0 >"$FAKE/sys/kernel/unprivileged_userns_clone"
	assert_status 1 doctor_user
	assert_match "$OUT" "FAIL +userns +user namespaces: kernel.unprivileged_userns_clone = 0"
	assert_contains "$OUT" "fix: sudo sysctl -w kernel.unprivileged_userns_clone=1"
	# the other checks still report
	assert_match "$OUT" "ok +seccomp "
}

t_zero_max_user_namespaces()
{
	FAKE=$TEST_TMP/proc-$RANDOM
	fake_proc "$FAKE"
	echo 0 >"$FAKE/sys/user/max_user_namespaces"
	assert_status 1 doctor_user
	assert_contains "$OUT" "user.max_user_namespaces = 0"
	assert_contains "$OUT" "fix: sudo sysctl -w user.max_user_namespaces="
}

t_apparmor_switch_with_working_userns()
{
	# Ubuntu's switch alone does not fail the check when a profile lets
	# agentrun create user namespaces: the live probe decides.
	FAKE=$TEST_TMP/proc-$RANDOM
	fake_proc "$FAKE"
	echo 1 >"$FAKE/sys/kernel/apparmor_restrict_unprivileged_userns"
	assert_status 0 doctor_user
	assert_match "$OUT" "ok +userns "
}

t_missing_seccomp()
{
	FAKE=$TEST_TMP/proc-$RANDOM
	fake_proc "$FAKE"
	rm "$FAKE/sys/kernel/seccomp/actions_avail"
	assert_status 1 doctor_user
	assert_match "$OUT" "FAIL +seccomp "
}

t_root_checks()
{
	require_root
	assert_status 0 "$AGENTRUN" doctor
	assert_match "$OUT" "skip +subids "
	assert_match "$OUT" "(ok|warn) +idmap "
}

t_help()
{
	assert_status 0 "$AGENTRUN" doctor --help
	assert_contains "$OUT" "Usage: agentrun doctor"
	assert_status 1 "$AGENTRUN" doctor extra
}

run_test "doctor: one line per check" t_all_checks_listed
run_test "doctor: a disabled userns sysctl fails with the fix" t_disabled_userns_sysctl
run_test "doctor: user.max_user_namespaces = 0" t_zero_max_user_namespaces
run_test "doctor: apparmor switch with a working userns" t_apparmor_switch_with_working_userns
run_test "doctor: no seccomp" t_missing_seccomp
run_test "doctor: as root" t_root_checks
run_test "doctor: usage" t_help
finish
