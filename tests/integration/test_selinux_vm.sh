#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# SELinux (process.selinuxLabel, linux.mountLabel: runtime/lib/
# selinux_label.c) on a host whose SELinux is enforcing: a throwaway VM
# (tests/vm/run-in-vm) booted with `security=selinux` (Debian's kernel has
# SELinux built in, AppArmor first in its LSM list: the parameter picks
# SELinux), where tests/vm/test_selinux_vm.sh loads a policy, sets
# enforcing and runs labelled containers. Its TAP results are relayed
# here, prefixed [vm-selinux].
#
# The policy is Debian's selinux-policy-default plus
# tests/vm/selinux-test-policy.cil (a container domain: Debian's policy has
# no container_t), compiled here with semodule into a copy of the policy
# store (the host's own store and policy are never changed: this host does
# not run SELinux), cached in tests/work/selinux-policy.
#
# Skipped where no VM can run, the guest kernel has no SELinux, or the
# SELinux packages are not installed.
#
# Environment: RUN_IN_VM, AGENTRUN_SKIP_VM=1, VM_TIMEOUT (as
# test_cgroup_vm.sh).
. "$(dirname "$0")/../lib.sh"

VM_TIMEOUT=${VM_TIMEOUT:-$((${TEST_TIMEOUT:-300} - 30))}
RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}
VM_SCRIPT=$TOP_SRCDIR/tests/vm/test_selinux_vm.sh
MODULE=$TOP_SRCDIR/tests/vm/selinux-test-policy.cil
STORE=/var/lib/selinux/default

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$RUN_IN_VM" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
"$AGENTRUN" --version | grep -q '+SELINUX' ||
	skip "$AGENTRUN was built --without-selinux"
# the kernel run-in-vm boots: the newest /boot/vmlinuz-* (its --kernel)
KVER=$(find /boot -maxdepth 1 -name 'vmlinuz-*' -printf '%f\n' | sed 's/^vmlinuz-//' | sort -V | tail -n1)
if [ -r "/boot/config-$KVER" ] && ! grep -q '^CONFIG_SECURITY_SELINUX=y' "/boot/config-$KVER"; then
	skip "the guest kernel $KVER has no SELinux (CONFIG_SECURITY_SELINUX)"
fi
require_root # the policy store is root's (mode 700)
for c in semodule load_policy setenforce getenforce chcon; do
	command -v "$c" >/dev/null ||
		skip "$c is not installed (apt-get install selinux-policy-default policycoreutils selinux-utils; contrib/install-deps.sh does)"
done
{ [ -d "$STORE/active" ] && [ -r /etc/selinux/config ]; } ||
	skip "no SELinux policy store in $STORE (apt-get install selinux-policy-default; contrib/install-deps.sh does)"

common_dir()
{
	local a=$1 b=$2
	while [ "$a" != / ] && [ "${b#"$a"/}" = "$b" ] && [ "$b" != "$a" ]; do
		a=$(dirname "$a")
	done
	echo "$a"
}
SHARE=$(common_dir "$TOP_SRCDIR" "$TOP_BUILDDIR")
[ "$SHARE" != / ] || skip "source and build trees share no directory but / (cannot share them into the VM)"
CACHE_DIR=$TOP_BUILDDIR/tests/work
case "$CACHE_DIR" in
"$SHARE"/*) ;;
*) skip "build tree not below $SHARE" ;;
esac
AR_TEST_WORKDIR=$CACHE_DIR make_rootfs "$TEST_TMP/prebuilt-rootfs" >/dev/null 2>&1 ||
	skip "cannot build the rootfs cache in $CACHE_DIR"
chmod -R a+rX "$CACHE_DIR" 2>/dev/null || true

# The test policy: Debian's store + our module, built once per store and
# module (semodule -p ROOT works in a copy below ROOT; ~10 s of CPU)
POLICY_DIR=$CACHE_DIR/selinux-policy
key=$(cat "$STORE/active/policy.kern" "$MODULE" | sha256sum | cut -c1-16)
POLICY=$POLICY_DIR/policy-$key.33
if [ ! -s "$POLICY" ]; then
	mkdir -p "$POLICY_DIR"
	root=$TEST_TMP/policy-root
	mkdir -p "$root/var/lib/selinux" "$root/etc/selinux"
	cp -a "$STORE" "$root/var/lib/selinux/" ||
		fail "cannot copy the policy store $STORE"
	cp -a /etc/selinux/config /etc/selinux/semanage.conf \
		"/etc/selinux/$(basename "$STORE")" "$root/etc/selinux/" ||
		fail "cannot copy /etc/selinux"
	semodule -p "$root" -n -i "$MODULE" >"$TEST_TMP/semodule.out" 2>&1 ||
		fail "semodule could not build the test policy: $(cat "$TEST_TMP/semodule.out")"
	built=$(find "$root/etc/selinux/$(basename "$STORE")/policy" -name 'policy.*' | sort -V | tail -n1)
	[ -s "$built" ] || fail "semodule built no policy in $root"
	rm -f "$POLICY_DIR"/policy-*.33
	cp "$built" "$POLICY.tmp" && mv "$POLICY.tmp" "$POLICY"
	chmod a+r "$POLICY"
fi

. "$TOP_SRCDIR/tests/vm/relay.sh"

# The guest's init writes the command's status to the control share (9p,
# unlabeled_t under the policy), which enforcing denies it: permissive
# again before the guest's command ends.

out=$TEST_TMP/vm.out err=$TEST_TMP/vm.err
# shellcheck disable=SC2016 # $1, $rc: the guest's shell expands them
(cd "$SHARE" && "$RUN_IN_VM" --timeout "$VM_TIMEOUT" \
	--append "security=selinux" \
	--env "AGENTRUN=$AR_BUILT_AGENTRUN" --env "TOP_SRCDIR=$TOP_SRCDIR" \
	--env "TOP_BUILDDIR=$TOP_BUILDDIR" --env "VM_ROOTFS_CACHE=$CACHE_DIR" \
	--env "VM_SELINUX_POLICY=$POLICY" \
	-- bash -c 'bash "$1"; rc=$?; setenforce 0 2>/dev/null; exit $rc' sh "$VM_SCRIPT") >"$out" 2>"$err"
rc=$?
if [ $rc = 125 ]; then
	vm_not_run "vm-selinux" "$err"
else
	vm_relay vm-selinux "$out" "$rc"
	sed "s/^/# [vm-selinux] stderr: /" "$err" | tail -n 40
	if [ $rc = 124 ]; then
		VM_N=$((VM_N + 1))
		echo "not ok $VM_N - [vm-selinux] the VM run timed out (VM_TIMEOUT=$VM_TIMEOUT)"
	fi
fi
echo "1..$VM_N"
