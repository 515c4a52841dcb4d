#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Sandbox sessions, as the unprivileged test user: `agentrun sandbox
# --name N [--detach]`, `sandbox exec N`, `sandbox list`, `sandbox stop N`.
# A detached server is reached from an exec'd command; the exec'd process
# has the sandbox's confinement; stop leaves no process, mount, proxy,
# state or session directory behind; --overlay changes stay reviewable.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# sbs ARGS...: agentrun as the test user, from $WS, with the test state root
sbs()
{
	as_test_user env HOME="$H" GITHUB_TOKEN=gh-secret \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
		"$AGENTRUN" --root "$AR_USER_ROOT" "$@"
}

ses_setup()
{
	sb_home user
	mkdir -p "$H/.ssh"
	echo PRIVATE-KEY >"$H/.ssh/id_ed25519"
	echo served >"$WS/index.html"
	sb_home_own
	TAG=AR_SESSION_TEST=$RANDOM$RANDOM
	MOUNTS_BEFORE=$(host_mounts)
}

# nothing of session $1 is left
assert_no_leftovers()
{
	local name=$1
	assert_status 0 sbs sandbox list
	assert_not_contains "$OUT" "$name "
	[ ! -e "$AR_USER_ROOT/.sandboxes/$name" ] || fail "session directory left: $(ls -la "$AR_USER_ROOT/.sandboxes/$name")"
	[ ! -e "$AR_USER_ROOT/$name" ] || fail "container state left"
	wait_no_leftover_procs "$AR_USER_ROOT" "$TAG"
	assert_eq "$(host_mounts)" "$MOUNTS_BEFORE" "mounts left on the host"
}

t_detached_server_exec()
{
	local name=web$RANDOM port=$((20000 + RANDOM % 20000))
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" \
		--net allow=example.com -- \
		"$PY" -m http.server --bind 127.0.0.1 "$port"
	assert_contains "$ERR" "agentrun sandbox exec $name"
	# the server is inside: the host does not reach it
	! curl -fsS -m 2 --noproxy '*' "http://127.0.0.1:$port/" >/dev/null 2>&1 ||
		fail "the host reaches the sandbox's server"
	assert_status 0 sbs sandbox list
	assert_match "$OUT" "$name +running +[0-9]+ .*$WS"
	# a second command reaches it, with the sandbox's confinement
	assert_status 0 sbs sandbox exec "$name" -- sh -c "
		for i in \$(seq 50); do
			$PY -c 'import urllib.request,sys; sys.stdout.write(urllib.request.urlopen(\"http://127.0.0.1:$port/index.html\").read().decode())' 2>/dev/null && break
			sleep 0.1
		done
		grep -E '^(CapEff|CapBnd|NoNewPrivs|Seccomp):' /proc/self/status
		echo env:\$AGENTRUN_SANDBOX:\$HTTPS_PROXY:\${GITHUB_TOKEN:-none}
		cat ~/.ssh/id_ed25519 2>&1 || true
		ps -eo pid,args | grep -c '[h]ttp.server'
		echo pwd:\$PWD"
	assert_contains "$OUT" served
	assert_contains "$OUT" "CapEff:	0000000000000000"
	assert_contains "$OUT" "CapBnd:	0000000000000000"
	assert_contains "$OUT" "NoNewPrivs:	1"
	assert_contains "$OUT" "Seccomp:	2"
	assert_contains "$OUT" "env:1:http://127.0.0.1:3128:none"
	assert_not_contains "$OUT" PRIVATE-KEY
	assert_contains "$OUT" $'\n1\n' "the server is a process of the same pid namespace"
	assert_contains "$OUT" "pwd:$WS"
	# the exit status of the exec'd command passes through
	assert_status 7 sbs sandbox exec "$name" -- sh -c 'exit 7'
	# the proxy runs in the monitor: it is gone after stop
	assert_status 0 sbs sandbox stop -t 1 "$name"
	assert_no_leftovers "$name"
}

t_exec_confined_by_seccomp_and_landlock()
{
	local name=conf$RANDOM
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	# user namespaces are refused by the agent profile; writes outside
	# the workspace fail
	assert_status 0 sbs sandbox exec "$name" -- sh -c '
		unshare -U true 2>/dev/null && echo UNSHARE-OK
		touch /usr/x 2>/dev/null && echo WROTE-USR
		echo done'
	assert_not_contains "$OUT" UNSHARE-OK
	assert_not_contains "$OUT" WROTE-USR
	assert_contains "$OUT" done
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
}

t_foreground_named()
{
	local name=fg$RANDOM pid
	ses_setup
	sbs sandbox --name "$name" --env "$TAG" -- sh -c 'sleep 600; exit 3' \
		>"$TEST_TMP/fg.out" 2>&1 &
	pid=$!
	defer kill "$pid"
	wait_until 10 sbs sandbox exec "$name" -- true
	assert_status 0 sbs sandbox exec "$name" -- sh -c 'ps -eo args | grep -c "^sleep 600"'
	assert_eq "$OUT" 1
	assert_status 0 sbs sandbox stop -t 0 "$name"
	wait "$pid" && fail "the foreground sandbox exited 0 after stop" || true
	assert_no_leftovers "$name"
}

t_refusals()
{
	local name=dup$RANDOM
	ses_setup
	assert_status 1 sbs sandbox exec nosuch$RANDOM -- true
	assert_contains "$ERR" "no sandbox named"
	assert_contains "$ERR" "agentrun sandbox list"
	assert_status 1 sbs sandbox stop nosuch$RANDOM
	assert_contains "$ERR" "no sandbox named"
	assert_status 1 sbs sandbox --detach -- true
	assert_contains "$ERR" "--detach needs --name"
	assert_status 1 sbs sandbox --name 'bad/name' -- true
	assert_contains "$ERR" "--name"
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	assert_status 1 sbs sandbox --name "$name" --detach -- true
	assert_contains "$ERR" "a sandbox named \`$name\` is running"
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
	# a command that ends at once: detach reports its status
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sh -c 'exit 0'
	wait_until 5 test ! -e "$AR_USER_ROOT/.sandboxes/$name"
	assert_no_leftovers "$name"
}

t_audit_session_exec_refused()
{
	local name=aud$RANDOM
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" \
		--audit "$H/audit.jsonl" -- sleep 600
	assert_status 1 sbs sandbox exec "$name" -- true
	assert_contains "$ERR" "--audit"
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
	assert_contains "$(cat "$H/audit.jsonl")" '"exit"'
}

# A monitor killed with SIGKILL: the container dies with it (it was
# started in the monitor's foreground), list no longer shows it, and the
# name can be used again.
t_monitor_killed()
{
	local name=kill$RANDOM mon
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	mon=$(cat "$AR_USER_ROOT/.sandboxes/$name/monitor")
	kill -KILL "$mon"
	wait_until 5 sh -c "! kill -0 $mon 2>/dev/null"
	assert_status 0 sbs sandbox list
	assert_not_contains "$OUT" "$name "
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
}

t_overlay_session()
{
	local name=ov$RANDOM
	ses_setup
	require_cmd diff
	sb_run true >/dev/null 2>&1 || true
	defer sbs discard "$name"
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --overlay --name "$name" --detach --env "$TAG" -- \
		sh -c 'echo changed > index.html; echo new > new.txt; exec sleep 600'
	wait_until 10 sbs sandbox exec "$name" -- test -e new.txt
	assert_status 0 sbs sandbox exec "$name" -- cat index.html new.txt
	assert_eq "$OUT" $'changed\nnew'
	assert_eq "$(cat "$WS/index.html")" served "the workspace is untouched"
	[ ! -e "$WS/new.txt" ] || fail "new.txt written into the workspace"
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
	assert_status 0 sbs changes "$name"
	assert_match "$OUT" "M +index.html"
	assert_match "$OUT" "A +new.txt"
}

# stop: a command that handles SIGTERM gets it and ends cleanly; one that
# does not (pid 1 would never see it) is killed without the wait.
t_stop_signals()
{
	local name=sig$RANDOM start
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- \
		sh -c 'trap "echo bye > stopped.txt; exit 0" TERM; sleep 600 & wait'
	wait_until 10 sbs sandbox exec "$name" -- true
	assert_status 0 sbs sandbox stop "$name"
	assert_eq "$(cat "$WS/stopped.txt")" bye
	assert_no_leftovers "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	start=$(date +%s)
	assert_status 0 sbs sandbox stop -t 30 "$name"
	[ $(($(date +%s) - start)) -lt 10 ] || fail "stop waited for a SIGTERM that pid 1 never sees"
	assert_no_leftovers "$name"
}

# exec --tty: the command gets a terminal of its own (relayed by agentrun)
t_exec_tty()
{
	local name=tty$RANDOM
	require_cmd script
	ses_setup
	defer sbs sandbox stop -t 0 "$name"
	assert_status 0 sbs sandbox --name "$name" --detach --env "$TAG" -- sleep 600
	assert_status 0 as_test_user env HOME="$H" script -qec \
		"$AGENTRUN --root $AR_USER_ROOT sandbox exec $name --tty -- sh -c 'test -t 0 && test -t 1 && echo IS-A-TTY; tty'" /dev/null
	assert_contains "$OUT" IS-A-TTY
	assert_match "$OUT" "/dev/pts/[0-9]+"
	assert_status 0 sbs sandbox exec "$name" --no-tty -- sh -c 'test -t 0 || echo NO-TTY'
	assert_contains "$OUT" NO-TTY
	assert_status 0 sbs sandbox stop -t 0 "$name"
	assert_no_leftovers "$name"
}

run_test "detached server reached from an exec; list; stop leaves nothing" t_detached_server_exec
run_test "exec'd process: seccomp and read-only mounts as the sandbox" t_exec_confined_by_seccomp_and_landlock
run_test "stop: SIGTERM when handled, else SIGKILL at once" t_stop_signals
run_test "a named foreground sandbox: exec, stop" t_foreground_named
run_test "exec --tty gives the command a terminal" t_exec_tty
run_test "refusals: unknown name, --detach without --name, duplicate name" t_refusals
run_test "exec into an --audit session is refused" t_audit_session_exec_refused
run_test "a killed monitor leaves a reusable name" t_monitor_killed
run_test "--overlay session: changes reviewable after stop" t_overlay_session
finish
