#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# OCI hooks through the real binary: every stage runs at its moment, in the
# namespace the runtime-spec names, with the state JSON on stdin (status,
# pid, compact, '/' unescaped); failures of prestart/createRuntime/
# createContainer/startContainer fail the operation and leave nothing
# behind, poststart/poststop failures only warn and the remaining hooks
# run; createContainer sees the container's mounts; the state on stdin is
# what runtime-tools' hooks_stdin checks; timeouts are enforced.
. "$(dirname "$0")/../lib.sh"

STAGES="prestart createRuntime createContainer startContainer poststart poststop"

# Each hook writes its stdin, its mount namespace and /proc/uptime to
# $D/<stage>, and appends <stage> to $D/order. With FAIL=<stage> in its
# environment that stage exits 3.
HOOK_SCRIPT='S=$1
{ cat; echo; readlink /proc/self/ns/mnt; cut -d" " -f1 /proc/uptime; } >"$D/$S"
echo "$S" >>"$D/order"
if [ "${FAIL:-}" = "$S" ]; then echo "hook $S fails" >&2; exit 3; fi
exit 0'

# setup_hooks BUNDLE OUTDIR [FAIL_STAGE]: every stage gets the recording
# hook; the container sees OUTDIR at /out (for startContainer, which runs
# inside the container's root).
setup_hooks()
{
	local b=$1 d=$2 fail=${3:-}
	mkdir -p "$d"
	chmod 0777 "$d"
	config_set "$b" '
	  def hook($s; $dir): {path: "/bin/sh",
	    args: ["sh", "-c", $script, "hook", $s],
	    env: (["PATH=/usr/sbin:/usr/bin:/sbin:/bin", "D=" + $dir]
	          + (if $fail != "" then ["FAIL=" + $fail] else [] end))};
	  .root.readonly = false
	  | .mounts += [{destination: "/out", type: "bind", source: $d,
	                 options: ["rbind", "rw"]}]
	  | .hooks = {
	      prestart: [hook("prestart"; $d)],
	      createRuntime: [hook("createRuntime"; $d)],
	      createContainer: [hook("createContainer"; $d)],
	      startContainer: [hook("startContainer"; "/out")],
	      poststart: [hook("poststart"; $d)],
	      poststop: [hook("poststop"; $d)]}' \
		--arg script "$HOOK_SCRIPT" --arg d "$d" --arg fail "$fail"
}

# hook_state DIR STAGE: the JSON the stage read on stdin
hook_state()
{
	head -n1 "$1/$2"
}

hook_mntns()
{
	sed -n 2p "$1/$2"
}

assert_no_state()
{
	local left
	left=$(ls "$AR_ROOT" 2>/dev/null || true)
	assert_eq "$left" "" "stale state left behind"
}

t_all_stages_create_start_delete()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/b1 d=$TEST_TMP/out1 id pid host_mnt ctr_mnt s
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","1000"]'
	setup_hooks "$b" "$d"
	id=$(unique_id)
	defer ar delete --force "$id"

	assert_status 0 ar create --bundle "$b" "$id"
	# create runs prestart, createRuntime, createContainer, in order
	assert_eq "$(tr '\n' ' ' <"$d/order")" \
		"prestart createRuntime createContainer "
	pid=$(ar state "$id" | jq -r .pid)
	host_mnt=$(readlink /proc/self/ns/mnt)
	ctr_mnt=$(readlink "/proc/$pid/ns/mnt")
	assert_ne "$host_mnt" "$ctr_mnt"
	for s in prestart createRuntime createContainer; do
		# "created", as crun says and runtime-tools' hooks_stdin wants
		assert_eq "$(hook_state "$d" $s | jq -r .status)" created \
			"$s status"
		assert_eq "$(hook_state "$d" $s | jq -r .pid)" "$pid" \
			"$s pid"
		assert_eq "$(hook_state "$d" $s | jq -r .id)" "$id"
		assert_eq "$(hook_state "$d" $s | jq -r .bundle)" "$b"
		# compact, '/' not escaped
		assert_contains "$(hook_state "$d" $s)" "\"bundle\":\"$b\""
	done
	# runtime namespace for prestart/createRuntime, the container's for
	# createContainer
	assert_eq "$(hook_mntns "$d" prestart)" "$host_mnt"
	assert_eq "$(hook_mntns "$d" createRuntime)" "$host_mnt"
	assert_eq "$(hook_mntns "$d" createContainer)" "$ctr_mnt"
	[ ! -e "$d/startContainer" ] || fail "startContainer ran at create"

	assert_status 0 ar start "$id"
	wait_until 5 test -s "$d/startContainer"
	assert_eq "$(hook_state "$d" startContainer | jq -r .status)" created
	assert_eq "$(hook_state "$d" startContainer | jq -r .pid)" "$pid"
	assert_eq "$(hook_mntns "$d" startContainer)" "$ctr_mnt"
	assert_eq "$(hook_state "$d" poststart | jq -r .status)" running
	assert_eq "$(hook_state "$d" poststart | jq -r .pid)" "$pid"
	assert_eq "$(hook_mntns "$d" poststart)" "$host_mnt"
	[ ! -e "$d/poststop" ] || fail "poststop ran before delete"

	assert_status 0 ar kill "$id" 9
	wait_until 5 sh -c "[ \"\$($AGENTRUN --root $AR_ROOT state $id | jq -r .status)\" = stopped ]"
	assert_status 0 ar delete "$id"
	assert_eq "$(hook_state "$d" poststop | jq -r .status)" stopped
	assert_eq "$(hook_state "$d" poststop | jq -r 'has("pid")')" false
	assert_eq "$(hook_mntns "$d" poststop)" "$host_mnt"
	assert_eq "$(tail -n1 "$d/order")" poststop
	assert_eq "$(wc -l <"$d/order" | tr -d ' ')" 6
	# timestamps are monotonic in stage order (startContainer and
	# poststart run concurrently: only compare each to create's stages)
	local t_pre t_cr t_cc t_sc t_ps t_stop
	t_pre=$(sed -n 3p "$d/prestart")
	t_cr=$(sed -n 3p "$d/createRuntime")
	t_cc=$(sed -n 3p "$d/createContainer")
	t_sc=$(sed -n 3p "$d/startContainer")
	t_ps=$(sed -n 3p "$d/poststart")
	t_stop=$(sed -n 3p "$d/poststop")
	awk -v a="$t_pre" -v b="$t_cr" -v c="$t_cc" -v s="$t_sc" \
		-v p="$t_ps" -v e="$t_stop" \
		'BEGIN { exit !(a <= b && b <= c && c <= s && c <= p && s <= e && p <= e) }' ||
		fail "timestamps out of order: $t_pre $t_cr $t_cc $t_sc $t_ps $t_stop"
}

t_run_foreground_all_stages()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/b2 d=$TEST_TMP/out2 id
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo main >>/out/order; exit 4"]'
	setup_hooks "$b" "$d"
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 4 ar run --bundle "$b" "$id"
	# startContainer strictly before the user's program; poststop last
	assert_eq "$(sed -n 1,4p "$d/order" | tr '\n' ' ')" \
		"prestart createRuntime createContainer startContainer "
	assert_contains "$(cat "$d/order")" main
	assert_contains "$(cat "$d/order")" poststart
	assert_eq "$(tail -n1 "$d/order")" poststop
	assert_eq "$(hook_state "$d" poststop | jq -r .status)" stopped
	assert_no_state
}

# fail_stage STAGE: a failing hook of STAGE fails create/run, names the hook,
# leaves no state and no process behind.
t_failing_stage()
{
	require_root
	require_cmd jq
	local stage=$1 b=$TEST_TMP/bf-$1 d=$TEST_TMP/outf-$1 id
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo main >>/out/order"]'
	setup_hooks "$b" "$d" "$stage"
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status '!0' ar run --bundle "$b" "$id"
	assert_contains "$ERR" "hooks.$stage[0]"
	assert_not_contains "$(cat "$d/order")" main
	assert_not_contains "$(cat "$d/order")" poststart
	assert_no_state
	# nothing left running from the container
	if pgrep -f "hook-never-$id" >/dev/null; then
		fail "container process survived"
	fi
}

t_failing_create_runtime_create()
{
	require_root
	local b=$TEST_TMP/bfc d=$TEST_TMP/outfc id
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","1000"]'
	setup_hooks "$b" "$d" createRuntime
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status '!0' ar create --bundle "$b" "$id"
	assert_contains "$ERR" "hooks.createRuntime[0]"
	assert_not_contains "$(cat "$d/order")" createContainer
	assert_no_state
}

# create succeeds, the failing startContainer hook fails `start` with the
# hook's error; the user's program and poststart never run and the
# container is stopped (delete removes it, poststop runs).
t_failing_start_container_start()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/bfs d=$TEST_TMP/outfs id pid
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo main >>/out/order; sleep 1000"]'
	setup_hooks "$b" "$d" startContainer
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	pid=$(ar state "$id" | jq -r .pid)
	assert_status '!0' ar start "$id"
	assert_contains "$ERR" "hooks.startContainer[0]"
	assert_contains "$ERR" "status 3"
	assert_not_contains "$(cat "$d/order")" main
	assert_not_contains "$(cat "$d/order")" poststart
	[ ! -e "/proc/$pid" ] || [ "$(cut -d' ' -f3 "/proc/$pid/stat")" = Z ] ||
		fail "container process $pid still running"
	assert_eq "$(ar state "$id" | jq -r .status)" stopped
	assert_status 0 ar delete "$id"
	assert_eq "$(tail -n1 "$d/order")" poststop
	assert_no_state
}

t_poststart_poststop_only_warn()
{
	require_root
	local b=$TEST_TMP/bw d=$TEST_TMP/outw id
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","1000"]'
	setup_hooks "$b" "$d" poststart
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	assert_status 0 ar start "$id"
	assert_contains "$ERR" "hooks.poststart[0]"
	assert_eq "$(ar state "$id" | jq -r .status)" running
	assert_status 0 ar delete --force "$id"

	setup_hooks "$b" "$d" poststop
	assert_status 0 ar run --detach --bundle "$b" "$id"
	assert_status 0 ar delete --force "$id"
	assert_contains "$ERR" "hooks.poststop[0]"
	assert_no_state
}

t_timeout()
{
	require_root
	local b=$TEST_TMP/bt id start end
	make_bundle "$b"
	config_set "$b" '.process.args=["true"]
	  | .hooks.createRuntime = [{path: "/bin/sh",
	      args: ["sh", "-c", "sleep 30"], timeout: 1}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	start=$(date +%s)
	assert_status '!0' ar run --bundle "$b" "$id"
	end=$(date +%s)
	assert_contains "$ERR" "hooks.createRuntime[0]"
	[ $((end - start)) -lt 10 ] || fail "timeout not enforced"
	assert_no_state
}

t_relative_path_rejected()
{
	require_root
	local b=$TEST_TMP/br id
	make_bundle "$b"
	config_set "$b" '.process.args=["true"]
	  | .hooks.prestart = [{path: "sh"}]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status '!0' ar run --bundle "$b" "$id"
	assert_contains "$ERR" "hooks.prestart[0]"
}

# Two hooks per stage, the first fails: for poststart and poststop the
# second still runs and the operation succeeds (runtime-spec: warn and
# continue; runtime-tools poststart_fail, poststop_fail).
keep_going()
{
	local u=$1 b=$TEST_TMP/bk$1 d=$TEST_TMP/outk$1 id
	bundle_for "$u" "$b"
	mkdir -p "$d"
	chmod 0777 "$d"
	config_set "$b" '
	  def h($s; $rc): {path: "/bin/sh",
	    args: ["sh", "-c", "echo " + $s + " >>" + $d + "/order; exit " + $rc]};
	  .process.args = ["sleep", "1000"]
	  | .hooks = {poststart: [h("poststart-1"; "3"), h("poststart-2"; "0")],
	              poststop: [h("poststop-1"; "4"), h("poststop-2"; "0")]}' \
		--arg d "$d"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" create --bundle "$b" "$id"
	assert_status 0 arr "$u" start "$id"
	assert_contains "$ERR" "hooks.poststart[0]"
	assert_eq "$(arr "$u" state "$id" | jq -r .status)" running
	assert_status 0 arr "$u" delete --force "$id"
	assert_contains "$ERR" "hooks.poststop[0]"
	assert_eq "$(tr '\n' ' ' <"$d/order")" \
		"poststart-1 poststart-2 poststop-1 poststop-2 "
	# run in the foreground: the same
	: >"$d/order"
	config_set "$b" '.process.args = ["true"]'
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$(tr '\n' ' ' <"$d/order")" \
		"poststart-1 poststart-2 poststop-1 poststop-2 "
}
t_keep_going() { keep_going 0; }
t_keep_going_rootless() { keep_going 1; }

# What runtime-tools' validation/hooks_stdin checks: prestart, poststart
# and poststop hooks (the rootfs's own sh, by host path) write their stdin
# into the rootfs; id, bundle, the pid `state` gave after create, the
# annotations exactly, status "created" / "running" / non-empty.
hooks_stdin()
{
	local u=$1 b=$TEST_TMP/bs$1 id pid s
	bundle_for "$u" "$b"
	config_set "$b" '
	  def h($s): {path: ($b + "/rootfs/bin/sh"),
	    args: ["sh", "-c", "cat > " + $b + "/rootfs/" + $s], timeout: 1};
	  .process.args = ["true"]
	  | .annotations = {"org.opencontainers.runtime-tools": "hook stdin test"}
	  | .hooks = {prestart: [h("prestart")], poststart: [h("poststart")],
	              poststop: [h("poststop")]}' --arg b "$b"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" create --bundle "$b" "$id"
	pid=$(arr "$u" state "$id" | jq -r .pid)
	assert_status 0 arr "$u" start "$id"
	# (as the state directory's owner: another user's is refused)
	if [ "$u" = 1 ]; then
		wait_until 10 as_test_user sh -c "'$AGENTRUN' --root '$AR_USER_ROOT' state '$id' | grep -q stopped"
	else
		wait_until 10 sh -c "'$AGENTRUN' --root '$AR_ROOT' state '$id' | grep -q stopped"
	fi
	assert_status 0 arr "$u" delete "$id"
	for s in prestart poststart poststop; do
		local j
		j=$(cat "$b/rootfs/$s")
		echo "$s: $j"
		assert_eq "$(jq -r .id <<<"$j")" "$id" "$s id"
		assert_eq "$(jq -r .bundle <<<"$j")" "$b" "$s bundle"
		assert_eq "$(jq -c .annotations <<<"$j")" \
			'{"org.opencontainers.runtime-tools":"hook stdin test"}' \
			"$s annotations"
		[ "$s" = poststop ] ||
			assert_eq "$(jq -r .pid <<<"$j")" "$pid" "$s pid"
	done
	assert_eq "$(jq -r .status "$b/rootfs/prestart")" created
	assert_eq "$(jq -r .status "$b/rootfs/poststart")" running
	assert_ne "$(jq -r '.status // ""' "$b/rootfs/poststop")" ""
}
t_hooks_stdin() { hooks_stdin 0; }
t_hooks_stdin_rootless() { hooks_stdin 1; }

# createContainer runs after the container's mounts, before pivot_root:
# through the rootfs's host path it sees a tmpfs of `mounts` and a bind.
create_container_mounts()
{
	local u=$1 b=$TEST_TMP/bm$1 d=$TEST_TMP/outm$1 id
	bundle_for "$u" "$b"
	mkdir -p "$d" "$TEST_TMP/src$1"
	echo from-bind >"$TEST_TMP/src$1/f"
	chmod -R a+rX "$TEST_TMP/src$1"
	chmod 0777 "$d"
	config_set "$b" '
	  .process.args = ["true"]
	  | .mounts += [{destination: "/hookcheck", type: "tmpfs",
	                 source: "tmpfs", options: ["nosuid"]},
	                {destination: "/bound", type: "bind", source: $src,
	                 options: ["rbind", "ro"]}]
	  | .hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c",
	      "stat -f -c %T " + $r + "/hookcheck >" + $d + "/fs; cat " + $r + "/bound/f >" + $d + "/bind"]}]' \
		--arg r "$b/rootfs" --arg d "$d" --arg src "$TEST_TMP/src$1"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$(cat "$d/fs")" tmpfs "createContainer sees the tmpfs mount"
	assert_eq "$(cat "$d/bind")" from-bind "createContainer sees the bind"
}
t_create_container_mounts() { create_container_mounts 0; }

# crun's run.oci.hooks.stdout / run.oci.hooks.stderr: every stage's
# output (the container process's createContainer and startContainer
# too) appended to those files, none on the runtime's stderr; a file that
# cannot be opened fails create, naming the annotation.
hooks_output()
{
	local u=$1 b=$TEST_TMP/bo$1 d=$TEST_TMP/ho$1 id s
	bundle_for "$u" "$b"
	mkdir -p "$d"
	[ "$u" = 0 ] || chown "$TEST_UID:$TEST_GID" "$d"
	echo before >"$d/out"
	[ "$u" = 0 ] || chown "$TEST_UID:$TEST_GID" "$d/out"
	config_set "$b" '
	  def h($s): {path: "/bin/sh",
	    args: ["sh", "-c", "echo out:" + $s + "; echo err:" + $s + " >&2"]};
	  .process.args = ["true"]
	  | .annotations["run.oci.hooks.stdout"] = ($d + "/out")
	  | .annotations["run.oci.hooks.stderr"] = ($d + "/err")
	  | .hooks = {prestart: [h("prestart")], createRuntime: [h("createRuntime")],
	      createContainer: [h("createContainer")],
	      startContainer: [h("startContainer")],
	      poststart: [h("poststart")], poststop: [h("poststop")]}' --arg d "$d"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" create --bundle "$b" "$id"
	local errs=$ERR
	assert_status 0 arr "$u" start "$id"
	errs+=$ERR
	wait_until 10 status_is "$u" "$id" stopped
	assert_status 0 arr "$u" delete "$id"
	errs+=$ERR
	assert_eq "$(tr '\n' ' ' <"$d/out")" "before out:prestart out:createRuntime out:createContainer out:startContainer out:poststart out:poststop " "stdout file"
	assert_eq "$(tr '\n' ' ' <"$d/err")" "err:prestart err:createRuntime err:createContainer err:startContainer err:poststart err:poststop " "stderr file"
	assert_not_contains "$errs" "out:"
	assert_not_contains "$errs" "err:"
	[ "$u" = 0 ] || assert_file_owner "$d/err" "$TEST_UID:$TEST_GID"
	assert_eq "$(stat -c %a "$d/err")" 600
	# run: the same files, appended to
	id=$(unique_id)
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_not_contains "$ERR" "err:"
	assert_eq "$(grep -c . "$d/err")" 12
	# a file that cannot be opened
	config_set "$b" '.annotations["run.oci.hooks.stdout"] = $p' --arg p "$d/missing/out"
	id=$(unique_id)
	assert_status '!0' arr "$u" create --bundle "$b" "$id"
	assert_contains "$ERR" 'annotations["run.oci.hooks.stdout"]'
	assert_contains "$ERR" "$d/missing/out"
	assert_status '!0' arr "$u" state "$id"
}
t_hooks_output() { hooks_output 0; }

# A hook without `env` gets the runtime's environment (crun: environ;
# crun's test_hooks.py test-hook-env-inherit checks PATH); one with `env`
# gets exactly that.
hooks_env_inherit()
{
	local u=$1 b=$TEST_TMP/be$1 d=$TEST_TMP/he$1 id want
	bundle_for "$u" "$b"
	mkdir -p "$d"
	[ "$u" = 0 ] || chown "$TEST_UID:$TEST_GID" "$d"
	config_set "$b" '
	  .process.args = ["true"]
	  | .hooks = {prestart: [
	      {path: "/bin/sh", args: ["sh", "-c", "echo \"$PATH|${HOME-unset}\" >" + $d + "/inherit"]},
	      {path: "/bin/sh", args: ["sh", "-c", "echo \"$PATH|${HOME-unset}\" >" + $d + "/own"],
	       env: ["PATH=/hook/path"]}]}' --arg d "$d"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	# (sh sets a PATH of its own when it has none: HOME tells)
	if [ "$u" = 0 ]; then
		want="$PATH|/hook/home"
		HOME=/hook/home assert_status 0 arr "$u" run --bundle "$b" "$id"
	else
		want="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin|$TEST_HOME"
		assert_status 0 arr "$u" run --bundle "$b" "$id"
	fi
	assert_eq "$(cat "$d/inherit")" "$want" "hook without env"
	assert_eq "$(cat "$d/own")" "/hook/path|unset" "hook with env"
}
t_hooks_env_inherit() { hooks_env_inherit 0; }
t_hooks_env_inherit_rootless() { hooks_env_inherit 1; }
t_hooks_output_rootless() { hooks_output 1; }
t_create_container_mounts_rootless() { create_container_mounts 1; }

run_test "hooks: every stage at its moment and namespace (create/start/delete)" \
	t_all_stages_create_start_delete
run_test "hooks: a hook without env inherits the runtime's (crun)" t_hooks_env_inherit
run_test "hooks: a hook without env inherits the runtime's, rootless" \
	t_hooks_env_inherit_rootless
run_test "hooks: run in the foreground runs all stages, poststop last" \
	t_run_foreground_all_stages
run_test "hooks: failing prestart fails run" t_failing_stage prestart
run_test "hooks: failing createRuntime fails run" t_failing_stage createRuntime
run_test "hooks: failing createContainer fails run" \
	t_failing_stage createContainer
run_test "hooks: failing startContainer fails run" \
	t_failing_stage startContainer
run_test "hooks: failing createRuntime fails create" \
	t_failing_create_runtime_create
run_test "hooks: failing startContainer fails start, container stopped" \
	t_failing_start_container_start
run_test "hooks: poststart/poststop failures only warn" \
	t_poststart_poststop_only_warn
run_test "hooks: timeout kills the hook and fails the operation" t_timeout
run_test "hooks: a relative hook path is an error" t_relative_path_rejected
run_test "hooks: after a failing poststart/poststop hook the rest run" \
	t_keep_going
run_test "hooks rootless: after a failing poststart/poststop hook the rest run" \
	t_keep_going_rootless
run_test "hooks: the state on stdin as runtime-tools' hooks_stdin checks" \
	t_hooks_stdin
run_test "hooks rootless: the state on stdin as hooks_stdin checks" \
	t_hooks_stdin_rootless
run_test "hooks: run.oci.hooks.stdout/stderr take every stage's output" t_hooks_output
run_test "hooks rootless: run.oci.hooks.stdout/stderr" t_hooks_output_rootless
run_test "hooks: createContainer sees the container's mounts" \
	t_create_container_mounts
run_test "hooks rootless: createContainer sees the container's mounts" \
	t_create_container_mounts_rootless
finish
