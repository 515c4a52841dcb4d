#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# podman (the real client, with conmon) driving agentrun: run --rm, run -d +
# exec + logs + stop + rm, bind mounts, --read-only, --cap-drop ALL,
# seccomp, a pty (run -it through `script`). podman runs agentrun through
# a wrapper named `agentrun` (podman keys features on the runtime's name)
# that logs its argv, so each test proves agentrun was really called.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../podman-lib.sh
. "$(dirname "$0")/../podman-lib.sh"

if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
fi
if [ "$(id -u)" != 0 ]; then
	skip "needs root (podman with isolated storage under TEST_TMP)"
fi

PM=$TEST_TMP/podman
CALLS=$PM/calls.log
IMAGE=localhost/agentrun-test-busybox

# podman with agentrun by name; $PM/bin/agentrun logs its arguments to
# $CALLS and execs $AGENTRUN (tests/podman-lib.sh).
setup_podman()
{
	podman_setup "$PM" --log "$CALLS" && podman_import "$PM" "$IMAGE"
}

pm()
{
	"$PM/pm" "$@"
}

# podman run with the options every test needs here
RUN_OPTS=(--cgroups=disabled --network=none)

# assert_called VERB: agentrun's argv log has a call with VERB
assert_called()
{
	grep -Eq "(^| )$1( |$)" "$CALLS" ||
		fail "agentrun was not called with \`$1\`: $(cat "$CALLS")"
}

t_run_rm()
{
	: >"$CALLS"
	assert_status 3 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'echo hello from agentrun; exit 3'
	assert_eq "$OUT" "hello from agentrun"
	assert_called create
	assert_called start
	assert_called delete
	# the flags podman passes to a JSON-capable runtime
	assert_contains "$(cat "$CALLS")" "--log-format=json --log "
	assert_contains "$(cat "$CALLS")" "--cgroup-manager disabled"
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" true
}

t_detached_exec_logs_stop_rm()
{
	local c
	: >"$CALLS"
	assert_status 0 pm run -d "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'echo started; trap "exit 0" TERM; while :; do sleep 0.1; done'
	c=$OUT
	assert_status 4 pm exec "$c" sh -c 'echo in-exec; exit 4'
	assert_eq "$OUT" in-exec
	assert_called exec
	assert_contains "$(cat "$CALLS")" "--process "
	assert_status 0 pm exec -e FOO=bar -w /tmp "$c" sh -c 'echo $FOO; pwd'
	assert_eq "$OUT" "bar
/tmp"
	wait_until 5 sh -c "'$PM/pm' logs '$c' | grep -q started"
	assert_status 0 pm stop -t 5 "$c"
	assert_called kill
	assert_status 0 pm inspect --format '{{.State.Status}}' "$c"
	assert_eq "$OUT" exited
	assert_status 0 pm rm "$c"
	assert_status '!0' pm inspect "$c"
}

t_bind_mount()
{
	local d=$TEST_TMP/hostdir
	mkdir -p "$d"
	echo from-host >"$d/in"
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" -v "$d:/work" "$IMAGE" \
		sh -c 'cat /work/in; echo from-container >/work/out'
	assert_eq "$OUT" from-host
	assert_eq "$(cat "$d/out")" from-container
	assert_file_owner "$d/out" 0:0
}

t_read_only_cap_drop()
{
	assert_status '!0' pm run --rm "${RUN_OPTS[@]}" --read-only "$IMAGE" \
		touch /etc/x
	assert_contains "$ERR" "Read-only file system"
	# podman's --read-only keeps /tmp writable
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" --read-only "$IMAGE" \
		touch /tmp/x
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" --cap-drop ALL "$IMAGE" \
		sh -c 'grep -E "^Cap(Eff|Bnd)" /proc/self/status'
	assert_eq "$OUT" "CapEff:	0000000000000000
CapBnd:	0000000000000000"
	# default: podman's 11 capabilities (CAP_CHOWN is bit 0)
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'grep "^CapEff" /proc/self/status'
	assert_ne "$OUT" "CapEff:	0000000000000000"
}

t_seccomp()
{
	# podman's default profile reaches the container; unconfined removes it
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'grep "^Seccomp:" /proc/self/status'
	assert_match "$OUT" "Seccomp:[[:space:]]+2"
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" \
		--security-opt seccomp=unconfined "$IMAGE" \
		sh -c 'grep "^Seccomp:" /proc/self/status'
	assert_match "$OUT" "Seccomp:[[:space:]]+0"
}

t_tty()
{
	require_cmd script
	: >"$CALLS"
	# script gives podman a pty; -e passes the exit status through. The
	# short sleep: podman 4.3 can drop the last output of a process that
	# exits within milliseconds of start under -it --rm (seen once in CI
	# with the right exit status and no output; not reproduced locally).
	assert_status 6 script -qec "'$PM/pm' run --rm -it --cgroups=disabled --network=none '$IMAGE' sh -c 'tty; test -t 0 && echo stdin-is-tty; sleep 0.3; exit 6'" /dev/null
	assert_contains "$OUT" /dev/pts/
	assert_contains "$OUT" stdin-is-tty
	assert_contains "$(cat "$CALLS")" "--console-socket"
}

t_exec_tty()
{
	require_cmd script
	local c
	assert_status 0 pm run -d "${RUN_OPTS[@]}" "$IMAGE" sleep 1000
	c=$OUT
	: >"$CALLS"
	assert_status 0 script -qec "'$PM/pm' exec -it '$c' sh -c 'tty'" /dev/null
	assert_contains "$OUT" /dev/pts/
	assert_called exec
	assert_contains "$(cat "$CALLS")" "--tty"
	assert_status 0 pm rm -f -t 0 "$c"
}

# After a failed create podman runs `delete --force` on a container that
# does not exist: that must succeed silently (as with crun and runc), or
# podman reports "Removing container ... after creation failed" on top.
t_failed_create_quiet()
{
	: >"$CALLS"
	assert_status 127 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" /nonexistent
	assert_contains "$(cat "$CALLS")" "delete --force"
	assert_not_contains "$ERR" "does not exist"
	assert_not_contains "$ERR" "Removing container"
	assert_contains "$ERR" "/nonexistent"
}

# The container process leads a session of its own (crun does setsid):
# pid 1's session id, seen in its pid namespace, is 1.
t_session_leader()
{
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'cut -d" " -f6 /proc/1/stat'
	assert_eq "$OUT" 1
}

# run --timeout: conmon kills the container's process group at the
# deadline. With the container in conmon's group conmon killed itself and
# the container ran on; podman's own test expects 255 and exit code -1.
t_run_timeout()
{
	local c=ar-timeout-$$ t0 t1
	defer pm rm -f -t 0 "$c"
	t0=$(date +%s)
	assert_status 255 pm run --name "$c" --timeout 2 "${RUN_OPTS[@]}" \
		"$IMAGE" sleep 60
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 20 ] || fail "run --timeout 2 took $((t1 - t0)) s"
	assert_status 0 pm inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$c"
	assert_match "$OUT" "^(stopped|exited) -1$"
}

# podman build with a RUN step: buildah runs the step as an OCI container
# through agentrun (--isolation oci); its spec carries ambient
# capabilities that are not inheritable, as crun's and runc's defaults
# do. --network none: no CNI bridge on the host.
t_build_run_step()
{
	local ctx=$TEST_TMP/build
	mkdir -p "$ctx"
	printf 'FROM %s\nRUN echo built-by-run >/built && id -u\n' "$IMAGE" \
		>"$ctx/Dockerfile"
	: >"$CALLS"
	assert_status 0 pm build --isolation oci --network none \
		-t localhost/agentrun-built "$ctx"
	assert_contains "$(cat "$CALLS")" "create --bundle"
	assert_status 0 pm run --rm "${RUN_OPTS[@]}" localhost/agentrun-built \
		cat /built
	assert_eq "$OUT" built-by-run
}

# ---- rootless: podman as the unprivileged test user ----------------------

PMU=$TEST_TMP/podman-user

setup_podman_user()
{
	podman_setup "$PMU" --log "$PMU/calls.log" &&
		podman_import "$PMU" "$IMAGE" user
}

pmu()
{
	(cd "$PMU" && as_test_user "$PMU/pm" "$@")
}

# Regression check: uid 0 of rootless podman's user namespace must use
# $XDG_RUNTIME_DIR/agentrun, not the unwritable /run/agentrun.
check_rootless_state_root()
{
	case $ERR in
	*"open state directory \`/run/agentrun\`"*)
		fail "agentrun picked /run/agentrun as its state root inside rootless podman" ;;
	esac
}

rootless_ready()
{
	require_subids
	require_agentrun_as_test_user
	require_cmd newuidmap
	[ -d "$PMU/storage" ] || skip "rootless podman setup failed"
}

t_rootless_run_rm()
{
	rootless_ready
	: >"$PMU/calls.log"
	STATUS=0
	pmu run --rm "${RUN_OPTS[@]}" "$IMAGE" sh -c 'id -u; exit 3' \
		>"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	ERR=$(cat "$TEST_TMP/e")
	check_rootless_state_root
	assert_eq "$STATUS" 3 "exit status ($ERR)"
	assert_eq "$(cat "$TEST_TMP/o")" 0
	grep -Eq "(^| )start " "$PMU/calls.log" || fail "agentrun not called"
}

t_rootless_keep_id_volume()
{
	rootless_ready
	local d=$TEST_TMP/userdir
	mkdir -p "$d"
	chown "$TEST_UID:$TEST_GID" "$d"
	STATUS=0
	pmu run --rm "${RUN_OPTS[@]}" --userns=keep-id -v "$d:/work" "$IMAGE" \
		sh -c 'id -u; echo x >/work/made-inside' \
		>"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	ERR=$(cat "$TEST_TMP/e")
	check_rootless_state_root
	assert_eq "$STATUS" 0 "exit status ($ERR)"
	assert_eq "$(cat "$TEST_TMP/o")" "$TEST_UID"
	assert_file_owner "$d/made-inside" "$TEST_UID:$TEST_GID"
}

t_rootless_detached_exec()
{
	rootless_ready
	local c
	STATUS=0
	c=$(pmu run -d "${RUN_OPTS[@]}" "$IMAGE" sleep 1000 2>"$TEST_TMP/e") ||
		STATUS=$?
	ERR=$(cat "$TEST_TMP/e")
	check_rootless_state_root
	assert_eq "$STATUS" 0 "run -d ($ERR)"
	defer pmu rm -f -t 0 "$c"
	STATUS=0
	pmu exec "$c" sh -c 'echo in-exec; exit 5' >"$TEST_TMP/o" \
		2>"$TEST_TMP/e" || STATUS=$?
	assert_eq "$STATUS" 5 "exec: $(cat "$TEST_TMP/e")"
	assert_eq "$(cat "$TEST_TMP/o")" in-exec
	pmu stop -t 1 "$c" >/dev/null 2>&1
	pmu rm "$c" >/dev/null
	grep -Eq "(^| )exec " "$PMU/calls.log" || fail "agentrun exec not called"
}

# --privileged rootless: podman binds the host's device nodes into /dev
# itself (mounts); the runtime's default devices must leave them alone.
t_rootless_privileged()
{
	rootless_ready
	STATUS=0
	pmu run --rm --privileged "${RUN_OPTS[@]}" "$IMAGE" \
		sh -c 'echo x >/dev/null && test -c /dev/null && echo ok' \
		>"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	ERR=$(cat "$TEST_TMP/e")
	assert_eq "$STATUS" 0 "run --privileged ($ERR)"
	assert_eq "$(cat "$TEST_TMP/o")" ok
	assert_not_contains "$ERR" "Device or resource busy"
}

t_rootless_timeout()
{
	rootless_ready
	local c=ar-timeout-u$$ t0 t1
	defer pmu rm -f -t 0 "$c"
	t0=$(date +%s)
	STATUS=0
	pmu run --name "$c" --timeout 2 "${RUN_OPTS[@]}" "$IMAGE" sleep 60 \
		>/dev/null 2>"$TEST_TMP/e" || STATUS=$?
	t1=$(date +%s)
	assert_eq "$STATUS" 255 "run --timeout: $(cat "$TEST_TMP/e")"
	[ $((t1 - t0)) -lt 20 ] || fail "run --timeout 2 took $((t1 - t0)) s"
	STATUS=0
	pmu inspect --format '{{.State.Status}} {{.State.ExitCode}}' "$c" \
		>"$TEST_TMP/o" 2>&1 || STATUS=$?
	assert_match "$(cat "$TEST_TMP/o")" "^(stopped|exited) -1$"
}

t_rootless_build_run_step()
{
	rootless_ready
	local ctx=$TEST_TMP/build-user
	mkdir -p "$ctx"
	printf 'FROM %s\nRUN echo built-by-run >/built && id -u\n' "$IMAGE" \
		>"$ctx/Dockerfile"
	chmod -R a+rX "$ctx"
	: >"$PMU/calls.log"
	STATUS=0
	pmu build --isolation oci --network none -t localhost/agentrun-built \
		"$ctx" >"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	assert_eq "$STATUS" 0 "build: $(cat "$TEST_TMP/e")"
	grep -q "create --bundle" "$PMU/calls.log" ||
		fail "agentrun was not called: $(cat "$PMU/calls.log")"
	STATUS=0
	pmu run --rm "${RUN_OPTS[@]}" localhost/agentrun-built cat /built \
		>"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
	assert_eq "$STATUS" 0 "run: $(cat "$TEST_TMP/e")"
	assert_eq "$(cat "$TEST_TMP/o")" built-by-run
}

setup_podman
run_test "podman: run --rm (output, exit code, agentrun called)" t_run_rm
run_test "podman: run -d, exec, logs, stop, rm" t_detached_exec_logs_stop_rm
run_test "podman: -v HOSTDIR:/work" t_bind_mount
run_test "podman: --read-only, --cap-drop ALL" t_read_only_cap_drop
run_test "podman: seccomp default and unconfined" t_seccomp
run_test "podman: run -it through a pty" t_tty
run_test "podman: exec -it through a pty" t_exec_tty
run_test "podman: a failed create is cleaned up quietly (delete --force)" \
	t_failed_create_quiet
run_test "podman: the container process leads its own session" \
	t_session_leader
run_test "podman: run --timeout stops the container (255, exit code -1)" \
	t_run_timeout
run_test "podman: build with a RUN step through agentrun" t_build_run_step
setup_podman_user || true
run_test "podman rootless: run --rm" t_rootless_run_rm
run_test "podman rootless: --userns=keep-id, -v owned by the user" \
	t_rootless_keep_id_volume
run_test "podman rootless: run -d, exec, stop, rm" t_rootless_detached_exec
run_test "podman rootless: run --privileged (podman's /dev binds kept)" \
	t_rootless_privileged
run_test "podman rootless: run --timeout stops the container" \
	t_rootless_timeout
run_test "podman rootless: build with a RUN step through agentrun" \
	t_rootless_build_run_step
finish
