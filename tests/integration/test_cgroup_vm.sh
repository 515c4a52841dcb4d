#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# cgroup v2 tests that need a real, pure cgroup v2 hierarchy: run inside a
# throwaway VM (tests/vm/run-in-vm).  Everything is slow under TCG, so
# the work is split over four files, each one VM within run-tests.sh's
# per-file timeout:
#   test_cgroup_vm.sh            root, limits:   test_cgroup_live + limits
#   test_cgroup_vm_cmds.sh       root, commands: update/pause/ps/delete...
#   test_cgroup_vm_user.sh       --user 1000 (delegated subtree), limits
#   test_cgroup_vm_user_cmds.sh  --user 1000, commands
# (VM_MODE=root|user, VM_PART=limits|cmds select them.)  In the VM:
#   tests/unit/test_cgroup_live   the library against the real kernel
#   tests/vm/test_cgroup_vm.sh    the agentrun binary end to end
# Their TAP results are relayed here, renumbered and prefixed [vm-root] /
# [vm-user].  Where run-in-vm --check says no VM can run (no QEMU, no
# guest kernel), the file is skipped with its reason; a VM that fails to
# boot (run-in-vm exit 125) is a failure.
#
# Environment: RUN_IN_VM (default $TOP_SRCDIR/tests/vm/run-in-vm),
# AGENTRUN_SKIP_VM=1 to skip, VM_TIMEOUT (seconds, default the file's
# TEST_TIMEOUT less 30),
# VM_TESTS (regex of test functions of tests/vm/test_cgroup_vm.sh).
. "$(dirname "$0")/../lib.sh"

VM_TIMEOUT=${VM_TIMEOUT:-$((${TEST_TIMEOUT:-300} - 30))}

RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}
LIVE=$TOP_BUILDDIR/tests/unit/test_cgroup_live
VM_SCRIPT=$TOP_SRCDIR/tests/vm/test_cgroup_vm.sh

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$RUN_IN_VM" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$LIVE" ] || skip "$LIVE is not built (make check builds it)"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"

# The VM shares the current directory (read-write, same path): use the
# deepest directory holding both the source and the build tree.
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

# Build the busybox rootfs cache here: in the guest every exec costs ~0.3 s
# under TCG. It must be inside the shared directory.
CACHE_DIR=$TOP_BUILDDIR/tests/work
case "$CACHE_DIR" in
"$SHARE"/*) ;;
*) skip "build tree not below $SHARE" ;;
esac
AR_TEST_WORKDIR=$CACHE_DIR make_rootfs "$TEST_TMP/prebuilt-rootfs" >/dev/null 2>&1 ||
	skip "cannot build the rootfs cache in $CACHE_DIR"
[ -d "$CACHE_DIR/rootfs-cache" ] || skip "no rootfs cache in $CACHE_DIR"
chmod -R a+rX "$CACHE_DIR" 2>/dev/null || true

. "$TOP_SRCDIR/tests/vm/relay.sh"

run_vm()
{
	local tag=$1 out=$TEST_TMP/$1.out err=$TEST_TMP/$1.err rc
	shift
	(cd "$SHARE" && RUN_IN_VM_CONSOLE=$TEST_TMP/$tag.console "$RUN_IN_VM" --timeout "$VM_TIMEOUT" "$@" \
		--env "AGENTRUN=$AR_BUILT_AGENTRUN" --env "TOP_SRCDIR=$TOP_SRCDIR" \
		--env "TOP_BUILDDIR=$TOP_BUILDDIR" \
		--env "VM_ROOTFS_CACHE=$CACHE_DIR" \
		--env "VM_TESTS=$tests" \
		-- bash -c '[ -z "$1" ] || "$1"; r1=$?; bash "$2"; r2=$?; [ $r1 = 0 ] && [ $r2 = 0 ]' \
		vm-tests "$live" "$VM_SCRIPT") >"$out" 2>"$err"
	rc=$?
	if [ $rc = 125 ]; then
		vm_not_run "$tag" "$err"
		return
	fi
	vm_relay "$tag" "$out" "$rc"
	vm_kernel_said "$tag" "$out" "$TEST_TMP/$tag.console"
	sed "s/^/# [$tag] stderr: /" "$err" | tail -n 40
	if [ $rc = 124 ]; then
		VM_N=$((VM_N + 1))
		echo "not ok $VM_N - [$tag] the VM run timed out (VM_TIMEOUT=$VM_TIMEOUT)"
	fi
}

case "${VM_PART:-limits}" in
cmds)
	live=
	tests=${VM_TESTS:-'^t_(update|pause_resume|ps_kill_all|delete_removes_cgroup|cgroupns_root)$'}
	;;
*)
	live=$LIVE
	tests=${VM_TESTS:-'^t_(limits_applied|oom|fork_bomb|cpu)$'}
	;;
esac
case "${VM_MODE:-root}" in
user) run_vm vm-user --user 1000 ;;
*) run_vm vm-root ;;
esac
echo "1..$VM_N"
