#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults (issue 31): full and read-only filesystems, on small tmpfs
# mounts the test makes as root (the rootless cases run agentrun as the
# test user on them).
#   - the workspace's filesystem full during `commit`: an error naming
#     the file, the workspace's version of it intact, no temporary file,
#     the overlay kept (the change still listed, a later commit applies it);
#   - the state root full or read-only: a clear error, and every
#     state.json in it still whole JSON; once there is room, delete works.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# small_fs DIR SIZE [OWNER]: a tmpfs of SIZE at DIR, unmounted at the end
small_fs()
{
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=0755" tmpfs "$1" || skip "cannot mount a tmpfs"
	defer umount -l "$1"
	[ -z "${3:-}" ] || chown "$3" "$1"
}

ov()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --root "$AR_ROOT" "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	fi
}

t_commit_full()
{
	local name=full$RANDOM
	sb_home "$1"
	rm -rf "$WS"
	small_fs "$WS" 1m
	mkdir -p "$WS/.git"
	echo old >"$WS/big"
	echo old >"$WS/small"
	sb_home_own
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	# the overlay's upper layer is in the home, not on the small fs
	sb_run --overlay --name "$name" -- sh -c 'head -c 3000000 /dev/zero | tr "\0" n >big; echo new >small' \
		2>"$TEST_TMP/sb.err" || {
		grep -q "doctor check \`overlay\`" "$TEST_TMP/sb.err" && skip "--overlay is not available here"
		fail "sandbox: $(cat "$TEST_TMP/sb.err")"
	}
	assert_status '!0' ov commit "$name"
	assert_contains "$OUT$ERR" "big"
	assert_contains "$OUT$ERR" "No space left on device"
	assert_eq "$(cat "$WS/big")" old "the workspace's file changed"
	[ -z "$(find "$WS" -name '.agentrun-commit-*')" ] ||
		fail "temporary file left: $(find "$WS" -name '.agentrun-commit-*')"
	# the overlay is kept: the change is still there to apply
	assert_status 0 ov changes "$name"
	assert_contains "$OUT" "big"
	umount -l "$WS.x" 2>/dev/null || true
	mount -o remount,size=8m "$WS"
	assert_status 0 ov commit "$name"
	assert_eq "$(stat -c %s "$WS/big")" 3000000
	assert_eq "$(cat "$WS/small")" new
}

# cr ARGS: agentrun as MODE on the state root $SR
cr()
{
	if [ "$MODE" = root ]; then
		"$AGENTRUN" --root "$SR" "$@"
	else
		as_test_user "$AGENTRUN" --root "$SR" "$@"
	fi
}

states_whole()
{
	local f
	for f in $(find "$SR" -name state.json 2>/dev/null); do
		jq -e .id "$f" >/dev/null || fail "$f is not whole JSON: $(head -c 200 "$f")"
	done
}

fill()
{
	# ENOSPC expected: the filesystem is full afterwards
	dd if=/dev/zero of="$SR/fill" bs=4k 2>/dev/null || true
}

t_state_root()
{
	local fault=$2 b=$TEST_TMP/sb-$1-$2 id id2
	MODE=$1
	require_root
	SR=$TEST_TMP/sr-$1-$2
	if [ "$MODE" = root ]; then
		small_fs "$SR" 512k
		make_bundle "$b"
	else
		require_subids
		require_agentrun_as_test_user
		small_fs "$SR" 512k "$TEST_UID:$TEST_GID"
		chmod 0700 "$SR"
		make_bundle_as_test_user "$b" --rootless
	fi
	config_set "$b" '.process.args=["sleep","60"] | .process.terminal=false'
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$b/config.json"
	id=$(unique_id)
	id2=$(unique_id)
	defer cr delete --force "$id"
	defer cr delete --force "$id2"
	assert_status 0 cr create --bundle "$b" "$id"
	if [ "$fault" = full ]; then
		fill
		local want="No space left on device"
	else
		mount -o remount,ro "$SR"
		local want="Read-only file system"
	fi
	# a new container: refused clearly, nothing half-made
	assert_status '!0' cr create --bundle "$b" "$id2"
	assert_contains "$ERR" "agentrun:"
	assert_contains "$ERR" "$want"
	# the existing one: start changes its state.json: refused or done,
	# never a torn file
	cr start "$id" >/dev/null 2>"$TEST_TMP/start.err" || assert_contains "$(cat "$TEST_TMP/start.err")" "$want"
	states_whole
	assert_status 0 cr list
	assert_contains "$OUT" "$id"
	assert_status 0 cr state "$id"
	# room again: everything cleans up
	if [ "$fault" = full ]; then rm -f "$SR/fill"; else mount -o remount,rw "$SR"; fi
	assert_status 0 cr delete --force "$id"
	cr delete --force "$id2" >/dev/null 2>&1 || true
	assert_status 0 cr list -q
	assert_eq "$OUT" ""
	assert_eq "$(ls -A "$SR" | grep -v '^\.' || true)" "" "state left in $SR"
}

for mode in root user; do
	run_test "faults ($mode): workspace full during commit: error names the file, nothing half-written, overlay kept" t_commit_full $mode
	run_test "faults ($mode): state root full: clear error, state.json whole, delete cleans up" t_state_root $mode full
	run_test "faults ($mode): state root read-only: clear error, state.json whole, delete cleans up" t_state_root $mode ro
done
finish
