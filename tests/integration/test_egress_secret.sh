#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun sandbox --secret NAME=HOST-PATTERN`: the sandbox's NAME is a
# placeholder; the egress proxy intercepts HTTPS to the listed hosts (a
# per-sandbox CA trusted inside) and puts the real value in the request
# headers, only there. Two HTTPS test servers on loopback (a test CA the
# runtime trusts through SSL_CERT_FILE); nothing else is contacted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

SECRET=real-secret-value-7f3a9c

# tls_server LOG [keep]: an HTTPS server on 127.0.0.1 (certificate:
# localhost) writing the Authorization header of each request to LOG;
# sets PORT. With "keep": "host=HOST auth=..." lines, and every
# connection kept open for the next request until the client closes it,
# whatever "Connection: close" says (a server that reads what a
# keep-alive client sends after the first request).
tls_server()
{
	local log=$1 pf=$TEST_TMP/tls-port-$RANDOM opts=(--fields auth)
	[ "${2:-}" != keep ] || opts=(--fields host,auth --keep-alive)
	timeout 120 "$PY" "$AR_TEST_HELPERS/http_server.py" --port-file "$pf" \
		--log "$log" --tls "$TEST_TMP/tls" "${opts[@]}" &
	defer kill $!
	for _ in $(seq 100); do
		[ -s "$pf" ] && break
		sleep 0.1
	done
	PORT=$(cat "$pf")
}

# sec_run ARGS...: the sandbox as MODE with TOKEN set and the test CA
# trusted by the runtime (for its upstream connections)
sec_run()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && TOKEN=$SECRET SSL_CERT_FILE=$TEST_TMP/tls/ca.pem HOME=$H \
			"$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" TOKEN=$SECRET SSL_CERT_FILE="$TEST_TMP/tls/ca.pem" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

t_secret_injected_only_there()
{
	sb_home "$1"
	sb_home_own
	tls_setup curl
	local log1=$TEST_TMP/auth1-$RANDOM log2=$TEST_TMP/auth2-$RANDOM p1 p2
	: >"$log1"
	: >"$log2"
	tls_server "$log1"
	p1=$PORT
	tls_server "$log2"
	p2=$PORT
	assert_status 0 sec_run --net "allow=localhost:$p1,localhost:$p2" \
		--secret "TOKEN=localhost:$p1" -- sh -c "
		echo \"inside=\$TOKEN\"
		echo \"cadir=\${SSL_CERT_FILE%/*}\"
		curl -sS -m 10 --noproxy '' -H \"Authorization: Bearer \$TOKEN\" https://localhost:$p1/ | sed s/^/one:/
		# tunnelled untouched: the test CA's certificate, not trusted
		# inside (-k)
		curl -k -sS -m 10 --noproxy '' -H \"Authorization: Bearer \$TOKEN\" https://localhost:$p2/ | sed s/^/two:/
		# the real value is nowhere inside: environments, files
		cat /proc/[0-9]*/environ 2>/dev/null | tr '\\\\0' '\\\\n' | grep -c '$SECRET' | sed s/^/environ-hits:/
		grep -rls '$SECRET' /tmp /etc \"\$HOME\" . 2>/dev/null | sed s/^/file-hit:/
		echo done"
	assert_contains "$OUT" "one:ok-from-tls"
	assert_contains "$OUT" "two:ok-from-tls"
	assert_match "$OUT" "inside=agentrun-secret-[0-9a-f]{32}"
	assert_not_contains "$OUT" "inside=$SECRET"
	assert_contains "$OUT" "environ-hits:0"
	assert_not_contains "$OUT" "file-hit:"
	assert_contains "$OUT" "done"
	# the listed host got the value, the other one the placeholder
	assert_eq "$(cat "$log1")" "auth=Bearer $SECRET"
	assert_match "$(cat "$log2")" "^auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	# this sandbox's CA is gone after the run (not any agentrun-ca-*:
	# another sandbox of a parallel run may have one, issue 31)
	local ca
	ca=$(sed -n 's/^cadir=//p' <<<"$OUT")
	assert_match "$ca" "^/tmp/agentrun-ca-[A-Za-z0-9]{6}$"
	[ ! -e "$ca" ] || fail "the CA directory $ca is left"
}

# The attack: an intercepted connection to the listed host (CONNECT
# localhost:P, SNI localhost) whose request names another host — in its
# Host header, in an absolute-form target, with a trailing dot. A
# shared front routes by Host: the value must not go with it. Each such
# request is forwarded with the placeholder, recorded (secret_withheld)
# and summed up at exit; the right host, however spelled, still gets
# the value.
t_secret_follows_the_request()
{
	sb_home "$1"
	sb_home_own
	tls_setup curl
	local log=$TEST_TMP/auth-host-$RANDOM audit=$H/audit.jsonl p
	: >"$log"
	tls_server "$log" keep
	p=$PORT
	assert_status 0 sec_run --audit "$audit" --net "allow=localhost:$p" \
		--secret "TOKEN=localhost:$p" -- sh -c "
		c() { curl -sS -m 10 --noproxy '' -H \"Authorization: Bearer \$TOKEN\" \"\$@\" https://localhost:$p/ | sed s/^/got:/; }
		c -H 'Host: other.test'
		c --request-target https://other.test/
		c -H 'Host: LOCALHOST:$p'
		c
		c -H 'Host: localhost.:$p'"
	assert_eq "$(grep -c got:ok-from-tls <<<"$OUT")" 5
	assert_match "$(sed -n 1p "$log")" "^host=other.test auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_match "$(sed -n 2p "$log")" "^host=localhost:$p auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_eq "$(sed -n 3p "$log")" "host=LOCALHOST:$p auth=Bearer $SECRET"
	assert_eq "$(sed -n 4p "$log")" "host=localhost:$p auth=Bearer $SECRET"
	assert_match "$(sed -n 5p "$log")" "^host=localhost.:$p auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_eq "$(grep -c "$SECRET" "$log")" 2
	# recorded, one event per request, and summed up at exit
	assert_eq "$(jq -s '[.[] | select(.event == "secret_withheld")] | length' "$audit")" 3
	assert_eq "$(jq -r -s '[.[] | select(.event == "secret_withheld") | .asked] | join(",")' "$audit")" \
		"other.test,other.test,localhost.:$p"
	assert_eq "$(jq -r -s '[.[] | select(.event == "secret_withheld")][0] | "\(.host):\(.port) \(.refused)"' "$audit")" \
		"localhost:$p false"
	assert_contains "$ERR" "agentrun: 3 requests through a --secret connection were not for its host and got no value: localhost:$p (its Host header names another host: other.test) and others"
	assert_not_contains "$(cat "$audit")" "$SECRET"
}

# The requests a client sends after the first on one connection
# (keep-alive, pipelined), to a server that keeps the connection open
# whatever "Connection: close" says: the value never goes with them,
# whichever host they name; the first request is judged by its own Host.
# Two Host headers are refused (400) and never reach the server.
t_secret_keepalive()
{
	sb_home "$1"
	cat >"$WS/raw.py" <<'PYEOF'
import os, re, socket, ssl, sys
hp = (os.environ.get("HTTPS_PROXY") or os.environ["https_proxy"]).split("://", 1)[1].rstrip("/")
ph, pp = hp.rsplit(":", 1)
target, tok = sys.argv[1], os.environ["TOKEN"]
reqs = b"".join(a.replace("TOK", tok).replace("|", "\r\n").encode() for a in sys.argv[2:])
s = socket.create_connection((ph, int(pp)), timeout=20)
s.sendall(b"CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target.encode(), target.encode()))
r = b""
while b"\r\n\r\n" not in r:
    d = s.recv(1)
    if not d:
        sys.exit("the proxy closed")
    r += d
t = ssl.create_default_context().wrap_socket(s, server_hostname=target.rsplit(":", 1)[0])
t.sendall(reqs)
got = b""
while got.count(b"HTTP/1.1 ") < len(sys.argv) - 2:
    d = t.recv(65536)
    if not d:
        break
    got += d
print("statuses:" + ",".join(c.decode() for c in re.findall(rb"HTTP/1\.1 (\d+)", got)))
t.close()
PYEOF
	sb_home_own
	tls_setup curl
	local log=$TEST_TMP/auth-keep-$RANDOM audit=$H/audit.jsonl p
	: >"$log"
	tls_server "$log" keep
	p=$PORT
	assert_status 0 sec_run --audit "$audit" --net "allow=localhost:$p" \
		--secret "TOKEN=localhost:$p" -- sh -c "
		$PY raw.py localhost:$p 'GET /1 HTTP/1.1|Host: localhost:$p|Authorization: Bearer TOK||' 'GET /2 HTTP/1.1|Host: other.test|Authorization: Bearer TOK||'
		$PY raw.py localhost:$p 'GET /3 HTTP/1.1|Host: other.test|Authorization: Bearer TOK||' 'GET /4 HTTP/1.1|Host: localhost:$p|Authorization: Bearer TOK||'
		$PY raw.py localhost:$p 'GET /5 HTTP/1.1|Host: localhost:$p|Host: other.test|Authorization: Bearer TOK||'"
	assert_eq "$(grep -c statuses:200,200 <<<"$OUT")" 2
	assert_contains "$OUT" "statuses:400"
	assert_eq "$(sed -n 1p "$log")" "host=localhost:$p auth=Bearer $SECRET"
	assert_match "$(sed -n 2p "$log")" "^host=other.test auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_match "$(sed -n 3p "$log")" "^host=other.test auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_match "$(sed -n 4p "$log")" "^host=localhost:$p auth=Bearer agentrun-secret-[0-9a-f]{32}$"
	assert_eq "$(wc -l <"$log")" 4
	assert_eq "$(jq -r -s '[.[] | select(.event == "secret_withheld") | "\(.asked) \(.refused)"] | join(",")' "$audit")" \
		"other.test false,localhost:$p true"
}

# The variable passed on purpose (--env NAME, a profile's "env") still
# holds only the placeholder.
t_secret_beats_env_pass()
{
	sb_home "$1"
	sb_home_own
	tls_setup curl
	printf '{"env": ["TOKEN"]}\n' >"$H/p.json"
	chmod 0644 "$H/p.json"
	assert_status 0 sec_run --env TOKEN --net allow=x.test --secret TOKEN=x.test -- sh -c 'echo "v=$TOKEN"'
	assert_match "$OUT" "v=agentrun-secret-[0-9a-f]{32}"
	assert_status 0 sec_run --profile "$H/p.json" --net allow=x.test --secret TOKEN=x.test -- sh -c 'echo "v=$TOKEN"'
	assert_match "$OUT" "v=agentrun-secret-[0-9a-f]{32}"
	assert_not_contains "$OUT" "$SECRET"
}

# "secret" in a profile: a variable that is not set is skipped, one that
# is gets the placeholder and is injected.
t_secret_in_profile()
{
	sb_home "$1"
	sb_home_own
	tls_setup curl
	local log=$TEST_TMP/auth3-$RANDOM
	: >"$log"
	tls_server "$log"
	printf '{"net": {"allow": ["localhost:%s"]}, "secret": ["TOKEN=localhost:%s", "UNSET_SECRET_X=localhost"]}\n' "$PORT" "$PORT" >"$H/s.json"
	chmod 0644 "$H/s.json"
	assert_status 0 sec_run --profile "$H/s.json" -- sh -c "
		echo \"v=\$TOKEN u=\${UNSET_SECRET_X:-unset}\"
		curl -sS -m 10 --noproxy '' -H \"Authorization: Bearer \$TOKEN\" https://localhost:$PORT/"
	assert_match "$OUT" "v=agentrun-secret-[0-9a-f]{32} u=unset"
	assert_contains "$OUT" "ok-from-tls"
	assert_eq "$(cat "$log")" "auth=Bearer $SECRET"
}

t_secret_errors()
{
	sb_home "$1"
	sb_home_own
	tls_setup curl
	assert_status '!0' sec_run --secret TOKEN=localhost -- true
	assert_contains "$ERR" "--secret needs --net allow="
	assert_status '!0' sec_run --net allow=x.test --secret NOPE_UNSET=x.test -- true
	assert_contains "$ERR" "NOPE_UNSET is not set in the environment"
	assert_status '!0' sec_run --net allow=x.test --secret TOKEN -- true
	assert_contains "$ERR" "expected NAME=HOST-PATTERN"
}

for mode in root user; do
	MODE=$mode
	run_test "secret ($mode): the real value reaches the listed HTTPS host only, never the sandbox" t_secret_injected_only_there $mode
	run_test "secret ($mode): --env NAME or a profile cannot pass the real value" t_secret_beats_env_pass $mode
	run_test "secret ($mode): \"secret\" in a profile" t_secret_in_profile $mode
	run_test "secret ($mode): errors" t_secret_errors $mode
	run_test "secret ($mode): a request naming another host than the connection's gets the placeholder, recorded" t_secret_follows_the_request $mode
	run_test "secret ($mode): keep-alive and pipelined requests never get the value; two Host headers refused" t_secret_keepalive $mode
done
finish
