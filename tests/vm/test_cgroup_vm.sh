#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# cgroup v2 limits and commands, end to end through the agentrun binary.
# Runs INSIDE tests/vm/run-in-vm (pure cgroup v2, every controller),
# as root or as an unprivileged user with a delegated subtree
# (run-in-vm --user 1000); tests/integration/test_cgroup_vm.sh starts it.
# Elsewhere the whole file is skipped.
. "$(dirname "$0")/../lib.sh"

[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
	skip "/sys/fs/cgroup is not a pure cgroup v2 mount (run tests/integration/test_cgroup_vm.sh)"
[ "$(id -u)" = 0 ] || [ -w "$(dirname "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)")/cgroup.subtree_control" ] ||
	skip "rootless without a delegated cgroup subtree"

if [ "$(id -u)" = 0 ]; then
	WHO=root
	RL=
else
	WHO=rootless
	RL=--rootless
fi

# VM_TESTS=REGEX runs only the matching test functions (for debugging).
vm_test()
{
	if [ -n "${VM_TESTS:-}" ] && ! [[ $2 =~ $VM_TESTS ]]; then
		return 0
	fi
	run_test "$@"
}

# One rootfs and config for all tests: under TCG every exec costs ~0.3 s
# (jq ~1.5 s) and copying a busybox rootfs (400 symlinks) minutes.  The
# host-side wrapper builds the rootfs cache and passes its directory as
# VM_ROOTFS_CACHE; the containers use it in place (they write only to
# bind mounts and tmpfs).
TMPL=$TEST_TMP/template
if [ -n "${VM_ROOTFS_CACHE:-}" ] && [ -x "$VM_ROOTFS_CACHE/rootfs-cache/bin/busybox" ]; then
	ROOTFS=$VM_ROOTFS_CACHE/rootfs-cache
	mkdir -p "$TMPL"
	"$AGENTRUN" spec $RL --bundle "$TMPL" >/dev/null || {
		echo "Bail out! agentrun spec failed"
		exit 1
	}
else
	ROOTFS=$TMPL/rootfs
	make_bundle "$TMPL" $RL >/dev/null 2>&1 || {
		echo "Bail out! cannot make the template bundle"
		exit 1
	}
fi

# new_bundle DIR ARGS_JSON [JQ_FILTER]: a bundle running ARGS on the shared
# rootfs, config edited by JQ_FILTER (one jq run: jq is slow under TCG).
new_bundle()
{
	local b=$1 args=$2 filter=${3:-.}
	mkdir -p "$b"
	jq --argjson a "$args" --arg r "$ROOTFS" \
		".root.path=\$r | .process.terminal=false | .process.args=\$a | $filter" \
		"$TMPL/config.json" >"$b/config.json" ||
		fail "new_bundle: jq '$filter' failed"
}

is_stopped()
{
	"$AGENTRUN" --root "$AR_ROOT" state "$1" | grep -q '"status":"stopped"'
}

# read_counter FILE: a number written by `echo N > FILE` (retry the moment
# between truncate and write)
read_counter()
{
	local v= i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		v=$(<"$1")
		[ -n "$v" ] && break
	done
	echo "${v:-0}"
}

# cg ID: the container's cgroup directory from state.json
cg()
{
	sed -n 's/.*"cgroupPath":"\([^"]*\)".*/\1/p' "$AR_ROOT/$1/state.json"
}

cgval()
{
	head -n1 "$(cg "$1")/$2"
}

ctr_pid()
{
	"$AGENTRUN" --root "$AR_ROOT" state "$1" | sed -n 's/.*"pid":\([0-9]*\).*/\1/p'
}

# post_mortem ID: what became of a detached container, in the test's log
# (shown when the test fails): its state, the recorded pid and start time
# against /proc's, its cgroup's events (an OOM or pids kill counts there).
# Registered after `defer ar delete`, it runs before it.
post_mortem()
{
	local id=$1 p pid
	echo "post-mortem of $id at uptime $(cut -d' ' -f1 /proc/uptime)"
	echo "  state: $("$AGENTRUN" --root "$AR_ROOT" state "$id" 2>&1 | tr -d '\n')"
	echo "  recorded: $(grep -o '"agentrun":{"pid":[0-9]*,"pidStart":[0-9]*' "$AR_ROOT/$id/state.json")"
	pid=$(sed -n 's/.*"agentrun":{"pid":\([0-9]*\).*/\1/p' "$AR_ROOT/$id/state.json")
	echo "  /proc/$pid/stat: $(cat "/proc/$pid/stat" 2>&1)"
	p=$(cg "$id")
	for f in cgroup.procs cgroup.events memory.events pids.events; do
		[ -r "$p/$f" ] && echo "  $f: $(tr '\n' ' ' <"$p/$f")"
	done
	return 0
}

t_limits_applied()
{
	local b=$TEST_TMP/b-lim id p c
	id=$(unique_id)
	new_bundle "$b" '["sleep","100"]' \
		'.linux.resources={"memory":{"limit":67108864,"reservation":33554432},"pids":{"limit":20},"cpu":{"shares":2048,"quota":50000,"period":100000},"unified":{"memory.oom.group":"1"}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	p=$(cg "$id")
	[ -n "$p" ] || fail "state.json has no cgroupPath"
	[ -d "$p" ] || fail "cgroup $p does not exist"
	case $WHO in
	root) assert_eq "$p" "/sys/fs/cgroup/agentrun/$id" ;;
	*) assert_match "$p" "/user@[0-9]+\\.service/agentrun-$id\$" ;;
	esac
	c=$(ctr_pid "$id")
	assert_eq "$(sed -n 's/^0:://p' "/proc/$c/cgroup")" "${p#/sys/fs/cgroup}" "container process in its cgroup"
	assert_eq "$(cgval "$id" memory.max)" 67108864
	assert_eq "$(cgval "$id" memory.low)" 33554432
	assert_eq "$(cgval "$id" pids.max)" 20
	assert_eq "$(cgval "$id" cpu.max)" "50000 100000"
	assert_eq "$(cgval "$id" cpu.weight)" 79
	assert_eq "$(cgval "$id" memory.oom.group)" 1
}
vm_test "[$WHO] linux.resources land in the container's cgroup" t_limits_applied

t_oom()
{
	local b=$TEST_TMP/b-oom id ev
	id=$(unique_id)
	new_bundle "$b" '["sh","-c","sleep 2; dd if=/dev/zero of=/dev/null bs=100M count=1; echo dd=$?; sleep 100"]' \
		'.linux.resources={"memory":{"limit":33554432,"swap":33554432}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	ev=$TEST_TMP/events-$id
	ar events --interval 1s "$id" >"$ev" 2>&1 &
	defer kill $!
	wait_until 20 grep -q '"type":"oom"' "$ev"
	assert_match "$(grep '"type":"oom"' "$ev" | head -n1)" "^\\{\"type\":\"oom\",\"id\":\"$id\"\\}\$"
	assert_match "$(cat "$(cg "$id")/memory.events")" "oom_kill [1-9]"
	# the container itself is still there (only dd was killed)
	assert_status 0 ar state "$id"
	assert_contains "$OUT" '"status":"running"'
	# stats show the limit
	assert_status 0 ar events --stats "$id"
	assert_contains "$OUT" '"type":"stats"'
	assert_contains "$OUT" '"limit":33554432'
	assert_match "$OUT" '"oomKill":[1-9]'
}
vm_test "[$WHO] memory.max OOM-kills an allocation and events reports it" t_oom

t_fork_bomb()
{
	local b=$TEST_TMP/b-fork id
	id=$(unique_id)
	# the bomb runs in a subshell that dies when fork fails; then the
	# container's init execs (no fork needed) and stays
	new_bundle "$b" '["sh","-c","(i=0; while [ $i -lt 60 ]; do sleep 100 & i=$((i+1)); done) 2>/dev/null; exec sleep 100"]' \
		'.linux.resources={"pids":{"limit":10}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	local cur events
	events=$(cg "$id")/pids.events
	wait_until 20 grep -q "max [1-9]" "$events"
	cur=$(cgval "$id" pids.current)
	[ "$cur" -le 10 ] || fail "pids.current $cur > 10"
	assert_status 0 ar ps --format json "$id"
	local n
	n=$(grep -o '[0-9][0-9]*' <<<"$OUT" | wc -l)
	[ "$n" -le 10 ] && [ "$n" -ge 2 ] || fail "ps lists $n processes"
}
vm_test "[$WHO] pids.limit stops a fork bomb" t_fork_bomb

t_cpu()
{
	local b=$TEST_TMP/b-cpu id u0 u1 t0 t1 used wall
	id=$(unique_id)
	new_bundle "$b" '["sh","-c","while :; do :; done"]' \
		'.linux.resources={"cpu":{"quota":10000,"period":100000}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	sleep 0.5
	u0=$(sed -n 's/^usage_usec //p' "$(cg "$id")/cpu.stat")
	t0=$(date +%s%N)
	sleep 2
	u1=$(sed -n 's/^usage_usec //p' "$(cg "$id")/cpu.stat")
	t1=$(date +%s%N)
	used=$((u1 - u0))
	wall=$(((t1 - t0) / 1000))
	echo "cpu used ${used}us of ${wall}us wall (limit 10%)"
	[ "$used" -gt $((wall / 50)) ] || fail "the busy loop did not run ($used us)"
	[ "$used" -lt $((wall * 30 / 100)) ] || fail "used $used us of $wall us: not throttled to 10%"
	assert_match "$(cat "$(cg "$id")/cpu.stat")" "nr_throttled [1-9]"
}
vm_test "[$WHO] cpu.max throttles a busy loop" t_cpu

t_update()
{
	local b=$TEST_TMP/b-upd id
	id=$(unique_id)
	new_bundle "$b" '["sleep","100"]' '.linux.resources={"pids":{"limit":20}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	assert_status 0 ar update --memory 100m --memory-swap 200m \
		--pids-limit 33 --cpu-quota 20000 --cpu-period 50000 \
		--cpu-shares 1024 "$id"
	assert_eq "$(cgval "$id" memory.max)" 104857600
	assert_eq "$(cgval "$id" memory.swap.max)" 104857600
	assert_eq "$(cgval "$id" pids.max)" 33
	assert_eq "$(cgval "$id" cpu.max)" "20000 50000"
	assert_eq "$(cgval "$id" cpu.weight)" 39
	# only the period: the quota stays
	assert_status 0 ar update --cpu-period 100000 "$id"
	assert_eq "$(cgval "$id" cpu.max)" "20000 100000"
	# --resources FILE and - (stdin)
	echo '{"pids":{"limit":44},"memory":{"limit":-1}}' >"$TEST_TMP/r.json"
	assert_status 0 ar update --resources "$TEST_TMP/r.json" "$id"
	assert_eq "$(cgval "$id" pids.max)" 44
	assert_eq "$(cgval "$id" memory.max)" max
	"$AGENTRUN" --root "$AR_ROOT" update -r - "$id" <<<'{"pids":{"limit":55}}' ||
		fail "update -r - failed"
	assert_eq "$(cgval "$id" pids.max)" 55
	# path traversal through unified is refused
	echo '{"unified":{"../cgroup.procs":"1"}}' >"$TEST_TMP/bad.json"
	assert_status 1 ar update --resources "$TEST_TMP/bad.json" "$id"
	assert_contains "$ERR" "linux.resources.unified.../cgroup.procs"
	# a new controller is enabled on the way (cpuset was not needed)
	assert_status 0 ar update --cpuset-cpus 0 "$id"
	assert_eq "$(cgval "$id" cpuset.cpus)" 0
}
vm_test "[$WHO] update changes the limits of a running container" t_update

t_pause_resume()
{
	local b=$TEST_TMP/b-pause id s=$TEST_TMP/shared a1 a2 c1
	id=$(unique_id)
	mkdir -p "$s"
	chmod 0777 "$s"
	new_bundle "$b" '["sh","-c","i=0; while :; do i=$((i+1)); echo $i > /home/testuser/counter; sleep 0.05; done"]' \
		".mounts += [{\"destination\":\"/home/testuser\",\"type\":\"bind\",\"source\":\"$s\",\"options\":[\"rbind\",\"rw\"]}]"
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	wait_until 10 test -s "$s/counter"
	assert_status 0 ar pause "$id"
	assert_status 0 ar state "$id"
	assert_contains "$OUT" '"status":"paused"'
	assert_match "$(cat "$(cg "$id")/cgroup.events")" "frozen 1"
	a1=$(read_counter "$s/counter")
	sleep 1
	a2=$(read_counter "$s/counter")
	assert_eq "$a2" "$a1" "the counter advanced while paused"
	assert_status 1 ar pause "$id"
	assert_contains "$ERR" "already paused"
	assert_status 0 ar resume "$id"
	assert_status 0 ar state "$id"
	assert_contains "$OUT" '"status":"running"'
	sleep 1
	c1=$(read_counter "$s/counter")
	[ "$c1" -gt "$a2" ] || fail "the counter did not advance after resume ($a2 -> $c1)"
	assert_status 1 ar resume "$id"
	assert_contains "$ERR" "not paused"
}
vm_test "[$WHO] pause freezes the container, resume continues it" t_pause_resume

t_ps_kill_all()
{
	local b=$TEST_TMP/b-ps id pid
	id=$(unique_id)
	new_bundle "$b" '["sh","-c","sleep 101 & sleep 102 & wait"]'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	pid=$(ctr_pid "$id")
	wait_until 10 sh -c "[ \$(wc -l < '$(cg "$id")/cgroup.procs') -ge 3 ]"
	assert_status 0 ar ps --format json "$id"
	assert_eq "$(grep -o '[0-9][0-9]*' <<<"$OUT" | wc -l)" 3
	assert_match "$OUT" "^\\[([0-9]+,)*$pid(,[0-9]+)*\\]\$"
	assert_status 0 ar ps "$id"
	assert_contains "$OUT" "PID"
	assert_contains "$OUT" "sleep 101"
	assert_contains "$OUT" "sleep 102"
	assert_status 0 ar kill --all "$id" KILL
	wait_until 10 sh -c "[ ! -s '$(cg "$id")/cgroup.procs' ]"
}
vm_test "[$WHO] ps lists the processes, kill --all kills them all" t_ps_kill_all

t_delete_removes_cgroup()
{
	local b=$TEST_TMP/b-del id p
	id=$(unique_id)
	new_bundle "$b" '["sh","-c","sleep 100 & sleep 100"]' \
		'.linux.resources={"pids":{"limit":50}}'
	defer ar delete --force "$id"
	defer post_mortem "$id"
	assert_status 0 ar run --detach --bundle "$b" "$id"
	p=$(cg "$id")
	[ -d "$p" ] || fail "no cgroup"
	assert_status 0 ar delete --force "$id"
	[ ! -e "$p" ] || fail "cgroup $p is left behind after delete --force"
	# a stopped container too
	id=$(unique_id)
	new_bundle "$b" '["true"]'
	assert_status 0 ar create --bundle "$b" "$id"
	p=$(cg "$id")
	[ -d "$p" ] || fail "no cgroup for a created container"
	assert_status 0 ar start "$id"
	wait_until 10 is_stopped "$id"
	assert_status 0 ar delete "$id"
	[ ! -e "$p" ] || fail "cgroup $p is left behind after delete"
	# run in the foreground cleans up after itself
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	case $WHO in
	root) [ ! -e "/sys/fs/cgroup/agentrun/$id" ] || fail "run left its cgroup" ;;
	*) ! ls -d /sys/fs/cgroup/user.slice/*/*/agentrun-"$id" 2>/dev/null || fail "run left its cgroup" ;;
	esac
}
vm_test "[$WHO] delete leaves no cgroup behind" t_delete_removes_cgroup

t_cgroupns_root()
{
	local b=$TEST_TMP/b-ns id
	id=$(unique_id)
	new_bundle "$b" '["cat","/proc/self/cgroup"]' \
		'.linux.namespaces = ([.linux.namespaces[] | select(.type != "cgroup")] + [{"type":"cgroup"}])'
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "0::/" "with a cgroup namespace the container's cgroup is its root"
}
vm_test "[$WHO] a cgroup namespace is rooted at the container's cgroup" t_cgroupns_root

finish
