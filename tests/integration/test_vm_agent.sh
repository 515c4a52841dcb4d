#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The guest agent of `sandbox --vm` without a VM (docs/vm.md, "The guest
# agent"): `agentrun vm-host` with a fake QEMU (tests/helpers/
# vm_fake_guest.py) that plays the guest agent, or a hostile guest, on the
# port. What vm-host sends (the command's SPAWN, stdin, EOF, resize,
# signals, an exec's session), what it passes on (output, exit status)
# and what it refuses: a malformed frame stops the VM with exit 125, a
# frame for no session is dropped, a guest that never says READY is
# stopped after --start-timeout, a VM that stops without a status is
# reported with its console's end. The real guest: test_sandbox_vm.sh.
. "$(dirname "$0")/../lib.sh"

[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
require_cmd python3
FAKE=$TOP_SRCDIR/tests/helpers/vm_fake_guest.py

# vm_host MODE [FAKE ARGS] [-- VM-HOST OPTIONS]: vm-host with the fake
# guest, its files in $D (ctl/, console.log), cleanup of $D/tmp
vm_host()
{
	local mode=$1 fake_args=() opts=()
	shift
	while [ $# -gt 0 ] && [ "$1" != -- ]; do
		fake_args+=("$1")
		shift
	done
	[ "${1:-}" != -- ] || { shift; opts=("$@"); }
	D=$TEST_TMP/vmh-$mode-$RANDOM
	mkdir -p "$D/ctl" "$D/tmp/sub"
	echo "console line 1" >"$D/console.log"
	echo "the guest's last console line" >>"$D/console.log"
	"$AGENTRUN" vm-host --ctl "$D/ctl" --console "$D/console.log" \
		--cleanup "$D/tmp" --cwd /the/workspace ${opts[@]+"${opts[@]}"} -- \
		python3 "$FAKE" "$mode" ${fake_args[@]+"${fake_args[@]}"}
}

t_echo()
{
	echo "hello through stdin" >"$TEST_TMP/in"
	assert_status 3 bash -c "$(declare -f vm_host); TEST_TMP=$TEST_TMP AGENTRUN=$AGENTRUN FAKE=$FAKE vm_host echo <$TEST_TMP/in"
	assert_contains "$OUT" "spawn argv0=/bin/sh cwdarg=/the/workspace tty=0 env=0" "the command's SPAWN"
	assert_contains "$OUT" "hello through stdin" "stdin reaches the session"
	assert_contains "$ERR" "got-eof" "the end of stdin is an EOF frame"
	assert_not_contains "$OUT" "got-eof" "stderr apart from stdout"
	[ -z "$(find "$TEST_TMP" -maxdepth 2 -path '*/vmh-echo-*/tmp')" ] || fail "--cleanup left a tmp"
}
run_test "vm-host: the command's SPAWN, stdin and its end, stdout and stderr apart, the exit status, --cleanup" t_echo

t_big_stdin()
{
	local rc=0 first
	head -c 3000000 /dev/urandom >"$TEST_TMP/big"
	vm_host echo <"$TEST_TMP/big" >"$TEST_TMP/big.out" 2>"$TEST_TMP/big.err" || rc=$?
	assert_eq "$rc" 3 "exit status"
	first=$(head -n 1 "$TEST_TMP/big.out")
	assert_contains "$first" "spawn argv0=/bin/sh"
	tail -c +$((${#first} + 2)) "$TEST_TMP/big.out" | cmp - "$TEST_TMP/big" ||
		fail "3 MB through stdin and back differ"
}
run_test "vm-host: 3 MB of stdin reach the guest and come back whole (flow control both ways)" t_big_stdin

t_signals()
{
	local pid
	D=
	(vm_host resize >"$TEST_TMP/resize.out" 2>&1) &
	pid=$!
	# the session runs once the fake guest said its size
	wait_until 60 grep -q "size 0x0" "$TEST_TMP/resize.out"
	# vm-host is the child of the subshell: signal it
	pkill -TERM -P "$pid" -f "vm-host" || fail "no vm-host to signal"
	local rc=0
	wait "$pid" || rc=$?
	assert_eq "$rc" 143 "the guest's exit status after SIGTERM"
	assert_contains "$(cat "$TEST_TMP/resize.out")" "signal 15" "SIGTERM passed to the session"
	assert_contains "$(cat "$TEST_TMP/resize.out")" "size 0x0" "no terminal: no size"
}
run_test "vm-host: SIGTERM goes to the guest's session as a SIGNAL frame, the session's status is the exit status" t_signals

# the bytes vm_fake_guest.py's flood sends (its pattern_bytes)
flood_bytes()
{
	python3 -c 'import sys; n = int(sys.argv[1]); p = bytes(range(251)); sys.stdout.buffer.write((p * (n // 251 + 1))[:n])' "$1"
}

# fifo_full FIFO: 64 KiB (a pipe's default) in it, not yet read
fifo_full()
{
	python3 -c 'import fcntl, os, struct, sys, termios
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
sys.exit(struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, bytes(4)))[0] < 65536)' "$1"
}

# a process that ended (gone, or a zombie not yet waited for)
ended()
{
	! [ -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}

# A reader of agentrun's output that stops reading (a pager, a stopped
# pipeline) must not stop vm-host from passing a signal on: before, it
# wrote the guest's output with blocking writes and sat in write(2) with
# SIGTERM pending while the command ran on in the guest.
t_stuck_reader()
{
	local fifo=$TEST_TMP/stuck.fifo marker=$TEST_TMP/stuck.signals rd host
	mkfifo "$fifo"
	exec {rd}<>"$fifo" # open for reading, never read
	D=$TEST_TMP/vmh-stuck
	mkdir -p "$D/ctl"
	"$AGENTRUN" vm-host --ctl "$D/ctl" -- python3 "$FAKE" flood "$marker" 8388608 \
		</dev/null >"$fifo" 2>"$TEST_TMP/stuck.err" &
	host=$!
	defer kill -KILL "$host"
	# the pipe is full: vm-host's next write of the output would block
	wait_until 60 fifo_full "$fifo"
	kill -TERM "$host"
	wait_until 10 grep -qx "signal 15" "$marker"
	# the "VM" stopped; what the reader never took cannot be written:
	# another SIGTERM ends vm-host instead of a wait for the reader
	! ended "$host" || fail "vm-host exited with output unwritten, before a second signal"
	kill -TERM "$host"
	wait_until 10 ended "$host"
	exec {rd}>&-
}
run_test "vm-host: a reader that stops reading the output does not hold back a signal; a second one ends vm-host" t_stuck_reader

# ... and a reader that is only slow gets every byte, in order
t_slow_reader()
{
	local rc
	D=$TEST_TMP/vmh-slow
	mkdir -p "$D/ctl"
	"$AGENTRUN" vm-host --ctl "$D/ctl" -- python3 "$FAKE" flood "$TEST_TMP/slow.signals" 4194304 \
		</dev/null 2>"$TEST_TMP/slow.err" | { sleep 2; cat >"$TEST_TMP/slow.out"; }
	rc=${PIPESTATUS[0]}
	assert_eq "$rc" 0 "vm-host's status (stderr: $(cat "$TEST_TMP/slow.err"))"
	flood_bytes 4194304 | cmp - "$TEST_TMP/slow.out" || fail "4 MiB through a slow reader differ"
}
run_test "vm-host: a slow reader of the output gets 4 MiB whole and in order" t_slow_reader

# ... and a reader that goes away: the rest of the output is dropped (no
# SIGPIPE death, no wait), the command's status still comes back
t_gone_reader()
{
	local rc
	D=$TEST_TMP/vmh-gone
	mkdir -p "$D/ctl"
	timeout 60 "$AGENTRUN" vm-host --ctl "$D/ctl" -- python3 "$FAKE" flood "$TEST_TMP/gone.signals" 4194304 \
		</dev/null 2>"$TEST_TMP/gone.err" | head -c 100000 >"$TEST_TMP/gone.out"
	rc=${PIPESTATUS[0]}
	assert_eq "$rc" 0 "vm-host's status (stderr: $(cat "$TEST_TMP/gone.err"))"
	flood_bytes 100000 | cmp - "$TEST_TMP/gone.out" || fail "the first 100000 bytes differ"
}
run_test "vm-host: a reader that goes away loses the rest; the status still comes back" t_gone_reader

t_garbage()
{
	local t0 t1
	t0=$(date +%s)
	assert_status 125 timeout 60 bash -c "$(declare -f vm_host); TEST_TMP=$TEST_TMP AGENTRUN=$AGENTRUN FAKE=$FAKE vm_host garbage-len"
	t1=$(date +%s)
	assert_contains "$ERR" "malformed frame" "the reason"
	assert_contains "$ERR" "the guest's last console line" "the console's end"
	[ $((t1 - t0)) -lt 30 ] || fail "vm-host took $((t1 - t0)) s to stop a broken guest"
}
run_test "vm-host: a frame longer than the limit from the guest stops the VM (exit 125, the reason, the console's end)" t_garbage

t_hostile()
{
	assert_status 0 vm_host hostile </dev/null
	assert_eq "$OUT" "still-fine" "only session 0's output passes; frames for no session are dropped"
	assert_not_contains "$ERR" "for-no-session"
}
run_test "vm-host: unknown frame types, frames and exits for sessions that do not exist are dropped" t_hostile

t_silent()
{
	assert_status 125 vm_host silent -- --start-timeout 2 </dev/null
	assert_contains "$ERR" "did not start the command within 2 s"
	assert_contains "$ERR" "the guest's last console line"
}
run_test "vm-host: a guest whose agent never says READY is stopped after --start-timeout" t_silent

t_noexit()
{
	assert_status 125 vm_host noexit </dev/null
	assert_contains "$ERR" "the VM stopped without an exit status"
	echo 42 >"$TEST_TMP/status"
	# the status vm-init.sh wrote through the control share counts
	D=$TEST_TMP/vmh-ctl
	mkdir -p "$D/ctl"
	echo 42 >"$D/ctl/status"
	assert_status 42 "$AGENTRUN" vm-host --ctl "$D/ctl" -- python3 "$FAKE" noexit </dev/null
}
run_test "vm-host: a VM that stops without EXIT: the control share's status, else 125 and why" t_noexit

# sandbox exec's side: vm-exec finds the socket under /tmp/agentrun-vm.*;
# a private /tmp in a mount namespace of its own keeps the host's apart
t_exec()
{
	require_root
	require_cmd unshare
	cat >"$TEST_TMP/exec.sh" <<EOF
set -u
mount -t tmpfs tmpfs /tmp
mkdir /tmp/agentrun-vm.test
D=$TEST_TMP/vmh-exec
mkdir -p "\$D/ctl"
"$AGENTRUN" vm-host --ctl "\$D/ctl" --exec-socket /tmp/agentrun-vm.test/exec.sock \
	--proxy-gateway 10.0.2.2 -- python3 "$FAKE" exec 2 </dev/null >"\$D/host.out" 2>&1 &
host=\$!
cd /usr
HTTP_PROXY=http://127.0.0.1:3128 "$AGENTRUN" vm-exec -- echo one two
echo "exec1=\$?"
"$AGENTRUN" vm-exec -- second </dev/null 2>&1
echo "exec2=\$?"
wait \$host
echo "host=\$?"
cat "\$D/host.out"
[ ! -e /tmp/agentrun-vm.test/exec.sock ] || echo "socket-left"
EOF
	assert_status 0 unshare -m --propagation private bash "$TEST_TMP/exec.sh"
	assert_contains "$OUT" "exec session=1 argv=echo one two cwd=/usr tty=0 HTTP_PROXY=http://10.0.2.2:3128" "an exec's SPAWN: argv, cwd, the proxy at the gateway"
	assert_contains "$OUT" "exec1=9" "the exec's exit status"
	assert_contains "$OUT" "exec session=2 argv=second"
	assert_contains "$OUT" "exec-stderr"
	assert_contains "$OUT" "exec2=9"
	assert_contains "$OUT" "host=0"
	assert_contains "$OUT" "main-ready"
	assert_not_contains "$OUT" "socket-left" "vm-host removes its socket"
}
run_test "vm-exec: a session of its own in the guest (argv, cwd, proxy at the gateway, output, exit status), vm-host removes its socket" t_exec

finish
