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
#     nobody watches (`--debug` line: start, the thread's creation in
#     on_spawn, beside the container's setup, and its stop), medians and
#     minimums of `sandbox -- true` runs (goal < 0.2 ms).
# Only a loopback server is contacted.
# Output: BENCH name=.. lines. Environment: AGENTRUN (required),
# CONTROL_REPS (default 20), PY (default /usr/bin/python3).
set -eu -o pipefail

: "${AGENTRUN:?set AGENTRUN to the agentrun binary}"
AGENTRUN=$(readlink -f "$AGENTRUN")
REPS=${CONTROL_REPS:-20}
PY=${PY:-/usr/bin/python3}
T=$(mktemp -d /tmp/agentrun-control-bench.XXXXXX)
chmod 0755 "$T"
SRV=
cleanup()
{
	"$AGENTRUN" --root "$T/root" sandbox stop -t 0 ctlbench >/dev/null 2>&1 || true
	[ -z "$SRV" ] || kill "$SRV" 2>/dev/null || true
	rm -rf "$T"
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
for _ in $(seq "$REPS"); do
	"$AGENTRUN" --debug --root "$T/root" sandbox --no-tty -- true 2>&1 |
		sed -n 's/.*control plane `[^`]*`: \([0-9.]*\) us on the runtime.s thread (start \([0-9.]*\), thread \([0-9.]*\), stop \([0-9.]*\)).*/\1 \2 \3 \4/p'
done >"$T/cost"
stat_of() # COLUMN: median min (ms)
{
	awk -v c="$1" '{print $c}' "$T/cost" | sort -n |
		awk '{a[NR]=$1} END {if (NR) printf "%.3f %.3f", a[int((NR+1)/2)]/1000, a[1]/1000; else printf "- -"}'
}
read -r tot_med tot_min <<<"$(stat_of 1)"
read -r thr_med thr_min <<<"$(stat_of 3)"
read -r stop_med stop_min <<<"$(stat_of 4)"
echo "BENCH name=control_unwatched_cost reps=$REPS total_ms_median=$tot_med total_ms_min=$tot_min thread_ms_median=$thr_med thread_ms_min=$thr_min stop_ms_median=$stop_med stop_ms_min=$stop_min goal_ms=0.2"

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
