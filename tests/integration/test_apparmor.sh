#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# AppArmor on this host (runtime/lib/apparmor.c): without AppArmor a
# process.apparmorProfile is ignored as crun and runc ignore it, and
# --version/features do not claim it; the shipped profile for agentrun
# itself (contrib/apparmor/agentrun) parses with apparmor_parser -Q.
# Profiles applied and enforced: test_apparmor_vm.sh (a VM with AppArmor).
. "$(dirname "$0")/../lib.sh"

aa_enabled()
{
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]
}

t_ignored_without_apparmor()
{
	aa_enabled && skip "AppArmor is enabled here (test_apparmor_vm covers it)"
	local b=$TEST_TMP/b1 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["true"] | .process.apparmorProfile="agentrun-no-such-profile"'
	defer ar delete --force "$id"
	if [ "$(id -u)" = 0 ]; then
		assert_status 0 ar run --bundle "$b" "$id"
	fi
	assert_status 0 "$AGENTRUN" --version
	assert_not_contains "$OUT" "+APPARMOR"
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r .linux.apparmor.enabled "$OUT_FILE")" false
}

t_ignored_rootless()
{
	aa_enabled && skip "AppArmor is enabled here"
	require_subids
	require_agentrun_as_test_user
	local b=$TEST_TMP/b2 id
	id=$(unique_id)
	make_bundle_as_test_user "$b" --rootless
	config_set "$b" '.process.args=["true"] | .process.apparmorProfile="agentrun-no-such-profile"'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
}

# the profile parses; AppArmor 3 (Debian 12) has no `userns` rule nor
# abi 4.0: there the rest of it must parse, and make install skips it
t_profile_parses()
{
	require_cmd apparmor_parser
	local f=$TOP_SRCDIR/contrib/apparmor/agentrun
	[ -d /etc/apparmor.d/tunables ] || skip "no /etc/apparmor.d/tunables (apparmor not installed)"
	if [ -e /etc/apparmor.d/abi/4.0 ]; then
		assert_status 0 apparmor_parser -Q -K "$f"
	else
		assert_status '!0' apparmor_parser -Q -K "$f"
		assert_contains "$ERR" "abi/4.0"
		sed -e '/^abi /d' -e '/^ *userns,$/d' "$f" >"$TEST_TMP/aa3"
		assert_status 0 apparmor_parser -Q -K "$TEST_TMP/aa3"
	fi
	# attached to the installed binary's path (make install rewrites it)
	grep -q '^profile agentrun /usr/bin/agentrun ' "$f" || fail "no attachment to /usr/bin/agentrun"
}

run_test "apparmor: ignored on a host without AppArmor (root)" t_ignored_without_apparmor
run_test "apparmor: ignored on a host without AppArmor (rootless)" t_ignored_rootless
run_test "apparmor: contrib/apparmor/agentrun parses" t_profile_parses
finish
