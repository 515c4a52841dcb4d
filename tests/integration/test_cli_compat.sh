#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Command-line details tools rely on, as crun and runc behave
# (docs/runc-compat.md): `delete --force` of a container that does not
# exist succeeds silently; options after the container id; crun's
# `--config FILE`; `--version` lists the built-in features in crun's form;
# a seccomp listenerPath nobody accepts fails the creation in bounded time.
# Root and rootless (u = 0 / 1, see bundle_for and arr in tests/lib.sh).
. "$(dirname "$0")/../lib.sh"

delete_force_missing()
{
	local u=$1 id
	id=$(unique_id)
	[ "$u" = 1 ] && ar_user list >/dev/null # creates AR_USER_ROOT
	assert_status 0 arr "$u" delete --force "$id"
	assert_eq "$OUT$ERR" "" "delete --force of a missing container is silent"
	assert_status 0 arr "$u" delete -f "$id"
	# without --force it stays an error
	assert_status 1 arr "$u" delete "$id"
	assert_contains "$ERR" "does not exist"
	# a state root that does not exist at all: nothing to delete either
	assert_status 0 "$AGENTRUN" --root "$TEST_TMP/no-such-root" delete \
		--force "$id"
	# an invalid id is still refused
	assert_status 1 arr "$u" delete --force "../x"
}
t_delete_force_missing() { delete_force_missing 0; }
t_delete_force_missing_rootless() { delete_force_missing 1; }

# create ID --bundle DIR, run ID -b DIR -d: getopt permutes, as in crun
options_after_id()
{
	local u=$1 b=$TEST_TMP/oa$1 id id2
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["sleep","30"]'
	id=$(unique_id)
	id2=$(unique_id)
	defer arr "$u" delete --force "$id"
	defer arr "$u" delete --force "$id2"
	(cd / && assert_status 0 arr "$u" create "$id" --bundle "$b") ||
		exit 1
	assert_status 0 arr "$u" state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" created
	assert_eq "$(jq -r .bundle <<<"$OUT")" "$b"
	assert_status 0 arr "$u" delete "$id" --force
	(cd / && assert_status 0 arr "$u" run "$id2" -b "$b" --detach) ||
		exit 1
	assert_status 0 arr "$u" state "$id2"
	assert_eq "$(jq -r .status <<<"$OUT")" running
}
t_options_after_id() { options_after_id 0; }
t_options_after_id_rootless() { options_after_id 1; }

# --config FILE: a relative FILE is relative to the current directory (crun
# resolves it before it enters the bundle); exactly `config.json` is the
# bundle's; root.path stays relative to the bundle.
config_file()
{
	local u=$1 b=$TEST_TMP/cf$1 alt=$TEST_TMP/alt$1 id
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["echo","from-bundle"]'
	mkdir -p "$alt"
	jq '.process.args=["echo","from-alt"]' "$b/config.json" \
		>"$alt/other.json"
	jq '.process.args=["echo","from-cwd"]' "$b/config.json" \
		>"$alt/config.json"
	[ "$u" = 1 ] && chown -R "$TEST_UID:$TEST_GID" "$alt"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	(cd "$alt" && assert_status 0 arr "$u" run --config other.json \
		--bundle "$b" "$id" && assert_eq "$OUT" from-alt) || exit 1
	(cd "$alt" && assert_status 0 arr "$u" run -f "$alt/other.json" \
		-b "$b" "$id" && assert_eq "$OUT" from-alt) || exit 1
	# `config.json` itself: the bundle's, not the one in the cwd
	(cd "$alt" && assert_status 0 arr "$u" run --config config.json \
		--bundle "$b" "$id" && assert_eq "$OUT" from-bundle) || exit 1
	# create + start: the poststart/exec paths read the same file
	config_set "$b" '.process.args=["sleep","30"]'
	jq '.process.args=["sleep","31"]' "$b/config.json" >"$alt/other.json"
	(cd "$alt" && assert_status 0 arr "$u" create --config other.json \
		--bundle "$b" "$id") || exit 1
	assert_status 0 arr "$u" start "$id"
	assert_status 0 arr "$u" exec "$id" sh -c "tr '\\0' ' ' </proc/1/cmdline"
	assert_eq "$OUT" "sleep 31 "
	assert_status 0 arr "$u" delete --force "$id"
	# a missing file: a clear error naming it
	(cd "$alt" && assert_status 1 arr "$u" run --config nope.json \
		--bundle "$b" "$id" && assert_contains "$ERR" "nope.json") ||
		exit 1
}
t_config_file() { config_file 0; }
t_config_file_rootless() { config_file 1; }

t_version_features()
{
	local feats
	assert_status 0 "$AGENTRUN" --version
	assert_match "$(head -1 <<<"$OUT")" "^agentrun version [0-9]"
	assert_contains "$OUT" $'\ncommit: '
	assert_contains "$OUT" $'\nrundir: '
	assert_contains "$OUT" $'\nspec: '
	feats=$(tail -1 <<<"$OUT")
	# crun's form: only "+NAME" words, each feature really there
	assert_match "$feats" '^\+[A-Z_0-9]+( \+[A-Z_0-9]+)*$'
	assert_contains " $feats " " +CAP "
	assert_contains " $feats " " +SECCOMP "
	assert_contains " $feats " " +EBPF " "device rules as an eBPF program"
	assert_contains " $feats " " +SYSTEMD " "the systemd cgroup manager (sd-bus)"
	# +APPARMOR where profiles apply: AppArmor enabled (test_apparmor,
	# test_apparmor_vm)
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
		assert_contains " $feats " " +APPARMOR "
	else
		assert_not_contains "$feats" "+APPARMOR" "AppArmor is not enabled here"
	fi
	assert_status 0 "$AGENTRUN" -v
	assert_eq "$(tail -1 <<<"$OUT")" "$feats"
}

# A listener that never accepts (its backlog is full): the creation fails
# with a clear error after a bounded time instead of hanging.
listener_never_accepts()
{
	local u=$1 b=$TEST_TMP/ln$1 id sock=$TEST_TMP/stuck$1.sock lpid t0 t1
	require_cmd python3 timeout
	bundle_for "$u" "$b"
	cat >"$TEST_TMP/stuck.py" <<'EOF'
import os, socket, sys, time
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(0)
# fill the backlog: the next connect(2) blocks
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect(path)
open(path + ".ready", "w").close()
time.sleep(120)
EOF
	python3 "$TEST_TMP/stuck.py" "$sock" >/dev/null 2>&1 &
	lpid=$!
	defer kill "$lpid"
	wait_until 10 test -e "$sock.ready"
	config_set "$b" '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW",
		"listenerPath": $s,
		"syscalls": [{"names":["getpriority"],"action":"SCMP_ACT_NOTIFY"}]}
		| .process.args = ["true"]' --arg s "$sock"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	[ "$u" = 1 ] && ar_user list >/dev/null
	t0=$(date +%s)
	if [ "$u" = 1 ]; then
		assert_status 1 as_test_user timeout 60 "$AGENTRUN" \
			--root "$AR_USER_ROOT" run --bundle "$b" "$id"
	else
		assert_status 1 timeout 60 "$AGENTRUN" --root "$AR_ROOT" run \
			--bundle "$b" "$id"
	fi
	t1=$(date +%s)
	assert_contains "$ERR" "listenerPath"
	assert_contains "$ERR" "nobody accepted"
	[ $((t1 - t0)) -lt 30 ] || fail "took $((t1 - t0)) s"
	# nothing left behind
	assert_status 1 arr "$u" state "$id"
}
t_listener_never_accepts() { listener_never_accepts 0; }
t_listener_never_accepts_rootless() { listener_never_accepts 1; }

# The container process leads a session of its own, as crun makes it:
# out of the caller's process group and controlling terminal. Its session
# id, seen from its pid namespace, is its own pid 1; from the host, its
# host pid.
session_leader()
{
	local u=$1 b=$TEST_TMP/sl$1 id pid
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["sh","-c","cut -d\\  -f6 /proc/1/stat"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run "$id" --bundle "$b"
	assert_eq "$OUT" 1
	config_set "$b" '.process.args=["sleep","30"]'
	assert_status 0 arr "$u" run -d "$id" --bundle "$b"
	pid=$(arr "$u" state "$id" | jq -r .pid)
	assert_eq "$(ps -o sid= -p "$pid" | tr -d ' ')" "$pid"
	assert_ne "$(ps -o pgid= -p "$pid" | tr -d ' ')" "$(ps -o pgid= -p $$ | tr -d ' ')"
}
t_session_leader() { session_leader 0; }
t_session_leader_rootless() { session_leader 1; }

# crun's delete --regex: every container whose id the ERE matches
# (unanchored), running ones with --force; a running one without --force
# is a warning and exit 1, the others still deleted; a bad ERE is an
# error; no match: exit 0.
# regex_containers U DIR STOPPED ID...: a sleeping container for each ID
# (user U: 0 root, 1 rootless; the bundle in DIR), deleted when the test
# ends; STOPPED (one of them) killed and waited for
regex_containers()
{
	local u=$1 b=$2 stopped=$3 id
	shift 3
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["sleep","60"]'
	for id in "$@"; do
		defer arr "$u" delete --force "$id"
		assert_status 0 arr "$u" run -d --bundle "$b" "$id"
	done
	assert_status 0 arr "$u" kill "$stopped" KILL
	wait_until 10 status_is "$u" "$stopped" stopped
}

delete_regex()
{
	local u=$1 p=rx$RANDOM$1
	regex_containers "$u" "$TEST_TMP/dr$u" "$p-a1" "$p-a1" "$p-a2" "$p-b1" "other-$p"
	# a2 is running: refused without --force, a1 is deleted anyway
	assert_status 1 arr "$u" delete --regex "^$p-a[0-9]\$"
	assert_contains "$ERR" "$p-a2"
	assert_contains "$ERR" "1 of 2 matching containers not deleted"
	assert_status 1 arr "$u" state "$p-a1"
	assert_status 0 arr "$u" state "$p-a2"
	# unanchored, as crun: "$p-" matches a2, b1 and other-$p
	assert_status 0 arr "$u" delete --force --regex "$p"
	assert_eq "$OUT$ERR" ""
	for id in "$p-a2" "$p-b1" "other-$p"; do
		assert_status 1 arr "$u" state "$id"
	done
	assert_status 0 arr "$u" delete -r "^nothing-matches-$p\$"
	assert_status 1 arr "$u" delete --regex "($p"
	assert_contains "$ERR" "invalid regular expression"
}
t_delete_regex() { delete_regex 0; }
t_delete_regex_rootless() { delete_regex 1; }

# crun's kill --regex: every container whose id the ERE matches gets the
# signal (--all: each of its processes); a stopped one is a warning and
# exit 1, the others still signalled; a bad ERE is an error; no match:
# exit 0.
kill_regex()
{
	local u=$1 p=kx$RANDOM$1
	regex_containers "$u" "$TEST_TMP/kr$u" "$p-a3" "$p-a1" "$p-a2" "$p-a3" "$p-b1"
	# a1 and a2 get it, a3 is stopped: a warning, exit 1; b1 untouched
	assert_status 1 arr "$u" kill --regex "^$p-a[0-9]\$" KILL
	assert_contains "$ERR" "$p-a3"
	assert_contains "$ERR" "1 of 3 matching containers not signalled"
	wait_until 10 status_is "$u" "$p-a1" stopped
	wait_until 10 status_is "$u" "$p-a2" stopped
	assert_eq "$(arr "$u" state "$p-b1" | jq -r .status)" running
	assert_status 0 arr "$u" kill -a -r "$p-b" KILL
	wait_until 10 status_is "$u" "$p-b1" stopped
	assert_status 0 arr "$u" kill -r "^nothing-matches-$p\$" KILL
	assert_status 1 arr "$u" kill --regex "($p" KILL
	assert_contains "$ERR" "kill --regex: invalid regular expression"
}
t_kill_regex() { kill_regex 0; }
t_kill_regex_rootless() { kill_regex 1; }

# crun's run.oci.seccomp_fail_unknown_syscall: a syscall name libseccomp
# does not know fails the creation (naming it) instead of being skipped;
# "0" or no annotation: skipped. Also after the profile was cached.
seccomp_fail_unknown()
{
	local u=$1 b=$TEST_TMP/sfu$1 id v
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["true"] | .linux.seccomp={"defaultAction":"SCMP_ACT_ALLOW","syscalls":[{"names":["acct"],"action":"SCMP_ACT_ERRNO"},{"names":["getpid","no_such_syscall_ar"],"action":"SCMP_ACT_ERRNO"}]}'
	for v in none 0 1; do
		[ "$v" = none ] ||
			config_set "$b" '.annotations["run.oci.seccomp_fail_unknown_syscall"]=$v' --arg v "$v"
		id=$(unique_id)
		defer arr "$u" delete --force "$id"
		if [ "$v" = 1 ]; then
			assert_status 1 arr "$u" run --bundle "$b" "$id"
			assert_contains "$ERR" 'linux.seccomp.syscalls[1].names[1]: unknown syscall `no_such_syscall_ar`'
			assert_contains "$ERR" "run.oci.seccomp_fail_unknown_syscall"
			assert_status 1 arr "$u" state "$id"
			assert_status 1 arr "$u" create --bundle "$b" "$id"
			assert_contains "$ERR" "no_such_syscall_ar"
		else
			assert_status 0 arr "$u" run --bundle "$b" "$id"
		fi
	done
}
t_seccomp_fail_unknown() { seccomp_fail_unknown 0; }
t_seccomp_fail_unknown_rootless() { seccomp_fail_unknown 1; }

run_test "the container process leads its own session" t_session_leader
run_test "rootless: the container process leads its own session" \
	t_session_leader_rootless
run_test "delete --force of a missing container: exit 0, silent" \
	t_delete_force_missing
run_test "rootless: delete --force of a missing container: exit 0, silent" \
	t_delete_force_missing_rootless
run_test "options after the id: create ID --bundle DIR" t_options_after_id
run_test "rootless: options after the id" t_options_after_id_rootless
run_test "--config FILE (crun): relative to the cwd, config.json the bundle's" \
	t_config_file
run_test "rootless: --config FILE" t_config_file_rootless
run_test "--version: features in crun's +NAME form" t_version_features
run_test "seccomp listenerPath nobody accepts: an error, no hang" \
	t_listener_never_accepts
run_test "rootless: seccomp listenerPath nobody accepts: an error, no hang" \
	t_listener_never_accepts_rootless
run_test "delete --regex (crun)" t_delete_regex
run_test "rootless: delete --regex (crun)" t_delete_regex_rootless
run_test "kill --regex (crun)" t_kill_regex
run_test "rootless: kill --regex (crun)" t_kill_regex_rootless
run_test "run.oci.seccomp_fail_unknown_syscall fails on an unknown name" \
	t_seccomp_fail_unknown
run_test "rootless: run.oci.seccomp_fail_unknown_syscall" \
	t_seccomp_fail_unknown_rootless
finish
