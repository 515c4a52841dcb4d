#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Tests of tests/lib.sh itself: the rootfs, bundles, the test user, asserts.
. "$(dirname "$0")/../lib.sh"

# the fake trees' time limits as given: run-tests.sh scales them with the
# machine's load (load_scaled), which made "timed out after 15s" read
# "45s" on a loaded machine (the flake budget's first run)
export TEST_TIMEOUT_SCALE=1

t_tmp_dir()
{
	assert_match "$TEST_TMP" '^/tmp/agentrun-test\.'
	assert_eq "$(stat -c %a "$TEST_TMP")" 755 "TEST_TMP mode"
}

t_rootfs_runs_busybox()
{
	require_root
	require_cmd chroot
	local r=$TEST_TMP/rootfs
	make_rootfs "$r"
	assert_status 0 chroot "$r" /bin/sh -c 'echo hi'
	assert_eq "$OUT" hi
	# Applets are symlinks, passwd/group are there.
	assert_status 0 chroot "$r" /bin/ls /etc
	assert_contains "$OUT" passwd
	assert_eq "$(readlink "$r/bin/sh")" busybox
	assert_contains "$(cat "$r/etc/passwd")" "testuser:x:1000:1000:"
	assert_contains "$(cat "$r/etc/passwd")" "nobody:x:65534:"
	assert_status 0 chroot "$r" /bin/id -u testuser
	assert_eq "$OUT" 1000
	for d in proc sys dev tmp etc root; do
		[ -d "$r/$d" ] || fail "rootfs has no /$d"
	done
	assert_eq "$(stat -c %a "$r/tmp")" 1777 "/tmp mode"
}

t_rootfs_copy_is_private()
{
	local a=$TEST_TMP/ra b=$TEST_TMP/rb
	make_rootfs "$a"
	make_rootfs "$b"
	echo changed >"$a/etc/hostname"
	assert_ne "$(cat "$b/etc/hostname")" changed "copies share files"
}

t_make_bundle()
{
	require_cmd jq
	local b=$TEST_TMP/bundle
	make_bundle "$b"
	[ -x "$b/rootfs/bin/busybox" ] || fail "no rootfs in bundle"
	assert_status 0 jq -e . "$b/config.json"
	assert_eq "$(config_get "$b" .root.path)" rootfs
	assert_eq "$(config_get "$b" .process.terminal)" false
	config_set "$b" '.process.args=["echo","x y"]'
	assert_eq "$(config_get "$b" '.process.args|join(",")')" "echo,x y"
	config_set "$b" '.hostname=$h' --arg h box1
	assert_eq "$(config_get "$b" .hostname)" box1
}

t_make_bundle_rootless()
{
	require_cmd jq
	local b=$TEST_TMP/bundle-rl
	make_bundle "$b" --rootless
	assert_status 0 jq -e '.linux.namespaces | map(.type) | index("user")' \
		"$b/config.json"
}

t_test_user()
{
	require_root
	ensure_test_user
	[ "$TEST_UID" -gt 0 ] || fail "TEST_UID is $TEST_UID"
	assert_status 0 as_test_user id -u
	assert_eq "$OUT" "$TEST_UID"
	assert_status 0 as_test_user id -g
	assert_eq "$OUT" "$TEST_GID"
	assert_status 0 as_test_user sh -c 'echo "$HOME $XDG_RUNTIME_DIR"'
	assert_eq "$OUT" "$TEST_HOME /run/user/$TEST_UID"
	assert_eq "$TEST_XDG_RUNTIME_DIR" "/run/user/$TEST_UID"
	assert_status 0 as_test_user sh -c 'echo "$AGENTRUN|$TEST_TMP"'
	assert_eq "$OUT" "$AGENTRUN|$TEST_TMP"
	assert_file_owner "/run/user/$TEST_UID" "$TEST_UID:$TEST_GID"
	assert_eq "$(stat -c %a "/run/user/$TEST_UID")" 700
	assert_match "$(grep "^$TEST_USER:" /etc/subuid)" "^$TEST_USER:[0-9]+:65536\$"
	assert_match "$(grep "^$TEST_USER:" /etc/subgid)" "^$TEST_USER:[0-9]+:65536\$"
	# Idempotent: a second call keeps one entry.
	ensure_test_user
	assert_eq "$(grep -c "^$TEST_USER:" /etc/subuid)" 1
}

t_subuid_ranges_disjoint()
{
	require_root
	ensure_test_user
	# No two ranges in /etc/subuid overlap.
	local bad
	bad=$(sort -t: -k2,2n /etc/subuid | awk -F: '
		NF >= 3 { if (NR > 1 && $2 < end) print prev " / " $0;
			  end = $2 + $3; prev = $0 }')
	assert_eq "$bad" "" "overlapping subuid ranges"
}

t_bundle_as_test_user()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/ubundle
	make_bundle_as_test_user "$b" --rootless
	assert_file_owner "$b" "$TEST_UID:$TEST_GID"
	assert_file_owner "$b/config.json" "$TEST_UID:$TEST_GID"
	assert_file_owner "$b/rootfs/bin/busybox" "$TEST_UID:$TEST_GID"
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].hostID')" "$TEST_UID"
}

t_assert_status_captures()
{
	assert_status 3 sh -c 'echo out; echo err >&2; exit 3'
	assert_eq "$OUT" out
	assert_eq "$ERR" err
	assert_eq "$STATUS" 3
	assert_status '!0' false
	# A wrong status must fail (in a subshell, so we survive it).
	if (assert_status 0 false) >/dev/null 2>&1; then
		fail "assert_status 0 false passed"
	fi
	if (assert_eq a b) >/dev/null 2>&1; then
		fail "assert_eq a b passed"
	fi
	if (assert_contains abc x) >/dev/null 2>&1; then
		fail "assert_contains abc x passed"
	fi
	if (assert_not_contains abc b) >/dev/null 2>&1; then
		fail "assert_not_contains abc b passed"
	fi
	assert_contains "hello world" "o w"
	assert_not_contains "hello" "x"
}

t_unique_id()
{
	local a b
	a=$(unique_id)
	b=$(unique_id)
	assert_ne "$a" "$b"
	assert_match "$a" '^[A-Za-z0-9][A-Za-z0-9_.-]*$'
}

t_defer_runs()
{
	local marker=$TEST_TMP/deferred
	(
		_AR_DEFERS=()
		trap _ar_run_defers EXIT
		defer touch "$marker.1"
		defer touch "$marker.2"
		exit 5
	) || true
	[ -e "$marker.1" ] && [ -e "$marker.2" ] || fail "defer did not run"
}

t_cleanup_unmounts()
{
	require_root
	# A child lib.sh instance whose TEST_TMP has a mount left over.
	local out
	out=$(bash -c '. "$1"; mkdir "$TEST_TMP/m";
		mount -t tmpfs none "$TEST_TMP/m"; echo "$TEST_TMP"; exit 0' \
		_ "$TOP_SRCDIR/tests/lib.sh")
	assert_match "$out" '^/tmp/agentrun-test\.'
	[ ! -e "$out" ] || fail "$out still exists"
	if grep -q " $out/m " /proc/self/mountinfo; then
		fail "$out/m still mounted"
	fi
}

# A fake source tree with one test file per outcome, for run-tests.sh.
_fake_tree()
{
	local t=$1
	mkdir -p "$t/tests/integration" "$t/tests/unit"
	cp "$TOP_SRCDIR/tests/run-tests.sh" "$TOP_SRCDIR/tests/lib.sh" "$t/tests/"
	cat >"$t/tests/integration/test_a.sh" <<'EOF2'
. "$(dirname "$0")/../lib.sh"
t_ok() { true; }
t_skip() { skip "no widget"; }
t_fail() { echo "diagnostic line"; assert_eq 1 2; }
run_test "passes" t_ok
run_test "skips" t_skip
run_test "fails" t_fail
finish
EOF2
	printf 'echo "1..1"; echo "ok 1 - fine"; kill -SEGV $$\n' \
		>"$t/tests/integration/test_crash.sh"
	printf 'echo hello\n' >"$t/tests/integration/test_noplan.sh"
	printf 'echo "1..1"; echo "ok 1 - x"; exit 3\n' \
		>"$t/tests/integration/test_exit.sh"
	printf 'sleep 120\n' >"$t/tests/integration/test_hang.sh"
	printf '. "$(dirname "$0")/../lib.sh"\nskip "not here"\n' \
		>"$t/tests/integration/test_wholeskip.sh"
	printf '#!/bin/sh\necho 1..2; echo "ok 1 - a"; echo "not ok 2 - b"; exit 1\n' \
		>"$t/tests/unit/test_u"
	chmod +x "$t/tests/unit/test_u"
}

t_runner_counts()
{
	local t=$TEST_TMP/fake last
	_fake_tree "$t"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" TEST_TIMEOUT=15 \
		UNIT_TESTS=tests/unit/test_u bash "$t/tests/run-tests.sh"
	last=$(tail -n1 <<<"$OUT")
	# pass: u.a, a.passes, crash.fine, exit.x; fail: u.b, a.fails, crash,
	# noplan, exit, hang; skip: a.skips, wholeskip.
	assert_eq "$last" "4 passed, 6 failed, 2 skipped" "summary of:
$OUT
"
	assert_contains "$OUT" "test_a: ok 2 - skips # SKIP no widget"
	assert_contains "$OUT" "test_a: #   diagnostic line"
	assert_contains "$OUT" "FAIL test_crash: crashed (killed by signal 11)"
	assert_contains "$OUT" "FAIL test_hang: timed out after 15s"
	assert_contains "$OUT" "FAIL test_noplan: printed no TAP plan or results"
	assert_contains "$OUT" "FAIL test_exit: exited with status 3"
	# under a failed test's FAIL line, the reason its output gave
	assert_contains "$OUT" "FAIL test_a: fails
       why: FAIL: assert_eq: got '1', expected '2'"
	assert_contains "$OUT" "SKIP test_wholeskip: (whole file): not here"
	assert_contains "$OUT" "SKIP test_a: skips: no widget"
	assert_not_contains "$ERR" "Segmentation fault"
}

t_runner_filters()
{
	local t=$TEST_TMP/fake2
	_fake_tree "$t"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		UNIT_TESTS=tests/unit/test_u bash "$t/tests/run-tests.sh" --unit-only
	assert_eq "$(tail -n1 <<<"$OUT")" "1 passed, 1 failed, 0 skipped"
	assert_status 0 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		UNIT_TESTS=tests/unit/test_u bash "$t/tests/run-tests.sh" \
		--integration-only -k wholeskip
	assert_eq "$(tail -n1 <<<"$OUT")" "0 passed, 0 failed, 1 skipped"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		UNIT_TESTS="tests/unit/test_u tests/unit/missing" \
		bash "$t/tests/run-tests.sh" -k 'missing'
	assert_eq "$(tail -n1 <<<"$OUT")" "0 passed, 1 failed, 0 skipped"
	# -x and TEST_FILTER / TEST_EXCLUDE from the environment.
	assert_status 0 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		UNIT_TESTS=tests/unit/test_u bash "$t/tests/run-tests.sh" \
		-x '^test_(u|a|crash|noplan|exit|hang)(\.sh)?$'
	assert_eq "$(tail -n1 <<<"$OUT")" "0 passed, 0 failed, 1 skipped"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_FILTER='^test_(u|a\.sh)$' TEST_EXCLUDE='^test_u$' \
		UNIT_TESTS=tests/unit/test_u bash "$t/tests/run-tests.sh"
	assert_eq "$(tail -n1 <<<"$OUT")" "1 passed, 1 failed, 1 skipped"
}

# VM files (test_*_vm*.sh) run in a lane beside the others, and one after
# the other with TEST_VM_PARALLEL=0; a VM file has TEST_TIMEOUT_VM. Shown
# by the files themselves, not by wall time (a loaded machine stretched
# two 3 s sleeps side by side past a 6 s bound): side by side, each one
# waits for the other to have started; in turn, neither runs while the
# other one is between its start and its end.
t_runner_vm_lane()
{
	local t=$TEST_TMP/fake3 f
	_fake_tree "$t"
	# FILE ME OTHER WHAT: wait (30 s at most) for OTHER to start
	for f in "test_b_vm.sh b c in-the-vm" "test_c.sh c b on-the-host"; do
		set -- $f
		printf 'd=%s; touch "$d/%s.start"; i=0
while [ ! -e "$d/%s.start" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
echo "1..1"; if [ -e "$d/%s.start" ]; then echo "ok 1 - %s"; else echo "not ok 1 - %s: alone"; fi
' "$t" "$2" "$3" "$3" "$4" "$4" >"$t/tests/integration/$1"
	done
	printf 'sleep 30\n' >"$t/tests/integration/test_d_vm_slow.sh"
	assert_status 0 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		bash "$t/tests/run-tests.sh" --integration-only -k '^test_(b_vm|c)\.sh$'
	assert_eq "$(tail -n1 <<<"$OUT")" "2 passed, 0 failed, 0 skipped"
	assert_contains "$OUT" "test_b_vm: ok 1 - in-the-vm"
	assert_contains "$OUT" "test_c: ok 1 - on-the-host"
	# one after the other: FILE ME OTHER WHAT, OTHER never in progress
	rm -f "$t"/*.start
	for f in "test_b_vm.sh b c in-the-vm" "test_c.sh c b on-the-host"; do
		set -- $f
		printf 'd=%s; busy() { [ -e "$d/%s.start" ] && [ ! -e "$d/%s.end" ]; }
ok=ok; busy && ok="not ok"; touch "$d/%s.start"; sleep 1; busy && ok="not ok"; touch "$d/%s.end"
echo "1..1"; echo "$ok 1 - %s"
' "$t" "$3" "$3" "$2" "$2" "$4" >"$t/tests/integration/$1"
	done
	assert_status 0 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_VM_PARALLEL=0 bash "$t/tests/run-tests.sh" --integration-only -k '^test_(b_vm|c)\.sh$'
	assert_eq "$(tail -n1 <<<"$OUT")" "2 passed, 0 failed, 0 skipped"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_TIMEOUT=30 TEST_TIMEOUT_VM=2 bash "$t/tests/run-tests.sh" --integration-only -k 'slow'
	assert_contains "$OUT" "FAIL test_d_vm_slow: timed out after 2s"
	# the limits grow with the load: a factor (here set, else from the
	# load average per CPU) multiplies them
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_TIMEOUT=30 TEST_TIMEOUT_VM=2 TEST_TIMEOUT_SCALE=2 bash "$t/tests/run-tests.sh" --integration-only -k 'slow'
	assert_contains "$OUT" "FAIL test_d_vm_slow: timed out after 4s"
}

# The host side of the VM files relays the VM's TAP: what stopped early
# never passes.
t_vm_relay()
{
	local d=$TEST_TMP/relay
	mkdir -p "$d"
	printf '1..2\nok 1 - a\nBail out! spec failed\n' >"$d/bail"
	printf '1..3\nok 1 - a\nnot ok 2 - b\nok 3 - c # SKIP no c\n' >"$d/fine"
	printf '1..1\nok 1 - a\n' >"$d/one"
	OUT=$(. "$TOP_SRCDIR/tests/vm/relay.sh"
		vm_relay t "$d/bail" 1
		vm_relay u "$d/fine" 1
		vm_relay v "$d/one" 3
		vm_relay w "$d/one" 0)
	assert_eq "$OUT" "ok 1 - [t] a
not ok 2 - [t] the tests in the VM bailed out: spec failed
not ok 3 - [t] the tests in the VM planned 2 results but gave 1
ok 4 - [u] a
not ok 5 - [u] b
ok 6 - [u] c # SKIP no c
ok 7 - [v] a
not ok 8 - [v] the tests in the VM exited with status 3
ok 9 - [w] a"
	# a VM stopped by run-in-vm: its reason in the result's line
	printf 'run-in-vm: TCG emulation\nrun-in-vm: the guest did not start the command within 180 s, again\n' >"$d/err1"
	printf 'qemu: terminating\nrun-in-vm: the guest'"'"'s kernel hung: watchdog: BUG: soft lockup - CPU#1 stuck for 753s! [podman:307]; at f+0x1/0x2\nrun-in-vm: the guest console from the first kernel report:\n  [ 1.0] RIP: 0010:f+0x1/0x2\n' >"$d/err2"
	OUT=$(. "$TOP_SRCDIR/tests/vm/relay.sh"
		VM_N=9
		vm_not_run x "$d/err1"
		vm_not_run y "$d/err2")
	assert_eq "$OUT" "not ok 10 - [x] the VM did not run the tests (run-in-vm exit 125)
# run-in-vm: TCG emulation
# run-in-vm: the guest did not start the command within 180 s, again
not ok 11 - [y] the guest's kernel hung: watchdog: BUG: soft lockup - CPU#1 stuck for 753s! [podman:307]; at f+0x1/0x2
# run-in-vm: the guest's kernel hung: watchdog: BUG: soft lockup - CPU#1 stuck for 753s! [podman:307]; at f+0x1/0x2
# run-in-vm: the guest console from the first kernel report:
#   [ 1.0] RIP: 0010:f+0x1/0x2"
	# a failed result: the guest kernel's lines of the console
	printf 'run-in-vm guest: 5.1 s: command started\n[ 9.2] Memory cgroup out of memory: Killed process 77 (sleep)\n\n' >"$d/console"
	printf 'ok 1 - a\nnot ok 2 - b\n' >"$d/failed"
	OUT=$(. "$TOP_SRCDIR/tests/vm/relay.sh"
		vm_kernel_said z "$d/one" "$d/console"
		vm_kernel_said z "$d/failed" "$d/console"
		vm_kernel_said z "$d/failed" "$d/no-console")
	assert_eq "$OUT" "# [z] guest kernel: [ 9.2] Memory cgroup out of memory: Killed process 77 (sleep)"
}

# TEST_ALLOWED_SKIPS: a skip whose "FILE: REASON" matches no line fails.
t_runner_allowed_skips()
{
	local t=$TEST_TMP/fake4
	_fake_tree "$t"
	printf '# comment\n\n^test_wholeskip: not here$\n' >"$t/allowed"
	assert_status 0 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_ALLOWED_SKIPS="$t/allowed" bash "$t/tests/run-tests.sh" --integration-only -k wholeskip
	assert_eq "$(tail -n1 <<<"$OUT")" "0 passed, 0 failed, 1 skipped"
	printf '^test_a: no gadget$\n' >"$t/allowed"
	assert_status 1 env -u TEST_FILTER -u TEST_EXCLUDE TOP_SRCDIR="$t" TOP_BUILDDIR="$t" \
		TEST_ALLOWED_SKIPS="$t/allowed" bash "$t/tests/run-tests.sh" --integration-only -k wholeskip
	assert_eq "$(tail -n1 <<<"$OUT")" "0 passed, 1 failed, 1 skipped"
	assert_contains "$OUT" "FAIL test_wholeskip: not here (a skip not allowed by $t/allowed: this machine should run it)"
}

# wait_until's arguments are expanded once by bash: a "$(...)" among them is
# read before the first try and never again (CI's test_namespaces failure)
t_wait_until_lint()
{
	require_cmd python3
	local lint=$TOP_SRCDIR/tests/helpers/lint_wait_until.py bad=$TEST_TMP/bad.sh
	cat >"$bad" <<'SH'
	wait_until 5 test "$(readlink /proc/$p/ns/mnt)" != "$(readlink /proc/self/ns/mnt)"
	wait_until 5 grep -q x "`pwd`/f"
SH
	assert_status 1 python3 "$lint" "$bad"
	assert_contains "$OUT" "bad.sh:1: wait_until's argument expanded once"
	assert_contains "$OUT" "bad.sh:2:"
	cat >"$bad" <<'SH'
	wait_until 5 sh -c 'test "$(readlink /proc/$1/ns/mnt)" != x' - "$p"
	wait_until 5 sh -c "[ \"\$(ar state x)\" = y ]"
	wait_until 10 test -e "$f" || fail "listener: $(cat "$log")"
	# wait_until 5 test "$(date)"
SH
	assert_status 0 python3 "$lint" "$bad"
	# and the tree keeps the rule
	# (but this file, whose samples above break it on purpose)
	assert_status 0 python3 "$lint" $(find "$TOP_SRCDIR/tests" -name '*.sh' ! -name test_harness.sh)
}

run_test "TEST_TMP is under /tmp, mode 0755" t_tmp_dir
run_test "make_rootfs gives a working busybox (chroot)" t_rootfs_runs_busybox
run_test "make_rootfs copies are independent" t_rootfs_copy_is_private
run_test "make_bundle + config_set/config_get" t_make_bundle
run_test "make_bundle --rootless has a user namespace" t_make_bundle_rootless
run_test "ensure_test_user + as_test_user" t_test_user
run_test "subuid ranges do not overlap" t_subuid_ranges_disjoint
run_test "make_bundle_as_test_user --rootless" t_bundle_as_test_user
run_test "assert_* succeed and fail correctly" t_assert_status_captures
run_test "unique_id" t_unique_id
run_test "defer runs on exit" t_defer_runs
run_test "exit cleanup unmounts and removes TEST_TMP" t_cleanup_unmounts
run_test "run-tests.sh counts pass/fail/skip, crash, hang, no plan" t_runner_counts
run_test "run-tests.sh --unit-only, --integration-only, -k" t_runner_filters
run_test "run-tests.sh runs VM files beside the others, with their own timeout" t_runner_vm_lane
run_test "tests/vm/relay.sh: a bail-out, a short plan or a bad status in the VM fails; a VM not run says why" t_vm_relay
run_test "run-tests.sh with TEST_ALLOWED_SKIPS fails the skips it does not allow" t_runner_allowed_skips
run_test "no wait_until argument is expanded once (tests/helpers/lint_wait_until.py)" t_wait_until_lint
finish
