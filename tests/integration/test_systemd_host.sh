#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd cgroup manager where no systemd can be reached (this host's
# PID 1 is not systemd): `--systemd-cgroup` fails naming the fix instead
# of laying the cgroup out itself; --version and features say it is
# built. The manager against a real systemd: test_systemd_vm.sh.
. "$(dirname "$0")/../lib.sh"

# No systemd to talk to: the system bus and /run/systemd/private hidden
# under empty tmpfs in a mount namespace of the test (on a host without
# systemd, like the dev container, they are absent anyway).
no_systemd()
{
	local hide=''
	for d in /run/dbus /run/systemd; do
		[ -d "$d" ] && hide="$hide mount -t tmpfs none $d &&"
	done
	unshare -m --propagation private sh -c "$hide exec \"\$@\"" no-systemd "$@"
}

t_no_systemd()
{
	require_root
	require_cmd unshare
	local b=$TEST_TMP/b id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["true"]'
	defer ar delete --force "$id"
	assert_status '!0' no_systemd "$AGENTRUN" --root "$AR_ROOT" --systemd-cgroup run --bundle "$b" "$id"
	assert_contains "$ERR" "cannot reach systemd"
	assert_contains "$ERR" "--cgroup-manager=cgroupfs"
	[ ! -e "$AR_ROOT/$id" ] || fail "a container was left behind"
}
run_test "--systemd-cgroup without a reachable systemd: an error naming the fix" t_no_systemd

t_unit_name_form()
{
	require_root
	local b=$TEST_TMP/b2 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["true"] | .linux.cgroupsPath="/a/b"'
	defer ar delete --force "$id"
	assert_status '!0' ar --cgroup-manager=systemd run --bundle "$b" "$id"
	assert_contains "$ERR" "slice:prefix:name"
}
run_test "--cgroup-manager=systemd with a cgroupfs path: refused, naming the form" t_unit_name_form

# runc's org.systemd.property.* annotations are read before anything
# starts: a malformed one is an error naming it (systemd or not).
t_bad_property_annotation()
{
	require_root
	local b=$TEST_TMP/b4 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["true"] | .annotations["org.systemd.property.TimeoutStopUSec"]="uint64 12x"'
	defer ar delete --force "$id"
	assert_status '!0' ar --systemd-cgroup run --bundle "$b" "$id"
	assert_contains "$ERR" "annotation org.systemd.property.TimeoutStopUSec=uint64 12x: not an integer"
	config_set "$b" '.annotations={"org.systemd.property.Time_out": "true"}'
	assert_status '!0' ar --systemd-cgroup run --bundle "$b" "$id"
	assert_contains "$ERR" "annotation org.systemd.property.Time_out: the property name may hold ASCII letters only"
	[ ! -e "$AR_ROOT/$id" ] || fail "a container was left behind"
	# the cgroupfs manager ignores them, as runc and crun
	config_set "$b" '.annotations={"org.systemd.property.TimeoutStopUSec": "uint64 12x"}'
	assert_status 0 ar run --bundle "$b" "$id"
}
run_test "--systemd-cgroup: a malformed org.systemd.property.* annotation is an error naming it" t_bad_property_annotation

t_rootless_no_user_systemd()
{
	local b=$TEST_TMP/b3 id
	id=$(unique_id)
	make_bundle_as_test_user "$b" --rootless
	config_set "$b" '.process.args=["true"]'
	defer ar_user delete --force "$id"
	assert_status '!0' ar_user --systemd-cgroup run --bundle "$b" "$id"
	assert_contains "$ERR" "cannot reach the user's systemd"
	assert_contains "$ERR" "--cgroup-manager=cgroupfs"
}
run_test "[rootless] --systemd-cgroup without the user's systemd: an error naming the fix" t_rootless_no_user_systemd

t_features()
{
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r '.linux.cgroup.systemd' <<<"$OUT")" true
	assert_eq "$(jq -r '.linux.cgroup.systemdUser' <<<"$OUT")" true
	assert_status 0 "$AGENTRUN" --version
	assert_contains "$(tail -1 <<<"$OUT")" "+SYSTEMD"
}
run_test "features and --version say the systemd manager is built" t_features

finish
