#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The control plane of a sandbox nobody watches (runtime/sandbox/control/,
# docs/sandbox.md "The control plane"), rootless and as root: no thread
# until the first client connects (its socket watched by the runtime's
# supervision), and nothing lost by it: a --net ask request asked before
# any client is listed within 1 s of the first client's connect, and a
# late event stream carries what happens from then on.
# Every destination is a loopback server of the test (http_server).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl pgrep
[ -x "$PY" ] || skip "needs $PY"

# sb_debug_run OPTIONS...: sb_run with agentrun's --debug
sb_debug_run()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --debug --root "$AR_ROOT" \
			sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --debug --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

# the pid of the process that listens on the unix socket PATH (the
# sandbox's monitor)
listener_pid()
{
	"$PY" - "$1" <<'EOP'
import os, sys
inode = None
for line in open("/proc/net/unix").readlines()[1:]:
    f = line.split()
    if len(f) >= 8 and f[7] == sys.argv[1]:
        inode = f[6]
if inode is None:
    sys.exit("no socket listens on " + sys.argv[1])
want = "socket:[%s]" % inode
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        fds = os.listdir("/proc/%s/fd" % pid)
    except OSError:
        continue
    for fd in fds:
        try:
            if os.readlink("/proc/%s/fd/%s" % (pid, fd)) == want:
                print(pid)
                sys.exit(0)
        except OSError:
            pass
sys.exit("no process holds " + want)
EOP
}

# the monitor MON's control thread (named agentrun-ctl): 0 or 1
ctl_threads()
{
	cat /proc/"$1"/task/*/comm 2>/dev/null | grep -c '^agentrun-ctl$' || true
}

# ctl_client REQUEST [stream]: control_client.py on the socket $SOCK as
# MODE's user
ctl_client()
{
	if [ "$MODE" = root ]; then
		"$PY" "$AR_TEST_HELPERS/control_client.py" "$SOCK" "$@"
	else
		as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" "$SOCK" "$@"
	fi
}

# The first client (python, the socket as argv[1]): requests until one
# is listed (10 s at most); prints the reply with "ms", the time from
# its first connect.
FIRST_CLIENT='
import json, socket, sys, time
t0 = time.monotonic()
while True:
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"{\"op\":\"requests\"}\n")
    r = json.loads(s.makefile("rb").readline())
    s.close()
    if r.get("requests") or time.monotonic() - t0 > 10:
        break
    time.sleep(0.02)
r["ms"] = int((time.monotonic() - t0) * 1000)
print(json.dumps(r))'

# The control plane of a sandbox nobody watches has no thread (its
# socket is watched by the runtime's supervision); the first client
# starts it, and is served as before: a request asked before any
# client connected is listed at once, the stream carries what happens
# from then on (answers, refusals, new requests).
t_lazy()
{
	local name=lazy$RANDOM mon ms id1 id2 ev dbg SOCK
	sb_serve_home "$1"
	# unwatched: no thread started, said by --debug
	assert_status 0 sb_debug_run -- true
	assert_contains "$ERR" "its thread: none (nobody connected)"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
touch asking
./get.sh $PORT r1
./get.sh $PORT r2
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh"
	dbg=$TEST_TMP/$name.debug
	sb_debug_run --name "$name" --net ask --ask-timeout 120 -- ./run.sh \
		>"$dbg" 2>&1 &
	defer ctl stop -t 0 "$name"
	SOCK=$(ctl_root_dir)/.control/$name.sock
	# nobody connects yet: the socket exists, its thread does not
	wait_until 20 test -S "$SOCK"
	wait_until 20 test -e "$WS/asking"
	mon=$(listener_pid "$SOCK") || fail "no monitor: $mon"
	# the first connection asks (its curl waits) before any client
	wait_until 20 sh -c "pgrep -f 'curl .*127.0.0.1:$PORT/' >/dev/null"
	sleep 1
	[ ! -e "$WS/r1" ] || fail "the connection did not wait: $(cat "$WS/r1")"
	assert_eq "$(ctl_threads "$mon")" 0 "a control thread before any client"
	# the first client: the request is listed within 1 s of its connect
	# (timed from the connect, in the client: not its process's start)
	if [ "$MODE" = root ]; then
		OUT=$("$PY" - "$SOCK" <<<"$FIRST_CLIENT")
	else
		OUT=$(as_test_user "$PY" - "$SOCK" <<<"$FIRST_CLIENT")
	fi
	id1=$(jq -r '.requests[0].id // empty' <<<"$OUT")
	[ -n "$id1" ] || fail "the request asked before any client is not listed: $OUT"
	ms=$(jq -r .ms <<<"$OUT")
	[ "$ms" -lt 1000 ] || fail "listed $ms ms after the first client connected"
	assert_eq "$(jq -r '.requests[0].target' <<<"$OUT")" "127.0.0.1:$PORT"
	assert_eq "$(ctl_threads "$mon")" 1 "the control thread after the first client"
	# a late stream: the answers, the refusal and the next request
	ev=$TEST_TMP/$name.events
	ctl_client '{"op":"events"}' stream >"$ev" 2>&1 &
	defer kill $!
	wait_until 10 grep -q '"ok":true' "$ev"
	assert_status 0 ctl requests "$name"
	assert_match "$OUT" "$name +$id1 .* 127\\.0\\.0\\.1:$PORT "
	assert_status 0 ctl answer "$name" "$id1" refuse
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 403
	id2=$(wait_request "$name" "$id1")
	wait_until 10 grep -q "\"event\":\"request\".*\"id\":\"$id2\"" "$ev"
	assert_status 0 ctl answer "$name" "$id2" once
	wait_until 20 test -e "$WS/r2"
	assert_contains "$(cat "$WS/r2")" 200
	wait_until 10 grep -q '"event":"proxy".*"allowed":true' "$ev"
	assert_contains "$(cat "$ev")" "\"event\":\"answer\",\"sandbox\":\"$name\",\"id\":\"$id1\",\"answer\":\"refuse\""
	assert_match "$(cat "$ev")" '"event":"proxy".*"allowed":false,"reason":"agentrun: blocked 127.0.0.1:[0-9]+ .*refused by uid'
	assert_contains "$(cat "$ev")" "\"id\":\"$id2\",\"answer\":\"once\""
	assert_eq "$(ctl_threads "$mon")" 1
	# its end: the thread was started by the first client
	assert_status 0 ctl stop -t 0 "$name"
	wait_until 20 grep -q "control plane \`$name\`" "$dbg"
	assert_contains "$(cat "$dbg")" "its thread: started at the first client"
	test ! -e "$SOCK" || fail "the socket is left: $SOCK"
}

run_test "lazy: no thread unwatched; a late first client gets a request asked before it within 1 s, then the stream (rootless)" t_lazy user
run_test "lazy: no thread unwatched; a late first client gets a request asked before it within 1 s, then the stream (root)" t_lazy root
finish
