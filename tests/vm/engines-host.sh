# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# Host side of the container-engine VM tests (test_docker_vm.sh,
# test_podman_vm.sh in tests/integration): boot tests/vm/run-in-vm,
# run one TAP script of tests/vm/ inside it and relay its results here,
# renumbered and prefixed with a tag. Source it after tests/lib.sh.
#
#   engines_vm_prepare          skip the whole file unless a VM can run
#                               here; builds the busybox rootfs tarball
#                               ENGINES_ROOTFS_TAR in a scratch directory
#                               ENGINES_SCRATCH inside the shared tree
#   engines_vm_run TAG SCRIPT [RUN_IN_VM_ARGS...]
#                               run SCRIPT (a tests/vm/ file) in one VM
#   engines_vm_finish           remove the scratch, print the plan
#
# The engines' daemons (dockerd, containerd) are started only INSIDE the VM:
# on the host they would create cgroups in cgroup v1 hierarchies.
#
# Environment: RUN_IN_VM (default $TOP_SRCDIR/tests/vm/run-in-vm),
# AGENTRUN_SKIP_VM=1 skips (AGENTRUN_SKIP_ENGINE_VM=1: only these engine
# tests, minutes under emulation), ENGINES_VM_TIMEOUT (seconds in the VM, default
# run-tests.sh's per-file TEST_TIMEOUT less 20, or 280), VM_TESTS (regex of
# test functions to run in the VM).

RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}
ENGINES_VM_TIMEOUT=${ENGINES_VM_TIMEOUT:-$((${TEST_TIMEOUT:-300} - 20))}
. "$TOP_SRCDIR/tests/vm/relay.sh"

_eng_common_dir()
{
	local a=$1 b=$2
	while [ "$a" != / ] && [ "${b#"$a"/}" = "$b" ] && [ "$b" != "$a" ]; do
		a=$(dirname "$a")
	done
	echo "$a"
}

engines_vm_prepare()
{
	[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
	[ "${AGENTRUN_SKIP_ENGINE_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_ENGINE_VM=1"
	local why
	why=$("$RUN_IN_VM" --check) || skip "${why#run-in-vm: cannot run: }"
	[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
	# The VM shares the current directory read-write at the same path:
	# share the deepest directory that holds the source and build trees,
	# and keep the scratch files inside the build tree (never /tmp: the
	# guest would write into the host's /tmp).
	ENGINES_SHARE=$(_eng_common_dir "$TOP_SRCDIR" "$TOP_BUILDDIR")
	[ "$ENGINES_SHARE" != / ] ||
		skip "source and build trees share no directory but / (cannot share them into the VM)"
	mkdir -p "$TOP_BUILDDIR/tests/work" 2>/dev/null
	ENGINES_SCRATCH=$(mktemp -d "$TOP_BUILDDIR/tests/work/engines-vm.XXXXXX") ||
		skip "cannot make a scratch directory in $TOP_BUILDDIR/tests/work"
	chmod 0755 "$ENGINES_SCRATCH"
	# The image: a busybox-static rootfs as a tarball, imported by the
	# engines (no registry is reachable).
	AR_TEST_WORKDIR=$TOP_BUILDDIR/tests/work make_rootfs "$TEST_TMP/engines-rootfs" \
		>/dev/null 2>&1 || skip "cannot build the busybox rootfs (busybox-static installed?)"
	ENGINES_ROOTFS_TAR=$ENGINES_SCRATCH/busybox-rootfs.tar
	tar -C "$TEST_TMP/engines-rootfs" --numeric-owner -cf "$ENGINES_ROOTFS_TAR" . ||
		skip "cannot write $ENGINES_ROOTFS_TAR"
	chmod 0644 "$ENGINES_ROOTFS_TAR"
	export ENGINES_SHARE ENGINES_SCRATCH ENGINES_ROOTFS_TAR
}

engines_vm_run()
{
	local tag=$1 script=$2 out err rc t0
	shift 2
	out=$TEST_TMP/$tag.out
	err=$TEST_TMP/$tag.err
	t0=$(date +%s)
	(cd "$ENGINES_SHARE" && RUN_IN_VM_CONSOLE=$TEST_TMP/$tag.console "$RUN_IN_VM" --timeout "$ENGINES_VM_TIMEOUT" "$@" \
		--env "AGENTRUN=$AR_BUILT_AGENTRUN" --env "TOP_SRCDIR=$TOP_SRCDIR" \
		--env "TOP_BUILDDIR=$TOP_BUILDDIR" \
		--env "ENGINES_ROOTFS_TAR=$ENGINES_ROOTFS_TAR" \
		--env "ENGINES_SCRATCH=$ENGINES_SCRATCH" \
		--env "VM_TESTS=${VM_TESTS:-}" \
		-- bash "$script") >"$out" 2>"$err"
	rc=$?
	echo "# [$tag] the VM ran for $(($(date +%s) - t0)) s (exit $rc)"
	if [ $rc = 125 ]; then
		vm_not_run "$tag" "$err"
		return
	fi
	vm_relay "$tag" "$out" "$rc"
	vm_kernel_said "$tag" "$out" "$TEST_TMP/$tag.console"
	sed "s/^/# [$tag] stderr: /" "$err" | tail -n 40
	if [ $rc = 124 ]; then
		VM_N=$((VM_N + 1))
		echo "not ok $VM_N - [$tag] the VM run timed out (ENGINES_VM_TIMEOUT=$ENGINES_VM_TIMEOUT)"
	fi
}

engines_vm_finish()
{
	rm -rf "$ENGINES_SCRATCH"
	echo "1..$VM_N"
	exit 0
}
