#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Crash safety (issue 9): agentrun is killed with SIGKILL at every named
# point of create, start and delete (the AGENTRUN_TEST_CRASH_AT hook,
# runtime/lib/crash_point.h lists the points), as root and rootless.
# Afterwards:
#   - `state` answers sensibly: a status that fits the point, or a clear
#     "agentrun: ..." error -- never a crash or a hang;
#   - `list` works;
#   - an interrupted `start` does not leave a container that a second
#     `start` waits on forever;
#   - `delete --force` cleans up completely: no state directory, no
#     process (the pid in state.json, and every process carrying this
#     case's tag in its environment: the runtime's clones before execve and
#     the container's processes after it), no mount of the bundle, no
#     cgroup (the one state.json recorded, and as root on a pure cgroup2
#     host agentrun/ID, where the default config's cgroup goes; on a
#     hybrid host the runtime makes none: tests/vm runs this file in a VM).
. "$(dirname "$0")/../lib.sh"

# The points, by the command that is killed; CRASH_STATUS is the set of
# `state` answers that make sense after each ("error" = no state yet or
# any more: a clear error).
declare -A CRASH_STATUS=(
	[create-state-dir]=error
	[create-fifo]=error
	# with a cgroup (root on cgroup v2): state.json recorded it, without
	# a pid, before the container process was born in it: "stopped"
	[create-cloned]="error stopped"
	[create-maps]="error stopped"
	[create-cgroup]="error creating stopped"
	[create-state-creating]="creating stopped"
	[create-ready]="creating stopped"
	[create-state-written]=created
	[start-begin]=created
	[start-fifo-opened]="created running stopped"
	[start-fifo-read]="created running"
	[start-fifo-removed]=running
	[delete-killed]=stopped
	[delete-cgroup-removed]=stopped
	[delete-state-partial]=stopped
	[delete-state-removed]=error
)
CREATE_POINTS="create-state-dir create-fifo create-cloned create-maps create-cgroup create-state-creating create-ready create-state-written"
START_POINTS="start-begin start-fifo-opened start-fifo-read start-fifo-removed"
DELETE_POINTS="delete-killed delete-cgroup-removed delete-state-partial delete-state-removed"

# Every point must exist in the runtime (a renamed point would make its
# case pass without crashing anything: the 137 check catches that too).
t_points_listed()
{
	local p
	for p in $CREATE_POINTS $START_POINTS $DELETE_POINTS; do
		grep -q "^ \* *$p " "$TOP_SRCDIR/runtime/lib/crash_point.h" ||
			fail "point $p is not documented in crash_point.h"
		grep -rqF "ar_crash_point(\"$p\")" "$TOP_SRCDIR/runtime/lib" ||
			fail "point $p is not in the runtime"
	done
}

# cr MODE ARGS...: agentrun as root or as the test user (rootless).
cr()
{
	local mode=$1
	shift
	if [ "$mode" = root ]; then
		ar "$@"
	else
		ar_user "$@"
	fi
}

# cr_crash MODE POINT TAG ARGS...: the same, killed at POINT.
cr_crash()
{
	local mode=$1 point=$2 tag=$3 root=$AR_ROOT
	shift 3
	if [ "$mode" = root ]; then
		env AGENTRUN_TEST_CRASH_AT="$point" AR_CRASH_TAG="$tag" \
			"$AGENTRUN" --root "$AR_ROOT" "$@"
	else
		ar_user list -q >/dev/null # makes AR_USER_ROOT
		as_test_user env AGENTRUN_TEST_CRASH_AT="$point" \
			AR_CRASH_TAG="$tag" "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	fi
}

# Pids of this case: the recorded pid while it is alive, and every process
# whose environment holds the tag.
# start_time PID: field 22 of /proc/PID/stat (after the comm, which may
# hold spaces), empty when it is gone
start_time()
{
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	s=${s##*) }
	set -- $s
	echo "${20}"
}

# alive PID: PID is a process (not a zombie, not gone). One reaped while
# it is looked at is gone: its status file no longer reads.
alive()
{
	local s
	s=$(grep '^State:' "/proc/$1/status" 2>/dev/null) || return 1
	[[ ! $s =~ ^State:[[:space:]]*[ZX] ]]
}

# case_procs TAG PID [START]: the case's processes still alive: the one of
# the state (only while it has the start time START, when given: with
# pid_max 32768 and a busy machine a pid is reused within seconds), and
# any that carries the case's tag. A zombie is no leftover, nor one reaped
# while it is checked (this machine's pid 1 reaps orphans up to ~2 s
# late: a container process that exited when its runtime was killed is
# reaped at any moment, once during this check in ci10, which counted it).
case_procs()
{
	local tag=$1 pid=$2 start=${3:-}
	{
		if [ -n "$pid" ] && [ "$pid" != 0 ] &&
			{ [ -z "$start" ] || [ "$(start_time "$pid")" = "$start" ]; }; then
			echo "$pid"
		fi
		grep -lsFz "AR_CRASH_TAG=$tag" /proc/[0-9]*/environ |
			sed 's|^/proc/\([0-9]*\)/environ$|\1|'
	} | sort -u | while read -r p; do
		if alive "$p"; then echo "$p"; fi
	done
}

# The check itself: a zombie is no leftover, and one reaped between the
# start time's read and the status's is none either (it was counted so
# before: grep of the vanished status file failed, and `|| echo` listed
# the pid).
t_case_procs_reaped()
{
	local parent zpid start
	# a zombie: its parent (sleep, after the exec) never waits
	(
		sleep 0.1 &
		echo $! >"$TEST_TMP/zpid"
		exec sleep 1000
	) &
	parent=$!
	defer kill "$parent"
	wait_until 5 test -s "$TEST_TMP/zpid"
	zpid=$(cat "$TEST_TMP/zpid")
	wait_until 5 grep -q '^State:[[:space:]]*Z' "/proc/$zpid/status"
	start=$(start_time "$zpid")
	assert_eq "$(case_procs no-tag "$zpid" "$start" || true)" "" "a zombie"
	# reaped right after case_procs read its start time: the parent
	# goes, pid 1 (or a subreaper) reaps the orphan
	eval "orig_start_time() $(declare -f start_time | tail -n +2)"
	start_time()
	{
		local s
		s=$(orig_start_time "$1")
		kill "$parent" 2>/dev/null || true
		for _ in $(seq 500); do
			[ -e "/proc/$1" ] || break
			sleep 0.01
		done
		echo "$s"
	}
	assert_eq "$(case_procs no-tag "$zpid" "$start" || true)" "" \
		"a zombie reaped during the check"
	[ ! -e "/proc/$zpid" ] || fail "the zombie $zpid was not reaped in 5 s"
}

t_crash()
{
	local mode=$1 point=$2 b=$TEST_TMP/b-$1-$2 id tag root st status
	local pid='' pstart='' cg='' sj='' expect=${CRASH_STATUS[$2]} mounts_before
	require_root
	# One bundle per mode, made once; a case's bundle holds its
	# config.json and shares the base's rootfs by absolute path.
	if [ "$mode" = root ]; then
		root=$AR_ROOT
		[ -d "$TEST_TMP/base-root" ] || {
			make_bundle "$TEST_TMP/base-root.tmp" &&
				mv "$TEST_TMP/base-root.tmp" "$TEST_TMP/base-root"
		}
	else
		require_subids
		require_agentrun_as_test_user
		root=$AR_USER_ROOT
		[ -d "$TEST_TMP/base-rootless" ] || {
			make_bundle_as_test_user "$TEST_TMP/base-rootless.tmp" --rootless &&
				mv "$TEST_TMP/base-rootless.tmp" "$TEST_TMP/base-rootless"
		}
	fi
	mkdir -p "$b"
	cp -a "$TEST_TMP/base-$mode/config.json" "$b/"
	[ "$mode" = root ] || chown "$TEST_UID:$TEST_GID" "$b"
	id=$(unique_id)
	tag="$id-$RANDOM"
	config_set "$b" '.root.path=$r | .process.args=["sleep","1000"] |
		.process.env += ["AR_CRASH_TAG=" + $t]' --arg t "$tag" \
		--arg r "$TEST_TMP/base-$mode/rootfs"
	mounts_before=$(grep -F "$TEST_TMP" /proc/self/mountinfo || true)
	defer cr "$mode" delete --force "$id"

	STATUS=0
	case $point in
	create-*)
		cr_crash "$mode" "$point" "$tag" create --bundle "$b" "$id" \
			</dev/null >"$TEST_TMP/out" 2>&1 || STATUS=$?
		;;
	start-*)
		assert_status 0 cr "$mode" create --bundle "$b" "$id"
		cr_crash "$mode" "$point" "$tag" start "$id" \
			</dev/null >"$TEST_TMP/out" 2>&1 || STATUS=$?
		;;
	delete-*)
		assert_status 0 cr "$mode" create --bundle "$b" "$id"
		assert_status 0 cr "$mode" start "$id"
		cr_crash "$mode" "$point" "$tag" delete --force "$id" \
			</dev/null >"$TEST_TMP/out" 2>&1 || STATUS=$?
		;;
	esac
	assert_eq "$STATUS" 137 "agentrun was not killed at $point: $(cat "$TEST_TMP/out")"

	# state: a status that fits, or a clear error; never a crash.
	STATUS=0
	# (as the state directory's owner: another user's is refused)
	st=$(if [ "$mode" = root ]; then timeout 20 "$AGENTRUN" --root "$root" state "$id"
		else as_test_user timeout 20 "$AGENTRUN" --root "$root" state "$id"; fi \
		2>"$TEST_TMP/err") ||
		STATUS=$?
	if [ "$STATUS" = 0 ]; then
		status=$(jq -r .status <<<"$st") || fail "state is not JSON: $st"
		pid=$(jq -r '.pid // empty' <<<"$st")
	else
		[ "$STATUS" -lt 124 ] || fail "state crashed or hung (exit $STATUS)"
		grep -q '^agentrun: ' "$TEST_TMP/err" ||
			fail "state: no clear error: $(cat "$TEST_TMP/err")"
		status=error
	fi
	echo "after a kill at $point ($mode): state exit $STATUS: $status $(cat "$TEST_TMP/err")"
	[[ " $expect " == *" $status "* ]] ||
		fail "state after a kill at $point: '$status', expected one of: $expect"
	if [ -f "$root/$id/state.json" ]; then
		sj=$(cat "$root/$id/state.json")
		cg=$(jq -r '.agentrun.cgroupPath // empty' "$root/$id/state.json")
		[ -n "$pid" ] || pid=$(jq -r '.agentrun.pid // empty' "$root/$id/state.json")
		pstart=$(jq -r '.agentrun.pidStart // empty' "$root/$id/state.json")
	fi
	# the process the state names, by its start time
	[ -n "$pstart" ] && [ "$pstart" != 0 ] || { [ -z "$pid" ] || pstart=$(start_time "$pid"); }
	assert_status 0 cr "$mode" list

	# An interrupted start must not leave a container that a second
	# start waits on forever.
	if [[ $point == start-* ]]; then
		STATUS=0
		if [ "$mode" = root ]; then
			timeout 20 "$AGENTRUN" --root "$root" start "$id"
		else
			as_test_user timeout 20 "$AGENTRUN" --root "$root" start "$id"
		fi >/dev/null 2>"$TEST_TMP/err" || STATUS=$?
		echo "second start: exit $STATUS $(cat "$TEST_TMP/err")"
		[ "$STATUS" != 124 ] || fail "a second start after a kill at $point hangs"
		if [ "$point" = start-begin ]; then
			assert_eq "$STATUS" 0 "start after a kill at $point"
		fi
	fi

	assert_status 0 cr "$mode" delete --force "$id"
	assert_eq "$(ls -A "$root" | grep -vx '.seccomp-cache' || true)" "" \
		"state left after delete --force"
	assert_status '!0' cr "$mode" state "$id"
	assert_contains "$ERR" "does not exist"
	for _ in $(seq 100); do
		[ -z "$(case_procs "$tag" "$pid" "$pstart")" ] && break
		sleep 0.1
	done
	local left
	# (its pipeline's grep says 2 for /proc files that went away: the
	# list is what counts)
	left=$(case_procs "$tag" "$pid" "$pstart") || true
	# (what each one was: start time against the state's, state, where
	# it waits, its fds, and the state the case saw)
	[ -z "$left" ] || for p in $left; do
		echo "left: pid $p, start $(start_time "$p") (state's pidStart ${pstart:-none}), $(grep -E '^(Name|State|PPid|NSpid|SigBlk|SigCgt):' "/proc/$p/status" 2>/dev/null | tr '\n' ' ')"
		echo "  wchan $(cat /proc/$p/wchan 2>/dev/null) stack: $(cat /proc/$p/stack 2>/dev/null | tr '\n' ' ')"
		echo "  fds: $(ls -l /proc/$p/fd 2>/dev/null | tr '\n' ' ')"
		echo "  state.json: $sj; state: $st"
	done
	assert_eq "$left" "" "processes left (pid in state: ${pid:-none})"
	assert_eq "$(grep -F "$TEST_TMP" /proc/self/mountinfo || true)" \
		"$mounts_before" "mounts left"
	if [ "$mode" = root ] &&
		[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
		[ ! -e "/sys/fs/cgroup/agentrun/$id" ] ||
			fail "cgroup /sys/fs/cgroup/agentrun/$id left"
	fi
	if [ -n "$cg" ]; then
		[ ! -e "$cg" ] || fail "cgroup $cg left"
		echo "cgroup $cg removed"
	fi
}

# CRASH_MODES and CRASH_POINTS narrow the run (e.g. in a VM with real
# cgroups: CRASH_MODES=root CRASH_POINTS="create-cgroup create-ready").
run_test "every crash point exists in the runtime" t_points_listed
run_test "a zombie, reaped or not while it is checked, is no leftover" \
	t_case_procs_reaped
for mode in ${CRASH_MODES:-root rootless}; do
	for p in ${CRASH_POINTS:-$CREATE_POINTS $START_POINTS $DELETE_POINTS}; do
		run_test "$mode: kill -9 at $p, then state, delete --force" \
			t_crash "$mode" "$p"
	done
done
finish
