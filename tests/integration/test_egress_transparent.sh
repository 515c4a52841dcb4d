#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun sandbox --net allow=...`, transparent egress: programs that
# know nothing of proxies (Node's fetch, Python sockets, a TCP client of a
# non-HTTP port) reach allowed destinations by name through the sandbox's
# DNS (answered from the policy) and the nftables capture in the
# sandbox's network namespace; denied names get NXDOMAIN with no packet
# leaving, denied connections a reset and a reason in the log. Servers
# live in a network namespace this test makes (10.200.0.2 on its lo) or
# on loopback; nothing else is contacted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

DASH=$'\xe2\x80\x94'

# Proxy variables removed, as a client that ignores them would
NOPROXY="env -u HTTP_PROXY -u HTTPS_PROXY -u ALL_PROXY -u http_proxy -u https_proxy -u all_proxy"

# tp_netns MODE SCRIPT: run SCRIPT (bash) in a new mount and network
# namespace holding 10.200.0.2 on lo with an HTTP server on :8088, a
# server-first (banner) TCP server on :2525 and a trap resolver on :53
# (UDP) counting the packets it gets in $TEST_TMP/trap.count; the
# runtime's /etc/hosts names svc.test and other.test 10.200.0.2, its
# resolv.conf points at the trap. In SCRIPT, $SB runs the sandbox as
# MODE (root or the test user) with /etc/hosts hidden inside (names go
# to the sandbox's DNS).
tp_netns()
{
	local mode=$1 script=$2 runas="" root=$AR_ROOT
	require_cmd unshare ip
	[ -x "$PY" ] || skip "needs $PY"
	if [ "$mode" = user ]; then
		runas="setpriv --reuid=$TEST_UID --regid=$TEST_GID --init-groups"
		root=$AR_USER_ROOT
	fi
	printf '127.0.0.1 localhost\n10.200.0.2 svc.test other.test\n' >"$TEST_TMP/hosts"
	printf 'nameserver 10.200.0.2\n' >"$TEST_TMP/resolv.conf"
	mkdir -p "$TEST_TMP/www" && echo hello-from-netns >"$TEST_TMP/www/index.html"
	echo 0 >"$TEST_TMP/trap.count"
	chmod 0644 "$TEST_TMP/hosts" "$TEST_TMP/resolv.conf"
	chmod 0666 "$TEST_TMP/trap.count"
	cat >"$TEST_TMP/netns.sh" <<EOF
set -u
mount --bind "$TEST_TMP/hosts" /etc/hosts
mount --bind "$TEST_TMP/resolv.conf" /etc/resolv.conf
ip link set lo up
ip addr add 10.200.0.2/32 dev lo
cd "$TEST_TMP/www"
timeout 120 $PY -m http.server 8088 --bind 10.200.0.2 >/dev/null 2>&1 &
timeout 120 $PY -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.200.0.2", 2525)); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b"220 banner-from-netns\r\n"); c.close()' &
timeout 120 $PY -c '
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("10.200.0.2", 53)); n = 0
while True:
    s.recv(2048); n += 1
    open("$TEST_TMP/trap.count", "w").write(str(n))' &
for i in \$(seq 50); do curl -s -o /dev/null http://10.200.0.2:8088/ && break; sleep 0.1; done
cd "$WS"
SB="$runas env HOME=$H $AGENTRUN --root $root sandbox --no-tty --hide /etc/hosts"
. "$script"
kill %1 %2 %3
EOF
	chmod 0644 "$TEST_TMP/netns.sh" "$script"
	assert_status 0 unshare --mount --net bash "$TEST_TMP/netns.sh"
}

t_proxy_ignoring_clients()
{
	sb_home "$1"
	sb_home_own
	require_cmd node
	cat >"$TEST_TMP/inner.sh" <<EOF
\$SB --net 'allow=svc.test,10.200.0.2:8088,10.200.0.2:2525' -- $NOPROXY sh -c '
	node -e "fetch(\"http://svc.test:8088/\").then(r => r.text()).then(t => console.log(\"node:\" + t.trim()), e => console.log(\"node-error:\" + e.cause))"
	$PY -c "
import socket
s = socket.create_connection((\"svc.test\", 2525), timeout=10)
print(\"banner:\" + s.recv(100).decode().strip())"
	curl -sS -m 10 http://svc.test:8088/ | sed s/^/curl:/
	getent hosts svc.test | sed s/^/getent:/
	wc -c </etc/resolv.conf | sed s/^/resolv-bytes:/'
EOF
	tp_netns "$1" "$TEST_TMP/inner.sh"
	assert_contains "$OUT" "node:hello-from-netns"
	assert_contains "$OUT" "banner:220 banner-from-netns"
	assert_contains "$OUT" "curl:hello-from-netns"
	# the name stands for an address of the sandbox's pool
	assert_match "$OUT" "getent:198\\.1[89]\\.[0-9.]+ +svc\\.test"
	assert_contains "$OUT" "resolv-bytes:0"
	assert_not_contains "$ERR" "transparent egress unavailable"
}

t_denied_name_and_connection()
{
	sb_home "$1"
	sb_home_own
	cat >"$TEST_TMP/inner.sh" <<EOF
\$SB --net 'allow=svc.test,10.200.0.2:8088' -- $NOPROXY sh -c '
	getent hosts other.test; echo getent-other=\$?
	getent hosts nothing.invalid; echo getent-invalid=\$?
	curl -sS -m 10 http://other.test:8088/; echo curl-other=\$?
	$PY -c "
import socket
for target in ((\"svc.test\", 2525), (\"10.200.0.2\", 2525), (\"10.200.0.2\", 8088)):
    try:
        s = socket.create_connection(target, timeout=10)
        s.sendall(b\"GET / HTTP/1.0\\\\r\\\\n\\\\r\\\\n\")
        print(\"%s:%d=%r\" % (target + (s.recv(100)[:12],)))
    except OSError as e:
        print(\"%s:%d=%s\" % (target + (type(e).__name__,)))"
	# UDP to anything but the sandbox DNS goes nowhere
	$PY -c "
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
s.sendto(b\"x\" * 40, (\"10.200.0.2\", 53))
try: s.recv(100); print(\"udp:answered\")
except OSError: print(\"udp:nothing\")"'
echo "trap=\$(cat $TEST_TMP/trap.count)"
EOF
	tp_netns "$1" "$TEST_TMP/inner.sh"
	assert_contains "$OUT" "getent-other=2"
	assert_contains "$OUT" "getent-invalid=2"
	assert_contains "$OUT" "curl-other=6"
	# not allowed on that port: reset
	assert_contains "$OUT" "svc.test:2525=ConnectionResetError"
	assert_contains "$OUT" "10.200.0.2:2525=ConnectionResetError"
	# an allowed raw address is reached
	assert_contains "$OUT" "10.200.0.2:8088=b'HTTP/1.0 200'"
	assert_contains "$OUT" "udp:nothing"
	# no DNS packet left the sandbox, for any of it
	assert_contains "$OUT" "trap=0"
	local log=$H/.local/state/agentrun/egress.log
	assert_contains "$(cat "$log")" "agentrun: blocked other.test (DNS) $DASH not in the allowlist; add --net allow=other.test"
	assert_contains "$(cat "$log")" "agentrun: blocked svc.test:2525 $DASH resolves to 10.200.0.2, a private (RFC 1918) address; allow that exact address with --net allow=10.200.0.2:2525"
	assert_contains "$(cat "$log")" "agentrun: blocked 10.200.0.2:2525 $DASH not in the allowlist"
	assert_contains "$ERR" "connections blocked: other.test (not in the allowlist)"
}

# A name allowed but resolving (on the host) to a private address is
# refused by its class, transparent or not.
t_name_to_private_refused()
{
	sb_home "$1"
	sb_home_own
	cat >"$TEST_TMP/inner.sh" <<EOF
\$SB --net 'allow=svc.test' -- $NOPROXY sh -c '
	curl -sS -m 10 http://svc.test:8088/; echo curl=\$?'
EOF
	tp_netns "$1" "$TEST_TMP/inner.sh"
	assert_not_contains "$OUT" "hello-from-netns"
	# reset: curl may see it while connecting (7)
	assert_match "$OUT" "curl=(7|52|56)"
	assert_contains "$(cat "$H/.local/state/agentrun/egress.log")" "agentrun: blocked svc.test:8088 $DASH resolves to 10.200.0.2, a private (RFC 1918) address; allow that exact address with --net allow=10.200.0.2:8088"
}

for mode in root user; do
	run_test "transparent egress ($mode): proxy-ignoring clients reach an allowed name" t_proxy_ignoring_clients $mode
	run_test "transparent egress ($mode): denied names NXDOMAIN without a packet, denied connections reset" t_denied_name_and_connection $mode
	run_test "transparent egress ($mode): an allowed name resolving to a private address is refused" t_name_to_private_refused $mode
done
finish
