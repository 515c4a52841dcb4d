#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Regressions of the load lane (tests/load/test_egress_load.sh, issue 31),
# small enough for `make check`: each case is one cause of a failed
# connection the lane found, reproduced without the load.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

PEER=$TOP_SRCDIR/tests/load/egress_peer.py
[ -x "$PY" ] || skip "needs $PY"

# --secret interception of a request whose body is more than the head
# the proxy reads first (16 KiB), to a TLS 1.3 server (Python's, which
# sends its session tickets after the handshake): the relay read the
# tickets with a blocking SSL_read that then waited for the server's
# answer while the server waited for the rest of the body. Each POST
# hung until the client gave up.
t_secret_post_body()
{
	sb_home "$1"
	cp "$PEER" "$WS/peer.py"
	sb_home_own
	tls_setup
	local pf=$TEST_TMP/peer-$RANDOM cmd
	timeout 120 "$PY" "$PEER" serve 127.0.0.1 0 "$pf" "$TEST_TMP/tls" </dev/null >/dev/null 2>&1 &
	defer kill $!
	wait_until 20 test -s "$pf"
	local port
	port=$(cat "$pf")
	# 6 POSTs of 48 KiB, one at a time; 15 s each at most
	cmd="PEER_TIMEOUT=15 exec $PY peer.py client tls localhost $port 6 1 1"
	if [ "$MODE" = root ]; then
		assert_status 0 env -C "$WS" TOKEN=real-secret-post SSL_CERT_FILE="$TEST_TMP/tls/ca.pem" HOME="$H" \
			"$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty --net "allow=localhost:$port" \
			--secret "TOKEN=localhost:$port" -- sh -c "$cmd"
	else
		assert_status 0 as_test_user env -C "$WS" TOKEN=real-secret-post \
			SSL_CERT_FILE="$TEST_TMP/tls/ca.pem" HOME="$H" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty --net "allow=localhost:$port" \
			--secret "TOKEN=localhost:$port" -- sh -c "$cmd"
	fi
	assert_contains "$OUT" "ok=6 failed=0"
	assert_eq "$(grep -c '^Bearer real-secret-post$' "$pf.auth")" 6
}

for mode in root user; do
	run_test "egress ($mode): --secret, POST bodies beyond the head buffer are relayed" t_secret_post_body $mode
done
finish
