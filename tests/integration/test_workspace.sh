#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The workspace annotation (hooks/workspace.c):
# run.agentrun.workspace=HOSTPATH[:CTRPATH] binds HOSTPATH read-write so
# that what the container's process creates there belongs to HOSTPATH's
# owner on the host (plain bind when the ids already match, an idmapped
# bind made by the runtime as root otherwise), with nothing re-owned.
# Plain bundles as root (with and without a user namespace) and rootless,
# podman as root and rootless (--annotation), and bad values.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../podman-lib.sh
. "$(dirname "$0")/../podman-lib.sh"

KEY=run.agentrun.workspace

# new_workspace DIR UID:GID: a workspace with two files that are not the
# owner's (a root one, mode 0600, and one of uid 4242), to prove that
# nothing is re-owned.
new_workspace()
{
	mkdir -p "$1"
	echo root-file >"$1/root-file"
	chmod 0600 "$1/root-file"
	echo other >"$1/other-file"
	chown 4242:4242 "$1/other-file"
	chown "$2" "$1"
	chmod 0755 "$1"
}

# The files a run made (f: umask 022, p: umask 077, d: a directory) are
# the owner's with the modes the process chose; the others are untouched.
check_workspace()
{
	local ws=$1 owner=$2
	assert_file_owner "$ws/f" "$owner"
	assert_file_owner "$ws/d" "$owner"
	assert_file_owner "$ws/d/g" "$owner"
	assert_file_owner "$ws/p" "$owner"
	assert_eq "$(stat -c %a "$ws/f")" 644 "mode of f"
	assert_eq "$(stat -c %a "$ws/d")" 755 "mode of d"
	assert_eq "$(stat -c %a "$ws/p")" 600 "mode of p"
	assert_eq "$(cat "$ws/f")" from-container
	assert_file_owner "$ws/root-file" 0:0
	assert_eq "$(stat -c %a "$ws/root-file")" 600 "mode of root-file"
	assert_file_owner "$ws/other-file" 4242:4242
	assert_file_owner "$ws" "$owner"
}

# What the container runs: write the files, print the mount's options.
WRITE='echo from-container >/work/f && mkdir /work/d && touch /work/d/g &&
(umask 077 && touch /work/p) && ls -n /work/f &&
grep " /work " /proc/self/mountinfo'

ws_bundle()
{
	local b=$1 ws=$2
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c",$w] | .annotations[$k]=$v' \
		--arg w "$WRITE" --arg k "$KEY" --arg v "$ws:/work"
}

t_root_other_owner()
{
	require_root
	ensure_test_user
	local b=$TEST_TMP/b1 ws=$TEST_TMP/ws1 id
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	ws_bundle "$b" "$ws"
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	# inside: root's own file, on an idmapped mount
	assert_match "$OUT" "^-rw-r--r-- +1 0 +0 "
	assert_contains "$OUT" idmapped
	check_workspace "$ws" "$TEST_UID:$TEST_GID"
}

t_root_userns()
{
	require_root
	ensure_test_user
	local b=$TEST_TMP/b2 ws=$TEST_TMP/ws2 id
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	ws_bundle "$b" "$ws"
	# container ids 0..65535 are host 300000.., the process is 1000:1000
	config_set "$b" '.linux.namespaces += [{"type":"user"}] |
		.linux.uidMappings=[{"containerID":0,"hostID":300000,"size":65536}] |
		.linux.gidMappings=[{"containerID":0,"hostID":300000,"size":65536}] |
		.process.user={"uid":1000,"gid":1000}'
	chown -R 300000:300000 "$b/rootfs"
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	assert_match "$OUT" "^-rw-r--r-- +1 1000 +1000 "
	assert_contains "$OUT" idmapped
	check_workspace "$ws" "$TEST_UID:$TEST_GID"
}

t_root_same_owner_plain_bind()
{
	require_root
	local b=$TEST_TMP/b3 ws=$TEST_TMP/ws3 id
	new_workspace "$ws" 0:0
	ws_bundle "$b" "$ws"
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	assert_not_contains "$OUT" idmapped
	check_workspace "$ws" 0:0
}

t_default_ctrpath()
{
	require_root
	ensure_test_user
	local b=$TEST_TMP/b4 ws=$TEST_TMP/ws4 id
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	make_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","touch $0/made; pwd", $w] |
		.process.cwd=$w | .annotations[$k]=$w' --arg w "$ws" --arg k "$KEY"
	id=$(unique_id)
	assert_status 0 ar run --bundle "$b" "$id"
	assert_eq "$OUT" "$ws"
	assert_file_owner "$ws/made" "$TEST_UID:$TEST_GID"
}

t_rootless()
{
	require_root # to make workspaces of other owners
	ensure_test_user
	local b=$TEST_TMP/b5 ws=$TEST_TMP/ws5 id
	make_bundle_as_test_user "$b" --rootless
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	config_set "$b" '.process.args=["sh","-c",$w] | .annotations[$k]=$v' \
		--arg w "$WRITE" --arg k "$KEY" --arg v "$ws:/work"
	id=$(unique_id)
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_not_contains "$OUT" idmapped
	check_workspace "$ws" "$TEST_UID:$TEST_GID"
	# a workspace of another owner: refused, nothing made
	new_workspace "$TEST_TMP/ws5b" 0:0
	chmod 0777 "$TEST_TMP/ws5b"
	config_set "$b" '.annotations[$k]=$v' --arg k "$KEY" \
		--arg v "$TEST_TMP/ws5b:/work"
	assert_status '!0' ar_user run --bundle "$b" "$(unique_id)"
	assert_contains "$ERR" "annotations[\"$KEY\"]"
	assert_contains "$ERR" "keep-id"
	assert_eq "$(ls "$TEST_TMP/ws5b" | tr '\n' ' ')" "other-file root-file "
}

# Every bad value: non-zero exit, an error naming the annotation and the
# problem, no container, nothing made in the workspace or the rootfs.
t_bad_values()
{
	require_root
	local b=$TEST_TMP/b6 ws=$TEST_TMP/ws6 v
	new_workspace "$ws" 0:0
	echo x >"$TEST_TMP/a-file"
	ln -s /etc "$TEST_TMP/link-to-etc"
	make_bundle "$b"
	config_set "$b" '.process.args=["touch","/work/x"] |
		.mounts += [{"destination":"/taken","type":"tmpfs","source":"tmpfs"}]'
	local -a bad=(
		"relative/dir|is not absolute"
		"|HOSTPATH is empty"
		"$ws/../ws6|has a \`..\` component"
		"$ws:/work/../etc|has a \`..\` component"
		"$TEST_TMP/does-not-exist|No such file or directory"
		"$TEST_TMP/a-file|is not a directory"
		"/|shared with the whole system"
		"/etc|shared with the whole system"
		"$TEST_TMP/link-to-etc|shared with the whole system"
		"$ws:/|a system directory of the container"
		"$ws:/usr|a system directory of the container"
		"$ws:/proc/sys|a system directory of the container"
		"$ws:/dev/x|a system directory of the container"
		"$ws:work|is not absolute"
		"$ws:/a:/b|more than one \`:\`"
		"$ws:/taken|already the destination of mounts["
	)
	for v in "${bad[@]}"; do
		config_set "$b" '.annotations[$k]=$v' --arg k "$KEY" \
			--arg v "${v%%|*}"
		assert_status '!0' ar run --bundle "$b" "$(unique_id)"
		assert_contains "$ERR" "annotations[\"$KEY\"]" "value ${v%%|*}"
		assert_contains "$ERR" "${v#*|}" "value ${v%%|*}"
		assert_contains "$ERR" "config.json" "value ${v%%|*}"
	done
	assert_status 0 ar list -q
	assert_eq "$OUT" "" "no container left"
	assert_eq "$(ls "$ws" | tr '\n' ' ')" "other-file root-file "
	[ ! -e "$b/rootfs/work" ] || fail "rootfs/work was created"
	[ ! -e "$b/rootfs/taken" ] || fail "rootfs/taken was created"
}

# `agentrun sandbox` as root in a checkout of another user (issue 7): the
# workspace's idmapped bind is made by the runtime (mount_premade.c); made
# by the container process, in its user namespace, it failed with EPERM.
t_sandbox_root_other_owner()
{
	require_root
	ensure_test_user
	local ws=$TEST_TMP/ws9
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	mkdir "$ws/.git"
	chown "$TEST_UID:$TEST_GID" "$ws/.git"
	assert_status 0 env -C "$ws" HOME=/root "$AGENTRUN" --root "$AR_ROOT" \
		sandbox --no-tty -- sh -c 'umask 022; echo from-container >f;
		mkdir d; touch d/g; (umask 077; touch p); id -u; ls -n f'
	assert_match "$OUT" "^0"
	assert_match "$OUT" "-rw-r--r-- +1 0 +0 "
	check_workspace "$ws" "$TEST_UID:$TEST_GID"
	assert_file_owner "$ws/.git" "$TEST_UID:$TEST_GID"
}

# ---- podman ---------------------------------------------------------------

PM=$TEST_TMP/podman
IMAGE=localhost/agentrun-test-busybox

podman_ready()
{
	command -v podman >/dev/null && command -v conmon >/dev/null ||
		skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
	require_root
	[ -d "$PM/storage" ] || skip "podman setup failed"
}

t_podman_root()
{
	podman_ready
	ensure_test_user
	local ws=$TEST_TMP/ws7
	new_workspace "$ws" "$TEST_UID:$TEST_GID"
	assert_status 0 "$PM/pm" run --rm --cgroups=disabled --network=none \
		--annotation "$KEY=$ws:/work" "$IMAGE" sh -c "$WRITE"
	assert_contains "$OUT" idmapped
	check_workspace "$ws" "$TEST_UID:$TEST_GID"
	# a bad value reaches the user through podman
	assert_status '!0' "$PM/pm" run --rm --cgroups=disabled \
		--network=none --annotation "$KEY=$ws:/etc" "$IMAGE" true
	assert_contains "$ERR" "annotations[\"$KEY\"]"
}

PMU=$TEST_TMP/podman-user

t_podman_rootless()
{
	podman_ready
	require_subids
	require_agentrun_as_test_user
	require_cmd newuidmap
	[ -d "$PMU/storage" ] || skip "rootless podman setup failed"
	local ws=$TEST_TMP/ws8 opt
	# keep-id (the process is the user) and the default (container
	# root is the user): both plain binds, the user's files
	for opt in --userns=keep-id ""; do
		rm -rf "$ws"
		new_workspace "$ws" "$TEST_UID:$TEST_GID"
		STATUS=0
		(cd "$PMU" && as_test_user "$PMU/pm" run --rm --network=none \
			${opt:+"$opt"} --annotation "$KEY=$ws:/work" "$IMAGE" \
			sh -c "$WRITE") >"$TEST_TMP/o" 2>"$TEST_TMP/e" || STATUS=$?
		assert_eq "$STATUS" 0 "podman ${opt:-default}: $(cat "$TEST_TMP/e")"
		assert_not_contains "$(cat "$TEST_TMP/o")" idmapped
		check_workspace "$ws" "$TEST_UID:$TEST_GID"
	done
}

if [ "$(id -u)" = 0 ] && command -v podman >/dev/null &&
	command -v conmon >/dev/null; then
	podman_setup "$PM" && podman_import "$PM" "$IMAGE" || true
	podman_setup "$PMU" && podman_import "$PMU" "$IMAGE" user || true
fi

run_test "root: workspace of another user is written as its owner (idmapped)" \
	t_root_other_owner
run_test "root + user namespace: container uid 1000 writes as the owner" \
	t_root_userns
run_test "root: own workspace is a plain bind" t_root_same_owner_plain_bind
run_test "HOSTPATH alone: bound at the same path" t_default_ctrpath
run_test "rootless: keep-id plain bind; another owner's workspace refused" \
	t_rootless
run_test "bad values: clear errors, nothing created" t_bad_values
run_test "sandbox as root in another user's workspace (idmapped, no EPERM)" \
	t_sandbox_root_other_owner
run_test "podman root --annotation: written as the owner" t_podman_root
run_test "podman rootless --annotation (keep-id and default)" \
	t_podman_rootless
finish
