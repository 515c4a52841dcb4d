#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Tools that speak the runc CLI (docs/runc-compat.md): agentrun run through
# a symlink named `runc` first in PATH behaves as agentrun (argv[0] changes
# nothing): the whole create/start/state/kill/delete lifecycle with the
# global options and flags containerd's and Docker's runc shims pass, and
# `run` in the foreground passes the exit status through.
. "$(dirname "$0")/../lib.sh"

# runc_dir: a directory with `runc` -> $AGENTRUN, printed
runc_dir()
{
	mkdir -p "$TEST_TMP/runc-bin"
	ln -sf "$AGENTRUN" "$TEST_TMP/runc-bin/runc"
	echo "$TEST_TMP/runc-bin"
}

# runc ARGS: `runc` as a tool finds it, in PATH
runc()
{
	PATH=$(runc_dir):$PATH command runc "$@"
}

t_version_and_help()
{
	assert_eq "$(PATH=$(runc_dir):$PATH type -P runc)" \
		"$TEST_TMP/runc-bin/runc"
	assert_status 0 runc --version
	assert_contains "$OUT" "agentrun version"
	assert_contains "$OUT" "spec: 1.2.0"
	assert_status 0 runc features
	assert_contains "$OUT" '"ociVersionMin"'
	assert_status 0 runc help create
	assert_contains "$OUT" "--console-socket"
}

# The lifecycle as containerd's runc shim drives it: global --root, --log,
# --log-format json; create with --bundle and --pid-file; start; state;
# kill; delete.
t_lifecycle_through_runc_symlink()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/b id pid log=$TEST_TMP/runc-log.json
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","1000"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	local -a G=(--root "$AR_ROOT" --log "$log" --log-format json)
	assert_status 0 runc "${G[@]}" create --bundle "$b" \
		--pid-file "$TEST_TMP/pid" "$id"
	pid=$(cat "$TEST_TMP/pid")
	assert_status 0 runc "${G[@]}" state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" created
	assert_eq "$(jq -r .pid <<<"$OUT")" "$pid"
	assert_eq "$(jq -r .bundle <<<"$OUT")" "$b"
	assert_status 0 runc "${G[@]}" start "$id"
	assert_status 0 runc "${G[@]}" state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" running
	# the process is the bundle's: same as agentrun's own view
	assert_eq "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "sleep 1000 "
	assert_status 0 runc "${G[@]}" list -q
	assert_eq "$OUT" "$id"
	assert_status 0 runc "${G[@]}" kill "$id" KILL
	wait_until 5 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' |
		grep -q '\"status\":\"stopped\"'"
	assert_status 0 runc "${G[@]}" delete "$id"
	assert_status '!0' runc "${G[@]}" state "$id"
	# errors go to the --log file as JSON lines (what the shims parse)
	jq -e -s 'length > 0 and all(.[]; has("msg") and has("level"))' \
		"$log" >/dev/null || fail "--log is not JSON lines: $(cat "$log")"
}

t_run_exit_status_through_runc_symlink()
{
	require_root
	local b=$TEST_TMP/br id
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo via-runc; exit 7"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 7 runc --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" via-runc
	# run deleted it
	assert_status '!0' ar state "$id"
	# delete --force of a detached one, as `docker rm -f` does
	config_set "$b" '.process.args=["sleep","1000"]'
	assert_status 0 runc --root "$AR_ROOT" run --detach --bundle "$b" "$id"
	assert_status 0 runc --root "$AR_ROOT" delete --force "$id"
	assert_status '!0' ar state "$id"
}

# A tool given a runtime path (podman --runtime /path, ctr --runc-binary):
# the symlink's own path works too, and so does a relative invocation.
t_runtime_by_path()
{
	require_root
	local b=$TEST_TMP/bp id
	make_bundle "$b"
	config_set "$b" '.process.args=["echo","by-path"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 "$(runc_dir)/runc" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" by-path
	assert_status 0 sh -c "cd '$b' && '$(runc_dir)/runc' --root '$AR_ROOT' run '$id'"
	assert_eq "$OUT" by-path
}

run_test "runc-compat: \`runc\` symlink: --version, features, help" \
	t_version_and_help
run_test "runc-compat: create/start/state/kill/delete through \`runc\`" \
	t_lifecycle_through_runc_symlink
run_test "runc-compat: run passes the exit status through \`runc\`" \
	t_run_exit_status_through_runc_symlink
run_test "runc-compat: the runtime given by path" t_runtime_by_path
finish
