#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The load lane, part two (issue 31): PAR_SANDBOXES (32) sandboxes started
# at once, each making PAR_CONNS (50) connections to a host loopback
# service through its relay (--net allow=127.0.0.1:PORT) and writing 100
# files in its workspace, while this script keeps every core busy. All
# must succeed; afterwards no process, mount or state of theirs is left.
# Root and rootless.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

NSB=${PAR_SANDBOXES:-32}
NC=${PAR_CONNS:-50}
PEER=$TOP_SRCDIR/tests/load/egress_peer.py
[ -x "$PY" ] || skip "needs $PY"

LOAD_PIDS=()
load_stop()
{
	[ ${#LOAD_PIDS[@]} -eq 0 ] || kill "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
	return 0
}
trap 'set -- $?; load_stop; (exit "$1"); _ar_cleanup' EXIT
for sig in HUP INT TERM; do
	# shellcheck disable=SC2064 # $sig now, _AR_N when it comes
	trap "echo \"# test_parallel_load.sh: SIG$sig after test \$_AR_N\"; exit 1" $sig
done
n=$(nproc 2>/dev/null || echo 2)
[ "$n" -ge 2 ] || n=2
for _ in $(seq "$n"); do
	(while :; do :; done) &
	LOAD_PIDS+=($!)
done

t_parallel()
{
	local mode=$1 root=$AR_ROOT pf k pids=() failed=0 before
	sb_home "$mode"
	[ "$mode" = root ] || root=$AR_USER_ROOT
	pf=$TEST_TMP/peer-$mode
	timeout 600 "$PY" "$PEER" serve 127.0.0.1 0 "$pf" </dev/null >/dev/null 2>&1 &
	defer kill $!
	wait_until 20 test -s "$pf"
	local port
	port=$(cat "$pf")
	before=$(host_mounts)
	for k in $(seq "$NSB"); do
		mkdir -p "$TEST_TMP/par-$mode/$k/proj/.git"
		cp "$PEER" "$TEST_TMP/par-$mode/$k/proj/peer.py"
	done
	[ "$mode" = root ] || chown -R "$TEST_UID:$TEST_GID" "$TEST_TMP/par-$mode"
	chmod 0755 "$TEST_TMP/par-$mode" "$TEST_TMP/par-$mode"/*
	for k in $(seq "$NSB"); do
		H=$TEST_TMP/par-$mode/$k
		# shellcheck disable=SC2034 # read by sb_run
		WS=$H/proj
		sb_run --net "allow=127.0.0.1:$port" -- sh -c "
			$PY peer.py client direct 127.0.0.1 $port $NC 4 || exit 1
			mkdir out && for i in \$(seq 100); do echo \$i >out/f\$i; done" \
			>"$H/out.txt" 2>&1 &
		pids+=($!)
	done
	for k in $(seq "$NSB"); do
		if ! wait "${pids[$((k - 1))]}"; then
			failed=$((failed + 1))
			echo "sandbox $k failed:"
			tail -n 5 "$TEST_TMP/par-$mode/$k/out.txt"
		fi
		assert_eq "$(find "$TEST_TMP/par-$mode/$k/proj/out" -type f 2>/dev/null | wc -l)" 100 \
			"files written by sandbox $k"
		assert_contains "$(cat "$TEST_TMP/par-$mode/$k/out.txt")" "ok=$NC failed=0"
	done
	assert_eq "$failed" 0 "failed sandboxes"
	wait_no_leftover_procs "$root" "AGENTRUN_TEST_NEVER_SET=1"
	assert_eq "$(host_mounts)" "$before" "mounts left"
	assert_eq "$(find "$root" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .control -printf '%f\n' 2>/dev/null)" "" \
		"state left in $root"
	# the control plane's directory stays, its sockets go with their sandboxes
	assert_eq "$(find "$root/.control" -mindepth 1 -printf '%f\n' 2>/dev/null)" "" \
		"control sockets left in $root/.control"
}

for mode in root user; do
	run_test "parallel ($mode): $NSB sandboxes at once, $NC connections and 100 files each" t_parallel $mode
done
load_stop
finish
