#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd cgroup manager (--systemd-cgroup, --cgroup-manager=systemd;
# runtime/lib/cgroup_systemd.c) against a real systemd: a throwaway VM
# booted with systemd as PID 1 (`tests/vm/run-in-vm --systemd`) runs
# tests/vm/test_systemd_vm.sh as root: agentrun directly and podman with
# cgroup_manager = "systemd", root and rootless (the test user's systemd
# instance). Its results are relayed with the prefix [systemd-vm]. Without
# a reachable systemd: test_systemd_host.sh. Skipped with the reason when no VM can boot here.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/vm/engines-host.sh"

[ -x /lib/systemd/systemd ] || skip "systemd is not installed (apt-get install systemd)"
VM_TESTS=${VM_TESTS:-'^t_(version|direct_[a-z_]+|podman_[a-z]+)$'}
engines_vm_prepare
engines_vm_run systemd-vm "$TOP_SRCDIR/tests/vm/test_systemd_vm.sh" --systemd
engines_vm_finish
