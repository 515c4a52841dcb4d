#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/bench/egress-bench.sh — the egress allowlist proxy of
# `agentrun sandbox --net allow=...`, measured (part of `make bench`
# through run-bench.sh, or alone):
#   throughput: a 200 MiB download from a loopback server (sendfile), with
#     curl inside the sandbox, through the proxy (plain HTTP, and CONNECT
#     as HTTPS uses it) and through the relay of an allowed host loopback
#     service (no proxy: the same splice relay transparent egress uses)
#     versus direct (the same sandbox with --net host): medians, best
#     runs, the median of each round's relay/direct ratio (goal >= 0.9);
#   CPU: the CPU seconds per GB of each download, split into curl (its
#     shell's `times`), the server (its process CPU clock) and the proxy
#     (agentrun's threads, its process CPU clock), read around each
#     download: unlike speeds, hardly disturbed by other load.
#     cpu_bound = direct's CPU over the relayed CPU: the ratio if CPU
#     time were the only limit (the relay is a second TCP connection
#     through the loopback and one more busy thread); on an idle machine
#     curl alone is the bottleneck and the relay fits on the other core;
#     docs/performance.md, "The egress relay";
#   setup: connect + time to the first byte of a small file, relayed
#     minus direct, for each way through (what the proxy adds to every
#     connection: accept, request parsing, policy, getaddrinfo, connect,
#     the relay thread; goal < 1 ms).
# Only a loopback server is contacted.
#
# Output: a line per figure
#   ROW FIGURE WHERE RUNTIME MEDIAN MIN CPU VS OK UNIT   (run-bench's table)
#   BENCH name=.. ..                                     (machine-readable)
# Environment: AGENTRUN (required), EGRESS_REPS (rounds, default 7), EGRESS_LAT_REPS
# (default 50), EGRESS_MB (default 200), PY (default /usr/bin/python3).
set -eu -o pipefail

: "${AGENTRUN:?set AGENTRUN to the agentrun binary}"
AGENTRUN=$(readlink -f "$AGENTRUN") # the sandboxes start in another directory
REPS=${EGRESS_REPS:-7}
LAT_REPS=${EGRESS_LAT_REPS:-50}
MB=${EGRESS_MB:-200}
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

# cpu PID: the CPU seconds of process PID so far, every thread included
# (also the ones that ended), to the nanosecond: its process CPU clock.
cpu()
{
	"$PY" -c 'import sys, time
print("%.6f" % time.clock_gettime(((~int(sys.argv[1])) << 3) | 2))' "$1"
}

# dl NET CURLOPT...: one download of the big file by curl inside a sandbox
# of its own; prints "BYTES_PER_S PROXY_CPU_S CURL_CPU_S SERVER_CPU_S" (or
# "fail"): curl's average speed and the CPU time agentrun (the proxy's
# threads: nothing else of it is busy meanwhile), curl (the `times` of
# the shell that ran it) and the server spent during the download. The
# sandbox is a coprocess waiting on its stdin before and after curl, so
# the clocks are read right around the transfer.
dl()
{
	local net=$1 to_sbx from_sbx pid line code size speed c0 c1 s0 s1 tc
	local rc=0
	shift
	coproc SBX {
		cd "$TMP/ws" && HOME=$TMP exec "$AGENTRUN" sandbox --no-tty \
			--net "$net" -- sh -c "echo ready; read x; $C $* -w '%{http_code} %{size_download} %{speed_download}\n' $URL_BIG; times; read x" \
			2>"$TMP/err"
	}
	pid=$SBX_PID
	to_sbx=${SBX[1]}
	from_sbx=${SBX[0]}
	if read -r -t 120 line <&"$from_sbx" && [ "$line" = ready ]; then
		c0=$(cpu "$pid")
		s0=$(cpu "$SERVER_PID")
		echo go >&"$to_sbx"
		read -r -t 300 code size speed <&"$from_sbx" || speed=
		# times: the shell's user and system time, then its children's
		read -r -t 10 line <&"$from_sbx" &&
			read -r -t 10 tc <&"$from_sbx" || tc=
		c1=$(cpu "$pid")
		s1=$(cpu "$SERVER_PID")
		echo end >&"$to_sbx"
	else
		kill "$pid" 2>/dev/null
	fi
	wait "$pid" || rc=$?
	if [ "$rc" != 0 ] || [ "${code:-}" != 200 ] ||
		[ "${size:-}" != "$((MB * 1048576))" ]; then
		note "download through --net $net failed (exit $rc, HTTP ${code:-none}, ${size:-no} bytes): $(grep -v '^agentrun: sandbox: ' "$TMP/err" | head -3)"
		echo fail
		return 0
	fi
	# tc: "1m2.5s 0m0.25s" (user, system) in POSIX sh's `times` format
	echo "$speed $(awk -v a="$c0" -v b="$c1" -v s="$s0" -v t="$s1" -v tc="$tc" 'BEGIN {
		n = split(tc, f, /[ ms]+/); u = 0
		if (n >= 4) u = f[1] * 60 + f[2] + f[3] * 60 + f[4]
		printf "%.6f %.6f %.6f", b - a, u, t - s }')"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) print "nan"; else if (NR%2) print a[(NR+1)/2]; else print (a[NR/2]+a[NR/2+1])/2}'; }
minimum() { sort -g | head -1; }
maximum() { sort -g | tail -1; }

URL_BIG=http://127.0.0.1:$PORT/big
URL_SMALL=http://127.0.0.1:$PORT/small
ALLOW=allow=127.0.0.1:$PORT
C="curl -sS --noproxy '' -o /dev/null"

# Rounds interleave the ways through, in an order that rotates from one
# round to the next, so that the load of a shared machine spreads over
# all of them; each round's proxy speeds are divided by the same round's
# direct speed (paired ratios: neighbours in time see similar load).
# Throughput in MB/s (10^6 bytes), CPU in seconds per GB (10^9 bytes),
# time to first byte in seconds (curl's figures).
loop() { echo "for i in \$(seq $1); do $2; echo; done"; }
: >"$TMP/t.direct"; : >"$TMP/t.http"; : >"$TMP/t.connect"; : >"$TMP/t.forward"
: >"$TMP/l.direct"; : >"$TMP/l.http"; : >"$TMP/l.connect"; : >"$TMP/l.forward"
LAT_PER=$(((LAT_REPS + REPS - 1) / REPS))
WAYS=(direct http connect forward)
for round in $(seq "$REPS"); do
	for k in 0 1 2 3; do
		way=${WAYS[$(((round + k) % 4))]}
		case $way in
		direct) dl host ;;
		http) dl "$ALLOW" ;;
		connect) dl "$ALLOW" -p ;;
		forward) dl "$ALLOW" --noproxy "'*'" ;;
		esac >>"$TMP/t.$way"
	done
	for k in 0 1 2 3; do
		way=${WAYS[$(((round + k) % 4))]}
		case $way in
		direct) sbx host "$(loop "$LAT_PER" "$C -w '%{time_starttransfer}' $URL_SMALL")" ;;
		http) sbx "$ALLOW" "$(loop "$LAT_PER" "$C -w '%{time_starttransfer}' $URL_SMALL")" ;;
		connect) sbx "$ALLOW" "$(loop "$LAT_PER" "$C -p -w '%{time_starttransfer}' $URL_SMALL")" ;;
		forward) sbx "$ALLOW" "$(loop "$LAT_PER" "$C --noproxy '*' -w '%{time_starttransfer}' $URL_SMALL")" ;;
		esac >>"$TMP/l.$way"
	done
done

# the successful downloads of FILE in MB/s, CPU in s/GB: COLUMN 2 the
# proxy, 3 curl, 4 the server, 0 all three
mbps() { awk '$1 != "fail" {printf "%.0f\n", $1 / 1e6}' "$1"; }
cpu_gb() { awk -v b="$((MB * 1048576))" -v k="$2" '$1 != "fail" {printf "%.3f\n", (k ? $k : $2 + $3 + $4) / (b / 1e9)}' "$1"; }
ms() { awk '{printf "%.3f\n", $1 * 1000}' "$1" | "$2" | fmt %.3f; }
# paired FILE: the median of the proxy's speed over the direct speed of
# the same round
paired() { paste -d' ' "$TMP/t.direct" "$1" | awk 'NF == 8 && $1 > 0 && $5 != "fail" {printf "%.3f\n", $5 / $1}' | median | awk '{printf "%.2f", $1}'; }
fmt() { awk -v f="$1" '{printf f, $1}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "nan"}'; }
ok() { awk -v r="$1" 'BEGIN {print (r >= 0.9) ? "yes" : "NO"}'; }

declare -A MED BEST CPU PCPU CCPU SCPU BOUND
for way in direct http connect forward; do
	f=$TMP/t.$way
	n=$(mbps "$f" | wc -l)
	[ "$n" -gt 0 ] || { note "$way: no download succeeded"; exit 1; }
	[ "$n" = "$REPS" ] || note "$way: $((REPS - n)) of $REPS downloads failed"
	MED[$way]=$(mbps "$f" | median | fmt %.0f)
	BEST[$way]=$(mbps "$f" | maximum)
	CPU[$way]=$(cpu_gb "$f" 0 | median | fmt %.3f)
	PCPU[$way]=$(cpu_gb "$f" 2 | median | fmt %.3f)
	CCPU[$way]=$(cpu_gb "$f" 3 | median | fmt %.3f)
	SCPU[$way]=$(cpu_gb "$f" 4 | median | fmt %.3f)
	# the ratio when the CPU is the limit: direct's CPU over this way's
	BOUND[$way]=$(ratio "${CPU[direct]}" "${CPU[$way]}")
done
r_http=$(paired "$TMP/t.http")
r_connect=$(paired "$TMP/t.connect")
r_forward=$(paired "$TMP/t.forward")
# best of N: the figure least disturbed by other load on the machine
rb_http=$(ratio "${BEST[http]}" "${BEST[direct]}")
rb_connect=$(ratio "${BEST[connect]}" "${BEST[direct]}")
rb_forward=$(ratio "${BEST[forward]}" "${BEST[direct]}")
# table: median, best (in the "min" column), the CPU of curl, server and
# proxy together in s/GB, the median paired ratio to direct (goal >= 0.9)
load=$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' '/')
cpu_note() { echo "cpu=s/GB(curl${CCPU[$1]}+server${SCPU[$1]}+proxy${PCPU[$1]})"; }
echo "ROW egress_tput_${MB}M $WHERE direct ${MED[direct]} ${BEST[direct]} ${CPU[direct]} - - MB/s(median,best),$(cpu_note direct),load=$load"
echo "ROW egress_tput_${MB}M $WHERE proxy-http ${MED[http]} ${BEST[http]} ${CPU[http]} $r_http $(ok "$r_http") MB/s(median,best),$(cpu_note http),vs=median_paired_ratio(goal>=0.9;best$rb_http;cpu_bound${BOUND[http]})"
echo "ROW egress_tput_${MB}M $WHERE proxy-connect ${MED[connect]} ${BEST[connect]} ${CPU[connect]} $r_connect $(ok "$r_connect") MB/s(median,best),$(cpu_note connect),vs=median_paired_ratio(goal>=0.9;best$rb_connect;cpu_bound${BOUND[connect]})"
echo "ROW egress_tput_${MB}M $WHERE relay-loopback ${MED[forward]} ${BEST[forward]} ${CPU[forward]} $r_forward $(ok "$r_forward") MB/s(median,best),$(cpu_note forward),vs=median_paired_ratio(goal>=0.9;best$rb_forward;cpu_bound${BOUND[forward]})"
echo "BENCH name=egress_tput_${MB}M where=$WHERE reps=$REPS load=$load direct_MBps=${MED[direct]} proxy_http_MBps=${MED[http]} proxy_connect_MBps=${MED[connect]} http_ratio=$r_http connect_ratio=$r_connect best_direct_MBps=${BEST[direct]} best_http_MBps=${BEST[http]} best_connect_MBps=${BEST[connect]} best_http_ratio=$rb_http best_connect_ratio=$rb_connect relay_loopback_MBps=${MED[forward]} relay_loopback_ratio=$r_forward best_relay_loopback_ratio=$rb_forward proxy_http_cpu_s_per_GB=${PCPU[http]} proxy_connect_cpu_s_per_GB=${PCPU[connect]} relay_loopback_cpu_s_per_GB=${PCPU[forward]} total_direct_cpu_s_per_GB=${CPU[direct]} total_http_cpu_s_per_GB=${CPU[http]} total_connect_cpu_s_per_GB=${CPU[connect]} total_relay_loopback_cpu_s_per_GB=${CPU[forward]} cpu_bound_http_ratio=${BOUND[http]} cpu_bound_connect_ratio=${BOUND[connect]} cpu_bound_relay_loopback_ratio=${BOUND[forward]}"

# setup: the median and the minimum (the figure to trust on a loaded
# machine) of connect + first byte, and what each way adds to direct's
ld=$(ms "$TMP/l.direct" median)
ldm=$(ms "$TMP/l.direct" minimum)
echo "ROW egress_setup $WHERE direct $ld $ldm - - - ms(connect+first_byte)"
bench="name=egress_setup where=$WHERE load=$load direct_ms=$ld direct_min_ms=$ldm"
for way in http connect forward; do
	lp=$(ms "$TMP/l.$way" median)
	lpm=$(ms "$TMP/l.$way" minimum)
	added=$(awk -v a="$lp" -v b="$ld" 'BEGIN {printf "%.3f", a - b}')
	added_min=$(awk -v a="$lpm" -v b="$ldm" 'BEGIN {printf "%.3f", a - b}')
	name=$way
	[ "$way" = forward ] && name=relay-loopback
	[ "$way" = forward ] || name=proxy-$way
	# judged on the minimum: on a loaded machine the median mostly
	# measures the scheduler (both ways pay it)
	echo "ROW egress_setup $WHERE $name $lp $lpm - - $(awk -v a="$added_min" 'BEGIN {print (a < 1) ? "yes" : "NO"}') ms(connect+first_byte;added:median$added,min$added_min;goal<1,judged_on_min)"
	bench="$bench ${way}_ms=$lp ${way}_min_ms=$lpm ${way}_added_ms=$added ${way}_added_min_ms=$added_min"
done
echo "BENCH $bench"
