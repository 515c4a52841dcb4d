#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The container process as the config asks for it, checked from inside:
# args/env/PATH lookup, cwd, user/groups, umask, rlimits, oomScoreAdj,
# noNewPrivileges, pid 1, fds, and the errors of a bad process.
. "$(dirname "$0")/../lib.sh"

# run_sh BUNDLE SCRIPT [EXPECTED_STATUS]: run `sh -c SCRIPT` as root
run_sh()
{
	local b=$1 id
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c",$s]' --arg s "$2"
	defer ar delete --force "$id"
	assert_status "${3:-0}" ar run --bundle "$b" "$id"
}

t_env_and_path()
{
	require_root
	local b=$TEST_TMP/env
	make_bundle "$b"
	config_set "$b" '.process.env=["PATH=/opt/x:/bin","FOO=bar baz","EMPTY="]'
	mkdir -p "$b/rootfs/opt/x"
	printf '#!/bin/sh\necho from-opt "$FOO"\n' >"$b/rootfs/opt/x/mytool"
	chmod 755 "$b/rootfs/opt/x/mytool"
	run_sh "$b" 'env | sort; mytool'
	assert_contains "$OUT" "FOO=bar baz"
	assert_contains "$OUT" "EMPTY="
	assert_contains "$OUT" "PATH=/opt/x:/bin"
	assert_contains "$OUT" "from-opt bar baz"
	assert_not_contains "$OUT" "AGENTRUN=" "the runtime's environment leaked"
	# args[0] is looked up in the container's PATH, not the runtime's
	config_set "$b" '.process.args=["mytool"]'
	local id
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "from-opt bar baz"
}

t_cwd()
{
	require_root
	local b=$TEST_TMP/cwd
	make_bundle "$b"
	mkdir -p "$b/rootfs/work/dir"
	config_set "$b" '.process.cwd="/work/dir"'
	run_sh "$b" 'pwd'
	assert_eq "$OUT" "/work/dir"
	# a missing cwd is made, as runc and crun do
	config_set "$b" '.process.cwd="/does/not/exist"'
	run_sh "$b" 'pwd'
	assert_eq "$OUT" "/does/not/exist"
	# one that cannot be made: an error naming it
	config_set "$b" '.process.cwd="/etc/passwd/dir"'
	run_sh "$b" 'pwd' 1
	assert_contains "$ERR" "process.cwd"
	assert_contains "$ERR" "/etc/passwd"
}

t_user_groups_umask()
{
	require_root
	local b=$TEST_TMP/user
	make_bundle "$b"
	config_set "$b" '.process.user={"uid":1000,"gid":1000,"additionalGids":[5,100],"umask":23}'
	run_sh "$b" 'id -u; id -g; id -G; umask; grep -E "^(Uid|Gid|Groups):" /proc/self/status'
	assert_eq "$(sed -n 1p <<<"$OUT")" 1000
	assert_eq "$(sed -n 2p <<<"$OUT")" 1000
	assert_eq "$(sed -n 3p <<<"$OUT")" "1000 5 100"
	assert_eq "$(sed -n 4p <<<"$OUT")" "0027"
	assert_match "$OUT" "Uid:	1000	1000	1000	1000"
}

# run.oci.keep_original_groups (crun; podman --group-add keep-groups):
# the caller's supplementary groups stay (no setgroups), for run and
# exec; "0" or no annotation: cleared to additionalGids.
t_keep_original_groups()
{
	require_root
	require_cmd setpriv
	local b=$TEST_TMP/keepg id v
	make_bundle "$b"
	for v in 1 0 none; do
		id=$(unique_id)
		config_set "$b" 'del(.annotations["run.oci.keep_original_groups"]) | .process.args=["sh","-c","grep ^Groups: /proc/self/status; sleep 10"]'
		[ "$v" = none ] ||
			config_set "$b" '.annotations["run.oci.keep_original_groups"]=$v' --arg v "$v"
		defer ar delete --force "$id"
		assert_status 0 setpriv --groups 4242,4343 "$AGENTRUN" --root "$AR_ROOT" run -d --bundle "$b" "$id"
		assert_status 0 setpriv --groups 4242,4343 "$AGENTRUN" --root "$AR_ROOT" exec "$id" grep ^Groups: /proc/self/status
		if [ "$v" = 1 ]; then
			assert_match "$OUT" "^Groups:	4242 4343 ?$" "exec with $v"
		else
			assert_match "$OUT" "^Groups:[[:space:]]*$" "exec with $v"
		fi
		assert_status 0 ar delete --force "$id"
	done
	# in the foreground too, with additionalGids ignored as crun does
	id=$(unique_id)
	config_set "$b" '.annotations["run.oci.keep_original_groups"]="1" | .process.user.additionalGids=[5] | .process.args=["grep","^Groups:","/proc/self/status"]'
	defer ar delete --force "$id"
	assert_status 0 setpriv --groups 4242 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_match "$OUT" "^Groups:	4242 ?$"
}

# Rootless: a group of the caller's that the user namespace does not map
# is kept as the overflow gid (it still grants what it grants on the host).
t_rootless_keep_original_groups()
{
	require_cmd setpriv newuidmap newgidmap
	require_subids
	local b=$TEST_TMP/rkeepg id v su sg
	make_bundle_as_test_user "$b" --rootless
	su=$(grep "^$TEST_USER:" /etc/subuid | head -n1 | cut -d: -f2)
	sg=$(grep "^$TEST_USER:" /etc/subgid | head -n1 | cut -d: -f2)
	# newgidmap: setgroups is allowed, so it is cleared without the
	# annotation
	config_set "$b" '.linux.uidMappings=[{"containerID":0,"hostID":$u,"size":1},{"containerID":1,"hostID":$su,"size":1000}] |
		.linux.gidMappings=[{"containerID":0,"hostID":$g,"size":1},{"containerID":1,"hostID":$sg,"size":1000}] |
		.process.args=["grep","^Groups:","/proc/self/status"]' \
		--argjson u "$TEST_UID" --argjson g "$TEST_GID" \
		--argjson su "$su" --argjson sg "$sg"
	mkdir -p "$AR_USER_ROOT"
	chown "$TEST_UID:$TEST_GID" "$AR_USER_ROOT"
	for v in 1 none; do
		id=$(unique_id)
		[ "$v" = none ] &&
			config_set "$b" 'del(.annotations["run.oci.keep_original_groups"])' ||
			config_set "$b" '.annotations["run.oci.keep_original_groups"]="1"'
		defer ar_user delete --force "$id"
		assert_status 0 setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --groups "$TEST_GID,4242" \
			env -i PATH="$PATH" HOME="$TEST_HOME" XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR" \
			"$AGENTRUN" --root "$AR_USER_ROOT" run --bundle "$b" "$id"
		if [ "$v" = 1 ]; then
			assert_match "$OUT" "^Groups:	0 65534 ?$" "rootless, kept"
		else
			assert_match "$OUT" "^Groups:[[:space:]]*$" "rootless, cleared"
		fi
	done
}

t_rlimits()
{
	require_root
	local b=$TEST_TMP/rl
	make_bundle "$b"
	config_set "$b" '.process.rlimits=[{"type":"RLIMIT_NOFILE","soft":123,"hard":456},{"type":"RLIMIT_NPROC","soft":77,"hard":88},{"type":"RLIMIT_CORE","soft":0,"hard":1048576}]'
	run_sh "$b" 'cat /proc/self/limits'
	assert_match "$OUT" "Max open files +123 +456 +files"
	assert_match "$OUT" "Max processes +77 +88 +processes"
	assert_match "$OUT" "Max core file size +0 +1048576"
}

t_rlimit_error()
{
	require_root
	local b=$TEST_TMP/rle
	make_bundle "$b"
	# more than fs.nr_open files is refused by the kernel, even to root
	config_set "$b" '.process.rlimits=[{"type":"RLIMIT_NOFILE","soft":1073741824,"hard":1073741824}]'
	run_sh "$b" 'true' 1
	assert_contains "$ERR" "RLIMIT_NOFILE"
	assert_eq "$(ls -A "$AR_ROOT" | grep -vx .seccomp-cache)" ""
}

t_oom_nnp_pid1()
{
	require_root
	local b=$TEST_TMP/oom
	make_bundle "$b"
	config_set "$b" '.process.oomScoreAdj=345 | .process.noNewPrivileges=true'
	run_sh "$b" 'cat /proc/self/oom_score_adj; grep NoNewPrivs /proc/self/status; echo pid=$$; cat /proc/self/stat | cut -d" " -f4'
	assert_contains "$OUT" "345"
	assert_match "$OUT" "NoNewPrivs:	1"
	assert_contains "$OUT" "pid=1"
	config_set "$b" '.process.noNewPrivileges=false'
	run_sh "$b" 'grep NoNewPrivs /proc/self/status'
	assert_match "$OUT" "NoNewPrivs:	0"
}

t_no_leaked_fds_and_dumpable()
{
	require_root
	local b=$TEST_TMP/fds
	make_bundle "$b"
	# the runtime's fds (state dir, sync socket, log) never reach the
	# container
	run_sh "$b" 'ls /proc/self/fd/ | tr "\n" " "'
	assert_eq "$OUT" "0 1 2 3 " "stdio + ls's own directory fd"
}

t_signals_reset()
{
	require_root
	local b=$TEST_TMP/sig id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.args=["grep","-E","^Sig(Ign|Blk)","/proc/self/status"]'
	defer ar delete --force "$id"
	# whatever the runtime's caller ignored or blocked is not inherited
	assert_status 0 bash -c "trap '' PIPE INT TERM; exec \"\$0\" --root '$AR_ROOT' run --bundle '$b' '$id'" "$AGENTRUN"
	assert_contains "$OUT" "SigIgn:	0000000000000000"
	assert_contains "$OUT" "SigBlk:	0000000000000000"
}

t_keyring()
{
	require_root
	local b=$TEST_TMP/key id id2
	make_bundle "$b"
	[ -r /proc/keys ] || skip "no /proc/keys"
	# the default config masks /proc/keys
	config_set "$b" '.linux.maskedPaths -= ["/proc/keys"]'
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c","cat /proc/keys"]'
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_contains "$OUT" "$id" "session keyring named after the container"
	# a fresh id: the first container's keyring is only garbage-collected
	# asynchronously after its last user exits, so it may still be listed
	id2=$(unique_id)
	defer ar delete --force "$id2"
	assert_status 0 ar run --no-new-keyring --bundle "$b" "$id2"
	assert_not_contains "$OUT" "$id2"
}

t_rootless_process()
{
	local b=$TEST_TMP/rproc id
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c","id -u; umask; cat /proc/self/limits; pwd; grep NoNewPrivs /proc/self/status"] | .process.user.umask=18 | .process.cwd="/tmp" | .process.rlimits=[{"type":"RLIMIT_NOFILE","soft":100,"hard":200}] | .process.noNewPrivileges=true'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_eq "$(sed -n 1p <<<"$OUT")" 0
	assert_eq "$(sed -n 2p <<<"$OUT")" 0022
	assert_match "$OUT" "Max open files +100 +200"
	assert_contains "$OUT" "/tmp"
	assert_match "$OUT" "NoNewPrivs:	1"
}

# t_exec_error_words 0|1: an args[0] that cannot be executed (a directory,
# a file without x) fails run and exec with an error that says so with
# "exec" in it, as crun ("open executable") and runc ("exec: ..."): podman's
# system tests match `Error:.*exec.*permission denied` (030-run "basic
# tests", 160-volumes "noexec"; Debian's podman 4.3.1 against crun).
t_exec_error_words()
{
	local u=$1 b=$TEST_TMP/execerr$1 id arg
	bundle_for "$u" "$b"
	printf 'x\n' >"$b/rootfs/noexec"
	chmod 644 "$b/rootfs/noexec"
	[ "$u" = 1 ] && chown "$TEST_UID:$TEST_GID" "$b/rootfs/noexec"
	for arg in /etc /noexec; do
		id=$(unique_id)
		config_set "$b" '.process.args=[$a]' --arg a "$arg"
		defer arr "$u" delete --force "$id"
		assert_status '!0' arr "$u" run --bundle "$b" "$id"
		assert_match "$ERR" "exec.*\`$arg\`.*Permission denied" "run $arg"
	done
	id=$(unique_id)
	config_set "$b" '.process.args=["sleep","30"]'
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --detach --bundle "$b" "$id"
	for arg in /etc /noexec; do
		assert_status '!0' arr "$u" exec "$id" "$arg"
		assert_match "$ERR" "exec.*\`$arg\`.*Permission denied" "exec $arg"
	done
}

run_test "env, PATH lookup in the container's PATH" t_env_and_path
run_test "cwd, a cwd that does not exist is made" t_cwd
run_test "user: uid, gid, additionalGids, umask" t_user_groups_umask
run_test "run.oci.keep_original_groups keeps the caller's groups" t_keep_original_groups
run_test "rootless: run.oci.keep_original_groups" t_rootless_keep_original_groups
run_test "rlimits as /proc/self/limits shows them" t_rlimits
run_test "a bad rlimit fails naming it, no state left" t_rlimit_error
run_test "oomScoreAdj, noNewPrivileges, pid 1" t_oom_nnp_pid1
run_test "no runtime fd reaches the container" t_no_leaked_fds_and_dumpable
run_test "signal dispositions and mask are reset" t_signals_reset
run_test "a session keyring per container (--no-new-keyring)" t_keyring
run_test "rootless: process settings" t_rootless_process
run_test "an args[0] that cannot be executed: the error says exec" t_exec_error_words 0
run_test "rootless: an args[0] that cannot be executed: the error says exec" t_exec_error_words 1
finish
