#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The caller's proxy (a corporate proxy) under the egress proxy: the
# caller's HTTPS_PROXY/HTTP_PROXY/NO_PROXY, or --upstream-proxy URL (the
# profile's "upstream_proxy"), carry the egress proxy's own connections
# once agentrun's policy allowed them: CONNECT through it for tunnels
# (CONNECT, SOCKS5, captured TCP), the absolute-form request for plain
# HTTP. The upstream is a small proxy this test runs on 127.0.0.1 that
# logs what it is asked and relays *.test names to the test's servers;
# nothing else is contacted (names under .test resolve nowhere: only
# the upstream knows them, as behind a split corporate DNS).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

DASH=$'\xe2\x80\x94'
CREDS='proxyuser:s3cr%40t-pw'
CREDS_B64=$(printf 'proxyuser:s3cr@t-pw' | base64)

# up_tls_setup: a test CA and a certificate for tunnel.test and secret.test
# (not sandbox-lib.sh's tls_setup: its certificate is for localhost)
up_tls_setup()
{
	require_cmd openssl curl
	[ -x "$PY" ] || skip "needs $PY"
	local d=$TEST_TMP/uptls
	[ -s "$d/srv.pem" ] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/ca.key" -out "$d/ca.pem" -days 2 -subj /CN=agentrun-test-ca 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/srv.key" -out "$d/srv.csr" -subj /CN=tunnel.test 2>/dev/null
	printf 'subjectAltName=DNS:tunnel.test,DNS:secret.test\n' >"$d/ext"
	openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -out "$d/srv.pem" -days 2 -extfile "$d/ext" 2>/dev/null
	chmod 0755 "$d"
	chmod 0644 "$d"/*.pem
}

# wait_file FILE: until FILE has something (10 s)
wait_file()
{
	for _ in $(seq 100); do
		[ -s "$1" ] && return 0
		sleep 0.1
	done
	fail "$1 never written"
}

# up_tls_server LOG: an HTTPS server on 127.0.0.1 logging each request's
# Authorization header; sets TLS_PORT
up_tls_server()
{
	local log=$1 pf=$TEST_TMP/tls-port-$RANDOM
	timeout 120 "$PY" "$AR_TEST_HELPERS/http_server.py" --port-file "$pf" \
		--log "$log" --tls "$TEST_TMP/uptls" &
	defer kill $!
	wait_file "$pf"
	TLS_PORT=$(cat "$pf")
}

# upstream LOG TLSPORT: the test's upstream proxy on 127.0.0.1, one
# line per request in LOG ("CONNECT host:port auth=..." or "GET url
# auth=..."); CONNECT to NAME.test:443 is relayed to 127.0.0.1:TLSPORT,
# any other target gets 502; a plain GET is answered by the upstream
# itself ("via-upstream URL"). Sets UP_PORT.
upstream()
{
	local log=$1 pf=$TEST_TMP/up-port-$RANDOM
	timeout 120 "$PY" -c '
import socket, socketserver, sys, threading, os
log = open(sys.argv[2], "a")
tls_port = int(sys.argv[3])
lock = threading.Lock()
def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    try:
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
class H(socketserver.BaseRequestHandler):
    def handle(self):
        c = self.request
        head = b""
        while b"\r\n\r\n" not in head:
            d = c.recv(1)
            if not d:
                return
            head += d
        lines = head.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        auth = "-"
        for l in lines[1:]:
            if l.lower().startswith("proxy-authorization:"):
                auth = l.split(":", 1)[1].strip()
        with lock:
            log.write("%s %s auth=%s\n" % (method, target, auth)); log.flush()
        if method != "CONNECT":
            b = ("via-upstream %s\n" % target).encode()
            c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(b) + b)
            return
        host, port = target.rsplit(":", 1)
        if not host.endswith(".test") or port != "443":
            c.sendall(b"HTTP/1.1 502 No Such Host Here\r\nContent-Length: 0\r\n\r\n")
            return
        u = socket.create_connection(("127.0.0.1", tls_port))
        c.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        t = threading.Thread(target=pipe, args=(u, c), daemon=True)
        t.start()
        pipe(c, u)
        t.join()
        u.close()
socketserver.TCPServer.allow_reuse_address = True
socketserver.ThreadingTCPServer.daemon_threads = True
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
open(sys.argv[1] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
s.serve_forever()' "$pf" "$log" "$2" &
	defer kill $!
	wait_file "$pf"
	UP_PORT=$(cat "$pf")
}

# up_run VAR=VALUE... -- ARGS...: the sandbox as MODE from $WS with
# exactly these variables added (the caller's proxy settings), the test
# CA trusted by the runtime for --secret
up_run()
{
	local vars=(HOME="$H" SSL_CERT_FILE="$TEST_TMP/uptls/ca.pem" TOKEN=real-token-5b1e)
	while [ "$1" != -- ]; do
		vars+=("$1")
		shift
	done
	shift
	if [ "$MODE" = root ]; then
		(cd "$WS" && env "${vars[@]}" "$AGENTRUN" --root "$AR_ROOT" \
			sandbox --no-tty "$@")
	else
		as_test_user env "${vars[@]}" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

CURL="curl -sS -m 20 --noproxy ''"

# The caller's variables: tunnels and plain HTTP go through the
# upstream with its credentials; refused destinations (not allowed, the
# upstream's own loopback address) never reach it; NO_PROXY bypasses it;
# the agent sees only the sandbox's own proxy variables, never the
# upstream or its password.
t_upstream_from_env()
{
	sb_home "$1"
	sb_home_own
	up_tls_setup
	local tlog=$TEST_TMP/tls-$RANDOM.log ulog=$TEST_TMP/up-$RANDOM.log
	: >"$tlog"
	: >"$ulog"
	up_tls_server "$tlog"
	upstream "$ulog" "$TLS_PORT"
	local url="http://$CREDS@127.0.0.1:$UP_PORT"
	assert_status 0 up_run HTTPS_PROXY="$url" http_proxy="$url" \
		NO_PROXY="other.example,.bypass.test,10.9.0.0/16" -- \
		--net "allow=tunnel.test,plain.test,www.bypass.test,localhost" -- sh -c "
		echo \"inside-https=\$HTTPS_PROXY inside-http=\$http_proxy\"
		$CURL -k https://tunnel.test/ | sed s/^/tunnel:/
		$CURL http://plain.test/a?b=1 | sed s/^/plain:/
		$CURL -i --request-target '/a http://denied.test/' http://plain.test/ | sed s/^/blank:/
		$CURL -i http://denied.test/ | sed s/^/denied:/
		$CURL -i -p -x http://127.0.0.1:3128 http://localhost:$UP_PORT/ | sed s/^/self:/
		$CURL -i http://www.bypass.test/ | sed s/^/bypass:/
		curl -sS -m 20 --noproxy '*' -k https://tunnel.test/ | sed s/^/captured:/
		cat /proc/[0-9]*/environ 2>/dev/null | tr '\\\\0' '\\\\n' | grep -c 's3cr' | sed s/^/environ-hits:/
		echo done"
	assert_contains "$OUT" "inside-https=http://127.0.0.1:3128 inside-http=http://127.0.0.1:3128"
	assert_contains "$OUT" "tunnel:ok-from-tls"
	assert_contains "$OUT" "plain:via-upstream http://plain.test/a?b=1"
	assert_contains "$OUT" "denied:HTTP/1.1 403"
	assert_contains "$OUT" "blank:HTTP/1.1 400 Bad Request (agentrun: a blank in the request target)"
	assert_contains "$OUT" "self:HTTP/1.1 403"
	assert_contains "$OUT" "bypass:agentrun: cannot resolve www.bypass.test"
	assert_contains "$OUT" "environ-hits:0"
	assert_contains "$OUT" "done"
	# through the upstream, with its credentials
	assert_contains "$(cat "$ulog")" "CONNECT tunnel.test:443 auth=Basic $CREDS_B64"
	assert_contains "$(cat "$ulog")" "GET http://plain.test/a?b=1 auth=Basic $CREDS_B64"
	# refused or bypassed: never at the upstream
	assert_not_contains "$(cat "$ulog")" "denied.test"
	assert_not_contains "$(cat "$ulog")" "localhost"
	assert_not_contains "$(cat "$ulog")" "bypass.test"
	if grep -q "^captured:" <<<"$OUT"; then
		assert_contains "$OUT" "captured:ok-from-tls"
		assert_eq "$(grep -c 'CONNECT tunnel.test:443' "$ulog")" 2
	fi
	# the credentials are in no line of agentrun's
	assert_not_contains "$ERR" "s3cr"
	assert_not_contains "$OUT" "s3cr"
}

# A dead upstream: 502 with the reason, for tunnels and plain HTTP.
t_upstream_dead()
{
	sb_home "$1"
	sb_home_own
	up_tls_setup
	local dead
	dead=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	assert_status 0 up_run -- --upstream-proxy "http://$CREDS@127.0.0.1:$dead" \
		--net allow=tunnel.test,plain.test -- sh -c "
		$CURL -k https://tunnel.test/ 2>&1 | sed s/^/tunnel:/
		$CURL -i http://plain.test/ | sed s/^/plain:/"
	assert_contains "$OUT" "tunnel:curl: (56) CONNECT tunnel failed, response 502"
	assert_contains "$OUT" "plain:HTTP/1.1 502 Bad Gateway (agentrun: cannot reach the upstream proxy 127.0.0.1:$dead: Connection refused)"
	assert_contains "$ERR" "its connections through the upstream proxy 127.0.0.1:$dead from --upstream-proxy"
	assert_not_contains "$ERR" "s3cr"
	assert_not_contains "$OUT" "s3cr"
}

# --secret through the upstream: the value still goes into requests to
# its host (the TLS interception runs on top of the upstream's tunnel),
# and the upstream never sees it (it only relays TLS).
t_upstream_secret()
{
	sb_home "$1"
	sb_home_own
	up_tls_setup
	local tlog=$TEST_TMP/tls-$RANDOM.log ulog=$TEST_TMP/up-$RANDOM.log
	: >"$tlog"
	: >"$ulog"
	up_tls_server "$tlog"
	upstream "$ulog" "$TLS_PORT"
	assert_status 0 up_run -- --upstream-proxy "http://127.0.0.1:$UP_PORT" \
		--net allow=secret.test --secret TOKEN=secret.test -- sh -c "
		$CURL -H \"Authorization: Bearer \$TOKEN\" https://secret.test/ | sed s/^/got:/"
	assert_contains "$OUT" "got:ok-from-tls"
	assert_eq "$(cat "$tlog")" "auth=Bearer real-token-5b1e"
	assert_eq "$(cat "$ulog")" "CONNECT secret.test:443 auth=-"
}

# ctlx ARGS...: `agentrun sandbox ARGS` as MODE (requests, answer)
ctlx()
{
	if [ "$MODE" = root ]; then
		"$AGENTRUN" --root "$AR_ROOT" sandbox "$@"
	else
		as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" sandbox "$@"
	fi
}

# --net ask behind a split DNS: a name agentrun cannot resolve is still
# asked about (by name), and once granted goes to the upstream by name.
t_upstream_ask()
{
	sb_home "$1"
	sb_home_own
	require_cmd jq
	local ulog=$TEST_TMP/up-$RANDOM.log name=upask$RANDOM id= pid
	: >"$ulog"
	upstream "$ulog" 1
	up_run -- --name "$name" --upstream-proxy "http://127.0.0.1:$UP_PORT" \
		--net ask --ask-timeout 60 -- sh -c \
		"$CURL http://asked.test/x | sed s/^/asked:/" >"$TEST_TMP/ask.out" 2>&1 &
	pid=$!
	for _ in $(seq 200); do
		id=$(ctlx requests "$name" --json 2>/dev/null | jq -r '.[0].id // empty' 2>/dev/null) || true
		[ -n "$id" ] && break
		sleep 0.05
	done
	[ -n "$id" ] || { wait "$pid"; fail "no request to answer: $(cat "$TEST_TMP/ask.out")"; }
	assert_status 0 ctlx answer "$name" "$id" once
	wait "$pid" || fail "the sandbox failed: $(cat "$TEST_TMP/ask.out")"
	assert_contains "$(cat "$TEST_TMP/ask.out")" "asked:via-upstream http://asked.test/x"
	assert_contains "$(cat "$ulog")" "GET http://asked.test/x auth=-"
}

# Bad values: a clear error naming the option or file, never the
# password; the caller's unusable variable is a warning.
t_upstream_errors()
{
	sb_home "$1"
	sb_home_own
	assert_status '!0' up_run -- --upstream-proxy "socks5://u:pw9@127.0.0.1:1" \
		--net allow=a.test -- true
	assert_contains "$ERR" "--upstream-proxy: only an http:// proxy is supported as the upstream"
	assert_not_contains "$ERR" "pw9"
	assert_status '!0' up_run -- --upstream-proxy "http://127.0.0.1:1" -- true
	assert_contains "$ERR" "--upstream-proxy is for the egress proxy's own connections; it needs --net allow"
	assert_status '!0' up_run -- --upstream-proxy "http://127.0.0.1:1/path" \
		--net allow=a.test -- true
	assert_contains "$ERR" "without a path"
	printf '{"upstream_proxy": "ftp://x:1", "net": {"allow": ["a.test"]}}\n' >"$H/p.json"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$H/p.json"
	assert_status '!0' up_run -- --profile "$H/p.json" -- true
	assert_contains "$ERR" "p.json: upstream_proxy: only an http:// proxy"
	assert_status 0 up_run HTTPS_PROXY="socks5h://127.0.0.1:1" -- --net allow=a.test -- true
	assert_contains "$ERR" "HTTPS_PROXY: only an http:// proxy is supported as the upstream"
	assert_contains "$ERR" "the egress proxy connects directly"
}

for mode in user root; do
	run_test "egress upstream ($mode): the caller's proxy variables carry the allowed connections only" t_upstream_from_env $mode
	run_test "egress upstream ($mode): a dead upstream is a 502 with the reason" t_upstream_dead $mode
	run_test "egress upstream ($mode): --secret is injected through the upstream's tunnel" t_upstream_secret $mode
	run_test "egress upstream ($mode): bad upstream settings are clear errors" t_upstream_errors $mode
	run_test "egress upstream ($mode): --net ask asks about a name only the upstream resolves" t_upstream_ask $mode
done
finish
