#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Live grants without a restart (runtime/sandbox/control/control_grant.c,
# control_mount.c; docs/sandbox.md "Live grants"), rootless and as root:
# `agentrun sandbox allow|revoke NAME --ro|--rw DIR` binds a host
# directory into the running sandbox and detaches it; `--net HOST[:PORT]`
# adds a rule to the running egress policy. The attacks: a write to and a
# remount of a read-only grant, a write into the protected paths of a
# --rw grant, a never-share path, a symbolic link the agent planted on
# the mount point's way. Every destination is a loopback server of the
# test (http_server).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl
[ -x "$PY" ] || skip "needs $PY"

# in_rename NAME DIR: the agent moves DIR/.git away and plants a hook
in_rename()
{
	inside "$1" "cd '$2' && mv .git old && mkdir -p .git/hooks && echo evil >.git/hooks/pre-commit"
}

# sb_detached NAME OPTIONS... -- CMD: `--name NAME --detach`, stopped
# when the test ends
sb_detached()
{
	local name=$1
	shift
	defer ctl stop -t 0 "$name"
	sb_run --name "$name" --detach "$@" >"$TEST_TMP/$name.out" 2>&1 ||
		fail "--detach: $(cat "$TEST_TMP/$name.out")"
	wait_until 20 ctl requests "$name"
}

# the event stream of NAME into $TEST_TMP/events
events()
{
	local ev=$TEST_TMP/events sock
	sock="$(ctl_root_dir)/.control/$1.sock"
	if [ "$MODE" = root ]; then
		"$PY" "$AR_TEST_HELPERS/control_client.py" "$sock" \
			'{"op":"events"}' stream >"$ev" 2>&1 &
	else
		as_test_user "$PY" "$AR_TEST_HELPERS/control_client.py" "$sock" \
			'{"op":"events"}' stream >"$ev" 2>&1 &
	fi
	defer kill $!
	wait_until 10 grep -q '"ok":true' "$ev"
}

# a host directory $D (with a file, a git directory) the sandbox does not see
share_setup()
{
	sb_home "$1"
	D=$H/data
	mkdir -p "$D/.git/hooks" "$D/sub"
	echo hostdata >"$D/f"
	echo '[core]' >"$D/.git/config"
	sb_home_own
}

t_ro_rw()
{
	local name=grant$RANDOM owner
	share_setup "$1"
	sb_bg "$name" -- sleep 600
	events "$name"
	assert_status '!0' inside "$name" "cat '$D/f'"
	# --ro: visible at once, read-only
	assert_status 0 ctl allow "$name" --ro "$D"
	assert_contains "$OUT" "granted --ro $D"
	assert_status 0 inside "$name" "cat '$D/f'"
	assert_eq "$OUT" hostdata
	# attack: write into it, remount it read-write (as it is, and from a
	# user namespace of the agent's own)
	assert_status '!0' inside "$name" "echo x >'$D/w'"
	assert_contains "$ERR" "Read-only file system"
	assert_status '!0' inside "$name" "mount -o remount,rw,bind '$D' && echo x >'$D/w'"
	assert_status '!0' inside "$name" "unshare -Urm sh -c \"mount -o remount,rw,bind '$D' && echo x >'$D/w'\""
	[ ! -e "$D/w" ] || fail "a write went through a read-only grant"
	# revoke: gone
	assert_status 0 ctl revoke "$name" --ro "$D"
	assert_contains "$OUT" "detached"
	assert_status '!0' inside "$name" "cat '$D/f'"
	assert_status '!0' ctl revoke "$name" --ro "$D"
	assert_contains "$ERR" "was not granted"
	# --rw: a write lands on the host, owned by the host's owner; the
	# protected paths inside stay read-only (attack: a git hook)
	assert_status 0 ctl allow "$name" --rw "$D"
	assert_contains "$OUT" "protected path(s) inside kept read-only"
	assert_contains "$OUT" "held by a read-only placeholder"
	assert_status 0 inside "$name" "echo written >'$D/new' && mkdir '$D/sub/d'"
	assert_eq "$(cat "$D/new")" written
	owner=$(stat -c %u "$D/f")
	assert_eq "$(stat -c %u "$D/new")" "$owner" "the owner of a file written through --rw"
	assert_status '!0' inside "$name" "echo evil >'$D/.git/hooks/pre-commit'"
	assert_status '!0' inside "$name" "echo evil >>'$D/.git/config'"
	# attack: rename the git directory away and make a new one with a
	# hook (its protections were mounts on the old one's paths)
	assert_status '!0' in_rename "$name" "$D"
	[ ! -e "$D/.git/hooks/pre-commit" ] || fail "a git hook was written through a --rw grant"
	[ ! -e "$D/old" ] || fail "the git directory of a --rw grant was renamed"
	assert_eq "$(cat "$D/.git/config")" '[core]'
	assert_status '!0' ctl allow "$name" --ro "$D"
	assert_contains "$ERR" "granted already"
	# a missing protected path has a placeholder, as in the workspace
	# (test_sandbox_allow_protect.sh); a watched one the agent creates
	# is named by revoke
	assert_status '!0' inside "$name" "echo '{}' >'$D/.vscode/tasks.json'"
	assert_status 0 inside "$name" "echo x >'$D/.gitmodules'"
	assert_status 0 ctl revoke "$name" --rw "$D"
	assert_contains "$OUT" "WARNING: the agent created"
	assert_contains "$OUT" "$D/.gitmodules"
	[ ! -e "$D/.vscode" ] || fail "the placeholder $D/.vscode stayed after revoke"
	assert_status '!0' inside "$name" "cat '$D/new'"
	# the stream: who granted what, through which interface
	wait_until 10 grep -q '"event":"revoke".*"kind":"rw"' "$TEST_TMP/events"
	assert_contains "$(cat "$TEST_TMP/events")" "\"event\":\"allow\",\"sandbox\":\"$name\",\"kind\":\"ro\",\"target\":\"$D\",\"force\":false,\"ok\":true,\"uid\":$(ctl_uid)"
	assert_contains "$(cat "$TEST_TMP/events")" '"interface":"cli"'
}

# Attack: with --nested the agent is root of a user namespace of its
# own, with a mount namespace: its copy of the read-only grant is locked
# read-only (made read-only before the copy), so neither a remount nor
# an unmount uncovers a write.
t_nested_remount()
{
	local name=nest$RANDOM
	share_setup "$1"
	sb_detached "$name" --nested -- sleep 600
	assert_status 0 ctl allow "$name" --ro "$D"
	assert_status 0 inside "$name" "unshare -Urm sh -c \"id -u; mount -o remount,rw,bind '$D' && echo REMOUNTED; umount '$D' && echo UNMOUNTED; echo x >'$D/w' && echo WROTE\" 2>&1 || true"
	if [ "$MODE" = user ]; then
		# the attack ran as root of its own namespace
		assert_contains "$OUT" 0
	fi
	assert_not_contains "$OUT" REMOUNTED
	assert_not_contains "$OUT" WROTE
	[ ! -e "$D/w" ] || fail "a write went through a read-only grant"
	assert_status 0 ctl revoke "$name" --ro "$D"
}

# Attack: the agent plants a symbolic link where the mount point's
# parent will be: the grant is refused, nothing is mounted where the
# link points, and the host is untouched.
t_symlink_attack()
{
	local name=link$RANDOM
	share_setup "$1"
	mkdir -p "$H/lnk/target"
	echo secret-host >"$H/lnk/target/f"
	sb_home_own
	sb_detached "$name" -- sleep 600
	# the agent: $H/lnk -> /tmp/elsewhere, inside
	assert_status 0 inside "$name" "mkdir -p /tmp/elsewhere && mkdir -p '$H' && ln -s /tmp/elsewhere '$H/lnk' && ls -l '$H/lnk'"
	assert_status '!0' ctl allow "$name" --ro "$H/lnk/target"
	assert_contains "$ERR" "symbolic link"
	assert_status 0 inside "$name" "ls -A /tmp/elsewhere; grep -c ' /tmp/elsewhere' /proc/self/mountinfo || true"
	assert_eq "$OUT" 0 "something was mounted through the agent's link"
	assert_eq "$(cat "$H/lnk/target/f")" secret-host
	[ ! -L "$H/lnk" ] || fail "the host got the agent's link"
}

t_refusals()
{
	local name=ref$RANDOM
	share_setup "$1"
	mkdir -p "$H/.ssh"
	echo key >"$H/.ssh/id_ed25519"
	sb_home_own
	sb_detached "$name" -- sleep 600
	# the never-share list, unless --force
	assert_status '!0' ctl allow "$name" --ro "$H/.ssh"
	assert_contains "$ERR" "never-share list"
	assert_status '!0' inside "$name" "cat '$H/.ssh/id_ed25519'"
	assert_status 0 ctl allow "$name" --force --ro "$H/.ssh"
	assert_status 0 inside "$name" "cat '$H/.ssh/id_ed25519'"
	assert_eq "$OUT" key
	# kernel interfaces, the workspace, a missing path, a file
	assert_status '!0' ctl allow "$name" --ro /proc/sys
	assert_contains "$ERR" "kernel interface"
	assert_status '!0' ctl allow "$name" --rw /sys/kernel
	assert_contains "$ERR" "kernel interface"
	assert_status '!0' ctl allow "$name" --rw "$WS/.git"
	assert_contains "$ERR" "workspace"
	assert_status '!0' ctl allow "$name" --ro "$H/nonexistent"
	assert_contains "$ERR" "No such file or directory"
	assert_status '!0' ctl allow "$name" --ro "$D/f"
	assert_contains "$ERR" "expected a directory"
	# bad --net patterns; --net of a sandbox without an egress proxy
	assert_status '!0' ctl allow "$name" --net 'http://example.com'
	assert_contains "$ERR" "the allowlist takes hosts"
	assert_status '!0' ctl allow "$name" --net 'example.com:99999'
	assert_contains "$ERR" "expected HOST"
	assert_status '!0' ctl allow "$name" --net example.com
	assert_contains "$ERR" "no egress proxy"
	# the CLI's own errors
	assert_status '!0' ctl allow "nosuch$RANDOM" --ro "$D"
	assert_contains "$ERR" "is running"
	assert_status 1 ctl allow "$name"
	assert_status 1 ctl allow "$name" --ro "$D" --rw "$D"
	assert_status 1 ctl revoke "$name" --force --ro "$D"
}

# Attack: the agent grants itself a directory and a host through the
# control socket, shown inside (--ro of the state root): refused by the
# peer check (its pid namespace), nothing mounted, nothing allowed.
t_self_grant()
{
	local name=self$RANDOM dir
	share_setup "$1"
	dir=$(ctl_root_dir)
	mkdir -p "$dir"
	sb_bg "$name" --ro "$dir" --net allow=example.invalid -- sleep 600
	assert_status 0 ctl_from_inside "$name" "$dir/.control/$name.sock" "{\"op\":\"allow\",\"kind\":\"ro\",\"target\":\"$D\",\"interface\":\"cli\"}" \
		"{\"op\":\"allow\",\"kind\":\"net\",\"target\":\"*\",\"interface\":\"cli\"}"
	assert_not_contains "$OUT" '"ok":true'
	assert_status '!0' inside "$name" "cat '$D/f'"
	# and the user's own revoke finds nothing granted
	assert_status '!0' ctl revoke "$name" --net '*'
	assert_contains "$ERR" "was not granted"
	assert_status '!0' ctl revoke "$name" --ro "$D"
	assert_contains "$ERR" "was not granted"
}

# With --audit, each allow and revoke is in the log (who, which
# interface), a refused one too.
t_audit()
{
	local name=aud$RANDOM log
	share_setup "$1"
	log=$H/audit.jsonl
	mkdir -p "$H/.ssh"
	sb_home_own
	sb_bg "$name" --audit "$log" -- sleep 600
	assert_status 0 ctl allow "$name" --ro "$D"
	assert_status '!0' ctl allow "$name" --ro "$H/.ssh"
	assert_status 0 ctl revoke "$name" --ro "$D"
	wait_until 10 grep -q '"event":"revoke"' "$log"
	assert_contains "$(cat "$log")" "\"event\":\"allow\",\"sandbox\":\"$name\",\"kind\":\"ro\",\"target\":\"$D\",\"force\":false,\"ok\":true,\"uid\":$(ctl_uid)"
	assert_match "$(cat "$log")" '"event":"allow".*"ok":false.*"interface":"cli","error":"[^"]*'
	assert_contains "$(cat "$log")" "\"event\":\"revoke\",\"sandbox\":\"$name\",\"kind\":\"ro\""
}

t_net()
{
	local name=net$RANDOM id
	sb_serve_home "$1"
	# an allowlist without ask: refused, then granted, then revoked
	sb_bg "$name" --net allow=example.invalid,ask --ask-timeout 60 -- sleep 600
	# a connection waiting on its ask goes through when a grant matches
	inside "$name" "./get.sh $PORT r1" &
	for _ in $(seq 200); do
		id=$(ctl requests "$name" --json 2>/dev/null | jq -r '.[0].id // empty')
		[ -n "$id" ] && break
		sleep 0.05
	done
	[ -n "$id" ] || fail "no pending request"
	# a name keeps the address classes: localhost is still loopback
	assert_status 0 ctl allow "$name" --net "localhost:$PORT"
	assert_status 0 inside "$name" "sed -i s/127.0.0.1:/localhost:/ get.sh; ./get.sh $PORT r0; sed -i s/localhost:/127.0.0.1:/ get.sh; cat r0"
	assert_contains "$OUT" 403
	assert_contains "$OUT" loopback
	assert_status 0 ctl allow "$name" --net "127.0.0.1:$PORT"
	assert_contains "$OUT" "pending requests it matches went through"
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 200
	assert_contains "$(cat "$WS/r1")" served
	# later ones without asking
	assert_status 0 inside "$name" "./get.sh $PORT r2 && cat r2"
	assert_contains "$OUT" 200
	assert_eq "$(ctl requests "$name" --json | jq length)" 0
	assert_status '!0' ctl allow "$name" --net "127.0.0.1:$PORT"
	assert_contains "$ERR" "granted already"
	# revoke: the next one asks again (and is refused on timeout/answer)
	assert_status 0 ctl revoke "$name" --net "127.0.0.1:$PORT"
	assert_contains "$OUT" "established ones are not cut"
	inside "$name" "./get.sh $PORT r3" &
	for _ in $(seq 200); do
		id=$(ctl requests "$name" --json 2>/dev/null | jq -r '.[0].id // empty')
		[ -n "$id" ] && break
		sleep 0.05
	done
	[ -n "$id" ] || fail "after revoke, the connection did not ask"
	assert_status 0 ctl answer "$name" "$id" refuse
	wait_until 20 test -e "$WS/r3"
	assert_contains "$(cat "$WS/r3")" 403
}

run_test "allow --ro/--rw: visible live, read-only, protected, revoked (rootless)" t_ro_rw user
run_test "allow --ro/--rw: visible live, read-only, protected, revoked (root)" t_ro_rw root
run_test "attack: remount/unmount a --ro grant as root of a nested userns (rootless)" t_nested_remount user
run_test "attack: remount/unmount a --ro grant as root of a nested userns (root)" t_nested_remount root
run_test "attack: a link planted on the mount point's way (rootless)" t_symlink_attack user
run_test "attack: a link planted on the mount point's way (root)" t_symlink_attack root
run_test "allow: never-share, kernel interfaces, workspace, bad input (rootless)" t_refusals user
run_test "allow: never-share, kernel interfaces, workspace, bad input (root)" t_refusals root
run_test "attack: the agent grants itself through a shown control socket (rootless)" t_self_grant user
run_test "attack: the agent grants itself through a shown control socket (root)" t_self_grant root
run_test "allow/revoke in the --audit log (rootless)" t_audit user
run_test "allow/revoke in the --audit log (root)" t_audit root
run_test "allow --net: a waiting ask goes through, classes kept, revoke (rootless)" t_net user
run_test "allow --net: a waiting ask goes through, classes kept, revoke (root)" t_net root
finish
