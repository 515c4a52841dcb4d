#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The last steps before execve: the seccomp filter comes after the
# runtime's own calls (chdir, getcwd, the executable lookup, fd cleanup),
# so a profile that denies them still runs the container's program.
. "$(dirname "$0")/../lib.sh"

# deny_profile NAMES...: allow everything, EPERM for NAMES
deny_profile()
{
	jq -n --args '{defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"], syscalls: [{names: $ARGS.positional, action: "SCMP_ACT_ERRNO"}]}' "$@"
}

t_seccomp_denies_runtime_calls()
{
	local u=$1 b=$TEST_TMP/sc$1 id nnp prof
	bundle_for "$u" "$b"
	for nnp in false true; do
		prof=$(deny_profile getcwd)
		# with no_new_privileges the filter is the very last step:
		# deny more of what the runtime itself calls
		[ "$nnp" = true ] && prof=$(deny_profile getcwd close_range \
			faccessat faccessat2 access newfstatat stat keyctl \
			landlock_create_ruleset landlock_restrict_self)
		config_set "$b" '.process.noNewPrivileges=($n == "true") | .linux.seccomp=$p | .process.cwd="/tmp" | .process.args=["/bin/echo","ran"]' \
			--arg n "$nnp" --argjson p "$prof"
		id=$(unique_id)
		defer arr "$u" delete --force "$id"
		assert_status 0 arr "$u" run --bundle "$b" "$id"
		assert_eq "$OUT" ran "noNewPrivileges=$nnp"
	done
	# exec: the same order
	config_set "$b" '.process.args=["sleep","1000"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --detach --bundle "$b" "$id"
	assert_status 0 arr "$u" exec --cwd /tmp "$id" /bin/echo exec-ran
	assert_eq "$OUT" exec-ran
}

# HOME from the container's /etc/passwd when process.env has none (runc),
# "/" for a uid it does not list; a missing process.cwd is made.
t_home_and_cwd()
{
	local u=$1 b=$TEST_TMP/home$1 id
	bundle_for "$u" "$b"
	config_set "$b" '.process.env |= map(select(startswith("HOME=") | not)) | .process.cwd="/new/dir" | .process.args=["sh","-c","echo $HOME; pwd"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$OUT" "/root
/new/dir"
	# the --rootless config maps one uid: the other users as root only
	[ "$u" = 1 ] && return 0
	config_set "$b" '.process.user={"uid":1000,"gid":1000} | .process.cwd="/"'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$(head -n1 <<<"$OUT")" /home/testuser
	config_set "$b" '.process.user={"uid":4242,"gid":4242} | .process.args=["sleep","1000"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --detach --bundle "$b" "$id"
	assert_status 0 arr "$u" exec "$id" sh -c 'echo $HOME'
	assert_eq "$OUT" / "exec: a uid without a passwd line"
	assert_status 0 arr "$u" exec --env HOME=/set "$id" sh -c 'echo $HOME'
	assert_eq "$OUT" /set "HOME in the environment wins"
}

# `lo` is up in a network namespace the runtime creates (crun).
t_lo_up()
{
	local u=$1 b=$TEST_TMP/lo$1 id
	bundle_for "$u" "$b"
	config_set "$b" 'del(.annotations["run.agentrun.net.loopback"]) | .linux.namespaces |= (map(select(.type != "network")) + [{"type":"network"}]) | .process.args=["cat","/sys/class/net/lo/flags"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$OUT" 0x9 "lo is not up (IFF_UP|IFF_LOOPBACK)"
}

# linux.devices: as root a node the host does not have is made (mknod);
# in a user namespace the host's node is bound, nosuid,noexec, and one the
# host does not have is a clear error.
t_devices()
{
	local u=$1 b=$TEST_TMP/dev$1 id
	bundle_for "$u" "$b"
	config_set "$b" '.linux.devices=[{"path":"/dev/agentrun-test-null","type":"c","major":1,"minor":3,"fileMode":438}] | .process.args=["sh","-c","echo x >/dev/agentrun-test-null && echo wrote"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	if [ "$u" = 0 ]; then
		assert_status 0 arr "$u" run --bundle "$b" "$id"
		assert_eq "$OUT" wrote
	else
		assert_status '!0' arr "$u" run --bundle "$b" "$id"
		assert_contains "$ERR" '"/dev/agentrun-test-null"'
		assert_contains "$ERR" "user namespace"
	fi
	# the default nodes bound in a user namespace: nosuid,noexec
	config_set "$b" '.linux.devices=[] | .process.args=["sh","-c","grep \" /dev/null \" /proc/self/mountinfo || echo no-bind"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	if [ "$u" = 1 ]; then
		assert_match "$OUT" "nosuid" "device bind without nosuid: $OUT"
		assert_match "$OUT" "noexec" "device bind without noexec: $OUT"
	else
		assert_eq "$OUT" no-bind "as root the nodes are made, not bound"
	fi
}

# crun's owner-device: root starts a container in a user namespace (a
# full mapping and a shifted one) with a node the host does not have
# (block 1:5) and a uid/gid: the node is there with the configured owner
# (the runtime makes it in a tmpfs of its own and passes it in); without
# a user namespace mknod as before. An unmapped uid is an error naming it.
t_owner_device()
{
	require_root
	local b=$TEST_TMP/owner id maps out
	make_bundle "$b"
	for maps in none full shifted; do
		case $maps in
		none) config_set "$b" 'del(.linux.uidMappings, .linux.gidMappings) | .linux.namespaces |= map(select(.type != "user"))' ;;
		full) config_set "$b" '.linux.namespaces |= (map(select(.type != "user")) + [{"type":"user"}]) | .linux.uidMappings=[{"containerID":0,"hostID":0,"size":4294967295}] | .linux.gidMappings=.linux.uidMappings' ;;
		shifted) config_set "$b" '.linux.uidMappings=[{"containerID":0,"hostID":200000,"size":65536}] | .linux.gidMappings=.linux.uidMappings' ;;
		esac
		config_set "$b" '.linux.devices=[{"path":"/dev/agentrun-foo","type":"b","major":1,"minor":5,"uid":10,"gid":11,"fileMode":416}] | .process.args=["stat","-c","%t:%T %F %u:%g %a","/dev/agentrun-foo"]'
		id=$(unique_id)
		defer ar delete --force "$id"
		assert_status 0 ar run --bundle "$b" "$id"
		assert_eq "$OUT" "1:5 block special file 10:11 640" "owner-device ($maps)"
	done
	# the node is usable inside: a char device the host has, owned by 10
	config_set "$b" '.linux.devices=[{"path":"/dev/agentrun-null","type":"c","major":1,"minor":3,"uid":10,"gid":11}] | .process.user={"uid":10,"gid":11} | .process.args=["sh","-c","echo x >/dev/agentrun-null && stat -c %u:%g /dev/agentrun-null"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "10:11"
	# an uid outside the mapping: a clear error
	config_set "$b" '.process.user={"uid":0,"gid":0} | .linux.devices=[{"path":"/dev/agentrun-foo","type":"c","major":1,"minor":3,"uid":70000}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status '!0' ar run --bundle "$b" "$id"
	assert_contains "$ERR" 'linux.devices[0] "/dev/agentrun-foo": uid 70000 is not mapped by linux.uidMappings'
	# nothing of the runtime's tmpfs is left in the host's mount table
	assert_not_contains "$(cat /proc/self/mountinfo)" "agentrun-foo"
}

# linux.resources.pids.limit 0: no limit (crun).
t_pids_zero()
{
	local u=$1 b=$TEST_TMP/pids$1 id
	bundle_for "$u" "$b"
	config_set "$b" '.linux.resources.pids={"limit":0} | .process.args=["true"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
}

# stdio pipes are given to process.user (crun); a host file is not.
t_stdio_owner()
{
	require_root
	local b=$TEST_TMP/stdio id out
	make_bundle "$b"
	config_set "$b" '.process.user={"uid":1000,"gid":1000} | .process.args=["sh","-c","stat -L -c %u:%g /proc/self/fd/1; echo x >/dev/stdout"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	out=$(ar run --bundle "$b" "$id" </dev/null 2>&1 | cat) ||
		fail "run failed: $out"
	assert_eq "$out" "1000:1000
x" "stdout pipe not given to the user"
	id=$(unique_id)
	defer ar delete --force "$id"
	: >"$TEST_TMP/host-file"
	ar run --bundle "$b" "$id" >"$TEST_TMP/host-file" 2>&1 </dev/null || true
	assert_file_owner "$TEST_TMP/host-file" 0:0
}

# exec takes the container's noNewPrivileges (runc); --no-new-privs sets it
t_exec_nnp()
{
	require_root
	local b=$TEST_TMP/nnp id nnp
	make_bundle "$b"
	for nnp in true false; do
		config_set "$b" '.process.noNewPrivileges=($n == "true") | .process.args=["sleep","1000"]' --arg n "$nnp"
		id=$(unique_id)
		defer ar delete --force "$id"
		assert_status 0 ar run --detach --bundle "$b" "$id"
		assert_status 0 ar exec "$id" grep NoNewPrivs /proc/self/status
		assert_match "$OUT" "NoNewPrivs:[[:space:]]+$([ "$nnp" = true ] && echo 1 || echo 0)$"
		assert_status 0 ar exec --no-new-privs "$id" grep NoNewPrivs /proc/self/status
		assert_match "$OUT" "NoNewPrivs:[[:space:]]+1$"
	done
}

run_test "seccomp denying getcwd and others the runtime uses: the program runs" t_seccomp_denies_runtime_calls 0
run_test "rootless: seccomp denying the runtime's calls: the program runs" t_seccomp_denies_runtime_calls 1
run_test "HOME from /etc/passwd, a missing cwd is made" t_home_and_cwd 0
run_test "rootless: HOME from /etc/passwd, a missing cwd is made" t_home_and_cwd 1
run_test "lo is up in a new network namespace" t_lo_up 0
run_test "rootless: lo is up in a new network namespace" t_lo_up 1
run_test "linux.devices: made as root" t_devices 0
run_test "rootless: linux.devices bound nosuid,noexec; missing on the host: an error" t_devices 1
run_test "linux.devices with uid/gid in a user namespace as root (crun's owner-device)" t_owner_device
run_test "pids.limit 0 is accepted" t_pids_zero 0
run_test "rootless: pids.limit 0 is accepted" t_pids_zero 1
run_test "stdio pipes belong to process.user, host files keep their owner" t_stdio_owner
run_test "exec: noNewPrivileges of the container, --no-new-privs" t_exec_nnp
finish
