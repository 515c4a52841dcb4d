#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# User namespaces: maps written as root (several ranges, directly), as the
# unprivileged user (one range of its own id: directly with setgroups
# "deny"; several ranges: newuidmap/newgidmap), from inside the container.
. "$(dirname "$0")/../lib.sh"

t_root_multi_range()
{
	require_root
	local b=$TEST_TMP/root id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.linux.namespaces += [{"type":"user"}] |
		.linux.uidMappings=[{"containerID":0,"hostID":200000,"size":1000},{"containerID":1000,"hostID":300000,"size":10}] |
		.linux.gidMappings=[{"containerID":0,"hostID":200000,"size":1000}] |
		.process.user.additionalGids=[5] |
		.process.args=["sh","-c","cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; id -G"]'
	# the rootfs must be reachable by the mapped root
	chown -R 200000:200000 "$b/rootfs"
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_match "$OUT" "0 +200000 +1000"
	assert_match "$OUT" "1000 +300000 +10"
	assert_contains "$OUT" "allow" "root does not deny setgroups"
	assert_match "$OUT" "0 5"
}

t_rootless_own_id()
{
	local b=$TEST_TMP/own id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c","cat /proc/self/uid_map /proc/self/gid_map /proc/self/setgroups; id -u; id -g"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_match "$OUT" "0 +$TEST_UID +1"
	assert_match "$OUT" "0 +$TEST_GID +1"
	assert_contains "$OUT" "deny" "setgroups must be denied for an unprivileged gid_map"
}

t_rootless_multi_range()
{
	require_cmd newuidmap newgidmap
	local b=$TEST_TMP/multi id su sg
	make_bundle_as_test_user "$b" --rootless
	su=$(grep "^$TEST_USER:" /etc/subuid | head -n1 | cut -d: -f2)
	sg=$(grep "^$TEST_USER:" /etc/subgid | head -n1 | cut -d: -f2)
	[ -n "$su" ] && [ -n "$sg" ] || skip "no subordinate ids for $TEST_USER"
	id=$(unique_id)
	config_set "$b" '.linux.uidMappings=[{"containerID":0,"hostID":$u,"size":1},{"containerID":1,"hostID":$su,"size":1000}] |
		.linux.gidMappings=[{"containerID":0,"hostID":$g,"size":1},{"containerID":1,"hostID":$sg,"size":1000}] |
		.process.user={"uid":100,"gid":100,"additionalGids":[5]} |
		.process.args=["sh","-c","cat /proc/self/uid_map /proc/self/gid_map; id -u; id -g; id -G"]' \
		--argjson u "$TEST_UID" --argjson g "$TEST_GID" \
		--argjson su "$su" --argjson sg "$sg"
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_match "$OUT" "0 +$TEST_UID +1"
	assert_match "$OUT" "1 +$su +1000"
	assert_match "$OUT" "1 +$sg +1000"
	assert_contains "$OUT" "$(printf '100\n100\n100 5')"
}

t_rootless_unmapped_user()
{
	local b=$TEST_TMP/unm id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.process.user.uid=4242 | .process.args=["true"]'
	defer ar_user delete --force "$id"
	assert_status 1 ar_user run --bundle "$b" "$id"
	assert_contains "$ERR" "4242"
	assert_eq "$(ls -A "$AR_USER_ROOT" 2>/dev/null | grep -vx .seccomp-cache)" ""
}

# A non-root caller's config without a user namespace but with the id
# mappings: the user namespace is added with those mappings, with a
# warning, as crun does (runc refuses; it failed cleanly here before).
t_rootless_no_userns()
{
	local b=$TEST_TMP/nous id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.linux.namespaces |= map(select(.type != "user")) | .process.args=["sh","-c","id -u; cat /proc/self/uid_map"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_eq "$(sed -n 1p <<<"$OUT")" 0
	assert_contains "$(sed -n 2p <<<"$OUT")" "$TEST_UID"
	assert_contains "$ERR" "no user namespace"
}

t_runtime_inside_userns()
{
	require_cmd unshare
	local b=$TEST_TMP/inner id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	# as under rootless podman: the runtime is root of a user namespace
	# (setgroups denied), the config has no user namespace of its own
	config_set "$b" '.linux.namespaces |= map(select(.type != "user")) |
		del(.linux.uidMappings, .linux.gidMappings) |
		.process.args=["sh","-c","id -u; cat /proc/self/uid_map; test -c /dev/null && echo devnull-ok"]'
	assert_status 0 as_test_user unshare -Ur "$AGENTRUN" --root "$b/state" run --bundle "$b" "$id"
	assert_eq "$(sed -n 1p <<<"$OUT")" 0
	assert_match "$OUT" "0 +$TEST_UID +1"
	assert_contains "$OUT" "devnull-ok"
}

run_test "root: several ranges written directly" t_root_multi_range
run_test "rootless: own id mapped directly, setgroups denied" t_rootless_own_id
run_test "rootless: several ranges through newuidmap/newgidmap" t_rootless_multi_range
run_test "rootless: an unmapped process.user.uid fails clearly" t_rootless_unmapped_user
run_test "rootless without a user namespace: one is added with the config's mappings (as crun)" t_rootless_no_userns
run_test "runtime inside a user namespace (rootless engine)" t_runtime_inside_userns
finish
