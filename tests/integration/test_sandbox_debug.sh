#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Debuggers inside `agentrun sandbox` (the agent seccomp profile allows
# ptrace): strace, gdb (run and attach) and AddressSanitizer's leak check
# work on the sandbox's own processes, run as the unprivileged test user;
# a process of the host with the same uid stays out of reach (the pid
# namespace: it is neither visible nor attachable).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

dbg_setup()
{
	sb_home user
	sb_home_own
}

t_strace()
{
	require_cmd strace
	dbg_setup
	assert_status 0 sb_run -- sh -c 'strace -f -o /tmp/trace sh -c "echo traced; /bin/true"; grep -c "execve(\"/bin/true\"" /tmp/trace'
	assert_eq "$OUT" $'traced\n1'
}

t_gdb_run()
{
	require_cmd gdb
	dbg_setup
	assert_status 0 sb_run -- gdb -nx -batch -ex run -ex 'info inferiors' --args /bin/sh -c 'echo in-gdb; exit 3'
	assert_contains "$OUT" in-gdb
	assert_contains "$OUT" "exited with code 03"
}

t_gdb_attach()
{
	require_cmd gdb
	dbg_setup
	# gdb -p: the target is a sibling, not a child of gdb
	assert_status 0 sb_run -- sh -c 'sleep 100 & p=$!; gdb -nx -batch -p $p -ex "info inferiors" 2>&1; kill $p'
	assert_not_contains "$OUT" "ptrace: Operation not permitted"
	assert_match "$OUT" '\* 1 +process [0-9]+ .*/sleep'
	assert_contains "$OUT" "detached"
}

t_asan_leak_check()
{
	require_cmd cc
	dbg_setup
	printf '%s\n' '#include <stdlib.h>' \
		'int main(void) { void *volatile p = malloc(77); p = 0; return 0; }' \
		>"$WS/leak.c"
	cc -fsanitize=address -g -o "$WS/leak" "$WS/leak.c" 2>"$TEST_TMP/cc.err" ||
		skip "cannot build an ASan binary: $(head -c 300 "$TEST_TMP/cc.err")"
	chown "$TEST_UID:$TEST_GID" "$WS/leak"
	assert_status '!0' sb_run -- ./leak
	assert_contains "$ERR" "LeakSanitizer: detected memory leaks"
	assert_contains "$ERR" "77 byte(s)"
	assert_not_contains "$ERR" "LeakSanitizer has encountered a fatal error"
}

# A host process of the very same user: only the pid namespace keeps it
# away. Its pid does not exist inside, ptrace(ATTACH) of that number fails
# with ESRCH, and strace/gdb cannot attach either.
t_host_process_unreachable()
{
	local pid bin=$TEST_TMP/sysprobe
	require_cmd cc strace gdb
	dbg_setup
	cc -O2 -o "$bin" "$TOP_SRCDIR/tests/helpers/sysprobe.c" \
		2>"$TEST_TMP/cc.err" || skip "cannot build sysprobe: $(head -c 300 "$TEST_TMP/cc.err")"
	cp "$bin" "$WS/sysprobe"
	chown "$TEST_UID:$TEST_GID" "$WS/sysprobe"
	as_test_user sh -c 'echo $$ >"$1"; exec sleep 300' _ "$H/host.pid" \
		</dev/null >/dev/null 2>&1 &
	defer kill $!
	wait_until 5 test -s "$H/host.pid"
	pid=$(cat "$H/host.pid")
	wait_until 5 grep -qx sleep "/proc/$pid/comm"
	[ "$pid" -gt 100 ] || skip "host pid $pid is too small to be distinct from the sandbox's"
	# the host sees it and could attach (same uid): the test means something
	assert_status 0 as_test_user "$bin" ptrace "$pid"
	assert_eq "$OUT" "errno=0" "the host user can ptrace its own process (else the test proves nothing)"
	assert_status 0 sb_run -- sh -c "
		test -e /proc/$pid && echo VISIBLE
		./sysprobe ptrace $pid
		strace -p $pid -o /dev/null 2>&1 | head -1
		gdb -nx -batch -p $pid 2>&1 | grep -i -m1 -e ptrace -e 'no such' -e attach"
	assert_not_contains "$OUT" VISIBLE
	assert_contains "$OUT" "errno=3" "ESRCH: no such process inside"
	assert_match "$OUT" "No such process|not found|does not exist"
	assert_not_contains "$OUT" "process $pid "
	# still running, never stopped
	assert_eq "$(awk '{print $3}' "/proc/$pid/stat")" S
}

# The sandbox's pid 1 and the runtime: agentrun itself is outside the pid
# namespace; nothing inside runs as a process of the runtime.
t_runtime_not_visible()
{
	dbg_setup
	assert_status 0 sb_run -- sh -c 'for p in /proc/[0-9]*; do tr "\0" " " <$p/cmdline; echo; done'
	assert_not_contains "$OUT" agentrun
}

run_test "strace -f inside" t_strace
run_test "gdb -batch -ex run inside" t_gdb_run
run_test "gdb -p of a sibling inside" t_gdb_attach
run_test "ASan leak check (LeakSanitizer uses ptrace) inside" t_asan_leak_check
run_test "a host process of the same uid: invisible, not attachable" t_host_process_unreachable
run_test "the runtime is not a process inside" t_runtime_not_visible
finish
