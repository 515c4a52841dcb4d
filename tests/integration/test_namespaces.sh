#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Namespaces: new ones (pid, uts, ipc, net, cgroup, mount), joined ones
# (linux.namespaces[].path, through the slow path), hostname/domainname,
# the time namespace with offsets.
. "$(dirname "$0")/../lib.sh"

run_sh()
{
	local b=$1 id
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c",$s]' --arg s "$2"
	defer ar delete --force "$id"
	assert_status "${3:-0}" ar run --bundle "$b" "$id"
}

t_new_namespaces()
{
	require_root
	local b=$TEST_TMP/new ns out
	make_bundle "$b"
	config_set "$b" '.hostname="box1" | .domainname="example.org"'
	run_sh "$b" 'hostname; cat /proc/sys/kernel/domainname; echo $$; for n in pid net ipc uts mnt cgroup; do readlink /proc/self/ns/$n; done'
	out=$OUT
	assert_eq "$(sed -n 1p <<<"$out")" box1
	assert_eq "$(sed -n 2p <<<"$out")" example.org
	assert_eq "$(sed -n 3p <<<"$out")" 1
	for ns in pid net ipc uts mnt cgroup; do
		assert_not_contains "$out" "$(readlink /proc/self/ns/$ns)" \
			"$ns namespace is the host's"
	done
	# a namespace left out is the host's
	config_set "$b" '.linux.namespaces |= map(select(.type != "ipc"))'
	run_sh "$b" 'readlink /proc/self/ns/ipc'
	assert_eq "$OUT" "$(readlink /proc/self/ns/ipc)"
}

t_hostname_needs_uts()
{
	require_root
	local b=$TEST_TMP/nouts
	make_bundle "$b"
	config_set "$b" '.hostname="box" | .linux.namespaces |= map(select(.type != "uts"))'
	run_sh "$b" 'true' 1
	assert_contains "$ERR" "UTS namespace"
	assert_eq "$(ls -A "$AR_ROOT" | grep -vx .seccomp-cache)" ""
}

t_join_by_path()
{
	require_root
	local b=$TEST_TMP/j1 b2=$TEST_TMP/j2 id pid
	make_bundle "$b"
	make_bundle "$b2"
	id=$(unique_id)
	config_set "$b" '.hostname="first" | .process.args=["sleep","30"]'
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	pid=$(ar state "$id" | jq .pid)
	config_set "$b2" 'del(.hostname) | .linux.namespaces |= map(if .type == "uts" then .path = $u elif .type == "network" then .path = $n elif .type == "ipc" then .path = $i else . end)' \
		--arg u "/proc/$pid/ns/uts" --arg n "/proc/$pid/ns/net" \
		--arg i "/proc/$pid/ns/ipc"
	run_sh "$b2" 'hostname; readlink /proc/self/ns/net; readlink /proc/self/ns/ipc; echo pid=$$'
	assert_eq "$(sed -n 1p <<<"$OUT")" first
	assert_eq "$(sed -n 2p <<<"$OUT")" "$(readlink /proc/"$pid"/ns/net)"
	assert_eq "$(sed -n 3p <<<"$OUT")" "$(readlink /proc/"$pid"/ns/ipc)"
	assert_contains "$OUT" "pid=1" "own pid namespace on the slow path"
}

t_join_pid_ns()
{
	require_root
	local b=$TEST_TMP/p1 b2=$TEST_TMP/p2 id pid
	make_bundle "$b"
	make_bundle "$b2"
	id=$(unique_id)
	config_set "$b" '.process.args=["sleep","30"]'
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	pid=$(ar state "$id" | jq .pid)
	config_set "$b2" '.linux.namespaces |= map(if .type == "pid" then .path = $p else . end)' \
		--arg p "/proc/$pid/ns/pid"
	run_sh "$b2" 'echo pid=$$; readlink /proc/self/ns/pid'
	assert_not_contains "$OUT" "pid=1"
	assert_contains "$OUT" "$(readlink /proc/"$pid"/ns/pid)"
}

t_join_bad_path()
{
	require_root
	local b=$TEST_TMP/bad
	make_bundle "$b"
	config_set "$b" '.linux.namespaces |= map(if .type == "network" then .path = "/nonexistent/ns" else . end)'
	run_sh "$b" 'true' 1
	assert_contains "$ERR" "/nonexistent/ns"
	assert_eq "$(ls -A "$AR_ROOT" | grep -vx .seccomp-cache)" ""
}

t_time_namespace()
{
	require_root
	[ -e /proc/self/ns/time ] || skip "no time namespaces in this kernel"
	local b=$TEST_TMP/time up
	make_bundle "$b"
	config_set "$b" '.linux.namespaces += [{"type":"time"}] | .linux.timeOffsets={"boottime":{"secs":864000,"nanosecs":0},"monotonic":{"secs":7200}}'
	# The host's uptime read before the container's: boottime only grows,
	# so the container's (floored) figure is at least this one's plus the
	# offset; read after, it could be one second ahead (the flake of
	# issue 31: 870475 < 6476 + 864000).
	up=$(cut -d. -f1 /proc/uptime)
	run_sh "$b" 'cut -d. -f1 /proc/uptime; readlink /proc/self/ns/time; echo pid=$$'
	[ "$(sed -n 1p <<<"$OUT")" -ge $((up + 864000)) ] ||
		fail "uptime in the container $(sed -n 1p <<<"$OUT") not >= $up + 864000"
	assert_ne "$(sed -n 2p <<<"$OUT")" "$(readlink /proc/self/ns/time)"
	assert_contains "$OUT" "pid=1"
	# a new time namespace without offsets takes the fast path
	config_set "$b" 'del(.linux.timeOffsets)'
	run_sh "$b" 'readlink /proc/self/ns/time'
	assert_ne "$OUT" "$(readlink /proc/self/ns/time)"
}

t_rootless_namespaces()
{
	local b=$TEST_TMP/rns id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.hostname="rl" | .process.args=["sh","-c","hostname; echo $$; readlink /proc/self/ns/user"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_eq "$(sed -n 1p <<<"$OUT")" rl
	assert_eq "$(sed -n 2p <<<"$OUT")" 1
	assert_ne "$(sed -n 3p <<<"$OUT")" "$(readlink /proc/self/ns/user)"
}

run_test "new namespaces, hostname, domainname" t_new_namespaces
run_test "hostname without a UTS namespace is an error" t_hostname_needs_uts
run_test "join uts/net/ipc namespaces by path" t_join_by_path
run_test "join a pid namespace by path" t_join_pid_ns
run_test "a namespace path that does not exist" t_join_bad_path
run_test "time namespace with offsets" t_time_namespace
run_test "rootless: new namespaces and hostname" t_rootless_namespaces
finish
