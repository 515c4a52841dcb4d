#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The podman VM tests as an unprivileged user with a delegated cgroup
# subtree (run-in-vm --user 1000); see test_podman_vm.sh.
VM_MODE=user exec bash "$(dirname "$0")/test_podman_vm.sh" "$@"
