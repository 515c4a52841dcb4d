#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# process.apparmorProfile on a host whose AppArmor is enabled. Runs INSIDE
# tests/vm/run-in-vm (booted with AppArmor: tests/integration/
# test_apparmor_vm.sh), as root: a profile loaded with apparmor_parser
# denies a write inside the container; a profile that is not loaded fails
# the creation naming it; exec gets the container's profile; --version and
# features say +APPARMOR / enabled. Elsewhere the whole file is skipped.
. "$(dirname "$0")/../lib.sh"

[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ] ||
	skip "AppArmor is not enabled here (run tests/integration/test_apparmor_vm.sh)"
[ "$(id -u)" = 0 ] || skip "needs root (to load a profile)"
command -v apparmor_parser >/dev/null || skip "apparmor_parser is not installed (apt-get install apparmor)"
if ! mountpoint -q /sys/kernel/security; then
	mount -t securityfs securityfs /sys/kernel/security ||
		skip "cannot mount securityfs"
fi

PROFILE=agentrun-test-deny
cat >"$TEST_TMP/$PROFILE" <<EOT
profile $PROFILE flags=(attach_disconnected,mediate_deleted) {
  file,
  capability,
  network,
  mount,
  umount,
  pivot_root,
  signal,
  ptrace,
  unix,
  deny /tmp/denied/** w,
}
EOT
apparmor_parser -r -W "$TEST_TMP/$PROFILE" 2>"$TEST_TMP/parser.err" || {
	echo "Bail out! apparmor_parser could not load the test profile: $(cat "$TEST_TMP/parser.err")"
	exit 1
}

# one rootfs for all (the host side built the cache): copying a busybox
# rootfs under TCG takes minutes
TMPL=$TEST_TMP/template
if [ -n "${VM_ROOTFS_CACHE:-}" ] && [ -x "$VM_ROOTFS_CACHE/rootfs-cache/bin/busybox" ]; then
	ROOTFS=$VM_ROOTFS_CACHE/rootfs-cache
	mkdir -p "$TMPL"
	"$AGENTRUN" spec --bundle "$TMPL" >/dev/null || {
		echo "Bail out! agentrun spec failed"
		exit 1
	}
else
	ROOTFS=$TMPL/rootfs
	make_bundle "$TMPL" >/dev/null 2>&1 || {
		echo "Bail out! cannot make the template bundle"
		exit 1
	}
fi

# new_bundle DIR PROFILE ARGS_JSON: the shared rootfs, a tmpfs /tmp
new_bundle()
{
	mkdir -p "$1"
	jq --argjson a "$3" --arg r "$ROOTFS" --arg p "$2" \
		'.root.path=$r | .process.terminal=false | .process.args=$a |
		 .process.apparmorProfile=$p |
		 .mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev"]}]' \
		"$TMPL/config.json" >"$1/config.json" || fail "jq failed"
}

t_profile_denies_write()
{
	local b=$TEST_TMP/b1 id
	id=$(unique_id)
	new_bundle "$b" "$PROFILE" '["sh","-c","mkdir /tmp/ok /tmp/denied; echo a > /tmp/ok/f && echo granted; echo b > /tmp/denied/f && echo LEAK; cat /proc/self/attr/current"]'
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$OUT" "granted"
	assert_not_contains "$OUT" "LEAK" "the profile's deny rule did not apply"
	assert_contains "$ERR" "Permission denied"
	assert_contains "$OUT" "$PROFILE (enforce)"
}

t_missing_profile()
{
	local b=$TEST_TMP/b2 id
	id=$(unique_id)
	new_bundle "$b" agentrun-no-such-profile '["true"]'
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$ERR" "agentrun-no-such-profile"
	assert_contains "$ERR" "not loaded"
	# create fails too (before the exec fifo), and leaves nothing
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" create --bundle "$b" "$id"
	assert_contains "$ERR" "agentrun-no-such-profile"
	[ ! -e "$AR_ROOT/$id" ] || fail "state of $id left"
}

t_exec_gets_profile()
{
	local b=$TEST_TMP/b3 id
	id=$(unique_id)
	new_bundle "$b" "$PROFILE" '["sleep","100"]'
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" create --bundle "$b" "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" start "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" exec "$id" cat /proc/self/attr/current
	assert_contains "$OUT" "$PROFILE (enforce)"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" exec "$id" sh -c 'mkdir -p /tmp/denied; echo x > /tmp/denied/g && echo LEAK'
	assert_not_contains "$OUT" "LEAK"
	assert_contains "$ERR" "Permission denied"
}

# exec --apparmor PROFILE (runc, crun): the exec's own profile, in a
# container that has none; a profile not loaded is an error naming it
t_exec_apparmor_option()
{
	local b=$TEST_TMP/b-exec-aa id
	id=$(unique_id)
	new_bundle "$b" "" '["sleep","100"]'
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --detach --bundle "$b" "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" exec "$id" cat /proc/self/attr/current
	assert_eq "$OUT" "unconfined"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" exec --apparmor "$PROFILE" "$id" cat /proc/self/attr/current
	assert_contains "$OUT" "$PROFILE (enforce)"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" exec --apparmor "$PROFILE" "$id" sh -c 'mkdir -p /tmp/denied; echo x > /tmp/denied/g && echo LEAK'
	assert_not_contains "$OUT" "LEAK"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" exec --apparmor agentrun-no-such-profile "$id" true
	assert_contains "$ERR" "agentrun-no-such-profile"
}

t_unconfined_without_profile()
{
	local b=$TEST_TMP/b4 id
	id=$(unique_id)
	new_bundle "$b" "" '["cat","/proc/self/attr/current"]'
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" "unconfined"
}

t_version_features()
{
	assert_status 0 "$AGENTRUN" --version
	assert_contains "$OUT" "+APPARMOR"
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r .linux.apparmor.enabled "$OUT_FILE")" true
}

t_agentrun_profile_loads()
{
	local f=$TOP_SRCDIR/contrib/apparmor/agentrun
	if [ -e /etc/apparmor.d/abi/4.0 ]; then
		assert_status 0 apparmor_parser -r -W "$f"
	else
		# AppArmor 3 (Debian 12) has no userns rule, and no switch that
		# restricts user namespaces: the rest of the profile loads
		sed -e '/^abi /d' -e '/^ *userns,$/d' "$f" >"$TEST_TMP/agentrun.aa3"
		assert_status 0 apparmor_parser -r -W "$TEST_TMP/agentrun.aa3"
	fi
	grep -q '^agentrun ' /sys/kernel/security/apparmor/profiles ||
		fail "profile agentrun not loaded: $(cat /sys/kernel/security/apparmor/profiles)"
}

# rootless (the profile loaded by root, as a distribution loads podman's):
# the unprivileged runtime applies it too
t_rootless()
{
	require_subids
	require_agentrun_as_test_user
	local b=$TEST_TMP/b5 id
	id=$(unique_id)
	ensure_test_user
	mkdir -p "$b"
	chown "$TEST_UID:$TEST_GID" "$b"
	(cd "$b" && as_test_user "$AGENTRUN" spec --rootless) ||
		fail "agentrun spec --rootless as the test user"
	jq --arg r "$ROOTFS" --arg p "$PROFILE" \
		'.root.path=$r | .process.terminal=false |
		 .process.args=["sh","-c","mkdir /tmp/denied; echo b > /tmp/denied/f && echo LEAK; cat /proc/self/attr/current"] |
		 .process.apparmorProfile=$p |
		 .mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev"]}]' \
		"$b/config.json" >"$b/c.json" && cat "$b/c.json" >"$b/config.json"
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_not_contains "$OUT" "LEAK"
	assert_contains "$OUT" "$PROFILE (enforce)"
}

run_test "apparmor: the profile denies a write inside the container" t_profile_denies_write
run_test "apparmor: a profile that is not loaded is an error naming it" t_missing_profile
run_test "apparmor: exec runs under the container's profile" t_exec_gets_profile
run_test "apparmor: exec --apparmor PROFILE runs under that profile" t_exec_apparmor_option
run_test "apparmor: no profile: unconfined" t_unconfined_without_profile
run_test "apparmor: --version +APPARMOR, features enabled" t_version_features
run_test "apparmor: contrib/apparmor/agentrun loads" t_agentrun_profile_loads
run_test "apparmor: rootless, the profile applies" t_rootless
finish
