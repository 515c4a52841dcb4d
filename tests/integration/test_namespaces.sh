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

# crun: a kernel.domainname sysctl that contradicts the domainname field
# is refused (the later write would win); the same value is accepted.
t_domainname_sysctl_conflict()
{
	require_root
	local b=$TEST_TMP/dnsys key
	make_bundle "$b"
	for key in kernel.domainname kernel/domainname; do
		config_set "$b" '.domainname="a.example" | .linux.sysctl={($k):"b.example"}' --arg k "$key"
		run_sh "$b" 'cat /proc/sys/kernel/domainname' 1
		assert_contains "$ERR" "\"$key\" = \"b.example\": conflicts with the domainname field \"a.example\""
		assert_eq "$(ls -A "$AR_ROOT" | grep -vx .seccomp-cache)" ""
	done
	config_set "$b" '.linux.sysctl={"kernel.domainname":"a.example"}'
	run_sh "$b" 'cat /proc/sys/kernel/domainname'
	assert_eq "$OUT" a.example
	config_set "$b" 'del(.domainname) | .linux.sysctl={"kernel.domainname":"b.example"}'
	run_sh "$b" 'cat /proc/sys/kernel/domainname'
	assert_eq "$OUT" b.example
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

# A non-root user's config without a user namespace (crun's own tests
# give one, as a default `crun spec` without --rootless): crun adds the
# user namespace, with a warning, and maps root in it to the caller;
# agentrun does the same (it failed with "clone ... Operation not
# permitted" before: 130 of crun's rootless test runs).
t_rootless_no_userns()
{
	local b=$TEST_TMP/rnouser id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.linux.namespaces |= map(select(.type != "user")) | del(.linux.uidMappings, .linux.gidMappings) | .process.args=["sh","-c","id -u; readlink /proc/self/ns/user; cat /proc/self/uid_map"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_eq "$(sed -n 1p <<<"$OUT")" 0
	assert_ne "$(sed -n 2p <<<"$OUT")" "$(readlink /proc/self/ns/user)"
	assert_contains "$(sed -n 3p <<<"$OUT")" "$TEST_UID"
	assert_contains "$ERR" "user namespace"
}

# nomnt_cycle U MODE: the bundle $b (no mount namespace) as root (U=0) or
# the test user (1), by `run` or by `create` + `start`; the process
# writes /tmp/ran in its root, which has no /proc: the runtime must not
# need one after entering it.
nomnt_cycle()
{
	local u=$1 mode=$2 id
	id=$(unique_id)
	rm -f "$b/rootfs/tmp/ran"
	defer arr "$u" delete --force "$id"
	if [ "$mode" = run ]; then
		assert_status 0 arr "$u" run --bundle "$b" "$id"
	else
		assert_status 0 arr "$u" create --bundle "$b" "$id"
		assert_eq "$(arr "$u" state "$id" | jq -r .status)" created
		[ ! -e "$b/rootfs/tmp/ran" ] || fail "the process ran before start"
		assert_status 0 arr "$u" start "$id"
		wait_until 10 test -e "$b/rootfs/tmp/ran"
		wait_until 10 status_is "$u" "$id" stopped
	fi
	assert_eq "$(cat "$b/rootfs/tmp/ran")" "ran as $3" \
		"the process did not run ($mode): $ERR"
	[ ! -e "$b/rootfs/proc/self" ] || fail "the rootfs has a /proc here"
}

# No mount namespace (runtime-tools linux_ns_itype): chroot, nothing
# mounted, so no /proc in the root; with and without a pid namespace, as
# root and as an unprivileged user (process.user 1000 too).
t_no_mount_ns_lifecycle()
{
	local u=$1 b=$TEST_TMP/nomnt$1 pidns
	bundle_for "$u" "$b"
	chmod 1777 "$b/rootfs/tmp"
	for pidns in with without; do
		config_set "$b" '.linux.namespaces |= map(select(.type != "mount")) | .process.args=["sh","-c","echo ran as $(id -u) >/tmp/ran"] | .process.user={"uid":0,"gid":0}'
		[ "$pidns" = with ] ||
			config_set "$b" '.linux.namespaces |= map(select(.type != "pid"))'
		nomnt_cycle "$u" run 0
		nomnt_cycle "$u" create 0
		if [ "$u" = 1 ]; then
			# uid 1000 mapped to a subordinate id (newuidmap)
			require_cmd newuidmap newgidmap
			config_set "$b" '.linux.uidMappings=[{"containerID":0,"hostID":$u,"size":1},{"containerID":1,"hostID":$su,"size":1000}] | .linux.gidMappings=[{"containerID":0,"hostID":$g,"size":1},{"containerID":1,"hostID":$sg,"size":1000}]' \
				--argjson u "$TEST_UID" --argjson g "$TEST_GID" \
				--argjson su "$(grep "^$TEST_USER:" /etc/subuid | head -n1 | cut -d: -f2)" \
				--argjson sg "$(grep "^$TEST_USER:" /etc/subgid | head -n1 | cut -d: -f2)"
		fi
		config_set "$b" '.process.user={"uid":999,"gid":999}'
		nomnt_cycle "$u" create 999
	done
}

# Without a mount namespace, create + start keep their guarantees: the
# container's program holds no fd of the runtime (the exec fifo, /proc),
# and an error of the container process after start (a failing
# startContainer hook) is what start reports.
t_no_mount_ns_start_contract()
{
	require_root
	local b=$TEST_TMP/nomntc id pid fds
	make_bundle "$b"
	config_set "$b" '.linux.namespaces |= map(select(.type != "mount")) | .process.args=["sleep","30"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status 0 ar start "$id"
	pid=$(ar state "$id" | jq .pid)
	wait_until 5 sh -c 'test "$(readlink /proc/$1/exe)" = "$2"' - "$pid" "$b/rootfs/bin/busybox"
	fds=$(ls /proc/"$pid"/fd | sort -n | tr '\n' ' ')
	assert_eq "$fds" "0 1 2 " "fds of the container's program: $(ls -l /proc/$pid/fd)"
	assert_status 0 ar delete --force "$id"
	# a startContainer hook that fails, in the container's root
	config_set "$b" '.hooks.startContainer=[{"path":"/bin/false"}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status '!0' ar start "$id"
	assert_contains "$ERR" "startContainer"
}

# A mount namespace of its own without a /proc mount: create + start
# (the exec fifo is not reopened through the container's /proc).
t_no_proc_mount()
{
	local u=$1 b=$TEST_TMP/noproc$1
	bundle_for "$u" "$b"
	chmod 1777 "$b/rootfs/tmp"
	config_set "$b" '.mounts |= map(select(.type != "proc" and .destination != "/tmp")) | .linux.maskedPaths=[] | .linux.readonlyPaths=[] | .root.readonly=false | .process.args=["sh","-c","echo ran as $(id -u) >/tmp/ran"]'
	nomnt_cycle "$u" create 0
}

# A user namespace without a mount namespace, started by root.
t_userns_no_mount_ns()
{
	require_root
	local b=$TEST_TMP/unomnt
	make_bundle "$b"
	chmod 1777 "$b/rootfs/tmp"
	config_set "$b" '.linux.namespaces |= map(select(.type != "mount")) + [{"type":"user"}] | .linux.uidMappings=[{"containerID":0,"hostID":0,"size":65536}] | .linux.gidMappings=[{"containerID":0,"hostID":0,"size":65536}] | .process.args=["sh","-c","echo ran as $(id -u) >/tmp/ran"]'
	nomnt_cycle 0 run 0
	nomnt_cycle 0 create 0
}

# The mount namespace joined by path (runtime-tools linux_ns_path#2):
# another process's, not the runtime's own: chroot there.
t_join_mount_ns_by_path()
{
	require_root
	require_cmd unshare
	local b=$TEST_TMP/jmnt holder
	make_bundle "$b"
	chmod 1777 "$b/rootfs/tmp"
	unshare --mount --propagation private sleep 60 &
	holder=$!
	defer kill "$holder"
	# the holder's namespace read anew each try (a "$(...)" argument of
	# wait_until is expanded once: CI's run read the holder before its
	# unshare and waited 5 s for a comparison that could not change)
	wait_until 10 sh -c 'test "$(readlink /proc/$1/ns/mnt)" != "$(readlink /proc/$$/ns/mnt)"' - "$holder"
	config_set "$b" '.linux.namespaces |= map(if .type == "mount" then .path = $m else . end) | .process.args=["sh","-c","echo ran as $(id -u) >/tmp/ran"]' \
		--arg m "/proc/$holder/ns/mnt"
	nomnt_cycle 0 run 0
	nomnt_cycle 0 create 0
}

run_test "new namespaces, hostname, domainname" t_new_namespaces
run_test "hostname without a UTS namespace is an error" t_hostname_needs_uts
run_test "a kernel.domainname sysctl contradicting domainname is refused" t_domainname_sysctl_conflict
run_test "join uts/net/ipc namespaces by path" t_join_by_path
run_test "join a pid namespace by path" t_join_pid_ns
run_test "a namespace path that does not exist" t_join_bad_path
run_test "time namespace with offsets" t_time_namespace
run_test "rootless: new namespaces and hostname" t_rootless_namespaces
run_test "rootless: a config without a user namespace gets one (as crun)" t_rootless_no_userns
run_test "no mount namespace: run and create+start" t_no_mount_ns_lifecycle 0
run_test "rootless: no mount namespace: run and create+start" t_no_mount_ns_lifecycle 1
run_test "no mount namespace: create+start leak no fd, report errors" t_no_mount_ns_start_contract
run_test "no /proc mount: create+start" t_no_proc_mount 0
run_test "rootless: no /proc mount: create+start" t_no_proc_mount 1
run_test "user namespace without a mount namespace, as root" t_userns_no_mount_ns
run_test "the mount namespace joined by path: run and create+start" t_join_mount_ns_by_path
finish
