#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The OCI lifecycle through the real binary: run, create/start/state/kill/
# delete/list, exit codes, signal forwarding, error cases (and that they
# leave no state behind), as root and as the unprivileged test user.
. "$(dirname "$0")/../lib.sh"

# set_args BUNDLE SCRIPT: process.args = sh -c SCRIPT
set_args()
{
	config_set "$1" '.process.args=["sh","-c",$s] | .root.readonly=false' \
		--arg s "$2"
}

# status_of ID: the status `state ID` reports
status_of()
{
	ar state "$1" | jq -r .status
}

# no_state ROOT: the state root holds no container directory (the shared
# compiled-seccomp cache, .seccomp-cache, is not container state)
assert_no_state()
{
	local left
	left=$(ls -A "${1:-$AR_ROOT}" 2>/dev/null | grep -vx '.seccomp-cache' || true)
	assert_eq "$left" "" "stale state left behind"
}

t_run_output_and_exit_code()
{
	require_root
	local b=$TEST_TMP/b1 id
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'echo out; echo err >&2; echo pid=$$; exit 3'
	defer ar delete --force "$id"
	assert_status 3 ar run --bundle "$b" "$id"
	assert_contains "$OUT" "out"
	assert_contains "$OUT" "pid=1"
	assert_contains "$ERR" "err"
	# run deletes the container at the end, as crun does
	assert_no_state
	set_args "$b" 'exit 0'
	assert_status 0 ar run --bundle "$b" "$id"
}

t_run_keep()
{
	require_root
	local b=$TEST_TMP/bk id
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'exit 0'
	defer ar delete --force "$id"
	assert_status 0 ar run --keep --bundle "$b" "$id"
	assert_eq "$(status_of "$id")" stopped
	assert_status 0 ar delete "$id"
	assert_no_state
}

t_run_signal_exit_code()
{
	require_root
	local b=$TEST_TMP/b2 id rpid rc=0
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'sleep 30'
	defer ar delete --force "$id"
	"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id" >/dev/null 2>&1 &
	rpid=$!
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q running"
	# sh execs sleep: pid 1 without handlers, only SIGKILL from outside
	# kills it
	assert_status 0 ar kill "$id" KILL
	wait "$rpid" || rc=$?
	assert_eq "$rc" 137 "exit status of a container killed by SIGKILL"
}

t_run_forwards_signals()
{
	require_root
	local b=$TEST_TMP/b3 id rpid rc=0
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'trap "echo got TERM; exit 7" TERM; echo ready; while :; do sleep 0.05; done'
	defer ar delete --force "$id"
	"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id" \
		>"$TEST_TMP/fwd.out" 2>&1 &
	rpid=$!
	wait_until 5 grep -q ready "$TEST_TMP/fwd.out"
	kill -TERM "$rpid"
	wait "$rpid" || rc=$?
	assert_eq "$rc" 7 "exit status after the forwarded SIGTERM"
	assert_contains "$(cat "$TEST_TMP/fwd.out")" "got TERM"
}

t_create_start_state_delete()
{
	require_root
	local b=$TEST_TMP/b4 id pid
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'echo started >/tmp/started; trap "exit 0" TERM; while :; do sleep 0.05; done'
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" --pid-file "$TEST_TMP/pid" "$id"
	pid=$(cat "$TEST_TMP/pid")
	assert_match "$pid" '^[0-9]+$' "pid file content"
	assert_status 0 ar state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" created
	assert_eq "$(jq -r .pid <<<"$OUT")" "$pid"
	assert_eq "$(jq -r .id <<<"$OUT")" "$id"
	assert_eq "$(jq -r .bundle <<<"$OUT")" "$b"
	assert_eq "$(jq -r .ociVersion <<<"$OUT")" 1.2.0
	# the process has not run the user program yet
	[ ! -e "$b/rootfs/tmp/started" ] || fail "process ran before start"
	assert_status 0 ar start "$id"
	assert_eq "$(status_of "$id")" running
	wait_until 5 test -e "$b/rootfs/tmp/started"
	assert_status 0 ar kill "$id" TERM
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q stopped"
	assert_status 0 ar state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" stopped
	assert_eq "$(jq -r 'has("pid")' <<<"$OUT")" false
	assert_status 0 ar delete "$id"
	assert_no_state
	assert_status 1 ar state "$id"
	assert_contains "$ERR" "does not exist"
}

t_create_start_non_root_user()
{
	require_root
	local b=$TEST_TMP/bu id
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'id -u >/tmp/uid'
	config_set "$b" '.process.user={"uid":1000,"gid":1000}'
	chmod 1777 "$b/rootfs/tmp"
	defer ar delete --force "$id"
	# the exec fifo must be writable by process.user (umask 077 here)
	assert_status 0 bash -c "umask 077; exec \"\$0\" --root '$AR_ROOT' create --bundle '$b' '$id'" "$AGENTRUN"
	assert_status 0 ar start "$id"
	wait_until 5 test -s "$b/rootfs/tmp/uid"
	assert_eq "$(cat "$b/rootfs/tmp/uid")" 1000
}

t_annotations_in_state()
{
	require_root
	local b=$TEST_TMP/ba id
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'true'
	config_set "$b" '.annotations={"org.example.key":"v/1"}'
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status 0 ar state "$id"
	assert_eq "$(jq -r '.annotations["org.example.key"]' <<<"$OUT")" "v/1"
	assert_contains "$OUT" '"v/1"' "slashes are not escaped"
}

t_detach_kill_delete()
{
	require_root
	local b=$TEST_TMP/b5 id
	make_bundle "$b"
	id=$(unique_id)
	set_args "$b" 'sleep 30'
	defer ar delete --force "$id"
	assert_status 0 timeout 10 "$AGENTRUN" --root "$AR_ROOT" run -d --bundle "$b" --pid-file "$TEST_TMP/p5" "$id"
	assert_eq "$(status_of "$id")" running
	assert_eq "$(jq -r .pid < <(ar state "$id"))" "$(cat "$TEST_TMP/p5")"
	assert_status 1 ar delete "$id"
	assert_contains "$ERR" "is not stopped"
	assert_contains "$ERR" "--force"
	assert_eq "$(status_of "$id")" running
	assert_status 0 ar kill "$id" SIGKILL
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q stopped"
	assert_status 1 ar kill "$id" TERM
	assert_contains "$ERR" "not running"
	assert_status 0 ar delete "$id"
	assert_no_state
}

t_delete_force()
{
	require_root
	local b=$TEST_TMP/b6 id1 id2
	make_bundle "$b"
	id1=$(unique_id)
	id2=$(unique_id)
	set_args "$b" 'sleep 30'
	defer ar delete --force "$id1"
	defer ar delete --force "$id2"
	assert_status 0 ar create --bundle "$b" "$id1"
	assert_status 0 ar run -d --bundle "$b" "$id2"
	assert_status 1 ar delete "$id1"
	assert_status 0 ar delete --force "$id1"
	assert_status 0 ar delete -f "$id2"
	assert_no_state
}

t_kill_signal_forms()
{
	require_root
	local b=$TEST_TMP/b7 id sig
	make_bundle "$b"
	set_args "$b" 'trap "echo USR1 >>/tmp/log" USR1; trap "echo HUP >>/tmp/log" HUP; trap "echo USR2 >>/tmp/log" USR2; while :; do sleep 0.05; done'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	for sig in USR1 SIGHUP 12; do
		assert_status 0 ar kill "$id" "$sig"
	done
	wait_until 5 sh -c "[ \$(wc -l <'$b/rootfs/tmp/log') -eq 3 ]"
	assert_eq "$(sort "$b/rootfs/tmp/log" | tr '\n' ' ')" "HUP USR1 USR2 "
	assert_status 1 ar kill "$id" NOSUCHSIG
	assert_contains "$ERR" "unknown signal"
	assert_status 0 ar kill "$id" sigkill
}

t_kill_all()
{
	require_root
	local b=$TEST_TMP/b8 id
	make_bundle "$b"
	# pid 1 survives TERM (a handler); its child does not. The child's
	# pid is written once it runs sleep: a TERM between its fork and
	# its exec hits the shell's inherited trap and is lost at the exec.
	set_args "$b" 'trap "echo term >>/tmp/pterm" TERM; sleep 30 & c=$!; until [ "$(cat /proc/$c/comm)" = sleep ]; do :; done; echo $c >/tmp/child; while kill -0 $! 2>/dev/null; do sleep 0.05; done; echo child-gone >/tmp/done; while :; do sleep 0.05; done'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run -d --bundle "$b" "$id"
	wait_until 5 test -s "$b/rootfs/tmp/child"
	assert_status 0 ar kill --all "$id" TERM
	wait_until 5 test -e "$b/rootfs/tmp/done"
	wait_until 5 test -e "$b/rootfs/tmp/pterm"
	assert_eq "$(status_of "$id")" running
	assert_status 0 ar kill -a "$id" KILL
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q stopped"
}

t_list()
{
	require_root
	local b=$TEST_TMP/b9 id1 id2
	make_bundle "$b"
	set_args "$b" 'sleep 30'
	id1=$(unique_id)
	id2=$(unique_id)
	defer ar delete --force "$id1"
	defer ar delete --force "$id2"
	assert_status 0 ar list
	assert_contains "$OUT" "ID"
	assert_contains "$OUT" "STATUS"
	assert_status 0 ar create --bundle "$b" "$id1"
	assert_status 0 ar run -d --bundle "$b" "$id2"
	assert_status 0 ar list
	assert_match "$OUT" "$id1 +[0-9]+ +created +$b"
	assert_match "$OUT" "$id2 +[0-9]+ +running +$b"
	assert_status 0 ar list -q
	assert_eq "$OUT" "$(printf '%s\n%s' "$id1" "$id2" | sort)"
	assert_status 0 ar list --format json
	assert_eq "$(jq -r "map(select(.id==\"$id1\"))[0].status" <<<"$OUT")" created
	assert_eq "$(jq -r "map(select(.id==\"$id2\"))[0].status" <<<"$OUT")" running
	assert_eq "$(jq -r 'length' <<<"$OUT")" 2
	assert_status 0 ar list -f json -q
	assert_status 1 ar list --format yaml
}

t_errors()
{
	require_root
	local b=$TEST_TMP/b10 id
	make_bundle "$b"
	set_args "$b" 'sleep 30'
	id=$(unique_id)
	defer ar delete --force "$id"

	assert_status 1 ar run --bundle "$TEST_TMP/nope" x1
	assert_contains "$ERR" "$TEST_TMP/nope"
	assert_no_state

	mkdir -p "$TEST_TMP/norootfs"
	cp "$b/config.json" "$TEST_TMP/norootfs/"
	assert_status 1 ar create --bundle "$TEST_TMP/norootfs" x2
	assert_contains "$ERR" "$TEST_TMP/norootfs/rootfs"
	assert_no_state

	assert_status 1 ar create --bundle "$b" "../evil"
	assert_contains "$ERR" "invalid container id"
	assert_status 1 ar create --bundle "$b" "a/b"
	assert_status 1 ar run --bundle "$b" "$(head -c 2000 /dev/zero | tr '\0' a)"
	assert_no_state

	# a program that does not exist: reported by create, nothing left
	config_set "$b" '.process.args=["/no/such/program"]'
	assert_status 1 ar create --bundle "$b" x3
	assert_contains "$ERR" "/no/such/program"
	assert_no_state
	config_set "$b" '.process.args=["nosuchprogram"]'
	assert_status 1 ar run --bundle "$b" x3
	assert_contains "$ERR" "not found in \$PATH"
	assert_no_state

	set_args "$b" 'sleep 30'
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status 1 ar create --bundle "$b" "$id"
	assert_contains "$ERR" "already exists"
	assert_eq "$(status_of "$id")" created "the first container survived"
	assert_status 0 ar start "$id"
	assert_status 1 ar start "$id"
	assert_contains "$ERR" "not in created state"
	assert_status 1 ar delete "$id"
	assert_status 1 ar start nosuchcontainer
	assert_contains "$ERR" "does not exist"
	assert_status 1 ar kill nosuchcontainer
	assert_status 1 ar delete nosuchcontainer
	assert_status 0 ar delete --force "$id"
	assert_no_state
}

t_interrupted_create()
{
	require_root
	# what a create killed half-way leaves: a directory without state
	mkdir -p "$AR_ROOT/half"
	assert_status 1 ar state half
	assert_contains "$ERR" "no state"
	assert_status 1 ar delete half
	assert_status 0 ar delete --force half
	assert_no_state
}

t_preserve_fds()
{
	require_root
	local b=$TEST_TMP/b11 id
	make_bundle "$b"
	id=$(unique_id)
	echo "from fd 3" >"$TEST_TMP/fd3"
	echo "from fd 4" >"$TEST_TMP/fd4"
	set_args "$b" 'cat <&3; cat <&4; ls /proc/self/fd | tr "\n" " "'
	defer ar delete --force "$id"
	assert_status 0 ar run --preserve-fds 2 --bundle "$b" "$id" 3<"$TEST_TMP/fd3" 4<"$TEST_TMP/fd4"
	assert_contains "$OUT" "from fd 3"
	assert_contains "$OUT" "from fd 4"
	# without --preserve-fds nothing but stdio reaches the container
	set_args "$b" 'ls /proc/self/fd | tr "\n" " "'
	assert_status 0 ar run --bundle "$b" "$id" 3<"$TEST_TMP/fd3" 4<"$TEST_TMP/fd4"
	assert_eq "$OUT" "0 1 2 3 " "fds in the container (3 is ls's own)"
}

t_listen_fds()
{
	require_root
	local b=$TEST_TMP/b12 id
	make_bundle "$b"
	id=$(unique_id)
	echo "socket" >"$TEST_TMP/lfd"
	set_args "$b" 'echo "$LISTEN_FDS $LISTEN_PID"; cat <&3'
	defer ar delete --force "$id"
	assert_status 0 env LISTEN_FDS=1 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id" 3<"$TEST_TMP/lfd"
	assert_contains "$OUT" "1 1"
	assert_contains "$OUT" "socket"
}

t_rootless_run()
{
	local b=$TEST_TMP/r1 id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	set_args "$b" 'id -u; cat /proc/self/uid_map; echo pid=$$; exit 5'
	defer ar_user delete --force "$id"
	assert_status 5 ar_user run --bundle "$b" "$id"
	assert_contains "$OUT" "pid=1"
	assert_match "$OUT" "0 +$TEST_UID +1"
	assert_no_state "$AR_USER_ROOT"
}

t_rootless_lifecycle()
{
	local b=$TEST_TMP/r2 id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	set_args "$b" 'trap "exit 0" TERM; while :; do sleep 0.05; done'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user create --bundle "$b" --pid-file "$b/pid" "$id"
	assert_status 0 ar_user state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" created
	assert_status 0 ar_user start "$id"
	assert_status 0 ar_user state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" running
	assert_status 0 ar_user list -q
	assert_eq "$OUT" "$id"
	assert_status 0 ar_user kill "$id" TERM
	wait_until 5 sh -c "ar_state=\$(setpriv --reuid $TEST_UID --regid $TEST_GID --init-groups '$AGENTRUN' --root '$AR_USER_ROOT' state '$id'); echo \"\$ar_state\" | grep -q stopped"
	assert_status 0 ar_user delete "$id"
	assert_no_state "$AR_USER_ROOT"
	# the errors are the same for the unprivileged user
	assert_status 1 ar_user create --bundle "$TEST_TMP/nope" x
	assert_no_state "$AR_USER_ROOT"
}

run_test "run: output, exit code pass-through, pid 1, state removed" t_run_output_and_exit_code
run_test "run --keep leaves a stopped container" t_run_keep
run_test "run: killed by a signal exits 128+N" t_run_signal_exit_code
run_test "run forwards SIGTERM to the container" t_run_forwards_signals
run_test "create/start/state/kill/delete: created -> running -> stopped" t_create_start_state_delete
run_test "create/start with a non-root process.user" t_create_start_non_root_user
run_test "state shows annotations, '/' unescaped" t_annotations_in_state
run_test "run --detach, kill, delete" t_detach_kill_delete
run_test "delete --force of created and running containers" t_delete_force
run_test "kill: signal names, SIG prefix, numbers" t_kill_signal_forms
run_test "kill --all signals every process" t_kill_all
run_test "list: table, -q, json" t_list
run_test "errors: clear message, exit 1, no stale state" t_errors
run_test "delete --force cleans up an interrupted create" t_interrupted_create
run_test "--preserve-fds passes fds, others are closed" t_preserve_fds
run_test "LISTEN_FDS is passed on" t_listen_fds
run_test "rootless: run as the test user" t_rootless_run
run_test "rootless: create/start/state/kill/delete" t_rootless_lifecycle
finish
