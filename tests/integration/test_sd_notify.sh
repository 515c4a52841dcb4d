#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# NOTIFY_SOCKET proxied as crun does (runtime/lib/sd_notify.c): the caller's
# path is a directory inside holding the runtime's socket `notify`, the
# container's NOTIFY_SOCKET names it, and READY=1 reaches the caller's
# socket from run, run --detach and start (which wait for it as crun does).
# The first three tests are crun's sd-notify, sd-notify-file, sd-notify-env.
. "$(dirname "$0")/../lib.sh"

# notify_send_into ROOTFS: tests/helpers/sd_notify_send.c, static, as
# ROOTFS/bin/sd-notify-send
notify_send_into()
{
	local bin=$TEST_TMP/sd-notify-send
	if [ ! -x "$bin" ]; then
		cc -static -O2 -o "$bin" "$AR_TEST_HELPERS/sd_notify_send.c" \
			2>"$TEST_TMP/cc.err" ||
			skip "cannot build a static helper: $(head -c 300 "$TEST_TMP/cc.err")"
	fi
	cp "$bin" "$1/bin/sd-notify-send"
	chmod 0755 "$1/bin/sd-notify-send"
}

# listen SOCKET OUT [RUNNER...]: the caller's socket, receiving into OUT
listen()
{
	local sock=$1 out=$2
	shift 2
	"$@" python3 "$AR_TEST_HELPERS/notify_listen.py" "$sock" "$out" 20 &
	LISTENER=$!
	defer kill "$LISTENER"
	wait_until 10 test -e "$out.bound"
}

# assert_ready OUT: READY=1 was forwarded, then only crun's barrier
assert_ready()
{
	assert_eq "$(head -n1 "$1")" "READY=1"
	assert_eq "$(sed 1d "$1" | sort -u)" "BARRIER=1" "after READY=1"
}

t_crun_sd_notify()
{
	require_root
	local b=$TEST_TMP/b1 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["cat","/proc/self/mountinfo"]'
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET=/run/notify/the-socket \
		"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$OUT" " /run/notify/the-socket "
}

t_crun_sd_notify_file()
{
	require_root
	local b=$TEST_TMP/b2 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["ls","-l","/tmp/parent-dir/the-socket/"]'
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET=/tmp/parent-dir/the-socket \
		"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_match "$OUT" "srwxrwxrwx .* notify$"
	# nothing was made on the host at the caller's path
	[ ! -e /tmp/parent-dir ] || fail "/tmp/parent-dir made on the host"
}

t_crun_sd_notify_env()
{
	require_root
	local b=$TEST_TMP/b3 id
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo $NOTIFY_SOCKET"] | .process.env += ["NOTIFY_SOCKET=/elsewhere"]'
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET=/tmp/parent-dir/the-socket \
		"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" "/tmp/parent-dir/the-socket/notify"
}

# run in the foreground: READY=1 reaches the caller, other messages do not
# (as crun), and a container user other than root can send
t_run_ready()
{
	require_root
	local b=$TEST_TMP/b4 id s=$TEST_TMP/s4 out=$TEST_TMP/o4
	id=$(unique_id)
	make_bundle "$b"
	notify_send_into "$b/rootfs"
	config_set "$b" '.process.user={"uid":1000,"gid":1000} | .process.args=["sh","-c","sd-notify-send STATUS=starting && sd-notify-send READY=1 && echo sent"]'
	listen "$s" "$out"
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" "sent"
	wait_until 10 test -s "$out"
	assert_ready "$out"
	# the state directory (and its notify directory) is gone
	[ ! -e "$AR_ROOT/$id" ] || fail "state of $id left: $(ls -la "$AR_ROOT/$id")"
}

# create + start: start returns only once the container said READY=1
t_start_waits()
{
	require_root
	local b=$TEST_TMP/b5 id s=$TEST_TMP/s5 out=$TEST_TMP/o5 t0 t1
	id=$(unique_id)
	make_bundle "$b"
	notify_send_into "$b/rootfs"
	config_set "$b" '.process.args=["sh","-c","sleep 1; sd-notify-send READY=1; exec sleep 100"]'
	listen "$s" "$out"
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" create --bundle "$b" "$id"
	t0=$(date +%s%N)
	assert_status 0 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" start "$id"
	t1=$(date +%s%N)
	[ -s "$out" ] || fail "start returned before READY=1 reached the caller ($(( (t1 - t0) / 1000000 )) ms)"
	assert_ready "$out"
	[ $(( (t1 - t0) / 1000000 )) -ge 900 ] || fail "start returned after $(( (t1 - t0) / 1000000 )) ms"
	assert_status 0 ar state "$id"
	assert_contains "$OUT" '"status":"running"'
}

# start of a container that exits without READY=1 returns (as crun)
t_start_exit_no_ready()
{
	require_root
	local b=$TEST_TMP/b6 id s=$TEST_TMP/s6 out=$TEST_TMP/o6
	id=$(unique_id)
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","sleep 0.3"]'
	listen "$s" "$out"
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" create --bundle "$b" "$id"
	assert_status 0 timeout 20 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" start "$id"
	[ ! -s "$out" ] || fail "forwarded: $(cat "$out")"
}

# run --detach returns once READY=1 was forwarded
t_run_detach_waits()
{
	require_root
	local b=$TEST_TMP/b7 id s=$TEST_TMP/s7 out=$TEST_TMP/o7
	id=$(unique_id)
	make_bundle "$b"
	notify_send_into "$b/rootfs"
	config_set "$b" '.process.args=["sh","-c","sleep 1; sd-notify-send READY=1; exec sleep 100"]'
	listen "$s" "$out"
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_ROOT" run --detach --bundle "$b" "$id"
	[ -s "$out" ] || fail "run --detach returned before READY=1"
	assert_ready "$out"
}

# hostile: the container replaces the runtime's socket with a link to a
# host file and leaves a tree; delete removes its state, the file is intact
t_hostile_notify_dir()
{
	require_root
	local b=$TEST_TMP/b8 id s=$TEST_TMP/s8 victim=$TEST_TMP/victim
	id=$(unique_id)
	make_bundle "$b"
	echo keep >"$victim"
	config_set "$b" '.process.args=["sh","-c","cd /n && rm -f notify && ln -s $V notify && mkdir -p a/b/c && ln -s / a/root && echo x > a/b/f"] | .process.env += ["V='"$victim"'"]'
	defer ar delete --force "$id"
	assert_status 0 env NOTIFY_SOCKET=/n \
		"$AGENTRUN" --root "$AR_ROOT" run --keep --bundle "$b" "$id"
	assert_status 0 ar delete "$id"
	[ ! -e "$AR_ROOT/$id" ] || fail "state of $id left"
	assert_eq "$(cat "$victim")" "keep"
	# a later start of another container with a link planted is not
	# followed either: covered by unlinkat + bind (never follow)
}

t_rootless()
{
	require_subids
	require_agentrun_as_test_user
	ensure_test_user
	local b=$TEST_TMP/b9 id s=$TEST_TMP/u9/s out=$TEST_TMP/u9/o
	id=$(unique_id)
	mkdir -p "$TEST_TMP/u9"
	chown "$TEST_UID:$TEST_GID" "$TEST_TMP/u9"
	make_bundle_as_test_user "$b" --rootless
	notify_send_into "$b/rootfs"
	config_set "$b" '.process.args=["sh","-c","sleep 0.5; sd-notify-send READY=1; exec sleep 100"]'
	listen "$s" "$out" as_test_user
	ar_user list >/dev/null # the state root, the test user's
	defer ar_user delete --force "$id"
	assert_status 0 as_test_user env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_USER_ROOT" create --bundle "$b" "$id"
	assert_status 0 as_test_user env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_USER_ROOT" start "$id"
	[ -s "$out" ] || fail "start returned before READY=1"
	assert_ready "$out"
	assert_status 0 ar_user delete --force "$id"
	# foreground run, rootless
	id=$(unique_id)
	rm -f "$out"
	config_set "$b" '.process.args=["sd-notify-send","READY=1"]'
	assert_status 0 as_test_user env NOTIFY_SOCKET="$s" \
		"$AGENTRUN" --root "$AR_USER_ROOT" run --bundle "$b" "$id"
	wait_until 10 test -s "$out"
	assert_ready "$out"
}

run_test "crun sd-notify: the caller's path is mounted inside" t_crun_sd_notify
run_test "crun sd-notify-file: the socket notify in that directory" t_crun_sd_notify_file
run_test "crun sd-notify-env: NOTIFY_SOCKET=PATH/notify inside" t_crun_sd_notify_env
run_test "run: READY=1 forwarded, STATUS= not, from a non-root user" t_run_ready
run_test "start waits for READY=1" t_start_waits
run_test "start returns when the container exits without READY=1" t_start_exit_no_ready
run_test "run --detach waits for READY=1" t_run_detach_waits
run_test "hostile: links and a tree in the notify directory" t_hostile_notify_dir
run_test "rootless: create/start and run forward READY=1" t_rootless
finish
