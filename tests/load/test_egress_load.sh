#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The load lane (`make check-load`, issue 31): every network path of
# `agentrun sandbox` -- the host-loopback relay (--net allow=127.0.0.1:P),
# HTTP CONNECT, plain HTTP forward, SOCKS5, transparent capture, --secret
# interception and --publish inbound -- carries LOAD_CONNS (200)
# connections, 8 at a time, every third one a POST with a 48 KiB body,
# while this script keeps every core busy with spinning shells. Not one
# may fail. Afterwards no process, mount, state directory or CA directory
# of the test is left. Root and rootless. Servers and clients are
# tests/load/egress_peer.py on loopback (or on the lo of a network
# namespace this test makes); nothing else is contacted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

N=${LOAD_CONNS:-200}
PEER=$TOP_SRCDIR/tests/load/egress_peer.py
[ -x "$PY" ] || skip "needs $PY"

# ---- the load: one spinning shell per core (at least two), for the
# whole script; killed when it ends
LOAD_PIDS=()
load_start()
{
	local n
	n=$(nproc 2>/dev/null || echo 2)
	[ "$n" -ge 2 ] || n=2
	for _ in $(seq "$n"); do
		(while :; do :; done) &
		LOAD_PIDS+=($!)
	done
}
load_stop()
{
	[ ${#LOAD_PIDS[@]} -eq 0 ] || kill "${LOAD_PIDS[@]}" 2>/dev/null
	LOAD_PIDS=()
	return 0
}
# lib.sh's cleanup after the load's, with the script's exit status; a
# signal that ends the script says so (and which test it came after)
trap 'set -- $?; load_stop; (exit "$1"); _ar_cleanup' EXIT
for sig in HUP INT TERM; do
	# shellcheck disable=SC2064 # $sig now, _AR_N when it comes
	trap "echo \"# test_egress_load.sh: SIG$sig after test \$_AR_N\"; exit 1" $sig
done
load_start
echo "# load: ${#LOAD_PIDS[@]} spinning shells, loadavg $(cut -d' ' -f1-3 /proc/loadavg)"

# peer_server ADDR TLSDIR: egress_peer.py serve on ADDR, port 0; sets
# PORT and PF (its port file; $PF.auth: the Authorization values seen)
peer_server()
{
	PF=$TEST_TMP/peer-$RANDOM$RANDOM
	timeout 600 "$PY" "$PEER" serve "$1" 0 "$PF" ${2:+"$2"} </dev/null >/dev/null 2>"$PF.err" &
	defer kill $!
	wait_until 20 test -s "$PF"
	PORT=$(cat "$PF")
	: >>"$PF.auth"
}

# setup MODE: home and workspace with the client in it
setup()
{
	sb_home "$1"
	cp "$PEER" "$WS/peer.py"
	sb_home_own
	MOUNTS_BEFORE=$(host_mounts)
}

# no_leftovers: nothing of the sandboxes is left on the host
no_leftovers()
{
	local root=$AR_ROOT
	[ "$MODE" = root ] || root=$AR_USER_ROOT
	wait_no_leftover_procs "$root" "AGENTRUN_TEST_NEVER_SET=1"
	assert_eq "$(host_mounts)" "$MOUNTS_BEFORE" "mounts left"
	# containers only (the seccomp cache and the control directory are kept on purpose)
	assert_eq "$(find "$root" -mindepth 1 -maxdepth 1 ! -name .seccomp-cache ! -name .control -printf '%f\n' 2>/dev/null)" "" \
		"state left in $root"
	# the control plane's directory stays, its sockets go with their sandboxes
	assert_eq "$(find "$root/.control" -mindepth 1 -printf '%f\n' 2>/dev/null)" "" \
		"control sockets left in $root/.control"
}

# expect_all OUT: the client's summary says every connection passed
expect_all()
{
	assert_contains "$1" "ok=$N failed=0"
}

t_loopback_relay()
{
	setup "$1"
	peer_server 127.0.0.1
	assert_status 0 sb_run --net "allow=127.0.0.1:$PORT" -- \
		"$PY" peer.py client direct 127.0.0.1 "$PORT" "$N"
	expect_all "$OUT"
	no_leftovers
}

t_proxy()
{
	local via=$2
	setup "$1"
	peer_server 127.0.0.1
	assert_status 0 sb_run --net "allow=localhost:$PORT" -- \
		"$PY" peer.py client "$via" localhost "$PORT" "$N"
	expect_all "$OUT"
	no_leftovers
}

t_secret()
{
	setup "$1"
	tls_setup
	peer_server 127.0.0.1 "$TEST_TMP/tls"
	local cmd="echo cadir=\${SSL_CERT_FILE%/*}; exec $PY peer.py client tls localhost $PORT $N"
	if [ "$MODE" = root ]; then
		assert_status 0 env -C "$WS" TOKEN=real-secret-load SSL_CERT_FILE="$TEST_TMP/tls/ca.pem" HOME="$H" \
			"$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty --net "allow=localhost:$PORT" \
			--secret "TOKEN=localhost:$PORT" -- sh -c "$cmd"
	else
		assert_status 0 as_test_user env -C "$WS" TOKEN=real-secret-load \
			SSL_CERT_FILE="$TEST_TMP/tls/ca.pem" HOME="$H" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty --net "allow=localhost:$PORT" \
			--secret "TOKEN=localhost:$PORT" -- sh -c "$cmd"
	fi
	expect_all "$OUT"
	# every request reached the server with the real value
	assert_eq "$(grep -c '^Bearer real-secret-load$' "$PF.auth")" "$N"
	local ca
	ca=$(sed -n 's/^cadir=//p' <<<"$OUT")
	assert_match "$ca" "^/tmp/agentrun-ca-"
	[ ! -e "$ca" ] || fail "the CA directory $ca is left"
	no_leftovers
}

# --publish: the server inside, the client on the host
t_publish()
{
	setup "$1"
	local hp
	hp=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	# ready once the server listens (its port file), not when it was
	# started: under load python takes a while, and a connection before
	# that is refused inside and reset on the host
	sb_run --net none --publish "$hp:8000" -- sh -c "
		$PY peer.py serve 127.0.0.1 8000 /tmp/pf >/dev/null 2>&1 &
		while [ ! -s /tmp/pf ]; do sleep 0.1; done
		touch ready; while [ ! -e done ]; do sleep 0.2; done; kill \$!" \
		>"$TEST_TMP/pub.out" 2>&1 &
	local sb=$!
	# a failure below must not leave the sandbox running (every later
	# test would find its processes)
	defer touch "$WS/done"
	wait_until 120 test -e "$WS/ready"
	assert_status 0 "$PY" "$PEER" client direct 127.0.0.1 "$hp" "$N"
	touch "$WS/done"
	wait "$sb" || fail "the sandbox failed: $(cat "$TEST_TMP/pub.out")"
	expect_all "$OUT"
	no_leftovers
}

# transparent capture: a server on 10.200.0.2 in a network namespace of
# this test, the client ignoring the proxy variables
t_transparent()
{
	setup "$1"
	require_cmd unshare ip setpriv
	local runas="" root=$AR_ROOT
	if [ "$MODE" = user ]; then
		runas="setpriv --reuid=$TEST_UID --regid=$TEST_GID --init-groups"
		root=$AR_USER_ROOT
	fi
	cat >"$TEST_TMP/netns.sh" <<EOF
set -u
ip link set lo up
ip addr add 10.200.0.2/32 dev lo
timeout 600 $PY $PEER serve 10.200.0.2 8088 $TEST_TMP/tp-port-$MODE </dev/null >/dev/null 2>&1 &
for i in \$(seq 200); do [ -s $TEST_TMP/tp-port-$MODE ] && break; sleep 0.1; done
cd "$WS"
$runas env HOME=$H $AGENTRUN --root $root sandbox --no-tty --net allow=10.200.0.2:8088 -- \
	env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy \
	$PY peer.py client direct 10.200.0.2 8088 $N
rc=\$?
kill %1
exit \$rc
EOF
	defer sh -c "echo egress.log:; tail -n 5 $H/.local/state/agentrun/egress.log"
	assert_status 0 unshare --mount --net bash "$TEST_TMP/netns.sh"
	expect_all "$OUT"
	assert_not_contains "$ERR" "transparent egress unavailable"
	no_leftovers
}

for mode in root user; do
	run_test "load ($mode): host-loopback relay, $N connections" t_loopback_relay $mode
	run_test "load ($mode): HTTP CONNECT, $N connections" t_proxy $mode connect
	run_test "load ($mode): plain HTTP forward, $N connections" t_proxy $mode http
	run_test "load ($mode): SOCKS5, $N connections" t_proxy $mode socks
	run_test "load ($mode): transparent capture, $N connections" t_transparent $mode
	run_test "load ($mode): --secret interception, $N connections" t_secret $mode
	run_test "load ($mode): --publish inbound, $N connections" t_publish $mode
done
echo "# loadavg at the end $(cut -d' ' -f1-3 /proc/loadavg)"
load_stop
finish
