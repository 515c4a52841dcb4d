#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# --nested (and the profile key "nested"): bubblewrap and rootless podman
# run inside the sandbox, as the unprivileged test user; without it the
# namespaces are refused and a line at exit names --nested; under it the
# outer walls hold (read-only host, hidden secrets,
# the rest of the seccomp profile), and --landlock on is refused.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

BWRAP=$(command -v bwrap || true)

nest_setup()
{
	[ -n "$BWRAP" ] || skip "bubblewrap is not installed (contrib/install-deps.sh installs it)"
	sb_home user
	mkdir -p "$H/.ssh"
	echo PRIVATE-KEY >"$H/.ssh/id_ed25519"
	sb_home_own
}

t_refused_without_nested()
{
	nest_setup
	assert_status '!0' sb_run -- "$BWRAP" --ro-bind / / --proc /proc --dev /dev \
		--unshare-all true
	assert_contains "$ERR" "bwrap:"
	# bwrap's own message does not name agentrun: the summary line does
	assert_contains "$ERR" "agentrun: namespace creation refused"
	assert_contains "$ERR" "bwrap: clone(CLONE_NEWUSER"
	assert_contains "$ERR" "rerun with --nested"
	assert_status 0 sb_run -- sh -c 'unshare -U true; echo status=$?'
	assert_contains "$OUT" "status=1"
	assert_contains "$ERR" "Operation not permitted" # still EPERM
	assert_contains "$ERR" "namespace creation refused 1 time (unshare: unshare(CLONE_NEWUSER)): rerun with --nested"
	# with --verbose each one as it happens, before the command's own
	assert_status 0 sb_run --verbose -- sh -c 'unshare -Un true; echo status=$?'
	assert_contains "$ERR" "agentrun: namespace creation refused: unshare: unshare(CLONE_NEWUSER|CLONE_NEWNET); rerun with --nested"
	# a session too (its profile is in its config, for exec)
	assert_status 0 sb_run --name "nested-$$" -- sh -c 'unshare -U true; echo status=$?'
	assert_contains "$OUT" "status=1"
	assert_contains "$ERR" "namespace creation refused 1 time (unshare: unshare(CLONE_NEWUSER))"
	# nothing refused, nothing said
	assert_status 0 sb_run -- true
	assert_not_contains "$ERR" "namespace creation"
	# the option is named where users look: --help and the man page
	assert_status 0 "$AGENTRUN" sandbox --help
	assert_contains "$OUT" "--nested"
}

t_bwrap_under_nested()
{
	nest_setup
	assert_status 0 sb_run --nested -- "$BWRAP" --ro-bind / / --proc /proc \
		--dev /dev --tmpfs /tmp --unshare-all --die-with-parent sh -c '
		echo inside-bwrap uid=$(id -u)
		echo procs=$(ls /proc | grep -c "^[0-9]")
		cat ~/.ssh/id_ed25519 2>/dev/null || echo no-secret'
	assert_contains "$OUT" "inside-bwrap uid=$TEST_UID"
	assert_contains "$OUT" "procs=" 
	assert_contains "$OUT" no-secret
	assert_not_contains "$OUT" PRIVATE-KEY
	assert_contains "$ERR" "nested(userns inside"
	assert_contains "$ERR" "landlock off; /proc unmasked)"
}

# The inner sandbox sees no more than the outer one: a writable bind of
# / inside still cannot write the host's /usr (the outer read-only mounts
# are locked), the hidden home stays hidden, keyctl and bpf stay denied.
t_outer_walls_hold()
{
	local bin=$TEST_TMP/sysprobe
	nest_setup
	require_cmd cc
	cc -O2 -o "$bin" "$TOP_SRCDIR/tests/helpers/sysprobe.c" \
		2>"$TEST_TMP/cc.err" || skip "cannot build sysprobe: $(head -c 300 "$TEST_TMP/cc.err")"
	cp "$bin" "$WS/sysprobe"
	chown "$TEST_UID:$TEST_GID" "$WS/sysprobe"
	assert_status 0 sb_run --nested -- "$BWRAP" --bind / / --proc /proc \
		--dev /dev --unshare-user --unshare-pid sh -c '
		touch /usr/agentrun-nested-x 2>/dev/null && echo WROTE-USR
		mount -o remount,rw /usr 2>/dev/null && echo REMOUNTED
		ls -A ~ | grep -qx .ssh && echo SSH-VISIBLE
		echo keyctl-$(./sysprobe syscall 250 0 0 0 0 0)
		echo bpf-$(./sysprobe syscall 321 0 0 0)
		echo done'
	assert_contains "$OUT" done
	assert_not_contains "$OUT" WROTE-USR
	assert_not_contains "$OUT" REMOUNTED
	assert_not_contains "$OUT" SSH-VISIBLE
	assert_contains "$OUT" "keyctl-errno=38" # ENOSYS: still refused
	assert_contains "$OUT" "bpf-errno=1"
	[ ! -e /usr/agentrun-nested-x ] || fail "the host's /usr was written"
}

t_landlock_conflict()
{
	nest_setup
	assert_status 1 sb_run --nested --landlock on -- true
	assert_contains "$ERR" "--nested needs Landlock off"
}

t_profile_key()
{
	nest_setup
	printf '{"nested": true}\n' >"$H/nested.json"
	chown "$TEST_UID:$TEST_GID" "$H/nested.json"
	assert_status 0 sb_run --profile "$H/nested.json" -- "$BWRAP" --ro-bind / / \
		--proc /proc --dev /dev --unshare-all echo via-profile
	assert_contains "$OUT" via-profile
	printf '{"nested": "yes"}\n' >"$H/bad.json"
	chown "$TEST_UID:$TEST_GID" "$H/bad.json"
	assert_status 1 sb_run --profile "$H/bad.json" -- true
	assert_contains "$ERR" "nested"
}

# Rootless podman inside: an image imported from a tarball (no network),
# run with podman's defaults (slirp4netns network, cgroupfs, storage in
# the sandbox's home). The inner container sees no more than the outer
# sandbox: the home it binds is the sandbox's, without the host's keys.
t_podman_under_nested()
{
	local img=$TEST_TMP/img
	nest_setup
	command -v podman >/dev/null 2>&1 ||
		skip "podman is not installed (contrib/install-deps.sh installs it)"
	require_subids
	make_rootfs "$img"
	tar --owner=0 --group=0 -C "$img" -cf "$WS/image.tar" . ||
		fail "cannot pack the image"
	chown "$TEST_UID:$TEST_GID" "$WS/image.tar"
	assert_status 0 sb_run --nested -- sh -c '
		podman import image.tar localhost/nested-bb >/dev/null ||
			{ echo IMPORT-FAILED; exit 1; }
		podman run --rm localhost/nested-bb echo ok
		podman run --rm --network none -v "$HOME:/h" localhost/nested-bb \
			sh -c "id -u; cat /h/.ssh/id_ed25519 2>/dev/null || echo no-secret"
		podman run --rm -v /usr:/hostusr localhost/nested-bb \
			sh -c "touch /hostusr/agentrun-nested-x 2>/dev/null && echo WROTE-USR; echo done"'
	assert_contains "$OUT" ok
	assert_contains "$OUT" no-secret
	assert_not_contains "$OUT" PRIVATE-KEY
	assert_contains "$OUT" done
	assert_not_contains "$OUT" WROTE-USR
	[ ! -e /usr/agentrun-nested-x ] || fail "the host's /usr was written"
	assert_contains "$ERR" "subids "
}

run_test "without --nested: no namespaces inside (bwrap fails)" t_refused_without_nested
run_test "--nested: bwrap runs inside" t_bwrap_under_nested
run_test "--nested: the outer walls hold for the inner sandbox" t_outer_walls_hold
run_test "--nested: rootless podman runs an imported image inside" t_podman_under_nested
run_test "--nested --landlock on is refused" t_landlock_conflict
run_test "profile key nested" t_profile_key
finish
