#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cgroup v2 VM tests of the commands (update, pause/resume, ps,
# kill --all, delete) as root; see test_cgroup_vm.sh.
VM_PART=cmds exec bash "$(dirname "$0")/test_cgroup_vm.sh" "$@"
