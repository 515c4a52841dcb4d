#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# podman driving agentrun where cgroups are real: --memory / --pids-limit
# land in the container's cgroup and are enforced, and pause / unpause
# freeze and thaw it. Runs INSIDE tests/vm/run-in-vm (pure cgroup v2),
# as root or as an unprivileged user with a delegated subtree (run-in-vm
# --user 1000); tests/integration/test_podman_vm*.sh start it. podman's
# other features are tested on the host by tests/integration/test_podman.sh.
#
# podman runs agentrun through a wrapper named `agentrun` (podman keys
# features on the runtime's name) that logs its argv: the tests assert
# that agentrun itself was called.
. "$(dirname "$0")/../lib.sh"

[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
	skip "/sys/fs/cgroup is not a pure cgroup v2 mount (run tests/integration/test_podman_vm.sh)"
command -v podman >/dev/null && command -v conmon >/dev/null ||
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
[ -n "${ENGINES_ROOTFS_TAR:-}" ] && [ -r "$ENGINES_ROOTFS_TAR" ] ||
	skip "ENGINES_ROOTFS_TAR (a busybox rootfs tarball) is not set"
if [ "$(id -u)" = 0 ]; then
	WHO=root
else
	WHO=rootless
	[ -w "$(dirname "/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)")/cgroup.subtree_control" ] ||
		skip "rootless without a delegated cgroup subtree"
	[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not executable by $(id -un)"
fi

W=$TEST_TMP/podman
CALLS=$W/calls.log
mkdir -p "$W/bin" "$W/tmp" "$W/shared"
mkfifo "$W/shared/tick"
cat >"$W/bin/agentrun" <<EOF
#!/bin/sh
echo "\$*" >>"$CALLS"
exec "$AGENTRUN" "\$@"
EOF
chmod 0755 "$W/bin/agentrun"
: >"$CALLS"
# The shipped drop-in, pointing at the wrapper (see test_podman.sh).
sed '/^agentrun = \[/,/^\]/c agentrun = ["'"$W/bin/agentrun"'"]' \
	"$TOP_SRCDIR/contrib/podman/containers.conf.d/agentrun.conf" >"$W/containers.conf"
export CONTAINERS_CONF=$W/containers.conf

# podman on private storage, cgroupfs (there is no systemd in the VM)
pm()
{
	podman --root "$W/storage" --runroot "$W/run" --storage-driver vfs \
		--tmpdir "$W/tmp" --events-backend none --cgroup-manager cgroupfs \
		--runtime agentrun "$@"
}

vm_test()
{
	if [ -n "${VM_TESTS:-}" ] && ! [[ $2 =~ $VM_TESTS ]]; then
		return 0
	fi
	run_test "$@"
}

assert_called()
{
	grep -Eq -- "$1" "$CALLS" ||
		fail "agentrun was not called as /$1/; calls: $(cut -c1-200 "$CALLS")"
}

read_counter()
{
	local v= i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		v=$(cat "$1" 2>/dev/null)
		[ -n "$v" ] && break
	done
	echo "${v:-0}"
}

T0=$(date +%s)
echo "guest uptime at the start: $(cut -d' ' -f1 /proc/uptime) s"
# `podman run --rootfs DIR`, not an imported image: `podman import` alone
# takes 15-30 s under emulation (tests/integration/test_podman.sh covers
# images). podman writes into DIR, so it is a private copy.
IMPORTED=0
mkdir -p "$W/rootfs"
tar -C "$W/rootfs" -xf "$ENGINES_ROOTFS_TAR" >"$W/import.log" 2>&1 && IMPORTED=1

# One container for every test (each podman call costs seconds under
# emulation): a counter loop writing to a bind mount, with the limits.
# The loop never forks (it waits with a read on a fifo nobody writes, not
# `sleep`): t_limits_enforced fills pids.max, and busybox sh exits on
# "can't fork"; the init of a pid namespace exiting makes the kernel
# SIGKILL every process in it (the exec under test) and podman remove the
# container.
C=
if [ "$IMPORTED" = 1 ]; then
	C=$(pm run -d --network none --memory 32m --pids-limit 10 \
		-v "$W/shared:/w" --rootfs "$W/rootfs" sh -c \
		'trap "exit 0" TERM; exec 3<>/w/tick; i=0; while :; do i=$((i+1)); echo $i >/w/n; read -t 0.3 x <&3; done' \
		2>"$W/run.err")
fi
PID=
[ -n "$C" ] && PID=$(pm inspect --format '{{.State.Pid}}' "$C" 2>>"$W/run.err")
CG=
[ -n "$PID" ] && CG=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$PID/cgroup")
echo "[$WHO] container ${C:0:12} pid $PID cgroup $CG after $(($(date +%s) - T0)) s"

need_ctr()
{
	[ -n "$CG" ] && [ "$CG" != /sys/fs/cgroup/ ] ||
		fail "podman run -d failed: $(cat "$W/import.log" "$W/run.err" 2>/dev/null | tail -n 20)"
	[ -d "$CG" ] || fail "the container is gone (its cgroup $CG was removed by an earlier case)"
}

t_limits_in_cgroup()
{
	need_ctr
	assert_called "create --bundle [^ ]+ --pid-file [^ ]+ $C$"
	assert_called "start $C$"
	case $WHO in
	root) assert_match "$CG" "[-/]$C\$" "the container's own cgroup" ;;
	*) assert_match "$CG" "/user@[0-9]+\\.service/.*$C" "inside the delegated subtree" ;;
	esac
	assert_eq "$(cat "$CG/memory.max")" 33554432 "memory.max of $CG"
	assert_eq "$(cat "$CG/pids.max")" 10 "pids.max of $CG"
}
vm_test "[$WHO] podman --memory 32m --pids-limit 10: the limits are in the container's cgroup" t_limits_in_cgroup

t_pause_unpause()
{
	need_ctr
	local a1 a2 c1
	wait_until 30 test -s "$W/shared/n"
	assert_status 0 pm pause "$C"
	assert_called "pause $C$"
	assert_match "$(cat "$CG/cgroup.events")" "frozen 1"
	assert_status 0 pm inspect --format '{{.State.Status}}' "$C"
	assert_eq "$OUT" paused
	a1=$(read_counter "$W/shared/n")
	sleep 1.5
	a2=$(read_counter "$W/shared/n")
	assert_eq "$a2" "$a1" "the counter advanced while paused"
	assert_status 0 pm unpause "$C"
	assert_called "resume $C$"
	assert_match "$(cat "$CG/cgroup.events")" "frozen 0"
	wait_until 30 sh -c "[ \"\$(cat '$W/shared/n')\" -gt '$a2' ] 2>/dev/null"
}
vm_test "[$WHO] podman pause / unpause freeze and thaw the cgroup" t_pause_unpause

t_limits_enforced()
{
	need_ctr
	# 64 MiB in a 32 MiB cgroup: dd is OOM-killed (oom_score_adj 1000: it
	# is the victim, not the exec's shell). Then a fork bomb of processes
	# that never end by themselves (sleep 1000, their pids in /w/bomb):
	# it stops at pids.max whatever the speed of fork (short sleeps let a
	# slow, loaded VM fork 30 times without ever reaching the limit). Its
	# subshell dies of "can't fork", one more sleep takes the slot it left,
	# the cgroup stays full for 1 s (a read on the fifo, no fork) and the
	# shell kills the sleeps with builtins only. The container's init,
	# ticking every 0.3 s, must live through it (a forking init dies of
	# "can't fork" and the kernel SIGKILLs its whole pid namespace, this
	# exec's shell with it).
	# What the exec saw goes to /w/result, not only to podman exec's
	# output: the assertion is on the limits, the exec path's output is
	# test_podman.sh's (its loss here would be named apart).
	STATUS=0
	rm -f "$W/shared/result" "$W/shared/bomb"
	pm exec "$C" sh -c '
		(echo 1000 >/proc/self/oom_score_adj; exec dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null)
		echo dd=$? >>/w/result
		: >/w/bomb
		(i=0; while [ $i -lt 30 ]; do sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >>/w/bomb; i=$((i+1)); done) 2>/dev/null
		echo bomb=$? >>/w/result
		sleep 1000 </dev/null >/dev/null 2>&1 &
		echo $! >>/w/bomb
		read -t 1 x <>/w/tick
		while read p; do kill -9 $p; done </w/bomb
		echo bomb-done >>/w/result
		cat /w/result' >"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	OUT=$(cat "$W/shared/result" 2>/dev/null)
	[ "$STATUS" = 0 ] && [ "$OUT" = "dd=137
bomb=2
bomb-done" ] || fail "exec: status $STATUS, result '$OUT', output '$(cat "$TEST_TMP/o")', stderr '$(cat "$TEST_TMP/e")'; memory.events: $(cat "$CG/memory.events"); pids.events: $(cat "$CG/pids.events"); sleeps started: $(wc -l <"$W/shared/bomb" 2>/dev/null); init: $(pm inspect --format '{{.State.Status}} exit {{.State.ExitCode}}' "$C" 2>&1), $(pm logs "$C" 2>&1 | grep -v '^[0-9]*$' | tail -n 3); kernel: $(dmesg | grep -iE 'killed process|oom-kill' | tail -n 5)"
	[ "$(cat "$TEST_TMP/o")" = "$OUT" ] ||
		fail "podman exec's output '$(cat "$TEST_TMP/o")' is not what the exec wrote: '$OUT'"
	grep -qx "$PID" "$CG/cgroup.procs" ||
		fail "the container's init (pid $PID) did not live through the full pids.max"
	assert_called "exec --pid-file [^ ]+ --process [^ ]+ --detach"
	assert_match "$(cat "$CG/memory.events")" "oom_kill [1-9]"
	assert_match "$(cat "$CG/pids.events")" "max [1-9]"
	local cur
	cur=$(cat "$CG/pids.current")
	[ "$cur" -le 10 ] || fail "pids.current $cur > 10"
}
vm_test "[$WHO] podman --memory OOM-kills an allocation, --pids-limit stops a fork bomb" t_limits_enforced

t_rm()
{
	need_ctr
	assert_status 0 pm rm -f -t 1 "$C"
	assert_called "delete --force $C$"
	[ ! -d "$CG" ] || fail "cgroup $CG left behind"
}
vm_test "[$WHO] podman rm -f removes the container and its cgroup" t_rm

echo "[$WHO] podman tests done after $(($(date +%s) - T0)) s"
echo "guest uptime at the end: $(cut -d' ' -f1 /proc/uptime) s"
finish
