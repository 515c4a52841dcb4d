#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd cgroup manager against a real systemd, second VM (the first:
# test_systemd_vm.sh): Docker with "exec-opts": ["native.cgroupdriver=systemd"]
# driving agentrun (and Docker's runc, the reference): docker-ID.scope in
# system.slice with Delegate and MemoryMax, docker update, stop/rm remove
# the unit; `agentrun update` through SetUnitProperties (the limits
# survive `systemctl daemon-reload`), root and rootless; runc's
# org.systemd.property.* annotations. One boot for all of them: dockerd
# starts in the background while the others run. The tests are
# tests/vm/test_systemd_vm.sh's t_docker_*, t_update_* and t_property_*;
# results relayed with the prefix [systemd-vm-docker].
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/vm/engines-host.sh"

[ -x /lib/systemd/systemd ] || skip "systemd is not installed (apt-get install systemd)"
VM_TESTS=${VM_TESTS:-'^t_(docker_systemd|docker_systemd_runc|update_reload|update_reload_rootless|property_annotations)$'}
engines_vm_prepare
engines_vm_run systemd-vm-docker "$TOP_SRCDIR/tests/vm/test_systemd_vm.sh" --systemd
engines_vm_finish
