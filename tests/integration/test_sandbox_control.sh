#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control plane of a running sandbox (runtime/sandbox/control/,
# docs/sandbox.md "The control plane"), rootless and as root:
# `--net ask` connections wait for `agentrun sandbox answer` (once,
# session, refuse) or the timeout; `sandbox requests` lists them; the
# event stream; and the attacks: another user's client, the agent
# reaching for the socket from inside (the flood of asks:
# test_sandbox_control_flood.sh).
# Every destination is a loopback server of the test (http_server).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl
[ -x "$PY" ] || skip "needs $PY"

t_once_session_refuse()
{
	local name=ask$RANDOM id1 id2 id3 ev CTL_UID
	sb_serve_home "$1"
	CTL_UID=$(ctl_uid)
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
./get.sh $PORT r1; ./get.sh $PORT r2; ./get.sh $PORT r3; ./get.sh $PORT r4
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh"
	sb_bg "$name" --net ask --ask-timeout 120 -- ./run.sh
	# the event stream, as the sandbox's user
	ev=$TEST_TMP/events
	if [ "$MODE" = root ]; then
		"$PY" "$AR_TEST_HELPERS/control_client.py" \
			"$(ctl_root_dir)/.control/$name.sock" '{"op":"events"}' \
			stream >"$ev" 2>&1 &
	else
		as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" \
			"$(ctl_root_dir)/.control/$name.sock" '{"op":"events"}' \
			stream >"$ev" 2>&1 &
	fi
	defer kill $!
	wait_until 10 grep -q '"ok":true' "$ev"
	# the first connection waits: listed with its target and address
	id1=$(wait_request "$name")
	assert_status 0 ctl requests "$name"
	assert_match "$OUT" "$name +$id1 .* 127\\.0\\.0\\.1:$PORT +127\\.0\\.0\\.1 +not in the allowlist"
	assert_status 0 ctl requests --json
	assert_eq "$(jq -r ".[] | select(.id==\"$id1\") | .target" <<<"$OUT")" "127.0.0.1:$PORT"
	# the process that asks: curl, its pid on the host and inside
	assert_eq "$(jq -r ".[] | select(.id==\"$id1\") | .exe" <<<"$OUT")" "$(readlink -f "$(command -v curl)")"
	assert_match "$(jq -r ".[] | select(.id==\"$id1\") | .cmdline" <<<"$OUT")" "^curl .*127\\.0\\.0\\.1:$PORT/"
	assert_match "$(jq -r ".[] | select(.id==\"$id1\") | \"\\(.pid) \\(.sandbox_pid)\"" <<<"$OUT")" "^[0-9]+ [0-9]+$"
	[ ! -e "$WS/r1" ] || fail "the connection went through before any answer: $(cat "$WS/r1")"
	# once: that connection, and the next one asks again
	assert_status 0 ctl answer "$name" "$id1" once
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 200
	assert_contains "$(cat "$WS/r1")" served
	id2=$(wait_request "$name" "$id1")
	[ ! -e "$WS/r2" ] || fail "once let a second connection through"
	# an answer to an answered request is an error
	assert_status '!0' ctl answer "$name" "$id1" once
	assert_contains "$ERR" "no pending request $id1"
	# refuse: the connection fails with the reason
	assert_status 0 ctl answer "$name" "$id2" refuse
	wait_until 20 test -e "$WS/r2"
	assert_contains "$(cat "$WS/r2")" 403
	assert_contains "$(cat "$WS/r2")" "refused by uid $CTL_UID (cli)"
	# session: this one and every later one without asking
	id3=$(wait_request "$name" "$id1 $id2")
	assert_status 0 ctl answer "$name" "$id3" session
	wait_until 20 test -e "$WS/r4"
	assert_contains "$(cat "$WS/r3")" 200
	assert_contains "$(cat "$WS/r4")" 200
	assert_eq "$(pending_ids "$name")" "" "a request after the session grant"
	# the stream: the requests, the answers (who, which interface) and
	# the proxy's decisions, in the audit log's schema, without --audit
	wait_until 10 grep -q '"answer":"session"' "$ev"
	assert_contains "$(cat "$ev")" "\"event\":\"request\""
	assert_contains "$(cat "$ev")" "\"event\":\"answer\",\"sandbox\":\"$name\",\"id\":\"$id1\",\"answer\":\"once\",\"host\":\"127.0.0.1\",\"port\":$PORT,\"uid\":$CTL_UID"
	assert_contains "$(cat "$ev")" '"interface":"cli"'
	assert_match "$(cat "$ev")" '"event":"proxy","proto":"http","host":"127.0.0.1","port":[0-9]+,"address":"127.0.0.1","allowed":true'
	assert_match "$(cat "$ev")" '"event":"proxy".*"allowed":false,"reason":"agentrun: blocked 127.0.0.1:[0-9]+ .*refused by uid'
}

# waiting_is NAME N: the first pending request of NAME has N connections
waiting_is()
{
	[ "$(ctl requests "$1" --json | jq -r '.[0].waiting')" = "$2" ]
}

t_timeout_and_merge()
{
	local name=mrg$RANDOM name2=tmo$RANDOM id
	sb_serve_home "$1"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
# five connections to one HOST:PORT: one request
for i in 1 2 3 4 5; do ./get.sh $PORT m\$i & done
wait
touch merged-done
sleep 600
EOF
	# three more, which nobody answers
	cat >"$WS/run2.sh" <<EOF
#!/bin/sh
for i in 1 2 3; do ./get.sh $PORT t\$i & done
wait
touch timeout-done
sleep 600
EOF
	chmod 0755 "$WS/run.sh" "$WS/run2.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh" "$WS/run2.sh"
	# The timeout is far beyond the test's steps: on a loaded machine
	# counting and answering the five can take seconds (as the test user,
	# each `requests` is a process start or two), and a timeout the test
	# races fails it there (docs/reliability.md). The timeout itself is
	# the second sandbox's.
	sb_bg "$name" --net ask --ask-timeout 600 -- ./run.sh
	id=$(wait_request "$name")
	# the five are one request
	wait_until 60 waiting_is "$name" 5
	assert_status 0 ctl requests "$name" --json
	assert_eq "$(jq length <<<"$OUT")" 1 "duplicates of one HOST:PORT are one request"
	assert_eq "$(jq -r '.[0].waiting' <<<"$OUT")" 5
	# once: exactly one of them
	assert_status 0 ctl answer "$name" "$id" once
	wait_until 20 sh -c 'ls "$1"/m? 2>/dev/null | grep -q .' sh "$WS"
	sleep 0.5
	assert_eq "$(ls "$WS" | grep -c '^m[0-9]$')" 1 "once let more than one connection through"
	assert_status 0 ctl requests "$name" --json
	assert_eq "$(jq -r '.[0].waiting' <<<"$OUT")" 4
	assert_eq "$(jq -r '.[0].id' <<<"$OUT")" "$id" "the four still wait on the same request"
	# refuse: the four others, with the reason
	assert_status 0 ctl answer "$name" "$id" refuse
	wait_until 60 test -e "$WS/merged-done"
	assert_eq "$(cat "$WS"/m? | grep -c '^200$')" 1
	assert_eq "$(cat "$WS"/m? | grep -c '^403$')" 4
	assert_eq "$(grep -l "refused by uid" "$WS"/m? | wc -l)" 4
	# the timeout: nobody answers, each connection is refused with the
	# reason once it has waited 2 s (merged or not: a later one asks anew)
	sb_bg "$name2" --net ask --ask-timeout 2 -- ./run2.sh
	wait_until 60 test -e "$WS/timeout-done"
	assert_eq "$(cat "$WS"/t? | grep -c '^403$')" 3
	assert_eq "$(grep -l "had no answer within 2 s" "$WS"/t? | wc -l)" 3
	assert_eq "$(pending_ids "$name2")" "" "a request left after its timeout"
}

# Attack: a user other than the sandbox's reaches for its socket.
t_other_user_refused()
{
	local name=own$RANDOM sock
	require_root
	sb_serve_home root
	sb_bg "$name" --net ask -- sleep 600
	sock=$AR_ROOT/.control/$name.sock
	assert_eq "$(stat -c %a "$sock")" 600
	assert_eq "$(stat -c %a "$AR_ROOT/.control")" 700
	# the test user: not through the CLI, not through the socket
	assert_status '!0' as_test_user "$AGENTRUN" --root "$AR_ROOT" sandbox requests "$name"
	assert_status '!0' as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" \
		"$sock" '{"op":"requests"}'
	assert_contains "$ERR" "Permission denied"
	# with the modes opened by mistake, SO_PEERCRED still refuses
	chmod 0711 "$AR_ROOT" "$AR_ROOT/.control"
	chmod 0666 "$sock"
	assert_status 0 as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" \
		"$sock" '{"op":"requests"}'
	assert_contains "$OUT" "refused: uid $TEST_UID is neither this sandbox's user nor root"
	assert_not_contains "$OUT" '"requests"'
	assert_status 0 as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" \
		"$sock" '{"op":"answer","id":"1","answer":"session","interface":"cli"}'
	assert_contains "$OUT" "refused: uid $TEST_UID"
	chmod 0700 "$AR_ROOT/.control"
	# root reaches a rootless sandbox's socket (root may)
	MODE=user
	sb_home user
	sb_home_own
	local uname=usr$RANDOM
	sb_bg "$uname" --net ask -- sleep 600
	assert_status 0 "$AGENTRUN" --root "$AR_USER_ROOT" sandbox requests "$uname" --json
	assert_eq "$OUT" "[]"
}

# Attack: the agent inside looks for its control socket: the path, the
# abstract namespace, the unix sockets of its network namespace.
t_inside_unreachable()
{
	local name=ins$RANDOM dir
	sb_serve_home "$1"
	dir=$(ctl_root_dir)
	sb_bg "$name" --net ask -- sleep 600
	test -S "$dir/.control/$name.sock" || fail "no control socket"
	assert_status 0 ctl exec "$name" -- "$PY" -c "
import socket, os
for p in ['$dir/.control/$name.sock', '$dir/.control', '$dir']:
    print(p, 'exists' if os.path.lexists(p) else 'absent')
for a in ['$dir/.control/$name.sock', '\0$dir/.control/$name.sock',
          '\0agentrun', '\0$name.sock', '\0agentrun-control-$name']:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(a)
        s.sendall(b'{\"op\":\"requests\"}\n')
        print('REACHED', repr(a), s.recv(200))
    except OSError as e:
        print('refused', repr(a), e.errno)
print('unix sockets:', sum(1 for l in open('/proc/net/unix') if 'control' in l or '$name' in l))
"
	assert_not_contains "$OUT" REACHED
	assert_not_contains "$OUT" "$dir/.control/$name.sock exists"
	assert_contains "$OUT" "unix sockets: 0"
}

# Attack: the user shows the state root inside (--ro), so the socket's
# path is there: the agent connects and answers its own request.
t_self_answer()
{
	local name=self$RANDOM dir id
	sb_serve_home "$1"
	dir=$(ctl_root_dir)
	mkdir -p "$dir"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
./get.sh $PORT s1 &
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh"
	sb_bg "$name" --ro "$dir" --net ask --ask-timeout 120 -- ./run.sh
	id=$(wait_request "$name")
	assert_status 0 ctl_from_inside "$name" "$dir/.control/$name.sock" "{\"op\":\"requests\"}" \
		"{\"op\":\"answer\",\"id\":\"$id\",\"answer\":\"session\",\"interface\":\"cli\"}"
	assert_not_contains "$OUT" '"ok":true'
	sleep 1
	[ ! -e "$WS/s1" ] || fail "the agent answered its own request: $(cat "$WS/s1")"
	assert_eq "$(pending_ids "$name")" "$id" "the request is still pending"
	assert_status 0 ctl answer "$name" "$id" refuse
}

# `ask` inside an allowlist given by a profile (net.allow: [HOST:PORT,
# "ask"]): the listed destination goes through without asking, another
# one waits for an answer
t_profile_ask()
{
	local name=pa$RANDOM id
	sb_serve_home "$1"
	printf '{"net": {"allow": ["127.0.0.1:%s", "ask"]}}\n' "$PORT" >"$H/p.json"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
./get.sh $PORT listed; ./get.sh 1 other
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh" "$H/p.json"
	sb_bg "$name" --profile "$H/p.json" -- ./run.sh
	wait_until 20 test -e "$WS/listed"
	assert_contains "$(cat "$WS/listed")" 200
	id=$(wait_request "$name")
	assert_status 0 ctl requests "$name" --json
	assert_eq "$(jq -r '.[0].target' <<<"$OUT")" "127.0.0.1:1"
	assert_status 0 ctl answer "$name" "$id" refuse
	wait_until 20 test -e "$WS/other"
	assert_contains "$(cat "$WS/other")" 403
}

t_always()
{
	local name=alw$RANDOM id name2=alx$RANDOM
	sb_serve_home "$1"
	printf '{\n  "description": "mine",\n  "env": ["LC_*"],\n  "net": {\n    "allow": [\n      "example.com"\n    ]\n  }\n}\n' >"$H/mine.json"
	printf '{"net": {"allow": ["example.com"]}}\n' >"$TEST_TMP/theirs.json"
	chmod 0644 "$TEST_TMP/theirs.json"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
./get.sh $PORT a1
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh" "$H/mine.json"
	[ "$MODE" = user ] || chown 65534:65534 "$TEST_TMP/theirs.json"
	# a profile that is not the user's: `always` refused, file untouched
	sb_bg "$name2" --profile "$TEST_TMP/theirs.json" --net allow=ask -- ./run.sh
	id=$(wait_request "$name2")
	assert_status '!0' ctl answer "$name2" "$id" always
	assert_contains "$ERR" "is not a profile file of uid"
	assert_eq "$(cat "$TEST_TMP/theirs.json")" '{"net": {"allow": ["example.com"]}}'
	assert_status 0 ctl answer "$name2" "$id" refuse
	assert_status 0 ctl stop -t 0 "$name2"
	rm -f "$WS/a1"
	# the user's profile: written, the diff shown, the next sandbox of
	# that profile goes through without asking
	sb_bg "$name" --profile "$H/mine.json" --net allow=ask -- ./run.sh
	id=$(wait_request "$name")
	assert_status 0 ctl answer "$name" "$id" always
	assert_contains "$OUT" "+++ $H/mine.json"
	assert_contains "$OUT" "+      \"127.0.0.1:$PORT\", \"example.com\""
	wait_until 20 test -e "$WS/a1"
	assert_contains "$(cat "$WS/a1")" 200
	assert_eq "$(jq -c .net.allow "$H/mine.json")" "[\"127.0.0.1:$PORT\",\"example.com\"]"
	assert_eq "$(jq -c .env "$H/mine.json")" '["LC_*"]'
	[ "$MODE" = root ] || assert_file_owner "$H/mine.json" "$TEST_UID:$TEST_GID"
	assert_status 0 ctl stop -t 0 "$name"
	assert_status 0 sb_run --profile "$H/mine.json" -- ./get.sh "$PORT" a2
	assert_contains "$(cat "$WS/a2")" 200
}

t_cli_errors()
{
	MODE=root
	require_root
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" sandbox answer nosuch 1 once
	assert_contains "$ERR" "no sandbox named \`nosuch\` is running"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" sandbox answer x 1 maybe
	assert_contains "$ERR" "expected once, session, always or refuse"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" sandbox answer x abc once
	assert_contains "$ERR" "expected a request ID"
	assert_status 1 "$AGENTRUN" --root "$AR_ROOT" sandbox answer x 1
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" sandbox --ask-timeout 0 -- true
	assert_contains "$ERR" "--ask-timeout: expected 1 to 86400 seconds"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" sandbox requests
	assert_contains "$OUT" "no pending request"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" sandbox requests --json
	assert_eq "$OUT" "[]"
}

run_test "ask: once, session, refuse; requests; the event stream (rootless)" t_once_session_refuse user
run_test "ask: once, session, refuse; requests; the event stream (root)" t_once_session_refuse root
run_test "ask: duplicates merged, once is one connection, the timeout refuses (rootless)" t_timeout_and_merge user
run_test "ask: duplicates merged, once is one connection, the timeout refuses (root)" t_timeout_and_merge root
run_test "ask: always writes the user's profile, not another's (rootless)" t_always user
run_test "ask: always writes the user's profile, not another's (root)" t_always root
run_test "ask inside a profile's allowlist (rootless)" t_profile_ask user
run_test "ask inside a profile's allowlist (root)" t_profile_ask root
run_test "attack: another user's client is refused (modes and SO_PEERCRED)" t_other_user_refused
run_test "attack: the agent cannot reach the control socket (rootless)" t_inside_unreachable user
run_test "attack: the agent cannot reach the control socket (root)" t_inside_unreachable root
run_test "attack: the agent answers its own request through a shown state root (rootless)" t_self_answer user
run_test "attack: the agent answers its own request through a shown state root (root)" t_self_answer root
run_test "requests/answer: bad input" t_cli_errors
finish
