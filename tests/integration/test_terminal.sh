#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# process.terminal: the pty master sent over --console-socket (as conmon
# receives it), consoleSize, the pty as controlling terminal and
# /dev/console, and `run` relaying the terminal itself.
. "$(dirname "$0")/../lib.sh"

RECV=$AR_TEST_HELPERS/recv_console.py
# The system python (a pyenv shim can take seconds to start).
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

# start_receiver SOCK OUT [INPUT]: the receiver in the background
start_receiver()
{
	"$PY" "$RECV" "$1" "${3:-}" >"$2" 2>"$2.err" &
	RECV_PID=$!
	wait_until 15 test -S "$1"
}

t_console_socket()
{
	require_root
	require_cmd python3
	local b=$TEST_TMP/cs id sock=$TEST_TMP/cs.sock
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.consoleSize={"height":31,"width":97} |
		.process.args=["sh","-c","tty; stty size; ls -l /dev/console; read line; echo got=$line; echo stdin=$(readlink /proc/self/fd/0)"]'
	defer ar delete --force "$id"
	start_receiver "$sock" "$TEST_TMP/cs.out" $'hello\n'
	assert_status 0 ar create --bundle "$b" --console-socket "$sock" "$id"
	assert_status 0 ar start "$id"
	wait "$RECV_PID"
	local out
	out=$(tr -d '\r' <"$TEST_TMP/cs.out")
	assert_contains "$out" "/dev/pts/0"
	assert_contains "$out" "31 97" "consoleSize"
	assert_match "$out" "136, +0 .*/dev/console" "/dev/console is the pty"
	assert_contains "$out" "got=hello"
	assert_contains "$out" "stdin=/dev/pts/0"
	assert_contains "$(cat "$TEST_TMP/cs.out.err")" "received fd"
}

t_terminal_needs_socket()
{
	require_root
	local b=$TEST_TMP/ns id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.args=["true"]'
	defer ar delete --force "$id"
	assert_status 1 ar create --bundle "$b" "$id"
	assert_contains "$ERR" "console-socket"
	assert_status 1 ar run -d --bundle "$b" "$id"
	assert_eq "$(ls -A "$AR_ROOT")" ""
}

t_run_relays_terminal()
{
	require_root
	require_cmd script
	local b=$TEST_TMP/relay id out rc=0
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.args=["sh","-c","tty; read l; echo got=$l; exit 6"]'
	defer ar delete --force "$id"
	out=$(printf 'typed\n' | timeout 20 script -qec \
		"'$AGENTRUN' --root '$AR_ROOT' run --bundle '$b' '$id'" /dev/null) ||
		rc=$?
	out=$(tr -d '\r' <<<"$out")
	assert_contains "$out" "/dev/pts/0"
	assert_contains "$out" "got=typed"
	assert_eq "$rc" 6 "exit status through the relay"
}

t_run_relay_without_tty()
{
	require_root
	local b=$TEST_TMP/relay2 id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.args=["sh","-c","tty; echo done"]'
	defer ar delete --force "$id"
	# our stdio is not a terminal: the relay still copies the output
	assert_status 0 ar run --bundle "$b" "$id"
	assert_contains "$OUT" "/dev/pts/0"
	assert_contains "$OUT" "done"
}

t_run_relay_stdin_eof()
{
	require_root
	local b=$TEST_TMP/relay3 id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.args=["sh","-c","cat; echo END"]'
	defer ar delete --force "$id"
	# the end of our (non-tty) stdin becomes the end of the pty's input
	assert_status 0 timeout 20 bash -c "printf 'abc\\n' | \"\$0\" --root '$AR_ROOT' run --bundle '$b' '$id'" "$AGENTRUN"
	assert_contains "$OUT" "abc"
	assert_contains "$OUT" "END"
}

t_rootless_console_socket()
{
	require_cmd python3
	local b=$TEST_TMP/rcs id sock
	make_bundle_as_test_user "$b" --rootless
	sock=$b/cs.sock
	id=$(unique_id)
	config_set "$b" '.process.terminal=true | .process.args=["sh","-c","tty; id -u"]'
	defer ar_user delete --force "$id"
	as_test_user "$PY" "$RECV" "$sock" >"$b/out" 2>"$b/err" &
	RECV_PID=$!
	wait_until 15 test -S "$sock"
	assert_status 0 ar_user run -d --console-socket "$sock" --bundle "$b" "$id"
	wait "$RECV_PID"
	assert_contains "$(tr -d '\r' <"$b/out")" "/dev/pts/0"
}

run_test "--console-socket gets the pty master; consoleSize; /dev/console" t_console_socket
run_test "terminal without --console-socket: create and run -d refuse" t_terminal_needs_socket
run_test "run in the foreground relays its own terminal" t_run_relays_terminal
run_test "run relays the pty when stdio is not a terminal" t_run_relay_without_tty
run_test "run relays the end of its stdin to the pty" t_run_relay_stdin_eof
run_test "rootless: --console-socket" t_rootless_console_socket
finish
