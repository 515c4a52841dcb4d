#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The helpers of `make bench` that its figures rest on: tests/bench/icount.c
# (instructions by single-stepping) must count exactly, follow forks, stop
# at the payload's exec and pass the exit status on. A benchmark asserts no
# timing; these are counts, which are exact.
. "$(dirname "$0")/../lib.sh"

ICOUNT=$TEST_TMP/icount

build_icount()
{
	require_cmd "${CC:-cc}"
	[ -x "$ICOUNT" ] && return 0
	"${CC:-cc}" -std=gnu11 -O2 -Wall -Wextra -Werror -o "$ICOUNT" \
		"$TOP_SRCDIR/tests/bench/icount.c" || fail "icount does not build"
}

# asm_prog NAME BODY: a static program without libc from the assembly BODY
# (AT&T syntax, entry _start), so its instruction count is known.
asm_prog()
{
	printf '\t.globl _start\n\t.text\n_start:\n%s\n' "$2" >"$TEST_TMP/$1.s"
	"${CC:-cc}" -nostdlib -static -o "$TEST_TMP/$1" "$TEST_TMP/$1.s" ||
		fail "cannot assemble $1"
}

# exit(STATUS) after a loop of N rounds:
#   mov N, ecx (1); N x (dec, jnz) (2N); mov, mov (2); the exit_group
#   syscall does not return, so no trap reports it.
LOOP='	mov $1000, %ecx
1:	dec %ecx
	jnz 1b'
EXIT3='	mov $231, %eax
	mov $3, %edi
	syscall'

t_exact_count()
{
	[ "$(uname -m)" = x86_64 ] || skip "the counted program is x86-64 assembly"
	build_icount
	asm_prog loop "$LOOP
$EXIT3"
	assert_status 0 "$ICOUNT" -- "$TEST_TMP/loop"
	# instructions processes status
	assert_eq "$OUT" "2003 1 3" "icount of a 2003-instruction program"
}

t_follows_fork()
{
	[ "$(uname -m)" = x86_64 ] || skip "the counted program is x86-64 assembly"
	build_icount
	# parent: mov, syscall (fork; its step traps at the return), then
	# the loop and exit: 2 + 2003; child: from after the syscall: 2003.
	asm_prog fork "	mov \$57, %eax
	syscall
$LOOP
$EXIT3"
	assert_status 0 "$ICOUNT" -v -- "$TEST_TMP/fork"
	assert_eq "$OUT" "4008 2 3" "icount of a forking program"
	assert_contains "$ERR" " 2005 fork"
	assert_contains "$ERR" " 2003 "
}

t_stops_at_payload()
{
	build_icount
	# The program that is exec'd first is the payload itself: nothing
	# counted, the status still passed on.
	assert_status 0 "$ICOUNT" -s true -- /bin/true
	assert_eq "$OUT" "0 1 0"
	assert_status 0 "$ICOUNT" -s false -- /bin/false
	assert_eq "$OUT" "0 1 1"
	# Without -s, a dynamically linked true is tens of thousands of
	# instructions (the loader), and the same count every time.
	assert_status 0 "$ICOUNT" -- /bin/true
	local n=${OUT%% *}
	[ "$n" -gt 20000 ] || fail "icount counted $n instructions of /bin/true"
	assert_status 0 "$ICOUNT" -- /bin/true
	assert_eq "${OUT%% *}" "$n" "two counts of /bin/true"
	# sh counted up to its exec of the payload, not after it.
	assert_status 0 "$ICOUNT" -v -s true -- /bin/sh -c '/bin/true; exit 0'
	assert_contains "$ERR" "true (from here not counted)"
}

t_setuid_not_counted()
{
	build_icount
	local su
	su=$(command -v newuidmap || command -v su) ||
		skip "no set-user-ID program (newuidmap, su) installed"
	[ -u "$su" ] || skip "$su is not set-user-ID"
	assert_status 0 "$ICOUNT" -- "$su" --help
	assert_contains "$ERR" "icount: set-user-ID $(basename "$su") not counted"
	assert_eq "${OUT%% *}" 0 "instructions counted of a set-user-ID program"
}

BENCHTIME=$TEST_TMP/benchtime

t_benchtime_counts_orphans()
{
	require_cmd "${CC:-cc}"
	require_cmd awk
	"${CC:-cc}" -std=gnu11 -O2 -Wall -Wextra -Werror -o "$BENCHTIME" \
		"$TOP_SRCDIR/tests/bench/benchtime.c" || fail "benchtime does not build"
	# The command returns at once and leaves a child that burns CPU
	# (what bwrap does: it returns on its pid 1's report, not its exit).
	# wall_us cpu_us tree_maxrss_kb self_hwm_kb status
	assert_status 0 "$BENCHTIME" -T -- /bin/sh -c \
		'awk "BEGIN { for (i = 0; i < 3e7; i++) x += i }" & exit 0'
	local wall cpu st
	read -r wall cpu _ _ st <<<"$OUT"
	assert_eq "$st" 0 "status"
	[ "$cpu" -gt 100000 ] ||
		fail "benchtime counted $cpu us of CPU: the orphaned child's time is missing"
	# The wall time is the command's own: it did not wait for its child.
	[ "$wall" -lt "$cpu" ] ||
		fail "wall $wall us is not below the tree's CPU $cpu us"
	# The same for -H (the runtime's own peak RSS under ptrace).
	assert_status 0 "$BENCHTIME" -H -T -- /bin/sh -c \
		'awk "BEGIN { for (i = 0; i < 3e7; i++) x += i }" & exit 0'
	read -r wall cpu _ _ st <<<"$OUT"
	[ "$cpu" -gt 100000 ] || fail "benchtime -H -T counted $cpu us of CPU"
	# Without -T a process left running on purpose (`create` leaves the
	# container) is not waited for.
	local t0 t1
	t0=$(date +%s%N)
	assert_status 0 "$BENCHTIME" -- /bin/sh -c 'sleep 5 & exit 0'
	t1=$(date +%s%N)
	[ $(((t1 - t0) / 1000000)) -lt 2500 ] ||
		fail "benchtime without -T waited $(((t1 - t0) / 1000000)) ms for a descendant"
}

run_test "benchtime: CPU time of descendants the command did not wait for" t_benchtime_counts_orphans
run_test "icount: a program of 2003 instructions counts 2003" t_exact_count
run_test "icount: follows fork, both processes counted" t_follows_fork
run_test "icount: stops counting at the payload's exec, passes the status on" t_stops_at_payload
run_test "icount: a set-user-ID program is let go, not counted" t_setuid_not_counted
finish
