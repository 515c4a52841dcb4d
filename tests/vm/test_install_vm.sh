#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real `make install` with the default prefix, then `podman --runtime
# agentrun` with no configuration of its own: podman finds the drop-in
# where `make install` put it and runs the installed binary; after `make
# uninstall` the name is unknown again. Runs INSIDE tests/vm/run-in-vm as
# root (the guest's / is a throwaway overlay of the host's);
# tests/integration/test_install_vm.sh starts it.
. "$(dirname "$0")/../lib.sh"

require_root
command -v podman >/dev/null && command -v conmon >/dev/null ||
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
[ -n "${ENGINES_ROOTFS_TAR:-}" ] && [ -r "$ENGINES_ROOTFS_TAR" ] ||
	skip "ENGINES_ROOTFS_TAR (a busybox rootfs tarball) is not set"
[ -f "$TOP_BUILDDIR/Makefile" ] || skip "no Makefile in $TOP_BUILDDIR"
# the guest's / must be the throwaway overlay, never the host's
[ "$(stat -fc %T /)" = overlayfs ] || skip "/ is not the VM's overlay"

W=$TEST_TMP/podman
mkdir -p "$W/tmp" "$W/rootfs"
unset CONTAINERS_CONF
pm()
{
	podman --root "$W/storage" --runroot "$W/run" --storage-driver vfs \
		--tmpdir "$W/tmp" --events-backend none --cgroup-manager cgroupfs "$@"
}
do_make()
{
	env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "$TOP_BUILDDIR" "$@"
}

t_install_then_podman()
{
	local prefix bindir
	prefix=$(sed -n 's/^prefix = //p' "$TOP_BUILDDIR/Makefile")
	[ "$prefix" = /usr/local ] || skip "the build is configured with prefix $prefix, not the default"
	bindir=$prefix/bin
	tar -C "$W/rootfs" -xf "$ENGINES_ROOTFS_TAR"
	[ ! -e /etc/containers/containers.conf.d/agentrun.conf ] ||
		skip "the drop-in is installed already"
	assert_status 0 do_make install
	assert_status 0 test -f /etc/containers/containers.conf.d/agentrun.conf
	assert_status 0 pm --runtime agentrun info --format '{{.Host.OCIRuntime.Path}}'
	assert_eq "$OUT" "$bindir/agentrun"
	assert_status 0 pm --runtime agentrun run --rm --network none \
		--rootfs "$W/rootfs" echo ok
	assert_eq "$OUT" ok
	assert_status 0 do_make uninstall
	assert_status 0 test ! -e /etc/containers/containers.conf.d/agentrun.conf
	assert_status '!0' pm --runtime agentrun run --rm --network none \
		--rootfs "$W/rootfs" echo ok
}
run_test "make install (default prefix), then podman --runtime agentrun run; make uninstall" t_install_then_podman
finish
