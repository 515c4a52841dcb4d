#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/bench/egress-bench.sh — the egress allowlist proxy of
# `agentrun sandbox --net allow=...`, measured (part of `make bench`
# through run-bench.sh, or alone):
#   throughput: a 100 MiB download from a loopback server (sendfile), with
#     curl inside the sandbox, through the proxy (plain HTTP, and CONNECT
#     as HTTPS uses it) versus direct (the same sandbox with --net host);
#   latency: time to the first byte of a small file, proxy minus direct
#     (what the proxy adds to every connection: accept, request parsing,
#     policy, getaddrinfo, connect).
# Only a loopback server is contacted.
#
# Output: a line per figure
#   ROW FIGURE WHERE RUNTIME MEDIAN MIN CPU VS OK UNIT   (run-bench's table)
#   BENCH name=.. ..                                     (machine-readable)
# Environment: AGENTRUN (required), EGRESS_REPS (default 7), EGRESS_LAT_REPS
# (default 50), EGRESS_MB (default 100), PY (default /usr/bin/python3).
set -eu -o pipefail

: "${AGENTRUN:?set AGENTRUN to the agentrun binary}"
REPS=${EGRESS_REPS:-7}
LAT_REPS=${EGRESS_LAT_REPS:-50}
MB=${EGRESS_MB:-100}
PY=${PY:-/usr/bin/python3}
WHERE=${EGRESS_WHERE:-$([ "$(id -u)" = 0 ] && echo host_root || echo host_user)}

note() { echo "# egress: $*" >&2; }

command -v curl >/dev/null || { note "curl not installed: skipped"; exit 0; }
[ -x "$PY" ] || { note "$PY not found: skipped"; exit 0; }

TMP=$(mktemp -d /tmp/agentrun-egress-bench.XXXXXX)
chmod 0755 "$TMP"
SERVER_PID=
cleanup()
{
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

mkdir -p "$TMP/ws/.git" "$TMP/www"
head -c "$((MB * 1048576))" /dev/zero >"$TMP/www/big"
echo hello >"$TMP/www/small"

# A loopback server that answers every GET with sendfile (fast enough not
# to be the bottleneck), one thread per connection.
"$PY" -c '
import os, socket, socketserver, sys
root = sys.argv[1]
class H(socketserver.BaseRequestHandler):
    def handle(self):
        buf = b""
        while b"\r\n\r\n" not in buf:
            d = self.request.recv(4096)
            if not d:
                return
            buf += d
        path = buf.split(b" ")[1].decode().rsplit("/", 1)[-1]
        with open(os.path.join(root, path), "rb") as f:
            size = os.fstat(f.fileno()).st_size
            self.request.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % size)
            self.request.sendfile(f)
socketserver.ThreadingTCPServer.allow_reuse_address = True
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), H)
open(sys.argv[2] + ".tmp", "w").write(str(s.server_address[1]))
os.rename(sys.argv[2] + ".tmp", sys.argv[2])
s.serve_forever()' "$TMP/www" "$TMP/port" </dev/null >/dev/null 2>&1 &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$TMP/port" ] && break; sleep 0.1; done
PORT=$(cat "$TMP/port")

# sbx NET CMD: curl runs inside one sandbox; prints what CMD prints
sbx()
{
	local net=$1
	shift
	(cd "$TMP/ws" && HOME=$TMP "$AGENTRUN" sandbox --no-tty --net "$net" \
		-- sh -c "$*" 2>"$TMP/err") || {
		note "sandbox failed: $(head -3 "$TMP/err")"
		return 1
	}
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { sort -g | head -1; }

URL_BIG=http://127.0.0.1:$PORT/big
URL_SMALL=http://127.0.0.1:$PORT/small
ALLOW=allow=127.0.0.1:$PORT
C="curl -sS --noproxy '' -o /dev/null"

# Rounds interleave the ways through, so that the load of a shared
# machine spreads over all of them. Throughput in MB/s (10^6 bytes), time
# to first byte in seconds (curl's figures).
loop() { echo "for i in \$(seq $1); do $2; echo; done"; }
: >"$TMP/t.direct"; : >"$TMP/t.http"; : >"$TMP/t.connect"
: >"$TMP/l.direct"; : >"$TMP/l.proxy"
LAT_PER=$(((LAT_REPS + REPS - 1) / REPS))
for _ in $(seq "$REPS"); do
	sbx host "$C -w '%{speed_download}\n' $URL_BIG" >>"$TMP/t.direct"
	sbx "$ALLOW" "$C -w '%{speed_download}\n' $URL_BIG" >>"$TMP/t.http"
	sbx "$ALLOW" "$C -p -w '%{speed_download}\n' $URL_BIG" >>"$TMP/t.connect"
	sbx host "$(loop "$LAT_PER" "$C -w '%{time_starttransfer}' $URL_SMALL")" >>"$TMP/l.direct"
	sbx "$ALLOW" "$(loop "$LAT_PER" "$C -p -w '%{time_starttransfer}' $URL_SMALL")" >>"$TMP/l.proxy"
done

mbps() { awk '{printf "%.0f\n", $1 / 1e6}' "$1" | "$2"; }
ms() { awk '{printf "%.3f\n", $1 * 1000}' "$1" | "$2"; }

maximum() { sort -g | tail -1; }
direct=$(mbps "$TMP/t.direct" median)
http=$(mbps "$TMP/t.http" median)
connect=$(mbps "$TMP/t.connect" median)
bdirect=$(mbps "$TMP/t.direct" maximum)
bhttp=$(mbps "$TMP/t.http" maximum)
bconnect=$(mbps "$TMP/t.connect" maximum)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "nan"}'; }
r_http=$(ratio "$http" "$direct")
r_connect=$(ratio "$connect" "$direct")
# best of N: the figure least disturbed by other load on the machine
rb_http=$(ratio "$bhttp" "$bdirect")
rb_connect=$(ratio "$bconnect" "$bdirect")
ok() { awk -v r="$1" 'BEGIN {print (r >= 0.8) ? "yes" : "NO"}'; }
# table: median, then best (in the "min" column: the best run)
echo "ROW egress_tput_${MB}M $WHERE direct $direct $bdirect - - - MB/s(median,best)"
echo "ROW egress_tput_${MB}M $WHERE proxy-http $http $bhttp - $rb_http $(ok "$rb_http") MB/s(median,best;ratio_of_best,goal>=0.8)"
echo "ROW egress_tput_${MB}M $WHERE proxy-connect $connect $bconnect - $rb_connect $(ok "$rb_connect") MB/s(median,best;ratio_of_best,goal>=0.8)"
echo "BENCH name=egress_tput_${MB}M where=$WHERE direct_MBps=$direct proxy_http_MBps=$http proxy_connect_MBps=$connect http_ratio=$r_http connect_ratio=$r_connect best_direct_MBps=$bdirect best_http_MBps=$bhttp best_connect_MBps=$bconnect best_http_ratio=$rb_http best_connect_ratio=$rb_connect"

ld=$(ms "$TMP/l.direct" median)
lp=$(ms "$TMP/l.proxy" median)
ldm=$(ms "$TMP/l.direct" minimum)
lpm=$(ms "$TMP/l.proxy" minimum)
# the minimum is the figure to trust on a loaded machine
added=$(awk -v a="$lp" -v b="$ld" 'BEGIN {printf "%.3f", a - b}')
added_min=$(awk -v a="$lpm" -v b="$ldm" 'BEGIN {printf "%.3f", a - b}')
echo "ROW egress_ttfb $WHERE direct $ld $ldm - - - ms"
echo "ROW egress_ttfb $WHERE proxy-connect $lp $lpm - - - ms(added:median$added,min$added_min)"
echo "BENCH name=egress_ttfb where=$WHERE direct_ms=$ld proxy_ms=$lp added_ms=$added direct_min_ms=$ldm proxy_min_ms=$lpm added_min_ms=$added_min"
