#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# docker run -d with --memory/--pids-limit (enforced), exec, logs, stop, rm
# in the VM; see test_docker_vm.sh.
VM_PART=detached exec bash "$(dirname "$0")/test_docker_vm.sh" "$@"
