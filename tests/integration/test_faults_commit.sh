#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults (issue 31): `agentrun commit` (--overlay) killed with SIGKILL at
# its crash points (runtime/lib/crash_point.h: a file written but not
# linked, half of the changes applied), root and rootless: every
# workspace file is the old or the new version, never truncated, no
# temporary file is left, and `commit` run again completes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# ov ARGS...: agentrun ARGS as MODE, from $WS, with the test home.
ov()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" "$@"
	fi
}

# t_kill_commit MODE POINT: killed at a crash point of commit
# (crash_point.h); the workspace holds old or new versions only, then a
# second commit completes.
t_kill_commit()
{
	local mode=$1 point=$2 root i f name=kc$RANDOM n=24 E=$TEST_TMP/expect-$1-$2
	sb_home "$mode"
	root=$AR_ROOT
	[ "$mode" = root ] || root=$AR_USER_ROOT
	mkdir -p "$E"
	for i in $(seq $n); do
		head -c $((i * 4096)) /dev/zero | tr '\0' o >"$E/old$i"
		head -c $((i * 8192)) /dev/zero | tr '\0' n >"$E/new$i"
		cp "$E/old$i" "$WS/f$i"
	done
	sb_home_own
	sb_run --overlay --name "$name" -- sh -c '
		for i in $(seq '$n'); do head -c $((i * 8192)) /dev/zero | tr "\0" n >f$i; done
		echo new >added' 2>"$TEST_TMP/sb.err" || {
		grep -q "doctor check \`overlay\`" "$TEST_TMP/sb.err" &&
			skip "--overlay is not available here"
		fail "sandbox --overlay: $(cat "$TEST_TMP/sb.err")"
	}
	assert_status 137 ov env AGENTRUN_TEST_CRASH_AT="$point" "$AGENTRUN" --root "$root" commit "$name"
	# every file the old or the new version, nothing else in the workspace
	for i in $(seq $n); do
		f=$WS/f$i
		if ! cmp -s "$f" "$E/old$i" && ! cmp -s "$f" "$E/new$i"; then
			fail "f$i is neither the old nor the new version ($(stat -c %s "$f") bytes)"
		fi
	done
	[ -z "$(find "$WS" -name '.agentrun-commit-*')" ] ||
		fail "temporary files left in the workspace: $(find "$WS" -name '.agentrun-commit-*')"
	# again: completes, and everything is the new version
	assert_status 0 ov "$AGENTRUN" --root "$root" commit "$name"
	for i in $(seq $n); do
		cmp -s "$WS/f$i" "$E/new$i" ||
			fail "f$i is not the new version after the second commit"
	done
	assert_eq "$(cat "$WS/added")" new
	[ -z "$(find "$WS" -name '*.orig*' -o -name '.agentrun-commit-*')" ] ||
		fail "left over: $(find "$WS" -name '*.orig*' -o -name '.agentrun-commit-*')"
}

for mode in root user; do
	run_test "faults ($mode): commit killed with a file written, not linked: old or new only, commit again completes" t_kill_commit $mode commit-temp-written
	run_test "faults ($mode): commit killed halfway: old or new only, commit again completes" t_kill_commit $mode commit-half
done
finish
