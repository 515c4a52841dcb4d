#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# podman --memory / --pids-limit enforced and pause / unpause, with real
# cgroups: tests/vm/test_podman_vm.sh in a throwaway VM with pure cgroup v2
# (tests/vm/run-in-vm), as root (this file) or as an unprivileged user
# with a delegated subtree (test_podman_vm_user.sh, VM_MODE=user). The
# results are relayed with the prefix [podman-vm-root] / [podman-vm-user].
# Skipped with the reason when no VM can boot here.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/vm/engines-host.sh"

command -v podman >/dev/null && command -v conmon >/dev/null ||
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
engines_vm_prepare
case "${VM_MODE:-root}" in
user) engines_vm_run podman-vm-user "$TOP_SRCDIR/tests/vm/test_podman_vm.sh" --user 1000 ;;
*) engines_vm_run podman-vm-root "$TOP_SRCDIR/tests/vm/test_podman_vm.sh" ;;
esac
engines_vm_finish
