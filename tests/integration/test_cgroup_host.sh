#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# cgroup v2 without controllers, on this host as it is (a hybrid host's
# /sys/fs/cgroup/unified usually has none): as root the container still
# gets a cgroup there, so pause/resume, ps, kill --all and delete work
# through cgroup.freeze, cgroup.procs and cgroup.kill, and
# linux.resources.devices is enforced by an eBPF device program. Only the
# v2 tree is written (a child per container, removed by delete); the v1
# hierarchies are never touched. The same on a pure v2 hierarchy with
# controllers runs in the VM (test_cgroup_vm*.sh).
. "$(dirname "$0")/../lib.sh"

# the v2 mount agentrun uses (cgroup.c: ar_cgroup_mount)
v2_mount()
{
	local m
	for m in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		if [ "$(stat -f -c %T "$m" 2>/dev/null)" = cgroup2fs ]; then
			echo "$m"
			return 0
		fi
	done
	return 1
}

# sets M to the v2 mount; skips unless root can write there
require_v2_writable()
{
	require_root
	M=$(v2_mount) || skip "no cgroup2 file system mounted"
	[ -w "$M/cgroup.procs" ] ||
		skip "the cgroup v2 tree at $M is not writable"
}

t_cgroup_without_controllers()
{
	local m b=$TEST_TMP/b1 id cg pid
	require_v2_writable
	m=$M
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","100"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	cg=$(jq -r .agentrun.cgroupPath "$AR_ROOT/$id/state.json")
	echo "cgroup: $cg (controllers: $(cat "$m/cgroup.controllers"))"
	case $cg in
	"$m"/*) ;;
	*) fail "no cgroup under $m: '$cg'" ;;
	esac
	[ -d "$cg" ] || fail "$cg does not exist"
	pid=$(ar state "$id" | jq -r .pid)
	assert_contains "$(cat "$cg/cgroup.procs")" "$pid"
	assert_status 0 ar ps "$id"
	assert_contains "$OUT" "$pid"
	assert_status 0 ar pause "$id"
	assert_eq "$(ar state "$id" | jq -r .status)" paused
	assert_contains "$(cat "$cg/cgroup.events")" "frozen 1"
	assert_status 0 ar resume "$id"
	assert_eq "$(ar state "$id" | jq -r .status)" running
	assert_status 0 ar kill --all "$id" KILL
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q stopped"
	assert_status 0 ar delete "$id"
	[ ! -e "$cg" ] || fail "delete left $cg"
}

# /dev/fuse bound in by `mounts` (no linux.devices entry): the deny-all
# rule of the default spec refuses to open it; an allow rule opens it.
t_device_rules_enforced()
{
	require_v2_writable
	[ -c /dev/fuse ] || skip "no /dev/fuse on this host"
	local b=$TEST_TMP/b2 id
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c",
	    "(exec 3<>/dev/fuseb) 2>/dev/null && echo opened || echo denied; echo x >/dev/null && echo null-ok"]
	  | .mounts += [{destination: "/dev/fuseb", type: "bind",
	                 source: "/dev/fuse", options: ["bind"]}]
	  | .linux.resources.devices = [{allow: false, access: "rwm"}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "denied
null-ok"
	config_set "$b" '.linux.resources.devices +=
	    [{allow: true, type: "c", major: 10, minor: 229, access: "rw"}]'
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "opened
null-ok"
	# a later rule wins: denying write again
	config_set "$b" '.linux.resources.devices +=
	    [{allow: false, type: "c", major: 10, minor: 229, access: "w"}]'
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "denied
null-ok"
	# linux.devices entries are allowed (runc does the same)
	config_set "$b" '.linux.resources.devices = [{allow: false, access: "rwm"}]
	  | .linux.devices = [{path: "/dev/fuse", type: "c", major: 10, minor: 229}]
	  | .process.args=["sh","-c","(exec 3<>/dev/fuse) && echo opened"]'
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" opened
}

# A malformed rule is an error naming it, not silence.
t_device_rule_errors()
{
	require_v2_writable
	local b=$TEST_TMP/b3 id
	make_bundle "$b"
	config_set "$b" '.process.args=["true"]
	  | .linux.resources.devices = [{allow: true, type: "c", major: 1, minor: 3, access: "rwx"}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 1 ar run --bundle "$b" "$id"
	assert_contains "$ERR" "linux.resources.devices[0]"
	assert_status 1 ar state "$id"
}

# The container process and exec's process are born in the cgroup
# (clone3 CLONE_INTO_CGROUP, as crun), not moved in by a write to
# cgroup.procs: a move takes cgroup_threadgroup_rwsem for writing, which
# waits for an RCU grace period (~7 ms of a root `run`) and stalls every
# fork and exit of the machine meanwhile.
t_born_in_cgroup()
{
	require_v2_writable
	require_cmd strace
	local b=$TEST_TMP/b4 id cg
	make_bundle "$b"
	# (strace follows every process: nothing may outlive the command)
	config_set "$b" '.process.args=["cat","/proc/self/cgroup"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	# (LeakSanitizer cannot run under ptrace: the sanitizer build of CI)
	local -x ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
	strace -f -o "$TEST_TMP/run.st" -e trace=clone3,openat,openat2 \
		"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id" \
		</dev/null >"$TEST_TMP/run.out" 2>&1 || fail "run under strace failed: $(cat "$TEST_TMP/run.out")"
	grep -q 'clone3(.*CLONE_INTO_CGROUP' "$TEST_TMP/run.st" ||
		fail "run: no clone3 with CLONE_INTO_CGROUP: $(grep clone3 "$TEST_TMP/run.st")"
	! grep -E '"cgroup.procs", O_WRONLY' "$TEST_TMP/run.st" ||
		fail "run: the container process was moved in through cgroup.procs"
	# its own cgroup namespace's root: its cgroup
	assert_eq "$(grep '^0::' "$TEST_TMP/run.out")" "0::/"
	config_set "$b" '.process.args=["sleep","100"]'
	assert_status 0 ar run -d --bundle "$b" "$id"
	cg=$(jq -r .agentrun.cgroupPath "$AR_ROOT/$id/state.json")
	[ -d "$cg" ] || fail "no cgroup: '$cg'"
	strace -f -o "$TEST_TMP/exec.st" -e trace=clone3,openat,openat2 \
		"$AGENTRUN" --root "$AR_ROOT" exec "$id" sh -c 'echo $$' \
		</dev/null >"$TEST_TMP/exec.out" 2>&1 || fail "exec under strace failed: $(cat "$TEST_TMP/exec.out")"
	grep -q 'clone3(.*CLONE_INTO_CGROUP' "$TEST_TMP/exec.st" ||
		fail "exec: no clone3 with CLONE_INTO_CGROUP"
	! grep -E '"cgroup.procs", O_WRONLY' "$TEST_TMP/exec.st" ||
		fail "exec: the process was moved in through cgroup.procs"
	# and exec still lands in the container's cgroup
	assert_status 0 ar exec "$id" cat /proc/self/cgroup
	assert_eq "$(grep '^0::' <<<"$OUT")" "0::/"
	assert_contains "$(cat "$cg/cgroup.procs")" "$(ar state "$id" | jq -r .pid)"
}

# The parent of the default layout (/agentrun/<id>, root) goes with its
# last container, race-safe: a run that starts meanwhile keeps it or makes
# it again. In a cgroup namespace of its own (tests/bench/in-cgroup-ns.sh:
# a fresh child of the v2 tree, removed afterwards), so that other
# containers of the host do not share the parent.
t_default_parent_removed()
{
	local b=$TEST_TMP/par
	require_v2_writable
	make_bundle "$b"
	config_set "$b" '.process.args=["true"]'
	cp -a "$b" "$b-sleep"
	config_set "$b-sleep" '.process.args=["sleep","60"]'
	cat >"$TEST_TMP/parent.sh" <<EOF
set -u
A() { "$AGENTRUN" --root "$AR_ROOT" "\$@"; }
P=/sys/fs/cgroup/agentrun
left() { [ ! -e \$P ] || { echo "left behind: \$P: \$(ls \$P)"; exit 1; }; }
A run --bundle "$b" par-1 || exit 1
left
A run -d --bundle "$b-sleep" par-2 || exit 1
A run --bundle "$b" par-3 || exit 1
[ -d \$P/par-2 ] || { echo "the running container's cgroup went"; exit 1; }
A delete --force par-2 || exit 1
left
# two loops of runs in parallel: each one's parent removal races the
# other's creation
loop() { for i in \$(seq \$2); do A run --bundle "$b" "par-\$1-\$i" || { echo "run \$1-\$i failed"; return 1; }; done; }
loop x 12 & x=\$!
loop y 12 & y=\$!
wait \$x || exit 1
wait \$y || exit 1
left
# the removal of another runtime's delete, as often as it can: every run
# must still find (or make) its parent
python3 -c '
import os, sys
while not os.path.exists(sys.argv[2]):
    try:
        os.rmdir(sys.argv[1])
    except OSError:
        pass' \$P "$TEST_TMP/stop-racer" &
r=\$!
loop z 50; rc=\$?
touch "$TEST_TMP/stop-racer"
wait \$r
[ \$rc = 0 ] || exit 1
left
echo all-good
EOF
	assert_status 0 "$TOP_SRCDIR/tests/bench/in-cgroup-ns.sh" bash "$TEST_TMP/parent.sh"
	assert_contains "$OUT" all-good
}

# exec --cgroup SUB (runc, crun): the process is born in an existing
# sub-cgroup of the container's; a missing one, "..", a v1
# controller:path, and a container without a cgroup are errors.
t_exec_sub_cgroup()
{
	local b=$TEST_TMP/ecg id cg
	require_v2_writable
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","60"] | .linux.namespaces |= map(select(.type != "cgroup"))'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	cg=$(jq -r .agentrun.cgroupPath "$AR_ROOT/$id/state.json")
	mkdir -p "$cg/sub/deeper"
	assert_status 0 ar exec --cgroup sub/deeper "$id" cat /proc/self/cgroup
	assert_eq "$(grep '^0::' <<<"$OUT")" "0::${cg#"$M"}/sub/deeper"
	assert_status 0 ar exec --cgroup /sub "$id" cat /proc/self/cgroup
	assert_eq "$(grep '^0::' <<<"$OUT")" "0::${cg#"$M"}/sub"
	# -d: it stays there
	assert_status 0 ar exec -d --cgroup sub "$id" sleep 30
	assert_match "$(cat "$cg/sub/cgroup.procs")" '^[0-9]+$'
	# without --cgroup: the container's own
	assert_status 0 ar exec "$id" cat /proc/self/cgroup
	assert_eq "$(grep '^0::' <<<"$OUT")" "0::${cg#"$M"}"
	assert_status 1 ar exec --cgroup nosuch "$id" true
	assert_contains "$ERR" "exec --cgroup \`nosuch\`"
	assert_contains "$ERR" "No such file or directory"
	assert_status 1 ar exec --cgroup sub/../.. "$id" true
	assert_contains "$ERR" "invalid cgroup path"
	assert_status 1 ar exec --cgroup memory:sub "$id" true
	assert_contains "$ERR" "cgroup v1"
	# a container without a cgroup
	local id2
	id2=$(unique_id)
	defer ar delete --force "$id2"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" --cgroup-manager=disabled run -d --bundle "$b" "$id2"
	assert_status 1 ar exec --cgroup sub "$id2" true
	assert_contains "$ERR" "has no cgroup of its own"
}

run_test "cgroup v2: exec --cgroup SUB runs in the sub-cgroup" t_exec_sub_cgroup
run_test "cgroup v2: the empty default parent /agentrun is removed" \
	t_default_parent_removed
run_test "cgroup v2: run's and exec's processes are born in the cgroup (CLONE_INTO_CGROUP)" \
	t_born_in_cgroup
run_test "cgroup v2 without controllers: a cgroup; pause, ps, kill --all, delete" \
	t_cgroup_without_controllers
run_test "cgroup v2: linux.resources.devices enforced (eBPF)" \
	t_device_rules_enforced
run_test "cgroup v2: a malformed device rule is an error" t_device_rule_errors
finish
