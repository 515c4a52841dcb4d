#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults (issue 31) on the egress proxy of `--net allow`, with a server on
# 127.0.0.1 only (faults_net_peer.py):
#   - the upstream resets mid-transfer: the client sees a reset (not a
#     clean end that would pass for a complete body), and 20 connections
#     beside it all succeed;
#   - a client trickles its request head a byte a second: the proxy cuts
#     it off at the setup bound (30 s for the whole head, SETUP_TIMEOUT_S
#     in egress_proxy.c) with 408, and 20 connections beside it succeed;
#   - the agent at `ulimit -n 64`: its own sockets fail with EMFILE, and
#     once it has closed them the proxy serves it as before.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

PEER=$TOP_SRCDIR/tests/integration/faults_net_peer.py

setup()
{
	[ -x "$PY" ] || skip "needs $PY"
	sb_home "$1"
	cp "$PEER" "$WS/peer.py"
	sb_home_own
	timeout 300 "$PY" "$PEER" serve "$TEST_TMP/port-$1-$2" </dev/null >/dev/null 2>&1 &
	defer kill $!
	wait_until 10 test -s "$TEST_TMP/port-$1-$2"
	PORT=$(cat "$TEST_TMP/port-$1-$2")
}

t_reset()
{
	setup "$1" "${FUNCNAME[0]}"
	assert_status 0 sb_run --net "allow=localhost:$PORT" -- "$PY" peer.py reset localhost "$PORT"
	echo "# $OUT"
	assert_contains "$OUT" "others=20/20"
	assert_contains "$OUT" "reset=ConnectionResetError"
}

t_trickle()
{
	local s
	setup "$1" "${FUNCNAME[0]}"
	assert_status 0 sb_run --net "allow=localhost:$PORT" -- "$PY" peer.py trickle localhost "$PORT"
	echo "# $OUT"
	assert_contains "$OUT" "others=20/20"
	assert_contains "$OUT" "408 Request Timeout"
	s=$(sed -n 's/.*trickle=closed after \([0-9]*\) s.*/\1/p' <<<"$OUT")
	[ "$s" -ge 28 ] && [ "$s" -le 45 ] || fail "the trickling client was cut off after $s s, not the 30 s bound"
}

t_fds()
{
	setup "$1" "${FUNCNAME[0]}"
	assert_status 0 sb_run --net "allow=localhost:$PORT" -- sh -c 'ulimit -n 64 && exec "$0" peer.py fds localhost "$1"' "$PY" "$PORT"
	echo "# $OUT"
	assert_contains "$OUT" "emfile=yes"
	assert_contains "$OUT" "after=10/10"
}

for mode in root user; do
	run_test "faults ($mode): the upstream resets mid-transfer: the client sees a reset, the others pass" t_reset $mode
	run_test "faults ($mode): a request head trickled a byte a second is cut off at 30 s, the others pass" t_trickle $mode
	run_test "faults ($mode): the agent at ulimit -n 64: EMFILE for it, the proxy keeps serving" t_fds $mode
done
finish
