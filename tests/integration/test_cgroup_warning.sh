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

run_test "rootless, no delegated cgroup: the warning once per boot" t_warning_once_per_boot
run_test "rootless, no XDG_RUNTIME_DIR: still once per boot" t_warning_once_without_runtime_dir
finish
