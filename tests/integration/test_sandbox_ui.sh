#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The web dashboard, `agentrun ui` (runtime/sandbox/ui/, docs/sandbox.md
# "The web dashboard"), rootless and as root, with curl: the one-time
# token and its session cookie, the Host header (DNS rebinding), the
# Origin and the CSRF token of every POST, no CORS; the happy path
# answers a pending `--net ask` request and the agent's waiting client
# completes; the stream (SSE) shows it; no secret value in the API; a
# `--net allow=` rule to the dashboard's port refused at start; a grant
# of the dashboard's port refused. Every server is on 127.0.0.1.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl
[ -x "$PY" ] || skip "needs $PY"

# the page's files where the test user reads them
UI_DIR=$TEST_TMP/ui-assets
mkdir -p "$UI_DIR"
cp "$TOP_SRCDIR"/contrib/ui/index.html "$TOP_SRCDIR"/contrib/ui/app.js \
	"$TOP_SRCDIR"/contrib/ui/app.css "$UI_DIR/"
chmod -R a+rX "$UI_DIR"

# ui_start [OPTIONS]: `agentrun ui` as MODE's user, stopped when the test
# ends; sets UI_URL (with the token), UI_PORT, UI, JAR
ui_start()
{
	local out=$TEST_TMP/ui-$RANDOM.out
	# HOME: the sandboxes' (where --overlay keeps its changes)
	if [ "$MODE" = root ]; then
		HOME=${H:-$HOME} AGENTRUN_UI_DIR=$UI_DIR "$AGENTRUN" \
			--root "$AR_ROOT" ui "$@" >"$out" 2>&1 &
	else
		as_test_user ${H:+HOME="$H"} AGENTRUN_UI_DIR="$UI_DIR" \
			"$AGENTRUN" --root "$AR_USER_ROOT" ui "$@" >"$out" 2>&1 &
	fi
	# (as the test user $! is a subshell: the pid from the port file)
	UI_PID=$!
	defer kill "$UI_PID"
	wait_until 10 grep -q 'http://127.0.0.1:' "$out"
	UI_PID=$(cut -d' ' -f2 "$(ctl_root_dir)/.ui/port")
	defer kill "$UI_PID"
	UI_URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*' "$out")
	UI_PORT=$(sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' <<<"$UI_URL")
	UI=http://127.0.0.1:$UI_PORT
	JAR=$TEST_TMP/jar-$RANDOM
	[ -n "$UI_PORT" ] || fail "no URL: $(cat "$out")"
}

# code ARGS...: curl's status code (the body into $BODY)
BODY=$TEST_TMP/body
code()
{
	curl -sS -m 10 --noproxy '*' -o "$BODY" -w '%{http_code}' "$@"
}

ui_login()
{
	assert_eq "$(code -c "$JAR" "$UI_URL")" 303 "the token's first load"
	CSRF=$(curl -sS -m 5 --noproxy '*' -b "$JAR" "$UI/api/session" | jq -r .csrf)
	[ "${#CSRF}" = 64 ] || fail "no CSRF token: $CSRF"
}

# raw REQUEST: the status of a request written as is (printf escapes)
raw()
{
	"$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(sys.argv[2].encode().decode("unicode_escape").encode())
print(s.recv(4096).split(b" ")[1].decode())' "$UI_PORT" "$1"
}

# the session cookie of JAR, as NAME=VALUE
cookie()
{
	awk '$6 == "agentrun_ui" { print $6 "=" $7 }' "$JAR"
}

# post PATH JSON [ORIGIN]: a POST as the page makes it (from ORIGIN)
post()
{
	code -b "$JAR" -H "Origin: ${3:-$UI}" -H "X-CSRF-Token: $CSRF" \
		-H 'Content-Type: application/json' -d "$2" "$UI$1"
}

# ui_stream FILE: the dashboard's stream (SSE), as the page reads it,
# into FILE, each line with the time it arrived: TIME_NS LINE
ui_stream()
{
	"$PY" -c '
import sys, time, http.client
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=60)
c.request("GET", "/api/events", headers={"Cookie": sys.argv[2]})
r = c.getresponse()
out = open(sys.argv[3], "w")
while True:
    line = r.readline()
    if not line:
        break
    out.write("%d %s" % (time.time_ns(), line.decode()))
    out.flush()' "$UI_PORT" "$(cookie)" "$1" 2>&1 &
	defer kill $!
}

# the ids of NAME's pending requests through the dashboard's API
ui_pending()
{
	curl -sS -m 5 --noproxy '*' -b "$JAR" "$UI/api/sandboxes" |
		jq -r ".sandboxes[] | select(.sandbox==\"$1\") | .requests[].id"
}

# write_run: run.sh PORT, the agent: one request, then it waits
write_run()
{
	printf '#!/bin/sh\nwhile [ ! -e go ]; do sleep 0.05; done\n./get.sh "$1" r1\nsleep 600\n' >"$WS/run.sh"
	chmod 0755 "$WS/run.sh"
}

# wait_pending NAME: the id of NAME's first pending request (in ID)
wait_pending()
{
	ID=
	for _ in $(seq 200); do
		ID=$(ui_pending "$1")
		[ -n "$ID" ] && return 0
		sleep 0.05
	done
	fail "no pending request in the API: $(curl -sS -b "$JAR" "$UI/api/sandboxes")"
}

t_api()
{
	local name=ui$RANDOM id t0 t1 ev ans line
	sb_serve_home "$1"
	write_run
	sb_home_own
	ui_start
	# nothing without the token's session
	assert_eq "$(code "$UI/")" 403 "the page without a session"
	assert_eq "$(code "$UI/api/sandboxes")" 403
	assert_eq "$(code "$UI/api/events")" 403
	assert_eq "$(code "$UI/api/session")" 403
	assert_eq "$(code "$UI/?token=$(printf '%064d' 0)")" 403 "a wrong token"
	assert_eq "$(code -X POST -H "Origin: $UI" -H 'Content-Type: application/json' -d '{}' "$UI/api/answer")" 403
	# neither a HEAD nor a prefetch spends the token
	assert_eq "$(code -I "$UI_URL")" 403 "a HEAD"
	assert_eq "$(code -H 'Sec-Purpose: prefetch;prerender' "$UI_URL")" 403 "a prefetch"
	# the token, once: a session cookie, HttpOnly and SameSite=Strict
	assert_eq "$(code -D "$TEST_TMP/login" -c "$JAR" "$UI_URL")" 303 "the token's first load"
	assert_match "$(cat "$TEST_TMP/login")" "Set-Cookie: agentrun_ui=[0-9a-f]{64}; HttpOnly; SameSite=Strict; Path=/"
	CSRF=$(curl -sS -m 5 --noproxy '*' -b "$JAR" "$UI/api/session" | jq -r .csrf)
	[ "${#CSRF}" = 64 ] || fail "no CSRF token: $CSRF"
	assert_eq "$(code "$UI_URL")" 403 "the token a second time"
	assert_contains "$(cat "$BODY")" "used already"
	assert_eq "$(code -b "$JAR" "$UI/api/sandboxes")" 200
	assert_eq "$(code -b "$JAR" "$UI/")" 200
	# DNS rebinding: a page of evil.example resolving to 127.0.0.1
	assert_eq "$(code -b "$JAR" -H "Host: evil.example:$UI_PORT" "$UI/api/sandboxes")" 421
	assert_eq "$(code -b "$JAR" -H "Host: evil.example:$UI_PORT" "$UI/api/events")" 421
	assert_eq "$(code -b "$JAR" -H "Host: 127.0.0.1:1" "$UI/")" 421
	assert_eq "$(code -b "$JAR" -H "Host: 127.0.0.1" "$UI/")" 421
	# another origin's reads: refused (browsers send Origin and
	# Sec-Fetch-Site), and no CORS header ever
	assert_eq "$(code -b "$JAR" -H "Origin: http://127.0.0.1:9" "$UI/api/sandboxes")" 403
	assert_eq "$(code -b "$JAR" -H "Sec-Fetch-Site: same-site" "$UI/api/events")" 403
	assert_eq "$(code -b "$JAR" -X OPTIONS -H "Origin: http://127.0.0.1:9" -H 'Access-Control-Request-Method: POST' "$UI/api/answer")" 403
	curl -sS -m 5 --noproxy '*' -b "$JAR" -D "$TEST_TMP/hdr" -o /dev/null "$UI/api/sandboxes"
	assert_not_contains "$(tr 'A-Z' 'a-z' <"$TEST_TMP/hdr")" "access-control-"
	assert_contains "$(cat "$TEST_TMP/hdr")" "Content-Security-Policy: default-src 'none'"
	# a pending request (and a secret in the sandbox's environment)
	sb_bg "$name" --net ask --ask-timeout 120 --env UI_TEST_SECRET=hunter2-s3cret -- ./run.sh "$PORT"
	# the stream, as the page reads it
	ev=$TEST_TMP/ev
	ui_stream "$ev"
	wait_until 10 grep -q "data: {\"sandbox\":\"$name\"}" "$ev"
	touch "$WS/go"
	wait_pending "$name"
	id=$ID
	# the request reached the page's stream within 1 s of its event's
	# time (the control plane's clock)
	wait_until 10 grep -q '"event":"request"' "$ev"
	line=$(grep '"event":"request"' "$ev" | head -1)
	t1=${line%% *}
	t0=$(grep -o '"event":{"time":"[^"]*","event":"request"' <<<"$line" | cut -d'"' -f6)
	t0=$(date -d "$t0" +%s%N)
	echo "# the request in the dashboard's stream $(( (t1 - t0) / 1000 )) us after the control plane made it"
	[ $(( (t1 - t0) / 1000000 )) -lt 1000 ] || fail "the request reached the stream after more than 1 s"
	ans="{\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"once\"}"
	# the state-changing attacks: nothing changes
	assert_eq "$(code -b "$JAR" -H 'Content-Type: application/json' -H "X-CSRF-Token: $CSRF" -d "$ans" "$UI/api/answer")" 403 "a POST without Origin"
	assert_eq "$(post /api/answer "$ans" "http://127.0.0.1:9")" 403 "another port's Origin"
	assert_eq "$(post /api/answer "$ans" "http://evil.example")" 403 "a foreign Origin"
	assert_eq "$(post /api/answer "$ans" "http://localhost.evil.example:$UI_PORT")" 403 "a foreign Origin"
	assert_eq "$(post /api/answer "$ans" null)" 403 "a null Origin"
	assert_eq "$(code -b "$JAR" -H "Origin: $UI" -H "Origin: http://evil.example" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' -d "$ans" "$UI/api/answer")" 403 "two Origin headers"
	assert_eq "$(raw "GET /api/sandboxes HTTP/1.1\r\nHost: 127.0.0.1:$UI_PORT\r\nHost: evil.example\r\nCookie: $(cookie)\r\n\r\n")" 421 "two Host headers"
	assert_eq "$(raw "GET /api/sandboxes HTTP/1.1\r\nHost: 127.0.0.1:$UI_PORT\r\nCookie: $(cookie)\r\n\r\n")" 200 "raw"
	assert_eq "$(code -b "$JAR" -H "Origin: $UI" -H 'Content-Type: application/json' -d "$ans" "$UI/api/answer")" 403 "no CSRF token"
	assert_contains "$(cat "$BODY")" CSRF
	assert_eq "$(code -b "$JAR" -H "Origin: $UI" -H "X-CSRF-Token: ${CSRF%?}x" -H 'Content-Type: application/json' -d "$ans" "$UI/api/answer")" 403 "a wrong CSRF token"
	assert_eq "$(code -b "$JAR" -H "Origin: $UI" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: text/plain' -d "$ans" "$UI/api/answer")" 415 "a form's content type"
	assert_eq "$(code -b "$JAR" -H "Host: evil.example:$UI_PORT" -H "Origin: http://evil.example:$UI_PORT" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' -d "$ans" "$UI/api/answer")" 421 "a rebinding POST"
	assert_eq "$(code -H "Origin: $UI" -H "X-CSRF-Token: $CSRF" -H 'Content-Type: application/json' -d "$ans" "$UI/api/answer")" 403 "no cookie"
	assert_eq "$(code -b "$JAR" "$UI/api/answer?sandbox=$name&id=$id&answer=once")" 404 "a GET changes nothing"
	sleep 0.3
	assert_eq "$(ui_pending "$name")" "$id" "the request after the refused attempts"
	[ ! -e "$WS/r1" ] || fail "the connection went through: $(cat "$WS/r1")"
	# bad input
	assert_eq "$(post /api/answer '{"sandbox":"../x","id":"1","answer":"once"}')" 400
	assert_eq "$(post /api/answer "{\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"maybe\"}")" 400
	assert_eq "$(post /api/answer 'not json')" 400
	assert_eq "$(post /api/answer "$(head -c 70000 /dev/zero | tr '\0' a)")" 413
	# the happy path: once, and the agent's waiting client completes
	assert_eq "$(post /api/answer "$ans")" 200 "$(cat "$BODY")"
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 200
	assert_contains "$(cat "$WS/r1")" served
	# the stream: the request and the web answer
	wait_until 10 grep -q '"interface":"web"' "$ev"
	assert_contains "$(cat "$ev")" "data: {\"sandbox\":\"$name\",\"event\":{"
	assert_contains "$(cat "$ev")" '"event":"request"'
	assert_contains "$(cat "$ev")" "\"event\":\"answer\",\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"once\""
	# no secret value anywhere the page reads
	assert_eq "$(code -b "$JAR" "$UI/api/sandboxes")" 200
	cat "$BODY" >>"$ev"
	assert_eq "$(code -b "$JAR" "$UI/api/session")" 200
	cat "$BODY" >>"$ev"
	# the policy comes from the session's config, which has the
	# sandbox's environment: only the policy's fields leave it
	grep -q hunter2-s3cret "$(ctl_root_dir)/.sandboxes/$name/config.json" ||
		fail "the test's secret is not in the session's config"
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=$name")" 200
	assert_eq "$(jq -r .net "$BODY")" allow
	assert_eq "$(jq -r .workspace "$BODY")" "$WS"
	assert_contains "$(jq -r '.mounts[].destination' "$BODY")" "$WS"
	cat "$BODY" >>"$ev"
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=../x")" 400
	assert_eq "$(code "$UI/api/policy?name=$name")" 403
	assert_not_contains "$(cat "$ev")" hunter2-s3cret
}

# Item 1 of the dashboard's policy: the network policy in force, as the
# control plane knows it (the allowlist, `ask`, a --secret by its name
# and hosts, the live grants, the session answers), changed while the
# sandbox runs and announced on the page's stream; never a secret's
# value. And the process that asks, named in the pending request.
t_policy()
{
	local name=uipol$RANDOM id ev tok=tok-$RANDOM$RANDOM-value
	sb_serve_home "$1"
	mkdir -p "$H/shared"
	write_run
	sb_home_own
	ui_start
	ui_login
	# the secret's value comes from the caller's environment
	SB_ENV=("UI_TOKEN=$tok")
	sb_bg "$name" --net allow=allowed.example,ask --ask-timeout 120 \
		--secret UI_TOKEN=api.example.com -- ./run.sh "$PORT"
	SB_ENV=()
	ev=$TEST_TMP/ev-$name
	ui_stream "$ev"
	wait_until 10 grep -q "data: {\"sandbox\":\"$name\"}" "$ev"
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=$name")" 200
	cat "$BODY" >>"$ev"
	assert_eq "$(jq -c .live.allow "$BODY")" '["allowed.example"]'
	assert_eq "$(jq -r .live.ask "$BODY")" true
	assert_eq "$(jq -c .live.secrets "$BODY")" '[{"name":"UI_TOKEN","hosts":["api.example.com"]}]'
	assert_eq "$(jq -c .live.grants "$BODY")" '[]'
	assert_eq "$(jq -c .live.session "$BODY")" '[]'
	# the agent asks: the request names its process
	touch "$WS/go"
	wait_pending "$name"
	id=$ID
	assert_eq "$(code -b "$JAR" "$UI/api/sandboxes")" 200
	cat "$BODY" >>"$ev"
	jq -e ".sandboxes[0].requests[0] | (.pid > 0) and (.sandbox_pid > 0)" "$BODY" >/dev/null ||
		fail "no pid in the request: $(cat "$BODY")"
	assert_contains "$(jq -r '.sandboxes[0].requests[0].exe' "$BODY")" curl
	assert_contains "$(jq -r '.sandboxes[0].requests[0].cmdline' "$BODY")" "http://127.0.0.1:$PORT/"
	# a session answer from the page: in the policy, with who gave it
	assert_eq "$(post /api/answer "{\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"session\"}")" 200 "$(cat "$BODY")"
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" served
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=$name")" 200
	assert_eq "$(jq -c .live.session "$BODY")" "[{\"target\":\"127.0.0.1:$PORT\",\"answer\":\"session\",\"interface\":\"web\",\"uid\":$(ctl_uid)}]"
	# live grants, each an event on the page's stream (its refetch)
	assert_status 0 ctl allow "$name" --net granted.example:443
	assert_status 0 ctl allow "$name" --ro "$H/shared"
	wait_until 10 grep -q "\"event\":\"allow\",\"sandbox\":\"$name\",\"kind\":\"ro\"" "$ev"
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=$name")" 200
	assert_eq "$(jq -c .live.grants "$BODY")" "[{\"kind\":\"net\",\"target\":\"granted.example:443\"},{\"kind\":\"ro\",\"target\":\"$H/shared\"}]"
	# the same from the command line
	assert_status 0 ctl policy "$name"
	assert_match "$OUT" "allow +allowed.example +\\(start"
	assert_match "$OUT" "secret UI_TOKEN +api.example.com +\\(start: --secret"
	assert_match "$OUT" "grant --net +granted.example:443"
	assert_match "$OUT" "grant --ro +$H/shared"
	assert_match "$OUT" "session +127.0.0.1:$PORT +\\(answer by uid $(ctl_uid), web\\)"
	assert_contains "$OUT" "anything else: asked"
	assert_not_contains "$OUT" "$tok"
	assert_status 0 ctl policy "$name" --json
	assert_eq "$(jq -c .grants <<<"$OUT")" "$(jq -c .live.grants "$BODY")"
	assert_status '!0' ctl policy
	assert_status '!0' ctl policy nosuch$RANDOM
	assert_status 0 ctl revoke "$name" --net granted.example:443
	assert_status 0 ctl revoke "$name" --ro "$H/shared"
	assert_status 0 ctl revoke "$name" --net "127.0.0.1:$PORT"
	wait_until 10 grep -q '"event":"revoke"' "$ev"
	assert_eq "$(code -b "$JAR" "$UI/api/policy?name=$name")" 200
	cat "$BODY" >>"$ev"
	assert_eq "$(jq -c .live.grants "$BODY")" '[]'
	assert_eq "$(jq -c .live.session "$BODY")" '[]'
	# the value is in the sandbox (its placeholder is), never in the API
	assert_not_contains "$(cat "$ev")" "$tok"
	assert_not_contains "$(cat "$ev")" "agentrun-secret-"
}

# Attack: a sandbox's --net allow= rule to the dashboard's port.
t_port_rule_refused()
{
	sb_home "$1"
	sb_home_own
	ui_start
	assert_status '!0' sb_run --net "allow=127.0.0.1:$UI_PORT" -- true
	assert_contains "$ERR" "the web dashboard's"
	assert_status '!0' sb_run --net "allow=example.com,localhost:$UI_PORT" -- true
	assert_contains "$ERR" "the web dashboard's"
	assert_status '!0' sb_run --net "allow=[::1]:$UI_PORT" -- true
	assert_contains "$ERR" "the web dashboard's"
	# another port is fine
	assert_status 0 sb_run --net "allow=127.0.0.1:$((UI_PORT == 65535 ? 65534 : UI_PORT + 1))" -- true
	# the dashboard gone, its port is an ordinary one
	kill "$UI_PID"
	wait_until 10 sh -c "! test -e '$(ctl_root_dir)/.ui/port'"
	assert_status 0 sb_run --net "allow=127.0.0.1:$UI_PORT" -- true
}

# Attack: the agent asks (--net ask) for the dashboard's port: the
# dashboard cannot grant it, only refuse.
t_ask_for_ui_port()
{
	local name=uiask$RANDOM id a
	sb_home "$1"
	write_get
	write_run
	sb_home_own
	ui_start
	ui_login
	sb_bg "$name" --net ask --ask-timeout 120 -- ./run.sh "$UI_PORT"
	touch "$WS/go"
	wait_pending "$name"
	id=$ID
	for a in once session always; do
		assert_eq "$(post /api/answer "{\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"$a\"}")" 403 "$a"
		assert_contains "$(cat "$BODY")" "can only be refused"
	done
	assert_eq "$(ui_pending "$name")" "$id"
	assert_eq "$(post /api/answer "{\"sandbox\":\"$name\",\"id\":\"$id\",\"answer\":\"refuse\"}")" 200
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 403
	assert_contains "$(cat "$WS/r1")" "(web)"
}

# The --overlay sandboxes: changes, a diff per file, commit and discard
# through the API, each POST refused without its checks.
t_overlay()
{
	local ov1=ov$RANDOM ov2 q
	ov2=${ov1}b
	sb_home "$1"
	echo base >"$WS/old.txt"
	sb_home_own
	assert_status 0 sb_run --overlay --name "$ov1" -- sh -c 'echo overlay-change >new.txt; echo changed >old.txt'
	assert_status 0 sb_run --overlay --name "$ov2" -- sh -c 'echo dropped >drop.txt'
	ui_start
	ui_login
	assert_eq "$(code -b "$JAR" "$UI/api/overlays")" 200
	assert_contains "$(cat "$BODY")" "$ov1"
	assert_contains "$(cat "$BODY")" "$ov2"
	assert_eq "$(code -b "$JAR" "$UI/api/changes?name=$ov1")" 200
	assert_contains "$(cat "$BODY")" "A  new.txt"
	assert_contains "$(cat "$BODY")" "M  old.txt"
	assert_eq "$(code -b "$JAR" "$UI/api/diff?name=$ov1&path=new.txt")" 200
	assert_contains "$(cat "$BODY")" "+overlay-change"
	assert_not_contains "$(cat "$BODY")" "old.txt"
	assert_eq "$(code -b "$JAR" "$UI/api/diff?name=../x")" 400
	assert_eq "$(code -b "$JAR" "$UI/api/changes?name=nosuch")" 404
	assert_eq "$(code "$UI/api/diff?name=$ov1")" 403 "a diff without a session"
	# commit: refused without the checks, the workspace untouched
	q="{\"name\":\"$ov1\"}"
	assert_eq "$(code -b "$JAR" -H "Origin: $UI" -H 'Content-Type: application/json' -d "$q" "$UI/api/commit")" 403 "no CSRF token"
	assert_eq "$(post /api/commit "$q" http://127.0.0.1:9)" 403 "a foreign Origin"
	assert_eq "$(code -b "$JAR" "$UI/api/commit?name=$ov1")" 404 "a GET"
	[ ! -e "$WS/new.txt" ] || fail "committed without the checks"
	assert_eq "$(cat "$WS/old.txt")" base
	assert_eq "$(post /api/commit "$q")" 200 "$(cat "$BODY")"
	assert_eq "$(cat "$WS/new.txt")" overlay-change
	assert_eq "$(cat "$WS/old.txt")" changed
	[ "$MODE" = root ] || assert_file_owner "$WS/new.txt" "$TEST_UID:$TEST_GID"
	# discard
	q="{\"name\":\"$ov2\"}"
	assert_eq "$(post /api/discard "$q" http://evil.example)" 403
	assert_eq "$(post /api/discard "$q")" 200 "$(cat "$BODY")"
	assert_eq "$(code -b "$JAR" "$UI/api/overlays")" 200
	assert_not_contains "$(cat "$BODY")" "$ov2"
	[ ! -e "$WS/drop.txt" ] || fail "discard applied a change"
}

t_listen()
{
	local p bad
	MODE=root
	require_root
	for bad in 0.0.0.0:8080 192.168.1.1:8080 '[::]:8080' ':8080' 127.0.0.2:8080 'localhost.evil.example:80' 127.0.0.1:99999 127.0.0.1:x; do
		assert_status '!0' env AGENTRUN_UI_DIR="$UI_DIR" timeout 5 "$AGENTRUN" --root "$AR_ROOT" ui --listen "$bad"
		assert_contains "$ERR" "--listen"
	done
	p=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	ui_start --listen "127.0.0.1:$p"
	assert_eq "$UI_PORT" "$p"
	# the listening socket is on 127.0.0.1 only
	assert_contains "$(ss -Hltn "sport = :$p")" "127.0.0.1:$p"
	assert_eq "$(code -H "Host: localhost:$p" "$UI_URL")" 303 "localhost:PORT is a Host of the dashboard"
	# Ctrl-C stops it, even started in the background (SIGINT ignored
	# by the shell there), and its port file goes with it
	kill -INT "$UI_PID"
	wait_until 15 sh -c "! kill -0 $UI_PID 2>/dev/null"
	[ ! -e "$AR_ROOT/.ui/port" ] || fail "the port file stayed"
}

run_test "ui: token, session, Host, Origin, CSRF, no CORS; an answer through the API; the stream; no secret (rootless)" t_api user
run_test "ui: token, session, Host, Origin, CSRF, no CORS; an answer through the API; the stream; no secret (root)" t_api root
run_test "ui: the network policy in force (allowlist, secret by name, live grants, answers), the asking process; no secret value (rootless)" t_policy user
run_test "ui: the network policy in force (allowlist, secret by name, live grants, answers), the asking process; no secret value (root)" t_policy root
run_test "attack: a --net allow rule to the dashboard's port (rootless)" t_port_rule_refused user
run_test "attack: a --net allow rule to the dashboard's port (root)" t_port_rule_refused root
run_test "attack: the agent asks for the dashboard's port (rootless)" t_ask_for_ui_port user
run_test "attack: the agent asks for the dashboard's port (root)" t_ask_for_ui_port root
run_test "ui: overlay changes, diff, commit, discard; their POSTs checked (rootless)" t_overlay user
run_test "ui: overlay changes, diff, commit, discard; their POSTs checked (root)" t_overlay root
run_test "ui --listen: 127.0.0.1 only" t_listen
finish
