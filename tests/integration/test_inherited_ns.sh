#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A namespace the config does not create (left out of linux.namespaces: the
# runtime's own; or joined by a path that is the runtime's own) is never
# changed: no pivot_root, remount, unmount or new mount in an inherited
# mount namespace, no hostname in an inherited UTS namespace, no sysctl and
# no `lo` in an inherited network or IPC namespace; linux.sysctl keys that
# are not namespaced at all are refused before anything is written.
#
# Every runtime call here runs inside a throwaway mount, UTS, IPC and
# network namespace (unshare --propagation private): that one plays "the
# caller's namespaces", is compared before and after, and a runtime that
# does change it cannot reach the host's. The host's mount table is
# compared too.
. "$(dirname "$0")/../lib.sh"

# scratch OUTDIR CMD...: CMD in fresh namespaces of its own; OUTDIR gets
# before.* and after.* snapshots of them, stdout, stderr and status.
scratch()
{
	local out=$1
	shift
	mkdir -p "$out"
	cat >"$TEST_TMP/scratch.sh" <<'EOF'
#!/bin/bash
out=$1
shift
snap()
{
	cat /proc/self/mountinfo >"$out/$1.mounts"
	{
		hostname
		cat /proc/sys/kernel/domainname
		for k in net/ipv4/ping_group_range fs/mqueue/queues_max \
			kernel/msgmax kernel/shmmni; do
			echo "$k=$(cat /proc/sys/$k)"
		done
		ip -o link show lo | grep -o '<[^>]*>'
	} >"$out/$1.settings"
}
snap before
"$@" >"$out/stdout" 2>"$out/stderr" </dev/null
echo $? >"$out/status"
snap after
EOF
	chmod 0755 "$TEST_TMP/scratch.sh"
	command -v unshare >/dev/null || skip "needs unshare (util-linux)"
	unshare --mount --propagation private --uts --ipc --net \
		"$TEST_TMP/scratch.sh" "$out" "$@" ||
		fail "unshare failed: the runtime is not run outside a throwaway namespace"
	OUT=$(cat "$out/stdout" 2>/dev/null || true)
	ERR=$(cat "$out/stderr" 2>/dev/null || true)
	STATUS=$(cat "$out/status" 2>/dev/null || echo missing)
}

# scratch_unchanged OUTDIR: the throwaway namespaces are as before.
scratch_unchanged()
{
	local out=$1
	[ -s "$out/after.mounts" ] ||
		fail "the caller's mount namespace lost /proc or /tmp (pivoted?); stderr: $ERR"
	diff "$out/before.mounts" "$out/after.mounts" >&2 ||
		fail "the caller's mount table changed"
	diff "$out/before.settings" "$out/after.settings" >&2 ||
		fail "the caller's hostname, sysctls or lo changed"
}

# agentrun as root (0) or as the test user (1), for scratch
ar_cmd()
{
	if [ "$1" = 1 ]; then
		if [ ! -d "$AR_USER_ROOT" ]; then
			mkdir -p "$AR_USER_ROOT"
			chown "$TEST_UID:$TEST_GID" "$AR_USER_ROOT"
			chmod 0700 "$AR_USER_ROOT"
		fi
		AR_CMD=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups
			env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$TEST_HOME"
			XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR"
			${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"}
			${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"}
			"$AGENTRUN" --root "$AR_USER_ROOT")
	else
		AR_CMD=("$AGENTRUN" --root "$AR_ROOT")
	fi
}

t_no_mount_ns()
{
	local u=$1 b=$TEST_TMP/nomnt$1 id before
	bundle_for "$u" "$b"
	ar_cmd "$u"
	id=$(unique_id)
	echo marker >"$b/rootfs/marker-$id"
	config_set "$b" '.linux.namespaces |= map(select(.type != "mount")) | .process.args=["sh","-c","cat /marker-*; echo ran"] | .root.readonly=true'
	defer arr "$u" delete --force "$id"
	before=$(host_mounts)
	scratch "$TEST_TMP/o-nomnt$u" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_eq "$STATUS" 0 "run failed: $ERR"
	assert_eq "$OUT" "marker
ran" "the process does not see the root filesystem"
	assert_contains "$ERR" "no mount namespace" "no warning about what was not applied"
	scratch_unchanged "$TEST_TMP/o-nomnt$u"
	assert_eq "$(host_mounts)" "$before" "the host's mount table changed"
}

t_joined_own_mount_ns()
{
	require_root
	local b=$TEST_TMP/ownmnt id
	make_bundle "$b"
	ar_cmd 0
	id=$(unique_id)
	config_set "$b" '.linux.namespaces |= map(if .type == "mount" then .path = "/proc/self/ns/mnt" else . end) | .process.args=["true"]'
	defer ar delete --force "$id"
	scratch "$TEST_TMP/o-ownmnt" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_eq "$STATUS" 0 "run failed: $ERR"
	scratch_unchanged "$TEST_TMP/o-ownmnt"
}

t_no_uts_ns()
{
	local u=$1 b=$TEST_TMP/nouts$1 id
	bundle_for "$u" "$b"
	ar_cmd "$u"
	id=$(unique_id)
	# the runtime's own UTS namespace, named by path
	config_set "$b" '.hostname="changed-by-agentrun" | .domainname="changed.example" | .linux.namespaces |= map(select(.type != "uts")) + [{"type":"uts","path":"/proc/self/ns/uts"}] | .process.args=["true"]'
	defer arr "$u" delete --force "$id"
	scratch "$TEST_TMP/o-uts$u" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_ne "$STATUS" 0 "the runtime's own UTS namespace took a hostname"
	assert_contains "$ERR" "hostname"
	scratch_unchanged "$TEST_TMP/o-uts$u"
	# left out entirely
	config_set "$b" '.linux.namespaces |= map(select(.type != "uts"))'
	scratch "$TEST_TMP/o-uts2$u" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_ne "$STATUS" 0
	assert_contains "$ERR" "UTS namespace"
	scratch_unchanged "$TEST_TMP/o-uts2$u"
}

# sysctl KEY VALUE NSTYPE: a bundle without NSTYPE (or with the runtime's
# own, by path) and linux.sysctl KEY=VALUE is refused, naming the key.
t_sysctl_inherited()
{
	local u=$1 key=$2 val=$3 ns=$4 b=$TEST_TMP/sys$1$4 id
	bundle_for "$u" "$b"
	ar_cmd "$u"
	id=$(unique_id)
	config_set "$b" 'del(.hostname) | .linux.sysctl={($k):$v} | .linux.namespaces |= map(select(.type != $ns)) | .process.args=["true"]' \
		--arg k "$key" --arg v "$val" --arg ns "$ns"
	defer arr "$u" delete --force "$id"
	scratch "$TEST_TMP/o-sys$u$ns" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_ne "$STATUS" 0 "linux.sysctl $key accepted without a $ns namespace"
	assert_contains "$ERR" "$key"
	assert_contains "$ERR" "$ns namespace"
	scratch_unchanged "$TEST_TMP/o-sys$u$ns"
	# the runtime's own namespace, joined by path
	config_set "$b" '.linux.namespaces += [{"type":$ns,"path":("/proc/self/ns/" + $f)}]' \
		--arg ns "$ns" --arg f "$([ "$ns" = network ] && echo net || echo "$ns")"
	scratch "$TEST_TMP/o-sysp$u$ns" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_ne "$STATUS" 0 "linux.sysctl $key accepted in the runtime's own $ns namespace"
	assert_contains "$ERR" "$key"
	scratch_unchanged "$TEST_TMP/o-sysp$u$ns"
}

# Keys that are not namespaced: refused whatever the namespaces. /proc is
# left out of the container so that a runtime without the check cannot
# write the host's value either.
t_sysctl_not_namespaced()
{
	local u=$1 b=$TEST_TMP/sysnn$1 id key
	bundle_for "$u" "$b"
	ar_cmd "$u"
	for key in kernel.core_pattern vm.overcommit_memory kernel/core_pattern \
		kernel.hostname net/../kernel/core_pattern; do
		id=$(unique_id)
		config_set "$b" '.linux.sysctl={($k):"x"} | .mounts |= map(select(.type != "proc")) | .process.args=["true"]' \
			--arg k "$key"
		defer arr "$u" delete --force "$id"
		scratch "$TEST_TMP/o-nn$u" "${AR_CMD[@]}" run --bundle "$b" "$id"
		assert_ne "$STATUS" 0 "linux.sysctl $key accepted"
		assert_contains "$ERR" "\"$key\""
		assert_match "$ERR" "not namespaced|conflicts with|invalid sysctl key" "$key: $ERR"
	done
	# create refuses it the same way, leaving nothing behind
	id=$(unique_id)
	config_set "$b" '.linux.sysctl={"kernel.core_pattern":"x"}'
	defer arr "$u" delete --force "$id"
	scratch "$TEST_TMP/o-nnc$u" "${AR_CMD[@]}" create --bundle "$b" "$id"
	assert_ne "$STATUS" 0 "create accepted kernel.core_pattern"
	assert_contains "$ERR" '"kernel.core_pattern": not namespaced'
	assert_status '!0' arr "$u" state "$id"
}

# Namespaced keys in namespaces the config creates: applied inside, the
# caller's values unchanged.
t_sysctl_created()
{
	local u=$1 b=$TEST_TMP/sysok$1 id
	bundle_for "$u" "$b"
	ar_cmd "$u"
	id=$(unique_id)
	config_set "$b" '.linux.sysctl={"net.ipv4.ping_group_range":"0 0","kernel.shmmni":"1234","fs.mqueue.queues_max":"77","kernel.domainname":"in.example"} | .process.args=["sh","-c","cat /proc/sys/net/ipv4/ping_group_range /proc/sys/kernel/shmmni /proc/sys/fs/mqueue/queues_max /proc/sys/kernel/domainname"]'
	if [ "$u" = 1 ]; then
		# only net sysctls belong to the user namespace that owns
		# their namespace; the others stay the host root's files
		config_set "$b" '.linux.sysctl={"net.ipv4.ping_group_range":"0 0"} | .process.args=["sh","-c","cat /proc/sys/net/ipv4/ping_group_range"]'
	fi
	defer arr "$u" delete --force "$id"
	scratch "$TEST_TMP/o-ok$u" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_eq "$STATUS" 0 "run failed: $ERR"
	if [ "$u" = 1 ]; then
		assert_eq "$(echo $OUT)" "0 0"
	else
		assert_eq "$(echo $OUT)" "0 0 1234 77 in.example"
	fi
	scratch_unchanged "$TEST_TMP/o-ok$u"
}

t_no_net_ns_lo()
{
	require_root
	local b=$TEST_TMP/nonet id
	make_bundle "$b"
	ar_cmd 0
	id=$(unique_id)
	config_set "$b" '.annotations["run.agentrun.net.loopback"]="up" | .linux.namespaces |= map(select(.type != "network")) | .process.args=["true"]'
	defer ar delete --force "$id"
	scratch "$TEST_TMP/o-lo" "${AR_CMD[@]}" run --bundle "$b" "$id"
	assert_eq "$STATUS" 0 "run failed: $ERR"
	assert_not_contains "$(cat "$TEST_TMP/o-lo/before.settings")" "UP"
	scratch_unchanged "$TEST_TMP/o-lo"
}

run_test "no mount namespace: chroot, the caller's mount table unchanged" t_no_mount_ns 0
run_test "rootless: no mount namespace: chroot, mount table unchanged" t_no_mount_ns 1
run_test "the runtime's own mount namespace by path: not pivoted" t_joined_own_mount_ns
run_test "hostname in the runtime's own UTS namespace is refused" t_no_uts_ns 0
run_test "rootless: hostname in the runtime's own UTS namespace is refused" t_no_uts_ns 1
run_test "net sysctl without a network namespace is refused" t_sysctl_inherited 0 net.ipv4.ping_group_range "0 0" network
run_test "rootless: net sysctl without a network namespace is refused" t_sysctl_inherited 1 net.ipv4.ping_group_range "0 0" network
run_test "ipc sysctl without an ipc namespace is refused" t_sysctl_inherited 0 kernel.msgmax 4242 ipc
run_test "mqueue sysctl without an ipc namespace is refused" t_sysctl_inherited 0 fs.mqueue.queues_max 77 ipc
run_test "uts sysctl without a uts namespace is refused" t_sysctl_inherited 0 kernel.domainname x.example uts
run_test "sysctls that are not namespaced are refused" t_sysctl_not_namespaced 0
run_test "rootless: sysctls that are not namespaced are refused" t_sysctl_not_namespaced 1
run_test "namespaced sysctls apply in namespaces the config creates" t_sysctl_created 0
run_test "rootless: namespaced sysctls apply in created namespaces" t_sysctl_created 1
run_test "no network namespace: lo of the caller untouched" t_no_net_ns_lo
finish
