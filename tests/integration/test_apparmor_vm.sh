#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# AppArmor (process.apparmorProfile, runtime/lib/apparmor.c) on a host
# whose AppArmor is enabled: a throwaway VM (tests/vm/run-in-vm) booted
# with `apparmor=1 security=apparmor` (Debian's kernel has AppArmor in its
# default LSM list already; the parameters make it explicit), where
# tests/vm/test_apparmor_vm.sh loads a profile with apparmor_parser and
# runs containers under it. Its TAP results are relayed here, prefixed
# [vm-apparmor]. Skipped where no VM can run, or without apparmor_parser.
#
# Environment: RUN_IN_VM, AGENTRUN_SKIP_VM=1, VM_TIMEOUT (as
# test_cgroup_vm.sh).
. "$(dirname "$0")/../lib.sh"

VM_TIMEOUT=${VM_TIMEOUT:-$((${TEST_TIMEOUT:-300} - 30))}
RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}
VM_SCRIPT=$TOP_SRCDIR/tests/vm/test_apparmor_vm.sh

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$RUN_IN_VM" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
command -v apparmor_parser >/dev/null ||
	skip "apparmor_parser is not installed (apt-get install apparmor; contrib/install-deps.sh does)"

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

. "$TOP_SRCDIR/tests/vm/relay.sh"

out=$TEST_TMP/vm.out err=$TEST_TMP/vm.err
(cd "$SHARE" && "$RUN_IN_VM" --timeout "$VM_TIMEOUT" \
	--append "apparmor=1 security=apparmor" \
	--env "AGENTRUN=$AR_BUILT_AGENTRUN" --env "TOP_SRCDIR=$TOP_SRCDIR" \
	--env "TOP_BUILDDIR=$TOP_BUILDDIR" --env "VM_ROOTFS_CACHE=$CACHE_DIR" \
	-- bash "$VM_SCRIPT") >"$out" 2>"$err"
rc=$?
if [ $rc = 125 ]; then
	vm_not_run "vm-apparmor" "$err"
else
	vm_relay vm-apparmor "$out" "$rc"
	sed "s/^/# [vm-apparmor] stderr: /" "$err" | tail -n 40
	if [ $rc = 124 ]; then
		VM_N=$((VM_N + 1))
		echo "not ok $VM_N - [vm-apparmor] the VM run timed out (VM_TIMEOUT=$VM_TIMEOUT)"
	fi
fi
echo "1..$VM_N"
