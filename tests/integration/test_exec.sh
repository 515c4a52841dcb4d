#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun exec` through the real binary: exit status pass-through, env,
# cwd, user, the same namespaces and root as the init process, --process
# FILE, --detach + --pid-file, errors for stopped containers, rootless.
. "$(dirname "$0")/../lib.sh"

# start_sleeper BUNDLE ID: a detached container running sleep
start_sleeper()
{
	config_set "$1" '.process.args=["sleep","1000"] | .root.readonly=false'
	assert_status 0 ar run --detach --bundle "$1" "$2"
}

t_exit_code_and_output()
{
	require_root
	local b=$TEST_TMP/b1 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	assert_status 7 ar exec "$id" sh -c 'echo out; echo err >&2; exit 7'
	assert_eq "$OUT" out
	assert_eq "$ERR" err
	assert_status 0 ar exec "$id" -- true
	# killed by a signal: 128+N
	assert_status 137 ar exec "$id" sh -c 'kill -9 $$'
	# the container keeps running
	assert_eq "$(ar state "$id" | jq -r .status)" running
}

t_env_cwd_user()
{
	require_root
	local b=$TEST_TMP/b2 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	assert_status 0 ar exec --cwd /tmp --env FOO=bar -e PATH=/bin \
		--user 1000:1000 "$id" sh -c 'echo "$FOO $PATH"; pwd; id -u; id -g'
	assert_eq "$OUT" "bar /bin
/tmp
1000
1000"
	# defaults: the config's env, cwd "/", uid 0
	assert_status 0 ar exec "$id" sh -c 'echo "$PATH"; pwd; id -u'
	assert_contains "$OUT" /usr/bin
	assert_contains "$OUT" "/
0"
	# --additional-gids (runc's -g), after the process's own, each once
	assert_status 0 ar exec --user 1000:1000 -g 10 --additional-gids 27 -g 10 "$id" id -G
	assert_eq "$OUT" "1000 10 27"
	config_set "$b" '.process.user.additionalGids=[5]'
	jq '.process | .args=["id","-G"]' "$b/config.json" >"$TEST_TMP/p-gids.json"
	assert_status 0 ar exec -g 6 --process "$TEST_TMP/p-gids.json" "$id"
	assert_eq "$OUT" "0 5 6"
	assert_status 1 ar exec -g x "$id" true
	assert_contains "$ERR" "--additional-gids: \`x\` is not a group id"
	assert_status 1 ar exec -g 4294967295 "$id" true
	# --process-label and --apparmor are accepted; on a host without
	# SELinux or AppArmor they change nothing, as crun (the AppArmor VM
	# test runs an exec under its profile)
	if ! grep -qs Y /sys/module/apparmor/parameters/enabled; then
		assert_status 0 ar exec --apparmor some-profile --process-label system_u:system_r:container_t:s0 "$id" true
	fi
}

# exec into a paused container: refused, or with --ignore-paused (runc)
# the process starts frozen and runs once the container is resumed
t_paused()
{
	require_root
	local b=$TEST_TMP/b-paused id pid rc
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	ar pause "$id" >/dev/null 2>&1 ||
		skip "pause needs a cgroup v2 tree root can write: $(ar pause "$id" 2>&1)"
	assert_status 1 ar exec "$id" true
	assert_contains "$ERR" "container \`$id\` is paused (--ignore-paused: "
	"$AGENTRUN" --root "$AR_ROOT" exec --ignore-paused "$id" sh -c 'echo ran >/ran; exit 3' \
		>"$TEST_TMP/paused.out" 2>&1 &
	pid=$!
	sleep 1
	[ ! -e "$b/rootfs/ran" ] || fail "the exec ran in a paused container"
	kill -0 "$pid" 2>/dev/null || fail "exec --ignore-paused returned while paused: $(cat "$TEST_TMP/paused.out")"
	assert_status 0 ar resume "$id"
	wait_until 10 test -e "$b/rootfs/ran"
	rc=0
	wait "$pid" || rc=$?
	assert_eq "$rc" 3 "the exec's status after the resume"
}

t_same_namespaces_and_root()
{
	require_root
	local b=$TEST_TMP/b3 id pid ns want got
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	pid=$(ar state "$id" | jq -r .pid)
	for ns in mnt pid net ipc uts cgroup user; do
		want=$(readlink "/proc/$pid/ns/$ns")
		assert_status 0 ar exec "$id" readlink "/proc/self/ns/$ns"
		assert_eq "$OUT" "$want" "$ns namespace"
	done
	# pid namespace: the init process is pid 1 there
	assert_status 0 ar exec "$id" sh -c 'cat /proc/1/cmdline | tr "\0" " "'
	assert_contains "$OUT" "sleep 1000"
	# the container's root, not the host's
	touch "$b/rootfs/marker-$id"
	assert_status 0 ar exec "$id" ls /
	assert_contains "$OUT" "marker-$id"
	# the container's cgroup (as seen from inside: same as init's)
	assert_status 0 ar exec "$id" sh -c \
		'[ "$(cat /proc/self/cgroup)" = "$(cat /proc/1/cgroup)" ]'
}

t_caps_nnp_and_seccomp()
{
	require_root
	local b=$TEST_TMP/b4 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	# the config's capabilities (the default spec has no CAP_SYS_ADMIN)
	assert_status 0 ar exec "$id" sh -c 'grep CapBnd /proc/self/status'
	local bnd
	bnd=$(echo ${OUT##*:})
	assert_status 0 ar exec --cap CAP_SYS_ADMIN "$id" \
		sh -c 'grep CapEff /proc/self/status'
	local eff
	eff=$(echo ${OUT##*:})
	# CAP_SYS_ADMIN is bit 21
	[ $((0x$eff & (1 << 21))) -ne 0 ] || fail "--cap not applied: $eff"
	[ $((0x$bnd & (1 << 21))) -eq 0 ] || fail "config caps not applied: $bnd"
	assert_status 0 ar exec --no-new-privs "$id" \
		sh -c 'grep NoNewPrivs /proc/self/status'
	assert_match "$OUT" "NoNewPrivs:[[:space:]]+1"
	# seccomp of the container's config
	assert_status 0 ar exec "$id" sh -c 'grep "^Seccomp:" /proc/self/status'
	local want
	if [ "$(config_get "$b" '.linux.seccomp != null')" = true ]; then
		want=2
	else
		want=0
	fi
	assert_match "$OUT" "Seccomp:[[:space:]]+$want"
}

t_process_file()
{
	require_root
	local b=$TEST_TMP/b5 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	cat >"$TEST_TMP/proc.json" <<-'EOF'
	{"terminal": false, "user": {"uid": 1000, "gid": 1000},
	 "args": ["sh", "-c", "echo $X; pwd; id -u; exit 5"],
	 "env": ["X=fromfile", "PATH=/bin"], "cwd": "/home",
	 "capabilities": {"bounding": [], "effective": [], "permitted": []},
	 "noNewPrivileges": true}
	EOF
	assert_status 5 ar exec --process "$TEST_TMP/proc.json" "$id"
	assert_eq "$OUT" "fromfile
/home
1000"
}

t_detach_pid_file()
{
	require_root
	local b=$TEST_TMP/b6 id pid cpid
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	cpid=$(ar state "$id" | jq -r .pid)
	assert_status 0 ar exec --detach --pid-file "$TEST_TMP/exec.pid" \
		"$id" sleep 321
	pid=$(cat "$TEST_TMP/exec.pid")
	assert_eq "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "sleep 321 "
	assert_eq "$(readlink "/proc/$pid/ns/pid")" \
		"$(readlink "/proc/$cpid/ns/pid")"
	kill -9 "$pid"
}

t_not_running()
{
	require_root
	local b=$TEST_TMP/b7 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status '!0' ar exec nosuch-container true
	assert_contains "$ERR" "does not exist"
	config_set "$b" '.process.args=["true"]'
	assert_status 0 ar run --keep --bundle "$b" "$id"
	assert_status '!0' ar exec "$id" true
	assert_contains "$ERR" "not running"
	assert_contains "$ERR" stopped
	# created, not started
	assert_status 0 ar delete "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status '!0' ar exec "$id" true
	assert_contains "$ERR" "not running (status: created)"
	# unknown command in a running container
	assert_status 0 ar delete --force "$id"
	start_sleeper "$b" "$id"
	assert_status '!0' ar exec "$id" /no/such/binary
	assert_contains "$ERR" "/no/such/binary"
}

t_rootless()
{
	require_root
	require_subids
	require_agentrun_as_test_user
	local b=$TEST_TMP/br id pid
	make_bundle_as_test_user "$b" --rootless
	config_set "$b" '.process.args=["sleep","1000"] | .root.readonly=false'
	id=$(unique_id)
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --detach --bundle "$b" "$id"
	pid=$(ar_user state "$id" | jq -r .pid)
	assert_status 3 ar_user exec "$id" sh -c 'id -u; readlink /proc/self/ns/user; exit 3'
	assert_eq "$OUT" "0
$(readlink "/proc/$pid/ns/user")"
}

t_tty_relay()
{
	require_root
	require_cmd script
	local b=$TEST_TMP/b8 id
	make_bundle "$b"
	id=$(unique_id)
	defer ar delete --force "$id"
	start_sleeper "$b" "$id"
	# foreground --tty: agentrun relays the pty (script gives it one)
	assert_status 9 script -qec "'$AGENTRUN' --root '$AR_ROOT' exec --tty '$id' sh -c 'tty; exit 9'" /dev/null
	assert_contains "$OUT" /dev/pts/
	# --tty --detach without a console socket is refused
	assert_status '!0' ar exec --tty --detach "$id" true
	assert_contains "$ERR" console-socket
}

run_test "exec: exit status and output pass through" t_exit_code_and_output
run_test "exec: --env, --cwd, --user, --additional-gids" t_env_cwd_user
run_test "exec: same namespaces, root and cgroup as init" \
	t_same_namespaces_and_root
run_test "exec: capabilities, --cap, --no-new-privs, seccomp" \
	t_caps_nnp_and_seccomp
run_test "exec: --process FILE" t_process_file
run_test "exec: --detach with --pid-file" t_detach_pid_file
run_test "exec: a paused container, --ignore-paused" t_paused
run_test "exec: errors for missing/stopped/created containers" t_not_running
run_test "exec: --tty relayed in the foreground" t_tty_relay
run_test "exec: rootless" t_rootless
finish
