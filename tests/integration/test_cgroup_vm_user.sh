#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The cgroup v2 VM tests of the limits as an unprivileged user with a
# delegated subtree (run-in-vm --user 1000); see test_cgroup_vm.sh.
VM_MODE=user VM_PART=limits exec bash "$(dirname "$0")/test_cgroup_vm.sh" "$@"
