#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The sandbox's pid 1 is a small init (runtime/lib/init.c), not the agent:
# orphans are reaped, signals reach a command that does not handle them,
# the exit status passes through, and ^Z in the agent's terminal stops it
# and gives the user's shell its terminal back (issue 30, item 4: the
# agent as pid 1 ignored the stop and every orphan stayed a zombie).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

t_pid1_is_init()
{
	sb_home "$1"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'echo pid=$$; tr "\0" " " </proc/1/cmdline; echo; cat /proc/1/comm'
	assert_contains "$OUT" "pid=2"
	# the runtime's command line is not shown inside
	assert_not_contains "$OUT" agentrun
	assert_contains "$OUT" "init"
}

t_orphans_reaped()
{
	sb_home "$1"
	sb_home_own
	# three orphans exit while the command still runs: pid 1 reaps them
	assert_status 0 sb_run -- sh -c '(sleep 0.2 &); (sleep 0.2 &); (sleep 0.2 &); sleep 2;
		for s in /proc/[0-9]*/stat; do read -r _ c st _ <$s; echo "$c $st"; done'
	assert_not_contains "$OUT" " Z"
	assert_contains "$OUT" "(init) S"
}

t_exit_status_and_signals()
{
	sb_home "$1"
	sb_home_own
	assert_status 7 sb_run -- sh -c 'exit 7'
	assert_status 143 sb_run -- sh -c 'kill -TERM $$; sleep 5'
	# a command that stops itself without a terminal is continued (no
	# job to stop), as when it was pid 1
	assert_status 0 sb_run -- sh -c 'kill -TSTP $$; echo resumed'
	assert_eq "$OUT" resumed
	# SIGTERM to agentrun reaches a command with no handler for it (as
	# pid 1 it never saw it)
	local start=$SECONDS pid
	sb_run -- sleep 60 >/dev/null 2>&1 &
	pid=$!
	wait_until 10 pgrep -f "^sleep 60$"
	kill -TERM "$pid"
	wait "$pid" || STATUS=$?
	assert_eq "${STATUS:-0}" 143
	[ $((SECONDS - start)) -lt 30 ] || fail "the command did not get SIGTERM"
}

# Attack: read the caller's secrets out of pid 1. The init must not be a
# fork of the runtime (whose memory holds the caller's whole environment,
# which the sandbox filters out of the command's): pid 1 executes a clean
# image (agentrun-init, runtime/lib/init.h), so the command may read all
# of its memory and finds nothing of the runtime. Its being readable (a
# dumpable process of the sandbox) is what lets a rootless
# `agentrun sandbox exec` open /proc/PID/root of it (test_sandbox_session).
t_pid1_holds_no_secret()
{
	sb_home "$1"
	sb_home_own
	require_cmd python3
	local secret=sk-init-$RANDOM$RANDOM$RANDOM
	OUT=$(AR_TEST_SECRET_KEY=$secret sb_run -- python3 -c '
import re, sys
secret = sys.argv[1].encode()
n = found = 0
for line in open("/proc/1/maps"):
    m = re.match(r"([0-9a-f]+)-([0-9a-f]+) r", line)
    if not m or "[vvar" in line or "[vsyscall" in line:
        continue
    lo, hi = int(m.group(1), 16), int(m.group(2), 16)
    with open("/proc/1/mem", "rb", 0) as f:
        f.seek(lo)
        data = f.read(hi - lo)
    n += len(data)
    found += secret in data
for name in ("environ", "cmdline"):
    found += secret in open("/proc/1/" + name, "rb").read()
print("read", n, "found", found)
print("env", "AR_TEST_SECRET_KEY" in open("/proc/self/environ").read())
' "$secret" 2>&1) || fail "reading pid 1: $OUT"
	assert_contains "$OUT" "found 0"
	assert_contains "$OUT" "env False"
	# it did read pid 1's memory (a clean image, no need to hide it)
	[[ "$OUT" =~ read\ ([0-9]+) ]] && [ "${BASH_REMATCH[1]}" -ge 4096 ] ||
		fail "pid 1's memory not read: $OUT"
}

# tmux_screen: the pane's text
tmux_screen()
{
	tmux -S "$TMUX_SOCK" capture-pane -p -t jc
}

t_job_control()
{
	local mode=$1 shell=$TEST_TMP/shell-$1.sh
	require_cmd tmux
	sb_home "$mode"
	sb_home_own
	TMUX_SOCK=$TEST_TMP/tmux-$mode.sock
	if [ "$mode" = root ]; then
		printf '#!/bin/sh\ncd "%s" && exec env -i PATH="%s" HOME="%s" TERM=xterm PS1="$ " bash --norc -i\n' \
			"$WS" "$PATH" "$H" >"$shell"
	else
		printf '#!/bin/sh\ncd "%s" && exec setpriv --reuid=%s --regid=%s --init-groups env -i PATH="%s" HOME="%s" XDG_RUNTIME_DIR="%s" TERM=xterm PS1="$ " bash --norc -i\n' \
			"$WS" "$TEST_UID" "$TEST_GID" "$PATH" "$H" "$TEST_XDG_RUNTIME_DIR" >"$shell"
	fi
	chmod 0755 "$shell"
	defer tmux -S "$TMUX_SOCK" kill-server
	tmux -S "$TMUX_SOCK" new-session -d -s jc -x 120 -y 30 "$shell"
	local root=$AR_ROOT
	[ "$mode" = root ] || root=$AR_USER_ROOT
	tmux -S "$TMUX_SOCK" send-keys -t jc "$AGENTRUN --root $root sandbox -- sh -c 'echo sb-started; while read l; do echo got-\$l; done'" Enter
	wait_until 30 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q '^sb-started'"
	tmux -S "$TMUX_SOCK" send-keys -t jc "one" Enter
	wait_until 10 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q '^got-one'"
	tmux -S "$TMUX_SOCK" send-keys -t jc C-z
	wait_until 10 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q 'Stopped'" ||
		fail "^Z did not stop the sandbox: $(tmux_screen)"
	# the shell has its terminal back
	tmux -S "$TMUX_SOCK" send-keys -t jc "echo shell-\$((6*7))" Enter
	wait_until 10 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q '^shell-42'"
	tmux -S "$TMUX_SOCK" send-keys -t jc "fg" Enter
	sleep 0.5
	tmux -S "$TMUX_SOCK" send-keys -t jc "two" Enter
	wait_until 10 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q '^got-two'" ||
		fail "fg did not continue the command: $(tmux_screen)"
	tmux -S "$TMUX_SOCK" send-keys -t jc C-d
	tmux -S "$TMUX_SOCK" send-keys -t jc "echo rc=\$?" Enter
	wait_until 10 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t jc | grep -q '^rc=0'" ||
		fail "the sandbox did not end: $(tmux_screen)"
}

# The terminal closes under a running agent (the tmux window killed, the
# ssh connection lost): the agent's terminal must hang up too, as a
# terminal emulator's does. Gemini CLI, blocked writing to a terminal
# nobody read any more, lived on after its tmux session was killed, and
# after a SIGTERM of agentrun, until a SIGKILL. Here a command that
# ignores SIGHUP and SIGTERM and writes without end (`yes` ends at its
# first write error).
t_terminal_hangup()
{
	local mode=$1 shell=$TEST_TMP/hup-$1.sh mark=hup$RANDOM$RANDOM pid
	require_cmd tmux pgrep
	sb_home "$mode"
	sb_home_own
	TMUX_SOCK=$TEST_TMP/tmux-hup-$mode.sock
	if [ "$mode" = root ]; then
		printf '#!/bin/sh\ncd "%s" && exec env -i PATH="%s" HOME="%s" TERM=xterm PS1="$ " bash --norc -i\n' \
			"$WS" "$PATH" "$H" >"$shell"
	else
		printf '#!/bin/sh\ncd "%s" && exec setpriv --reuid=%s --regid=%s --init-groups env -i PATH="%s" HOME="%s" XDG_RUNTIME_DIR="%s" TERM=xterm PS1="$ " bash --norc -i\n' \
			"$WS" "$TEST_UID" "$TEST_GID" "$PATH" "$H" "$TEST_XDG_RUNTIME_DIR" >"$shell"
	fi
	chmod 0755 "$shell"
	defer tmux -S "$TMUX_SOCK" kill-server
	tmux -S "$TMUX_SOCK" new-session -d -s hup -x 120 -y 30 "$shell"
	local root=$AR_ROOT
	[ "$mode" = root ] || root=$AR_USER_ROOT
	tmux -S "$TMUX_SOCK" send-keys -t hup "$AGENTRUN --root $root sandbox -- sh -c 'trap \"\" HUP TERM; exec yes $mark'" Enter
	wait_until 30 sh -c "tmux -S '$TMUX_SOCK' capture-pane -p -t hup | grep -q '^$mark'"
	pid=$(pgrep -f "^$AGENTRUN --root $root sandbox -- sh -c trap" | head -n 1)
	[ -n "$pid" ] || fail "no agentrun process found"
	defer kill -KILL "$pid"
	tmux -S "$TMUX_SOCK" kill-session -t hup
	local i
	for ((i = 0; i < 200; i++)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "the sandbox lived on 20 s after its terminal closed: $(ps -o pid,stat,wchan:20,args --ppid "$pid" -p "$pid" 2>&1)"
}

run_test "sandbox init: pid 1 is init, the command pid 2 (rootless)" t_pid1_is_init user
run_test "sandbox init: pid 1 is init, the command pid 2 (root)" t_pid1_is_init root
run_test "sandbox init: orphans are reaped (rootless)" t_orphans_reaped user
run_test "sandbox init: orphans are reaped (root)" t_orphans_reaped root
run_test "sandbox init: exit status, SIGTERM, a stop without terminal (rootless)" t_exit_status_and_signals user
run_test "sandbox init: exit status, SIGTERM, a stop without terminal (root)" t_exit_status_and_signals root
run_test "sandbox init: pid 1 holds nothing of the runtime's memory (rootless)" t_pid1_holds_no_secret user
run_test "sandbox init: pid 1 holds nothing of the runtime's memory (root)" t_pid1_holds_no_secret root
run_test "sandbox init: ^Z stops the agent and gives the shell back, fg continues it (rootless)" t_job_control user
run_test "sandbox init: ^Z stops the agent and gives the shell back, fg continues it (root)" t_job_control root
run_test "sandbox init: the terminal closed, the agent's terminal hangs up (rootless)" t_terminal_hangup user
run_test "sandbox init: the terminal closed, the agent's terminal hangs up (root)" t_terminal_hangup root
finish
