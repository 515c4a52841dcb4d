#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Rootless on a host whose cgroup is not delegated to the user: the
# "running without a cgroup" warning is printed once per boot (a marker
# with the boot id in $XDG_RUNTIME_DIR), not on every run; doctor keeps
# saying it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

t_warning_once_per_boot()
{
	local rt
	sb_home user
	sb_home_own
	rt=$H/rt
	mkdir -m 0700 "$rt"
	chown "$TEST_UID:$TEST_GID" "$rt"
	run_sb() {
		as_test_user env HOME="$H" XDG_RUNTIME_DIR="$rt" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty -- true
	}
	assert_status 0 run_sb
	[[ $ERR == *"running without a cgroup"* ]] ||
		skip "no cgroup warning on this host (the test user's cgroup is delegated?)"
	assert_contains "$ERR" "once per boot"
	assert_eq "$(cat "$rt/agentrun-nocgroup")" "$(cat /proc/sys/kernel/random/boot_id)"
	assert_status 0 run_sb
	assert_not_contains "$ERR" "without a cgroup" "printed a second time in the same boot"
	# another boot: said again
	echo 00000000-0000-0000-0000-000000000000 >"$rt/agentrun-nocgroup"
	assert_status 0 run_sb
	assert_contains "$ERR" "running without a cgroup"
	# doctor says it every time
	assert_status 0 as_test_user env HOME="$H" XDG_RUNTIME_DIR="$rt" "$AGENTRUN" doctor
	assert_match "$OUT" "cgroup.*(delegat|warn)"
	# a marker that is a symlink is not followed
	rm -f "$rt/agentrun-nocgroup"
	ln -s "$H/elsewhere" "$rt/agentrun-nocgroup"
	assert_status 0 run_sb
	assert_contains "$ERR" "running without a cgroup"
	[ ! -e "$H/elsewhere" ] || fail "the marker symlink was followed"
}

# Without XDG_RUNTIME_DIR (su, cron, a container's shell): still once per
# boot (/run/user/UID when the user's, else /tmp/agentrun-nocgroup-UID).
t_warning_once_without_runtime_dir()
{
	sb_home user
	sb_home_own
	run_sb() {
		as_test_user env -u XDG_RUNTIME_DIR HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty -- true
	}
	assert_status 0 run_sb
	assert_status 0 run_sb
	[ -e "/run/user/$TEST_UID/agentrun-nocgroup" ] || [ -e "/tmp/agentrun-nocgroup-$TEST_UID" ] ||
		skip "no cgroup warning on this host (the test user's cgroup is delegated?)"
	assert_not_contains "$ERR" "without a cgroup" "printed again without XDG_RUNTIME_DIR"
}

# An engine that passes --log (podman, through conmon) gets the notice in
# that log only, as crun and runc route their warnings there: on stderr it
# became the container's output (podman's system tests, rootless, 030-run
# "basic tests": `podman run IMAGE true` printed it; crun prints nothing).
t_notice_in_log_with_engine()
{
	local b=$TEST_TMP/eng rt=$TEST_TMP/eng-rt id log=$TEST_TMP/eng/log.json
	make_bundle_as_test_user "$b" --rootless
	config_set "$b" '.process.args=["true"]'
	mkdir -m 0700 "$rt"
	chown "$TEST_UID:$TEST_GID" "$rt"
	run_rt() {
		as_test_user env XDG_RUNTIME_DIR="$rt" "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	}
	id=$(unique_id)
	assert_status 0 run_rt --log "$log" --log-format json run --bundle "$b" "$id"
	assert_not_contains "$ERR" "without a cgroup" "the notice reached stderr with --log"
	grep -q 'running without a cgroup' "$log" 2>/dev/null ||
		skip "no cgroup notice on this host (the test user's cgroup is delegated?)"
	# without --log (a user at a terminal): the warning, once per boot
	id=$(unique_id)
	assert_status 0 run_rt run --bundle "$b" "$id"
	assert_contains "$ERR" "running without a cgroup"
}

run_test "rootless, no delegated cgroup: the warning once per boot" t_warning_once_per_boot
run_test "rootless, no delegated cgroup, --log given (an engine): the notice in the log only" t_notice_in_log_with_engine
run_test "rootless, no XDG_RUNTIME_DIR: still once per boot" t_warning_once_without_runtime_dir
finish
