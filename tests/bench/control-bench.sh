#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/bench/control-bench.sh — the control plane of `agentrun sandbox`
# (runtime/sandbox/control/), measured (alone, or from run-bench.sh):
#   round trip: a --net ask connection inside the sandbox waits; a client
#     on the control socket sees its "request" event, answers `once`, and
#     the time from sending the answer to the proxy's "allowed" event of
#     that connection is the decision round trip (protocol and proxy,
#     without a CLI process); and the same answered with the CLI
#     (`agentrun sandbox answer`: a process start and a connect more);
#   cost: what the control plane costs the runtime's thread of a sandbox
#     nobody watches (`--debug` line: start, on_spawn, the socket's bind
#     beside the container's setup, and its stop; its thread is made
#     only when a client connects: none here), medians and minimums of
#     `sandbox -- true` runs, the state root on tmpfs (/dev/shm) as the
#     runtime directory ($XDG_RUNTIME_DIR, /run) is on most systems
#     (CONTROL_ROOT_DIR names another parent); goal <= 0.2 ms, goal_met
#     says whether the median total meets it;
#   events: an --audit sandbox making EVENTS_N connect events (two
#     processes at once) while a client reads the `events` stream: the
#     events per second it carried and how many of the log's it lost;
#   ui: the web dashboard's (`agentrun ui`) VmRSS/VmHWM idle, then while
#     a client holds its event stream (SSE) and 3 sandboxes run and make
#     events.
# Only a loopback server is contacted.
# Output: BENCH name=.. lines. Environment: AGENTRUN (required),
# CONTROL_REPS (default 20), EVENTS_N (default 20000), PY (default
# /usr/bin/python3), AGENTRUN_UI_DIR (default: the source's contrib/ui).
set -eu -o pipefail

: "${AGENTRUN:?set AGENTRUN to the agentrun binary}"
AGENTRUN=$(readlink -f "$AGENTRUN")
REPS=${CONTROL_REPS:-20}
PY=${PY:-/usr/bin/python3}
EVENTS_N=${EVENTS_N:-20000}
SRCDIR=$(cd "$(dirname "$0")/../.." && pwd)
UI_ASSETS=${AGENTRUN_UI_DIR:-$SRCDIR/contrib/ui}
T=$(mktemp -d /tmp/agentrun-control-bench.XXXXXX)
chmod 0755 "$T"
# the cost runs' state root: tmpfs, as a runtime directory
CROOT_PARENT=${CONTROL_ROOT_DIR:-/dev/shm}
if [ -d "$CROOT_PARENT" ] && [ -w "$CROOT_PARENT" ]; then
	CROOT=$(mktemp -d "$CROOT_PARENT/agentrun-control-bench.XXXXXX")
else
	CROOT=$T/croot
fi
SRV=
UIPID=
cleanup()
{
	local n
	for n in ctlbench ctlev uisb1 uisb2 uisb3; do
		"$AGENTRUN" --root "$T/root" sandbox stop -t 0 "$n" >/dev/null 2>&1 || true
	done
	[ -z "$SRV" ] || kill "$SRV" 2>/dev/null || true
	[ -z "$UIPID" ] || kill "$UIPID" 2>/dev/null || true
	rm -rf "$T" "$CROOT"
}
trap cleanup EXIT
mkdir -p "$T/ws/.git" "$T/srv"
echo ok >"$T/srv/index.html"
cd "$T/srv"
"$PY" -c '
import http.server, socketserver
h = http.server.SimpleHTTPRequestHandler
h.log_message = lambda *a: None
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), h)
open(".port", "w").write(str(s.server_address[1]))
s.serve_forever()' </dev/null >/dev/null 2>&1 &
SRV=$!
for _ in $(seq 100); do [ -s .port ] && break; sleep 0.05; done
PORT=$(cat .port)
cd "$T/ws"

# --- the cost of a sandbox nobody watches ---
# (the debug line: TOTAL us on the runtime's thread (start A, spawn B,
# socket C, stop D; ...); its thread: none (nobody connected), ...)
for _ in $(seq "$REPS"); do
	"$AGENTRUN" --debug --root "$CROOT" sandbox --no-tty -- true 2>&1 |
		sed -n 's/.*control plane `[^`]*`: \([0-9.]*\) us on the runtime.s thread (start \([0-9.]*\), spawn \([0-9.]*\), socket \([0-9.]*\), stop \([0-9.]*\);.*its thread: \(none\)\{0,1\}.*/\1 \2 \3 \4 \5 \6/p'
done >"$T/cost"
stat_of() # COLUMN: median min (ms)
{
	awk -v c="$1" '{print $c}' "$T/cost" | sort -n |
		awk '{a[NR]=$1} END {if (NR) printf "%.3f %.3f", a[int((NR+1)/2)]/1000, a[1]/1000; else printf "- -"}'
}
read -r tot_med tot_min <<<"$(stat_of 1)"
read -r start_med start_min <<<"$(stat_of 2)"
read -r spawn_med _ <<<"$(stat_of 3)"
read -r sock_med sock_min <<<"$(stat_of 4)"
read -r stop_med stop_min <<<"$(stat_of 5)"
threads=$(awk 'NF < 6' "$T/cost" | wc -l)
root_fs=$(stat -f -c %T "$CROOT")
goal_met=$(awk -v m="$tot_med" 'BEGIN {print (m != "-" && m + 0 <= 0.2) ? "yes" : "no"}')
echo "BENCH name=control_unwatched_cost reps=$REPS root_fs=$root_fs total_ms_median=$tot_med total_ms_min=$tot_min start_ms_median=$start_med start_ms_min=$start_min spawn_ms_median=$spawn_med socket_ms_median=$sock_med socket_ms_min=$sock_min stop_ms_median=$stop_med stop_ms_min=$stop_min threads_started=$threads goal_ms=0.2 goal_met=$goal_met"

# --- the decision round trip ---
cat >"$T/ws/loop.sh" <<EOS
#!/bin/sh
i=0
while [ \$i -lt $((REPS * 2)) ]; do
	curl -sS -m 30 --noproxy '' -x http://127.0.0.1:3128 -o /dev/null http://127.0.0.1:$PORT/ 2>/dev/null
	i=\$((i + 1))
done
sleep 600
EOS
chmod 0755 "$T/ws/loop.sh"
"$AGENTRUN" --root "$T/root" sandbox --no-tty --name ctlbench --detach \
	--net ask -- ./loop.sh >/dev/null 2>&1
"$PY" - "$T/root/.control/ctlbench.sock" "$REPS" "$AGENTRUN" "$T/root" <<'EOP'
import json, socket, subprocess, sys, time
path, reps, agentrun, root = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
for _ in range(200):
    try:
        ev = socket.socket(socket.AF_UNIX); ev.connect(path); break
    except OSError:
        time.sleep(0.05)
ev.sendall(b'{"op":"events"}\n')
lines = ev.makefile("rb")
json.loads(lines.readline())
def answer_sock(rid):
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    s.sendall(json.dumps({"op": "answer", "id": rid, "answer": "once", "interface": "cli"}).encode() + b"\n")
    s.recv(100); s.close()
def answer_cli(rid):
    subprocess.run([agentrun, "--root", root, "sandbox", "answer", "ctlbench", rid, "once"], check=True)
def pending():
    s = socket.socket(socket.AF_UNIX); s.connect(path)
    s.sendall(b'{"op":"requests"}\n')
    r = json.loads(s.makefile("rb").readline()); s.close()
    return [q["id"] for q in r["requests"]]
res = {"socket": [], "cli": []}
for k in range(2 * reps):
    how = "socket" if k % 2 == 0 else "cli"
    ids = pending() if k == 0 else []  # asked before the stream began
    rid = ids[0] if ids else None
    while rid is None:
        e = json.loads(lines.readline())
        if e["event"] == "request":
            rid = e["request"]["id"]
    t0 = time.monotonic()
    (answer_sock if how == "socket" else answer_cli)(rid)
    while True:
        e = json.loads(lines.readline())
        if e["event"] == "proxy" and e["allowed"]:
            break
    res[how].append((time.monotonic() - t0) * 1000)
for how, v in res.items():
    v.sort()
    print("BENCH name=control_round_trip_%s reps=%d ms_median=%.3f ms_min=%.3f ms_max=%.3f" % (how, len(v), v[len(v) // 2], v[0], v[-1]))
EOP
"$AGENTRUN" --root "$T/root" sandbox stop -t 0 ctlbench >/dev/null 2>&1 || true

# --- the event stream's throughput ---
# two processes make EVENTS_N connects each (refused, loopback of the
# sandbox): each an audit `connect` event, streamed; the end is an exec
cat >"$T/ws/events.py" <<'EOS'
import os, socket, sys, time
while not os.path.exists("go"):
    time.sleep(0.01)
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", 9))
    except OSError:
        pass
    s.close()
EOS
rm -f "$T/ws/go"
"$AGENTRUN" --root "$T/root" sandbox --no-tty --name ctlev --detach \
	--audit "$T/events.log" -- sh -c "$PY events.py $EVENTS_N & $PY events.py $EVENTS_N & wait; /bin/true ctlev-end; sleep 600" >/dev/null 2>&1
"$PY" - "$T/root/.control/ctlev.sock" "$T/ws/go" "$T/events.log" "$REPS" <<'EOP'
import json, re, socket, sys, time
path, go, log = sys.argv[1], sys.argv[2], sys.argv[3]
for _ in range(200):
    try:
        ev = socket.socket(socket.AF_UNIX); ev.connect(path); break
    except OSError:
        time.sleep(0.05)
ev.sendall(b'{"op":"events"}\n')
lines = ev.makefile("rb")
json.loads(lines.readline())
open(go, "w").close()
# a lean reader (a client that falls behind is dropped by the sandbox):
# the lines matched as bytes, parsed after
PORT9 = re.compile(rb'"port":9[,}]')
got, first, last, ended = 0, None, None, False
for raw in lines:
    if b'"event":"connect"' in raw and PORT9.search(raw):
        got += 1
        last = time.monotonic()
        if first is None:
            first = last
    elif b'"ctlev-end"' in raw and json.loads(raw)["event"] == "exec":
        ended = True
        break
# the log's count (written before it is streamed; a dropped client:
# once the workload has ended)
for _ in range(1200):
    if b'"ctlev-end"' in open(log, "rb").read():
        break
    time.sleep(0.05)
want = 0
for raw in open(log, "rb"):
    e = json.loads(raw)
    if e["event"] == "connect" and e.get("port") == 9:
        want += 1
secs = (last - first) if got > 1 else 0
print("BENCH name=control_event_stream events=%d log_events=%d lost=%d seconds=%.3f events_per_s=%.0f stream_ended=%s" % (
    got, want, want - got, secs, got / secs if secs > 0 else 0, "yes" if ended else "no"))
EOP
"$AGENTRUN" --root "$T/root" sandbox stop -t 0 ctlev >/dev/null 2>&1 || true

# --- the web dashboard's memory ---
mem_of() # PID: VmRSS VmHWM (KiB)
{
	awk '/^VmRSS:/ {r=$2} /^VmHWM:/ {h=$2} END {print r, h}' "/proc/$1/status"
}
AGENTRUN_UI_DIR=$UI_ASSETS "$AGENTRUN" --root "$T/root" ui >"$T/ui.out" 2>&1 &
UIPID=$!
for _ in $(seq 200); do grep -q 'http://127.0.0.1:' "$T/ui.out" && break; sleep 0.05; done
URL=$(grep -o 'http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*' "$T/ui.out")
UIBASE=${URL%%/\?*}
sleep 0.5
read -r idle_rss idle_hwm <<<"$(mem_of "$UIPID")"
curl -sS -m 5 --noproxy '*' -c "$T/jar" -o /dev/null "$URL"
curl -sS -N --noproxy '*' -b "$T/jar" "$UIBASE/api/events" >"$T/sse" 2>/dev/null &
SSE=$!
for i in 1 2 3; do
	"$AGENTRUN" --root "$T/root" sandbox --no-tty --name "uisb$i" --detach \
		--audit "$T/uisb$i.log" -- sh -c 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done; sleep 600' >/dev/null 2>&1
done
sleep 3
read -r busy_rss busy_hwm <<<"$(mem_of "$UIPID")"
sse_events=$(grep -c '^data: ' "$T/sse" || true)
kill "$SSE" 2>/dev/null || true
echo "BENCH name=control_ui_memory idle_rss_kib=$idle_rss idle_hwm_kib=$idle_hwm busy_rss_kib=$busy_rss busy_hwm_kib=$busy_hwm sandboxes=3 sse_clients=1 sse_events=$sse_events"
