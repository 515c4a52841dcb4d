#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A real `make install` (default prefix) followed by `podman --runtime
# agentrun run`, in a throwaway VM (tests/vm/test_install_vm.sh through
# tests/vm/run-in-vm: the guest's / is an overlay, so the install leaves
# nothing on this host). Skipped with the reason when no VM can boot here.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/vm/engines-host.sh"

command -v podman >/dev/null && command -v conmon >/dev/null ||
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
engines_vm_prepare
engines_vm_run install-vm "$TOP_SRCDIR/tests/vm/test_install_vm.sh"
engines_vm_finish
