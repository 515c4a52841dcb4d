# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# tests/sandbox-lib.sh — helpers shared by the `agentrun sandbox` tests
# (test_sandbox.sh, test_egress.sh, test_audit.sh). Source it after lib.sh.
#
# sb_home MODE
#     MODE is "user" (the test user, rootless) or "root". Makes a home in
#     TEST_TMP with a git workspace inside it; sets MODE, H (home) and
#     WS ($H/proj). For "user", also makes the test user's state root.
#     Fill the home, then call sb_home_own.
# sb_home_own
#     Hand the home to its user (MODE user) and make it world-searchable.
# sb_run [SANDBOX OPTIONS] -- CMD...
#     `agentrun sandbox --no-tty` from $WS with HOME=$H, as MODE; with the
#     variables of the array SB_ENV (NAME=VALUE words) when it is set
#     (--secret NAME=...: its value comes from the environment).
# npm_cli NAME PACKAGE CMD
#     Install the npm PACKAGE once into $NPM_CACHE/NAME (as root
#     /var/cache/agentrun-test/npm, kept between runs; else the build
#     tree's tests/work/npm) and set BIN to its CMD; skip without npm or
#     the registry.
# http_server DIR
#     Serve DIR over HTTP (python3 http.server, threaded) on 127.0.0.1 at a
#     random port for at most 120 s; sets PORT and SERVER_PID (killed when
#     the test ends) and checks that the host reaches it.
#
# The control plane (test_sandbox_{control,allow,watch,channel,ui}.sh):
# ctl ARGS...
#     `agentrun sandbox ARGS` as MODE's user with MODE's state root, from
#     $WS with HOME=$H (as sb_run: `ctl exec` finds its workspace).
# ctl_uid / ctl_root_dir
#     Print the uid of ctl's user / MODE's state root.
# sb_bg NAME [SANDBOX OPTIONS] -- CMD...
#     `sb_run --name NAME ...` in the background (its output in
#     $TEST_TMP/NAME.out), stopped when the test ends; returns once its
#     control socket answers (`ctl requests NAME`).
# write_get
#     $WS/get.sh PORT FILE, the agent's client: one request to
#     http://127.0.0.1:PORT/ through the sandbox's proxy; FILE gets the
#     status, then the body (written whole, once done).
# sb_serve_home MODE
#     sb_home MODE with write_get's client, handed to its user
#     (sb_home_own), and http_server serving "served" from $H/srv (PORT).
#     Files added later: sb_home_own again.
# ctl_from_inside NAME SOCKET OP...
#     Inside sandbox NAME (ctl exec), each OP (a request line) sent to
#     SOCKET on a connection of its own; prints each reply line, or
#     "connect ERRNO" (the agent's try at the control plane).
# pending_ids NAME
#     The ids of NAME's pending requests, one a line.
# wait_request NAME [SEEN]
#     Wait (10 s at most) until NAME has a pending request whose id is
#     not in SEEN (ids, space separated); print its id.

PY=${PY:-/usr/bin/python3}

sb_home()
{
	MODE=$1
	if [ "$MODE" = root ]; then
		require_root
		H=$TEST_TMP/rhome-$RANDOM$RANDOM
	else
		require_agentrun_as_test_user
		if [ ! -d "$AR_USER_ROOT" ]; then
			mkdir -p "$AR_USER_ROOT"
			chown "$TEST_UID:$TEST_GID" "$AR_USER_ROOT"
			chmod 0700 "$AR_USER_ROOT"
		fi
		H=$TEST_TMP/home-$RANDOM$RANDOM
	fi
	WS=$H/proj
	mkdir -p "$WS/.git"
}

sb_home_own()
{
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$H"
	chmod 0755 "$H"
}

sb_run()
{
	sb_as_mode sandbox --no-tty "$@"
}

# sb_as_mode ARGS...: `agentrun --root ROOT ARGS` as MODE's user with its
# state root, from $WS with HOME=$H and the variables of SB_ENV
sb_as_mode()
{
	if [ "$MODE" = root ]; then
		(cd "${WS:-.}" && env HOME="${H:-$HOME}" ${SB_ENV[@]+"${SB_ENV[@]}"} \
			"$AGENTRUN" --root "$AR_ROOT" "$@")
	else
		as_test_user env HOME="${H:-$TEST_HOME}" ${SB_ENV[@]+"${SB_ENV[@]}"} \
			bash -c 'cd "$1" && shift && exec "$@"' _ "${WS:-/}" \
			"$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	fi
}

# sb_bg_exec VAR MODE LOG ARGS...: `agentrun --root ROOT sandbox --no-tty
# ARGS` from $WS in the background as MODE (root or user: the test user's
# environment as as_test_user makes it, without a shell function whose
# subshell would be the background pid), output to LOG; VAR gets the pid
# of agentrun itself (every step before it is an exec).
sb_bg_exec()
{
	local var=$1 mode=$2 log=$3 root=$AR_ROOT
	shift 3
	local pre=(env HOME="$H")
	if [ "$mode" = user ]; then
		ensure_test_user
		pre=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID"
			--init-groups env -i
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
			HOME="$H" USER="$TEST_USER" LOGNAME="$TEST_USER"
			XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR" LANG=C.UTF-8)
		root=$AR_USER_ROOT
	fi
	"${pre[@]}" bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
		"$AGENTRUN" --root "$root" sandbox --no-tty "$@" \
		</dev/null >"$log" 2>&1 &
	printf -v "$var" %s "$!"
}

# host CMD...: CMD on the host as MODE's user (root, or the test user)
# with HOME=$H
host()
{
	if [ "$MODE" = root ]; then
		HOME=$H "$@"
	else
		as_test_user env HOME="$H" "$@"
	fi
}

# inside NAME SHELL-TEXT: the text run by sh in the running sandbox NAME
inside()
{
	local name=$1
	shift
	ctl exec "$name" --no-tty -- sh -c "$*"
}

ctl()
{
	sb_as_mode sandbox "$@"
}

ctl_uid()
{
	if [ "$MODE" = root ]; then echo 0; else echo "$TEST_UID"; fi
}

ctl_root_dir()
{
	if [ "$MODE" = root ]; then echo "$AR_ROOT"; else echo "$AR_USER_ROOT"; fi
}

sb_bg()
{
	local name=$1
	shift
	sb_run --name "$name" "$@" >"$TEST_TMP/$name.out" 2>&1 &
	defer ctl stop -t 0 "$name"
	wait_until 20 ctl requests "$name"
}

write_get()
{
	cat >"$WS/get.sh" <<'EOF'
#!/bin/sh
# get.sh PORT FILE
curl -sS -m 120 --noproxy '' -x http://127.0.0.1:3128 -o "$2.body" \
	-w '%{http_code}\n' "http://127.0.0.1:$1/" >"$2.tmp" 2>&1
cat "$2.body" >>"$2.tmp" 2>/dev/null
mv "$2.tmp" "$2"
EOF
	chmod 0755 "$WS/get.sh"
}

sb_serve_home()
{
	sb_home "$1"
	mkdir -p "$H/srv"
	echo served >"$H/srv/index.html"
	write_get
	sb_home_own
	http_server "$H/srv"
}

ctl_from_inside()
{
	local name=$1 sock=$2
	shift 2
	ctl exec "$name" -- "$PY" -c '
import socket, sys
for op in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(sys.argv[1])
    except OSError as e:
        print("connect", e.errno); continue
    try:
        s.sendall(op.encode() + b"\n")
    except OSError:
        pass
    print(s.makefile("rb").readline().decode().strip())' "$sock" "$@"
}

pending_ids()
{
	ctl requests "$1" --json 2>/dev/null | jq -r '.[].id'
}

wait_request()
{
	local name=$1 seen=" ${2:-} " id
	for _ in $(seq 200); do
		for id in $(pending_ids "$name"); do
			case $seen in *" $id "*) ;; *) echo "$id"; return 0 ;; esac
		done
		sleep 0.05
	done
	fail "no new pending request in $name within 10 s: $(ctl requests "$name" 2>&1)"
}

http_server()
{
	local dir=$1
	require_cmd timeout curl
	[ -x "$PY" ] || skip "needs $PY"
	rm -f "$dir/.port"
	timeout 120 "$PY" -c '
import http.server, socketserver, sys, os
os.chdir(sys.argv[1])
h = http.server.SimpleHTTPRequestHandler
h.log_message = lambda *a: None
socketserver.TCPServer.allow_reuse_address = True
s = socketserver.ThreadingTCPServer(("127.0.0.1", 0), h)
open(".port.tmp", "w").write(str(s.server_address[1]))
os.rename(".port.tmp", ".port")
s.serve_forever()' "$dir" </dev/null >/dev/null 2>&1 &
	SERVER_PID=$!
	defer kill "$SERVER_PID"
	wait_until 10 test -s "$dir/.port"
	PORT=$(cat "$dir/.port")
	[ -e "$dir/index.html" ] || return 0
	curl -fsS -m 5 --noproxy '*' "http://127.0.0.1:$PORT/" >/dev/null ||
		fail "the test server is not reachable from the host"
}

# tls_setup [CMD...]: a test CA and a certificate for localhost in
# $TEST_TMP/tls (ca.pem, srv.pem, srv.key), made once per test file; the
# case is skipped without openssl, $PY (the test servers) or the CMDs.
tls_setup()
{
	require_cmd openssl "$@"
	[ -x "$PY" ] || skip "needs $PY"
	local d=$TEST_TMP/tls
	[ -s "$d/srv.pem" ] && return 0
	mkdir -p "$d"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/ca.key" -out "$d/ca.pem" -days 2 -subj /CN=agentrun-test-ca 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
		-keyout "$d/srv.key" -out "$d/srv.csr" -subj /CN=localhost 2>/dev/null
	printf 'subjectAltName=DNS:localhost\n' >"$d/ext"
	openssl x509 -req -in "$d/srv.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
		-CAcreateserial -out "$d/srv.pem" -days 2 -extfile "$d/ext" 2>/dev/null
	chmod 0755 "$d"
	chmod 0644 "$d"/*
}

# As root the cache lives where the test user can read it whatever the
# build tree's parents allow (a clone in a mode-700 home), and is kept
# between runs; otherwise in the build tree.
if [ "$(id -u)" = 0 ]; then
	NPM_CACHE=${AR_TEST_NPM_CACHE:-/var/cache/agentrun-test/npm}
else
	NPM_CACHE=${AR_TEST_NPM_CACHE:-$TOP_BUILDDIR/tests/work/npm}
fi

# npm_cli NAME PACKAGE CMD: install PACKAGE (once), set BIN to CMD in it
npm_cli()
{
	local name=$1 pkg=$2 cmd=$3 dir=$NPM_CACHE/$1
	require_cmd npm node
	BIN=$dir/node_modules/.bin/$cmd
	if [ ! -x "$BIN" ]; then
		mkdir -p "$NPM_CACHE"
		chmod 0755 "$NPM_CACHE" "$(dirname "$NPM_CACHE")" 2>/dev/null || true
		rm -rf "$dir.tmp"
		timeout 600 npm install --prefix "$dir.tmp" --no-audit --no-fund \
			--loglevel=error "$pkg" >"$TEST_TMP/npm-$name.log" 2>&1 ||
			skip "npm install $pkg failed (registry unreachable?): $(tail -n 3 "$TEST_TMP/npm-$name.log")"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	[ -x "$BIN" ] || skip "$pkg has no $cmd"
	chmod -R a+rX "$dir"
	as_test_user test -x "$BIN" ||
		skip "$BIN is not executable by $TEST_USER (a parent directory is not searchable by others?)"
}

# protect_repo [DIR...]: after sb_home (or a home like it) and with git
# required: $WS a real repository with one commit holding a.txt and
# .vscode/settings.json (and DIR/settings.json of each DIR), a nested
# repository sub/ and a submodule mod/; MARK, where the planted hooks and
# fsmonitors of the protection tests append (test_protect.sh,
# test_sandbox_vm.sh)
protect_repo()
{
	local dirs=(.vscode "$@")
	rm -rf "$WS/.git"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[protocol "file"]\n\tallow = always\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
	host git -C "$WS" init -q
	host sh -c 'cd "$1" && shift && echo a >a.txt && for d; do mkdir "$d" && echo "{}" >"$d/settings.json"; done &&
		git add -A && git commit -qm one' _ "$WS" "${dirs[@]}"
	host git init -q "$WS/sub"
	host git init -q "$H/modsrc"
	host sh -c 'cd "$1" && echo m >m && git add m && git commit -qm m' _ "$H/modsrc"
	host sh -c 'cd "$1" && git submodule -q add "$2" mod && git commit -qm sub' _ "$WS" "$H/modsrc"
	[ -d "$WS/.git/modules/mod/hooks" ] || fail "no submodule gitdir"
}

# host_git_runs_nothing: the host, after the run: git status and commit
# in every repository of protect_repo must run nothing the sandbox left
host_git_runs_nothing()
{
	host sh -c 'cd "$1" && git status >/dev/null 2>&1; git -c core.pager=cat log -1 >/dev/null 2>&1;
		echo b >>a.txt && git commit -qam two >/dev/null 2>&1;
		cd sub && git status >/dev/null 2>&1; echo x >x && git add x && git commit -qm x >/dev/null 2>&1;
		cd ../mod && git status >/dev/null 2>&1; echo y >>m && git commit -qam y >/dev/null 2>&1; true' _ "$WS"
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code: $(cat "$MARK")"
}
