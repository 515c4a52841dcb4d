#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun sandbox --net allow=...`: the egress allowlist proxy (HTTP
# CONNECT, plain HTTP, SOCKS5), address classes, deny reasons, no DNS
# inside. Rootless (the test user) and as root. Only loopback servers and
# a network namespace the test creates itself are ever contacted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

DASH=$'\xe2\x80\x94'

# eg_setup MODE: MODE user (the test user) or root; a home and a git
# workspace (tests/sandbox-lib.sh). eg: the sandbox from $WS, as MODE.
eg_setup()
{
	sb_home "$1"
	sb_home_own
}

eg()
{
	sb_run "$@"
}

# sb_run_log FILE ARGS...: eg with the global --log FILE
sb_run_log()
{
	local log=$1
	shift
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --log "$log" --root "$AR_ROOT" \
			sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --log "$log" --root "$AR_USER_ROOT" sandbox \
			--no-tty "$@"
	fi
}

# start_server: an HTTP server on 127.0.0.1:random port, serving
# index.html ("hello-from-host") and big (1 MiB). Sets PORT.
start_server()
{
	local dir=$TEST_TMP/www-$RANDOM$RANDOM
	mkdir -p "$dir"
	echo "hello-from-host" >"$dir/index.html"
	head -c 1048576 /dev/zero >"$dir/big"
	http_server "$dir"
}

# free_port: a TCP port of 127.0.0.1 nothing listens on (now)
free_port()
{
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# wait_port PORT: until something listens on 127.0.0.1:PORT (5 s)
wait_port()
{
	for _ in $(seq 50); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	fail "nothing listens on 127.0.0.1:$1"
}

# curl inside the sandbox, through the proxy of the environment
# (--noproxy '': NO_PROXY lists 127.0.0.1 for the sandbox's own servers)
CURL="curl -sS -m 10 --noproxy ''"

t_allowed_exact_loopback()
{
	eg_setup "$1"
	start_server
	assert_status 0 eg --net "allow=127.0.0.1:$PORT" -- sh -c "
		env | grep -i _proxy= | sort
		$CURL http://127.0.0.1:$PORT/
		$CURL -o /dev/null -w 'big=%{size_download}\n' http://127.0.0.1:$PORT/big
		busybox wget -q -O - http://127.0.0.1:$PORT/ | sed 's/^/busybox:/'
		$CURL -x socks5://127.0.0.1:3128 http://127.0.0.1:$PORT/ | sed 's/^/socks-ip:/'
		"
	assert_contains "$OUT" "HTTP_PROXY=http://127.0.0.1:3128"
	assert_contains "$OUT" "https_proxy=http://127.0.0.1:3128"
	assert_contains "$OUT" "ALL_PROXY=socks5h://127.0.0.1:3128"
	assert_contains "$OUT" "no_proxy=localhost,127.0.0.1,::1"
	assert_contains "$OUT" "hello-from-host"
	assert_contains "$OUT" "big=1048576"
	assert_contains "$OUT" "busybox:hello-from-host"
	assert_contains "$OUT" "socks-ip:hello-from-host"
	assert_contains "$ERR" "egress-proxy(allowlist)"
	# the same server on another port of the allowlist: refused
	assert_status 0 eg --net "allow=127.0.0.1:$((PORT == 65535 ? 1 : PORT + 1))" \
		-- sh -c "$CURL -i http://127.0.0.1:$PORT/; true"
	assert_not_contains "$OUT" "hello-from-host"
	assert_contains "$OUT" "403 Forbidden"
	assert_contains "$OUT" "agentrun: blocked 127.0.0.1:$PORT $DASH not in the allowlist"
}

t_not_allowed_403()
{
	eg_setup "$1"
	assert_status 0 eg --net allow=allowed.test -- sh -c "
		$CURL -i http://evil.test/; echo curl-http=\$?
		$CURL https://evil.test/; echo curl-https=\$?"
	assert_contains "$OUT" "HTTP/1.1 403 Forbidden"
	assert_contains "$OUT" "agentrun: blocked evil.test:80 $DASH not in the allowlist; add --net allow=evil.test"
	assert_contains "$OUT" "curl-https=56"
	# nothing live on stderr: one summary line at exit, the details
	# once each in the block log
	assert_not_contains "$ERR" "agentrun: blocked"
	assert_eq "$(grep -c 'connections blocked' <<<"$ERR")" 1
	assert_contains "$ERR" "agentrun: 2 connections blocked: evil.test:80 (not in the allowlist), evil.test:443 (not in the allowlist) $DASH see $H/.local/state/agentrun/egress.log"
	assert_eq "$(grep -c "agentrun: blocked evil.test:80 $DASH not in the allowlist; add --net allow=evil.test" "$H/.local/state/agentrun/egress.log")" 1
	assert_eq "$(grep -c "agentrun: blocked evil.test:443 $DASH not in the allowlist; add --net allow=evil.test" "$H/.local/state/agentrun/egress.log")" 1
	# the reason in the status line, for clients that only show that
	assert_status 0 eg --net allow=allowed.test -- sh -c "
		$CURL -v https://evil.test/ 2>&1; true"
	assert_contains "$OUT" "< HTTP/1.1 403 Forbidden (agentrun: blocked evil.test:443 - not in the allowlist; add --net allow=evil.test)"
}

t_verbose_and_log()
{
	eg_setup "$1"
	local log=$TEST_TMP/eglog-$RANDOM
	# --verbose: each refusal live on stderr, once; the summary too
	assert_status 0 eg --verbose --net allow=allowed.test -- sh -c "
		$CURL http://evil.test/ >/dev/null; $CURL http://evil.test/ >/dev/null; true"
	assert_eq "$(grep -c "^agentrun: blocked evil.test:80 $DASH" <<<"$ERR")" 2
	assert_contains "$ERR" "agentrun: 2 connections blocked: evil.test:80 (not in the allowlist) 2 times $DASH see"
	# --log FILE: the details there (once each), not on stderr, and the
	# summary names it
	: >"$log"
	chmod 0666 "$log"
	assert_status 0 sb_run_log "$log" --net allow=allowed.test -- sh -c "
		$CURL http://evil.test:81/ >/dev/null; $CURL http://other.test/ >/dev/null; true"
	assert_not_contains "$ERR" "agentrun: blocked"
	assert_contains "$ERR" "agentrun: 2 connections blocked: evil.test:81 (not in the allowlist), other.test:80 (not in the allowlist) $DASH see $log"
	assert_eq "$(grep -c "blocked evil.test:81 $DASH" "$log")" 1
	assert_eq "$(grep -c "blocked other.test:80 $DASH" "$log")" 1
	assert_eq "$(grep -c "connections blocked" "$log")" 1
	# nothing refused: no summary
	assert_status 0 eg --net allow=allowed.test -- true
	assert_not_contains "$ERR" "blocked"
}

# A TUI-like command under tmux: its screen shows nothing of the
# runtime's, though the command makes refused connections while it runs.
t_tmux_screen()
{
	eg_setup "$1"
	require_cmd tmux
	local d=$TEST_TMP/tui-$RANDOM root=$AR_USER_ROOT cg=
	# the test user has no delegated cgroup on some hosts: the runtime's
	# warning about it is not the subject here
	[ "$1" = root ] && root=$AR_ROOT || cg="--cgroup-manager disabled"
	mkdir -p "$d"
	cat >"$d/run.sh" <<EOF
cd "$WS" || exit 1
HOME="$H" "$AGENTRUN" --root "$root" $cg sandbox --net allow=allowed.test -- sh -c "
	echo TUI-START
	curl -sS -m 10 --noproxy '' http://evil.test/ >/dev/null 2>&1
	curl -sS -m 10 --noproxy '' https://evil.test/ >/dev/null 2>&1
	echo TUI-END"
echo EXITED
touch "$d/done"
sleep 60
EOF
	chmod -R a+rwX "$d"
	local tm="tmux -S $d/sock"
	[ "$1" = root ] || tm="as_test_user $tm"
	$tm new-session -d -x 150 -y 40 "bash $d/run.sh"
	for _ in $(seq 150); do
		[ -e "$d/done" ] && break
		sleep 0.1
	done
	[ -e "$d/done" ] || fail "the sandbox under tmux did not finish"
	OUT=$($tm capture-pane -p -t 0)
	$tm kill-server
	# after the command: the summary, once
	assert_eq "$(grep -c '^agentrun: 2 connections blocked' <<<"$OUT")" 1
	# the screen while the command ran: everything before it
	OUT=$(sed '/^agentrun: 2 connections blocked/,$d' <<<"$OUT")
	assert_contains "$OUT" "TUI-START"
	assert_contains "$OUT" "TUI-END"
	assert_not_contains "$OUT" "agentrun"
	assert_eq "$(grep -c "blocked evil.test" "$H/.local/state/agentrun/egress.log")" 2
}

t_name_to_loopback_refused()
{
	eg_setup "$1"
	start_server
	# localhost is allowed by name, but it resolves to loopback
	assert_status 0 eg --net allow=localhost -- sh -c "
		$CURL -i http://localhost:$PORT/; echo curl=\$?
		$CURL -x socks5h://127.0.0.1:3128 http://localhost:$PORT/; echo socks=\$?"
	assert_not_contains "$OUT" "hello-from-host"
	assert_contains "$OUT" "403 Forbidden"
	assert_match "$OUT" "agentrun: blocked localhost:$PORT $DASH resolves to (127\\.0\\.0\\.1|::1), a loopback address; allow that exact address with --net allow="
	assert_contains "$OUT" "socks=97"
	assert_contains "$ERR" "blocked: localhost:$PORT (resolves to"
	# a raw loopback address of another port is refused the same way
	assert_status 0 eg --net 'allow=*' -- sh -c "$CURL -i http://127.0.0.1:$PORT/; true"
	assert_contains "$OUT" "127.0.0.1 is a loopback address"
	assert_not_contains "$OUT" "hello-from-host"
	assert_status 0 eg --net 'allow=*' -- sh -c "$CURL -i http://169.254.169.254/; true"
	assert_contains "$OUT" "169.254.169.254 is a cloud metadata address"
}

# A host loopback service allowed by its exact address (or
# localhost:PORT) answers at the same address inside, for clients that
# know nothing of proxies.
t_host_loopback_service()
{
	eg_setup "$1"
	start_server
	local other=$((PORT == 65535 ? 1 : PORT + 1)) banner_port dead
	# a server-first protocol (the client sends nothing first)
	banner_port=$(free_port)
	timeout 60 "$PY" -c '
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(8)
while True:
    c, _ = s.accept(); c.sendall(b"BANNER-FROM-HOST\n"); c.close()' "$banner_port" &
	defer kill $!
	dead=$(free_port)
	wait_port "$banner_port"
	assert_status 0 eg --net "allow=127.0.0.1:$PORT,127.0.0.1:$banner_port,127.0.0.1:$dead" -- sh -c "
		curl -sS -m 10 --noproxy '*' http://127.0.0.1:$PORT/ | sed 's/^/direct:/'
		curl -sS -m 10 --noproxy '*' http://localhost:$PORT/ | sed 's/^/localhost:/'
		env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy \
			curl -sS -m 10 http://127.0.0.1:$PORT/ | sed 's/^/noenv:/'
		$PY -c '
import socket
s = socket.create_connection((\"127.0.0.1\", $banner_port), timeout=10)
print(\"banner:\" + s.recv(100).decode().strip())
s = socket.create_connection((\"127.0.0.1\", $PORT), timeout=10)
s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\")
print(\"raw:\" + s.makefile().read().splitlines()[-1])'
		curl -sS -m 5 --noproxy '*' http://127.0.0.1:$other/; echo other=\$?
		curl -sS -m 5 --noproxy '*' http://127.0.0.1:$dead/; echo dead=\$?"
	assert_contains "$OUT" "direct:hello-from-host"
	assert_contains "$OUT" "localhost:hello-from-host"
	assert_contains "$OUT" "noenv:hello-from-host"
	assert_contains "$OUT" "banner:BANNER-FROM-HOST"
	assert_contains "$OUT" "raw:hello-from-host"
	# another port of the host is not there
	assert_contains "$OUT" "other=7"
	# an allowed service that is down: the connection is reset (curl
	# may see that while connecting: 7), the log says why
	assert_match "$OUT" "dead=(7|52|56)"
	assert_contains "$(cat "$H/.local/state/agentrun/egress.log")" "cannot connect to 127.0.0.1:$dead on the host: Connection refused"
	# localhost:PORT: both loopback addresses inside, whichever the
	# host's server listens on
	assert_status 0 eg --net "allow=localhost:$PORT" -- sh -c "
		curl -sS -m 10 --noproxy '*' 'http://[::1]:$PORT/' | sed 's/^/v6:/'
		curl -sS -m 10 --noproxy '*' http://127.0.0.1:$PORT/ | sed 's/^/v4:/'
		curl -sS -m 10 --noproxy '' http://localhost:$PORT/ | sed 's/^/proxied:/'"
	assert_contains "$OUT" "v6:hello-from-host"
	assert_contains "$OUT" "v4:hello-from-host"
	assert_contains "$OUT" "proxied:hello-from-host"
	# the proxy's own port cannot be one
	assert_status '!0' eg --net "allow=127.0.0.1:3128" -- true
	assert_contains "$ERR" "ports 3128 and 3129 on the sandbox's loopback are the egress proxy's"
}

# The advice of a refusal, followed, works; a name that merely resolves
# to loopback stays refused.
t_loopback_advice_followed()
{
	eg_setup "$1"
	start_server
	assert_status 0 eg --net allow=localhost -- sh -c "
		curl -sS -m 10 --noproxy '*' http://localhost:$PORT/; echo direct=\$?
		$CURL http://localhost:$PORT/"
	assert_contains "$OUT" "direct=7"
	assert_not_contains "$OUT" "hello-from-host"
	local advice
	advice=$(sed -n 's/.*allow that exact address with \(--net allow=[^ ]*\).*/\1/p' <<<"$OUT" | head -1)
	assert_eq "$advice" "--net allow=127.0.0.1:$PORT"
	assert_status 0 eg --net allow=localhost $advice -- sh -c "
		curl -sS -m 10 --noproxy '*' http://localhost:$PORT/ | sed 's/^/direct:/'
		$CURL http://localhost:$PORT/ | sed 's/^/proxied:/'"
	assert_contains "$OUT" "direct:hello-from-host"
	assert_contains "$OUT" "proxied:hello-from-host"
}

# --publish: a host loopback port forwarded to a server the command
# runs on the sandbox's own loopback (an OAuth callback, a dev server).
t_publish()
{
	eg_setup "$1"
	local hp net
	hp=$(free_port)
	# --net none and --net allow=... alike
	for net in none allow=allowed.test; do
		rm -f "$WS/ready"
		eg --net "$net" --publish "$hp:8000" -- sh -c "
			mkdir -p /tmp/w && cd /tmp/w && echo hello-inside >index.html
			timeout 120 $PY -m http.server 8000 --bind 127.0.0.1 >/dev/null 2>&1 &
			for i in \$(seq 600); do
				curl -s -o /dev/null --noproxy '*' http://127.0.0.1:8000/ && break
				sleep 0.1
			done
			touch $WS/ready
			while [ ! -e $WS/done ]; do sleep 0.1; done" >/dev/null 2>&1 &
		# the sandbox ends when the host's request is made (or the test fails)
		defer touch "$WS/done"
		# under load (the VM lane beside) a rootless start and python's
		# can take more than the 10 s this waited before
		wait_until 120 test -e "$WS/ready"
		OUT=$(curl -sS -m 20 "http://127.0.0.1:$hp/" 2>&1) || true
		touch "$WS/done"
		wait
		rm -f "$WS/done"
		assert_eq "$OUT" "hello-inside"
	done
	# nothing listens inside: the host's connection is reset (curl may
	# see that while connecting: 7), the log says why
	eg --net none --publish "127.0.0.1:$hp:8001" -- sh -c "touch $WS/ready2
		while [ ! -e $WS/done ]; do sleep 0.1; done" >/dev/null 2>&1 &
	wait_until 120 test -e "$WS/ready2"
	OUT=$(curl -sS -m 20 "http://127.0.0.1:$hp/" 2>&1) || true
	touch "$WS/done"
	wait
	assert_match "$OUT" "curl: \((7|52|56)\)"
	assert_contains "$(cat "$H/.local/state/agentrun/egress.log")" "cannot connect to 127.0.0.1:8001 in the sandbox (--publish): Connection refused"
	# errors: malformed, the port taken, with --net host, in a profile
	assert_status '!0' eg --publish 80 -- true
	assert_contains "$ERR" "--publish \`80\`: expected [ADDR:]HOSTPORT:PORT"
	assert_status '!0' eg --publish "x.test:$hp:80" -- true
	assert_contains "$ERR" "--publish \`x.test:$hp:80\`"
	assert_status '!0' eg --net host --publish "$hp:80" -- true
	assert_contains "$ERR" "with --net host its ports are the host's already"
	# with --net allow, a port where agentrun itself listens inside (the
	# proxy, the capture, a host loopback service's relay): refused, the
	# host port not left bound
	assert_status '!0' eg --net allow=allowed.test --publish "$hp:3128" -- true
	assert_contains "$ERR" "port 3128 on the sandbox's loopback is agentrun's egress proxy"
	assert_status '!0' eg --net allow=allowed.test --publish "$hp:3129" -- true
	assert_contains "$ERR" "port 3129 on the sandbox's loopback is agentrun's transparent egress capture"
	assert_status '!0' eg --net allow=127.0.0.1:8765 --publish "$hp:8765" -- true
	assert_contains "$ERR" "port 8765 on the sandbox's loopback is agentrun's relay to the host service"
	assert_status 0 eg --net none --publish "$hp:3128" -- true
	# a profile's port that is taken: a warning, the sandbox runs
	local hp2
	hp2=$(free_port)
	timeout 30 "$PY" -c '
import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
time.sleep(30)' "$hp2" &
	defer kill $!
	wait_port "$hp2"
	printf '{"publish": ["127.0.0.1:%s:8000"]}\n' "$hp2" >"$H/taken.json"
	chmod 0644 "$H/taken.json"
	assert_status 0 eg --profile "$H/taken.json" -- echo ran
	assert_contains "$OUT" "ran"
	assert_contains "$ERR" "taken.json: publish[0]: --publish \`127.0.0.1:$hp2:8000\`: listen on the host"
	assert_contains "$ERR" "going on without it"
	# the same on the command line: an error
	assert_status '!0' eg --publish "127.0.0.1:$hp2:8000" -- true
	assert_contains "$ERR" "Address already in use"
	printf '{"publish": ["127.0.0.1:%s:8000", "nope"]}\n' "$hp" >"$H/pub.json"
	chmod 0644 "$H/pub.json"
	assert_status '!0' eg --profile "$H/pub.json" -- true
	assert_contains "$ERR" "pub.json: publish[1]"
}

t_plain_http_host_header()
{
	eg_setup "$1"
	start_server
	# a request to an allowed target with the Host of another name
	assert_status 0 eg --net "allow=127.0.0.1:$PORT" -- sh -c "
		$CURL -i -H 'Host: evil.test' http://127.0.0.1:$PORT/; true"
	assert_not_contains "$OUT" "hello-from-host"
	assert_contains "$OUT" "403 Forbidden"
	assert_contains "$OUT" "the Host header (evil.test) names another host"
	# a raw absolute-URI request for a disallowed host
	assert_status 0 eg --net "allow=127.0.0.1:$PORT" -- "$PY" -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"GET http://evil.test/ HTTP/1.1\r\nHost: evil.test\r\n\r\n")
print(s.recv(4096).decode())'
	assert_contains "$OUT" "403 Forbidden"
	assert_contains "$OUT" "agentrun: blocked evil.test:80 $DASH not in the allowlist"
}

# The attack: an agent-chosen Host with terminal escapes (erase the line,
# cursor up) in a refused request, to erase the warnings above its line
# on the user's terminal. The refusal and the summary show it quoted, on
# stderr and in the --log file; no escape byte reaches either.
t_agent_strings_quoted()
{
	eg_setup "$1"
	start_server
	local log=$TEST_TMP/eglog-esc-$RANDOM esc=$'\033'
	local cmd="$CURL -H \"Host: \$(printf 'a\\033[2K\\033[1Ab')\" http://127.0.0.1:$PORT/ >/dev/null; true"
	assert_status 0 eg --verbose --net "allow=127.0.0.1:$PORT" -- sh -c "$cmd"
	assert_not_contains "$ERR" "$esc"
	assert_contains "$ERR" 'the Host header ("a\033[2K\033[1Ab") names another host'
	assert_contains "$ERR" "agentrun: 1 connection blocked: 127.0.0.1:$PORT (the Host header (\"a\\033[2K\\033[1Ab\") names another host"
	: >"$log"
	chmod 0666 "$log"
	assert_status 0 sb_run_log "$log" --net "allow=127.0.0.1:$PORT" -- sh -c "$cmd"
	assert_not_contains "$ERR" "$esc"
	assert_contains "$(cat "$log")" 'the Host header ("a\033[2K\033[1Ab") names another host'
	assert_eq "$(grep -c "$esc" "$log")" 0
}

t_socks5_refused()
{
	eg_setup "$1"
	start_server
	assert_status 0 eg --net "allow=127.0.0.1:$PORT" -- sh -c "
		$CURL --socks5-hostname 127.0.0.1:3128 http://evil.test/; echo socks=\$?
		$CURL --socks5-hostname 127.0.0.1:3128 http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "socks=97"
	assert_contains "$OUT" "hello-from-host"
	assert_contains "$ERR" "blocked: evil.test:80 (not in the allowlist)"
	# the reply code itself: 0x02, connection not allowed by ruleset
	assert_status 0 eg --net "allow=127.0.0.1:$PORT" -- "$PY" -c '
import socket
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"\x05\x01\x00"); assert s.recv(2) == b"\x05\x00"
s.sendall(b"\x05\x01\x00\x03\x09evil.test\x01\xbb")
print("reply=%d" % s.recv(10)[1])
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"\x05\x01\x00"); s.recv(2)
s.sendall(b"\x05\x01\x00\x01\x0a\x00\x00\x01\x00\x16")
print("ip-reply=%d" % s.recv(10)[1])'
	assert_contains "$OUT" "reply=2"
	assert_contains "$OUT" "ip-reply=2"
	assert_contains "$ERR" ", 10.0.0.1:22 (not in the allowlist)"
}

t_no_dns_inside()
{
	eg_setup "$1"
	# the sandbox's resolver answers from the policy: an allowed name
	# gets an address of its pool, any other NXDOMAIN; nothing is asked
	# of a real resolver (resolv.conf stays empty)
	assert_status 0 eg --net 'allow=*.allowed.test' -- sh -c '
		getent hosts a.allowed.test | sed "s/^/allowed:/"
		getent hosts example.com; echo getent=$?
		echo resolv-bytes=$(wc -c </etc/resolv.conf)
		'"$PY"' -c "
import socket
try:
    socket.getaddrinfo(\"example.com\", 443)
    print(\"resolved\")
except socket.gaierror as e:
    print(\"gaierror\")"'
	assert_match "$OUT" "allowed:198\\.18\\.[0-9.]+ +a\\.allowed\\.test"
	assert_contains "$OUT" "getent=2"
	assert_contains "$OUT" "gaierror"
	assert_not_contains "$OUT" "resolved"
	assert_contains "$OUT" "resolv-bytes=0"
}

t_direct_connect_fails()
{
	eg_setup "$1"
	start_server
	# allowed: another port of the host's loopback (a service there
	# would answer inside); this one is not
	assert_status 0 eg --net "allow=127.0.0.1:$((PORT == 65535 ? 1 : PORT + 1))" -- sh -c "
		curl -sS -m 3 --noproxy '*' http://127.0.0.1:$PORT/; echo direct=\$?
		(exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && echo TCP-REACHED
		$PY -c '
import socket
try:
    # captured, refused: reset (or the end) before any byte
    s = socket.create_connection((\"10.0.0.1\", 80), timeout=2)
    s.sendall(b\"GET / HTTP/1.0\\r\\n\\r\\n\")
    print(\"REACHED\" if s.recv(100) else \"unreachable\")
except OSError as e: print(\"unreachable\")'"
	assert_contains "$OUT" "direct=7"
	assert_not_contains "$OUT" "hello-from-host"
	assert_not_contains "$OUT" "REACHED"
	assert_contains "$OUT" "unreachable"
}

t_profile_and_errors()
{
	eg_setup "$1"
	start_server
	printf '{"net": {"allow": ["127.0.0.1:%s"]}}\n' "$PORT" >"$H/p.json"
	printf '{"net": {"allow": ["ok.test", "https://x.test"]}}\n' >"$H/bad.json"
	chmod 0644 "$H/p.json" "$H/bad.json"
	assert_status 0 eg --profile "$H/p.json" -- sh -c "$CURL http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "hello-from-host"
	assert_status '!0' eg --profile "$H/bad.json" -- true
	assert_contains "$ERR" "bad.json: net.allow[1]"
	assert_contains "$ERR" "a URL; the allowlist takes hosts: --net allow=x.test:443"
	assert_status '!0' eg --net allow=a.test:0 -- true
	assert_contains "$ERR" "--net allow=\`a.test:0\`"
	# --net none on the command line wins over the profile's allowlist
	assert_status 0 eg --profile "$H/p.json" --net none -- sh -c 'echo "[$HTTP_PROXY]"'
	assert_contains "$OUT" "[]"
}

# Wildcards, against names of a test-controlled /etc/hosts (a private
# mount namespace) that point at a server in a network namespace made
# by this test (10.200.0.2 on its lo). Root only: the namespaces.
t_wildcard_test_netns()
{
	eg_setup root
	require_cmd unshare ip
	[ -x "$PY" ] || skip "needs $PY"
	local hosts=$TEST_TMP/hosts-$RANDOM
	printf '127.0.0.1 localhost\n10.200.0.2 a.test.example b.sub.test.example other.example\n' >"$hosts"
	cat >"$TEST_TMP/wild.sh" <<EOF
set -u
mount --bind "$hosts" /etc/hosts
ip link set lo up
ip addr add 10.200.0.2/32 dev lo
mkdir -p "$TEST_TMP/wwild" && echo hello-from-netns >"$TEST_TMP/wwild/index.html"
cd "$TEST_TMP/wwild"
timeout 60 $PY -m http.server 8088 --bind 10.200.0.2 >/dev/null 2>&1 &
for i in \$(seq 50); do curl -s -o /dev/null http://10.200.0.2:8088/ && break; sleep 0.1; done
cd "$WS"
S="$AGENTRUN --root $AR_ROOT sandbox --no-tty"
C="curl -sS -m 10 --noproxy ''"
echo "== wildcard + exact address"
HOME=$H \$S --net 'allow=*.test.example,10.200.0.2:8088' -- sh -c "
	\$C http://a.test.example:8088/ | sed 's/^/a:/'
	\$C http://b.sub.test.example:8088/ | sed 's/^/b:/'
	\$C -i http://other.example:8088/ | sed 's/^/other:/'
	\$C -i http://test.example:8088/ | sed 's/^/bare:/'"
echo "== wildcard alone: a private address"
HOME=$H \$S --net 'allow=*.test.example' -- sh -c "
	\$C -i http://a.test.example:8088/ | sed 's/^/priv:/'"
kill %1
EOF
	assert_status 0 unshare --mount --net bash "$TEST_TMP/wild.sh"
	assert_contains "$OUT" "a:hello-from-netns"
	assert_contains "$OUT" "b:hello-from-netns"
	assert_contains "$OUT" "other:agentrun: blocked other.example:8088 $DASH not in the allowlist; add --net allow=other.example"
	assert_contains "$OUT" "bare:agentrun: blocked test.example:8088 $DASH not in the allowlist"
	assert_contains "$OUT" "priv:agentrun: blocked a.test.example:8088 $DASH resolves to 10.200.0.2, a private (RFC 1918) address; allow that exact address with --net allow=10.200.0.2:8088"
	assert_not_contains "$OUT" "priv:hello"
}

for mode in user root; do
	run_test "egress ($mode): an exactly allowed loopback server is reachable through the proxy" t_allowed_exact_loopback $mode
	run_test "egress ($mode): not allowed: 403 with the reason, a summary on stderr" t_not_allowed_403 $mode
	run_test "egress ($mode): --verbose lines live, --log holds each refusal once" t_verbose_and_log $mode
	run_test "egress ($mode): nothing of the runtime's on a tmux screen" t_tmux_screen $mode
	run_test "egress ($mode): a name resolving to loopback is refused" t_name_to_loopback_refused $mode
	run_test "egress ($mode): an allowed host loopback service answers inside at its address" t_host_loopback_service $mode
	run_test "egress ($mode): the loopback advice of a refusal works when followed" t_loopback_advice_followed $mode
	run_test "egress ($mode): --publish forwards a host port into the sandbox" t_publish $mode
	run_test "egress ($mode): plain HTTP with a disallowed Host is refused" t_plain_http_host_header $mode
	run_test "egress ($mode): an agent's Host with terminal escapes is quoted on stderr and in the log" t_agent_strings_quoted $mode
	run_test "egress ($mode): SOCKS5 to a disallowed target: reply 0x02" t_socks5_refused $mode
	run_test "egress ($mode): DNS inside answers from the policy only" t_no_dns_inside $mode
	run_test "egress ($mode): direct connections bypassing the proxy fail" t_direct_connect_fails $mode
	run_test "egress ($mode): profile \"net\": {\"allow\": [...]} and pattern errors" t_profile_and_errors $mode
done
run_test "egress (root): wildcards against a test network namespace" t_wildcard_test_netns
finish
