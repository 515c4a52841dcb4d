#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# process.selinuxLabel and linux.mountLabel on a host whose SELinux is
# enforcing. Runs INSIDE tests/vm/run-in-vm booted with `security=selinux`
# (tests/integration/test_selinux_vm.sh), as root: loads the policy the
# host side built (Debian's selinux-policy-default plus
# tests/vm/selinux-test-policy.cil: agentrun_test_t, MCS-confined), sets
# enforcing, and runs containers labelled with it: the process runs in the
# label (/proc/self/attr/current, ps -Z, exec), tmpfs mounts carry the
# mount label, an object of other MCS categories is denied, a label the
# policy does not know or forbids fails with a clear error; runc and crun
# give the same labels; rootless too. Elsewhere the whole file is skipped.
. "$(dirname "$0")/../lib.sh"

grep -qw selinuxfs /proc/filesystems ||
	skip "this kernel has no SELinux (CONFIG_SECURITY_SELINUX)"
[ "$(id -u)" = 0 ] || skip "needs root (to load the policy)"
[ -r "${VM_SELINUX_POLICY:-}" ] ||
	skip "no policy to load (VM_SELINUX_POLICY; run tests/integration/test_selinux_vm.sh)"
if ! mountpoint -q /sys/fs/selinux; then
	mount -t selinuxfs selinuxfs /sys/fs/selinux 2>"$TEST_TMP/mount.err" ||
		skip "SELinux is not the active LSM (boot with security=selinux): $(cat "$TEST_TMP/mount.err")"
fi
mountpoint -q /sys/kernel/security ||
	mount -t securityfs securityfs /sys/kernel/security 2>/dev/null || true
grep -qw selinux /sys/kernel/security/lsm 2>/dev/null ||
	skip "SELinux is not among the active LSMs ($(cat /sys/kernel/security/lsm 2>/dev/null))"

# load_policy loads /etc/selinux/<SELINUXTYPE>/policy/policy.NN: the
# guest's /etc is an overlay that goes away with it
# shellcheck disable=SC1091
SELINUXTYPE=$(. /etc/selinux/config && echo "$SELINUXTYPE")
mkdir -p "/etc/selinux/$SELINUXTYPE/policy"
rm -f "/etc/selinux/$SELINUXTYPE/policy/"policy.*
cp "$VM_SELINUX_POLICY" "/etc/selinux/$SELINUXTYPE/policy/policy.33"
load_policy 2>"$TEST_TMP/load.err" || {
	echo "Bail out! load_policy failed: $(cat "$TEST_TMP/load.err")"
	exit 1
}
setenforce 1 || {
	echo "Bail out! setenforce 1 failed"
	exit 1
}
[ "$(getenforce)" = Enforcing ] || {
	echo "Bail out! getenforce: $(getenforce)"
	exit 1
}
echo "# SELinux: $(getenforce), policy $(cat /sys/fs/selinux/policyvers), we run as $(id -Z)"

LABEL=system_u:system_r:agentrun_test_t:s0:c1,c2
MLABEL=system_u:object_r:tmpfs_t:s0:c1,c2
OTHER=system_u:object_r:tmpfs_t:s0:c3,c4

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

# objects on the guest's tmpfs, one per MCS category set, bound into the
# containers at /run (the rootfs has /run; a 9p rootfs refuses new directories under the policy)
MCS=$TEST_TMP/mcs
mkdir -p "$MCS"
echo own >"$MCS/own"
echo other >"$MCS/other"
if ! chcon "$MLABEL" "$MCS/own" || ! chcon "$OTHER" "$MCS/other"; then
	echo "Bail out! chcon failed"
	exit 1
fi

# new_bundle DIR ARGS_JSON PROCESS_LABEL MOUNT_LABEL: the shared rootfs, a
# tmpfs /tmp, $MCS at /run
new_bundle()
{
	mkdir -p "$1"
	jq --argjson a "$2" --arg r "$ROOTFS" --arg p "$3" --arg m "$4" --arg mcs "$MCS" \
		'.root.path=$r | .process.terminal=false | .process.args=$a |
		 .process.selinuxLabel=$p | .linux.mountLabel=$m |
		 .mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev"]},
		             {"destination":"/run","type":"bind","source":$mcs,"options":["rbind"]}]' \
		"$TMPL/config.json" >"$1/config.json" || fail "jq failed"
}

INSIDE='tr -d "\\000" </proc/self/attr/current; echo; grep " /tmp " /proc/self/mountinfo; echo x >/tmp/f && echo wrote-tmp; cat /run/own; cat /run/other && echo LEAK; true'

t_label_applied()
{
	local b=$TEST_TMP/b1 id
	id=$(unique_id)
	new_bundle "$b" "[\"sh\",\"-c\",$(jq -Rn --arg s "$INSIDE" '$s')]" "$LABEL" "$MLABEL"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$OUT" "$LABEL" "the container process runs in process.selinuxLabel"
	assert_contains "$OUT" "context=\"$MLABEL\"" "the /tmp tmpfs carries linux.mountLabel"
	assert_contains "$OUT" "wrote-tmp" "the container writes its own tmpfs"
	assert_contains "$OUT" "own" "the container reads an object of its categories"
	assert_not_contains "$OUT" "LEAK" "an object of other categories (s0:c3,c4) was read"
	assert_match "$ERR" "/run/other.*: Permission denied"
	dmesg | grep -q "avc:  denied .* name=\"other\" .*scontext=$LABEL tcontext=$OTHER .*permissive=0" ||
		fail "no AVC denial of /run/other in the kernel log: $(dmesg | grep avc | tail -n 3)"
	printf '%s\n' "$OUT" >"$TEST_TMP/agentrun.out"
}

t_ps_exec()
{
	local b=$TEST_TMP/b2 id pid
	id=$(unique_id)
	new_bundle "$b" '["sleep","100"]' "$LABEL" "$MLABEL"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --detach --bundle "$b" "$id"
	pid=$("$AGENTRUN" --root "$AR_ROOT" state "$id" | jq -r .pid)
	assert_eq "$(ps -o label= -p "$pid")" "$LABEL" "ps -Z of the container process"
	# shellcheck disable=SC2009 # ps -Z is what is shown
	ps -eZ | grep -F "$LABEL" | sed 's/^/# ps -eZ: /'
	# mqueue takes no context=: its root is relabelled after the mount
	assert_eq "$(stat -c %C "/proc/$pid/root/dev/mqueue")" "$MLABEL" "/dev/mqueue's label"
	assert_eq "$(stat -c %C "/proc/$pid/root/dev/shm")" "$MLABEL" "/dev/shm's label"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" exec "$id" sh -c 'tr -d "\\000" </proc/self/attr/current'
	assert_eq "$OUT" "$LABEL" "exec runs in the container's label"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" exec "$id" cat /run/other
	assert_contains "$ERR" "Permission denied"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" kill "$id" KILL
}

# the same file read by a process of its categories: the denial above is
# MCS, not type enforcement
t_other_categories_allowed()
{
	local b=$TEST_TMP/b3 id
	id=$(unique_id)
	new_bundle "$b" '["cat","/run/other"]' "${LABEL%:s0:*}:s0:c3,c4" "$OTHER"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_eq "$OUT" other
}

# a mount label of other categories than the process's: its own /tmp is
# denied to it
t_mount_label_mismatch()
{
	local b=$TEST_TMP/b4 id
	id=$(unique_id)
	new_bundle "$b" '["sh","-c","echo x >/tmp/f && echo LEAK; true"]' "$LABEL" "$OTHER"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_not_contains "$OUT" LEAK
	assert_contains "$ERR" "Permission denied"
}

t_unknown_label()
{
	local b=$TEST_TMP/b5 id
	id=$(unique_id)
	new_bundle "$b" '["true"]' system_u:system_r:agentrun_no_such_t:s0 "$MLABEL"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$ERR" "process.selinuxLabel"
	assert_contains "$ERR" "agentrun_no_such_t"
	assert_contains "$ERR" "not a valid SELinux context"
	[ ! -e "$AR_ROOT/$id" ] || fail "state of $id left"
	new_bundle "$b" '["true"]' "$LABEL" system_u:object_r:agentrun_no_such_file_t:s0
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$ERR" "linux.mountLabel"
	assert_contains "$ERR" "not a valid SELinux context"
}

# a valid context the policy forbids the runtime to enter (kernel_t may
# not transition to svirt_t): the exec fails, and says why
t_transition_denied()
{
	local b=$TEST_TMP/b6 id
	id=$(unique_id)
	new_bundle "$b" '["true"]' system_u:system_r:svirt_t:s0:c1,c2 "$MLABEL"
	defer "$AGENTRUN" --root "$AR_ROOT" delete --force "$id"
	assert_status '!0' "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" "$id"
	assert_contains "$ERR" "process.selinuxLabel \`system_u:system_r:svirt_t:s0:c1,c2\`"
	assert_contains "$ERR" "AVC denial"
	sed 's/^/# agentrun: /' "$ERR_FILE"
}

# runc and crun, same bundle: the same process and mount labels
t_runc_crun_same()
{
	local b=$TEST_TMP/b7 id rt n=0
	for rt in runc crun; do
		command -v "$rt" >/dev/null || continue
		n=$((n + 1))
		id=$(unique_id)
		new_bundle "$b" "[\"sh\",\"-c\",$(jq -Rn --arg s "$INSIDE" '$s')]" "$LABEL" "$MLABEL"
		# Debian 12's crun (1.8) knows runtime-spec 1.0 and 1.1 only
		jq '.ociVersion="1.0.2"' "$b/config.json" >"$b/c.json" && mv "$b/c.json" "$b/config.json"
		defer "$rt" --root "$TEST_TMP/$rt-root" delete --force "$id"
		assert_status 0 "$rt" --root "$TEST_TMP/$rt-root" run --bundle "$b" "$id"
		sed "s/^/# $rt: /" "$OUT_FILE"
		assert_contains "$OUT" "$LABEL" "$rt: process label"
		assert_contains "$OUT" "$MLABEL" "$rt: mount label"
		assert_not_contains "$OUT" LEAK "$rt: MCS"
	done
	[ $n -gt 0 ] || skip "neither runc nor crun is installed"
}

t_features()
{
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r .linux.selinux.enabled "$OUT_FILE")" true
}

t_rootless()
{
	require_subids
	require_agentrun_as_test_user
	local b=$TEST_TMP/b8 id
	id=$(unique_id)
	ensure_test_user
	mkdir -p "$b"
	chown "$TEST_UID:$TEST_GID" "$b"
	(cd "$b" && as_test_user "$AGENTRUN" spec --rootless) ||
		fail "agentrun spec --rootless as the test user"
	jq --arg r "$ROOTFS" --arg p "$LABEL" --arg m "$MLABEL" --arg mcs "$MCS" --arg s "$INSIDE" \
		'.root.path=$r | .process.terminal=false | .process.args=["sh","-c",$s] |
		 .process.selinuxLabel=$p | .linux.mountLabel=$m |
		 .mounts += [{"destination":"/tmp","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev"]},
		             {"destination":"/run","type":"bind","source":$mcs,"options":["rbind"]}]' \
		"$b/config.json" >"$b/c.json" && cat "$b/c.json" >"$b/config.json"
	chmod o+rx "$TEST_TMP" "$MCS"
	chmod o+r "$MCS"/*
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_contains "$OUT" "$LABEL"
	assert_contains "$OUT" "context=\"$MLABEL\""
	assert_contains "$OUT" "wrote-tmp"
	assert_not_contains "$OUT" LEAK
	assert_match "$ERR" "/run/other.*: Permission denied"
}

run_test "selinux: the process runs in its label, tmpfs in the mount label, other categories denied" t_label_applied
run_test "selinux: ps -Z and exec show the label" t_ps_exec
run_test "selinux: a process of the object's categories reads it" t_other_categories_allowed
run_test "selinux: a mount label of other categories denies the container its tmpfs" t_mount_label_mismatch
run_test "selinux: a label the policy does not know fails, naming it" t_unknown_label
run_test "selinux: a transition the policy forbids fails, naming the label" t_transition_denied
run_test "selinux: runc and crun apply the same labels" t_runc_crun_same
run_test "selinux: features says enabled" t_features
run_test "selinux: rootless, the labels apply" t_rootless
dmesg | grep "avc: " | tail -n 30 | sed 's/^/# /'
finish
