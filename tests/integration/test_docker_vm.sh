#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Docker (dockerd --config-file contrib/docker/daemon.json) and containerd
# (ctr run through io.containerd.runc.v2) driving agentrun, in a throwaway
# VM with pure cgroup v2 (tests/vm/run-in-vm): the daemons must never
# run on the host. The tests themselves are tests/vm/test_docker_vm.sh;
# their results are relayed here with the prefix [docker-vm]. Under
# emulation each docker container costs up to a minute on a busy host, so
# the tests are split over two VMs, each within the per-file timeout:
#   test_docker_vm.sh           daemons and snippets, run --rm -it (pty,
#                               -v, --read-only, --cap-drop ALL), ctr run
#   test_docker_vm_detached.sh  run -d, --memory/--pids-limit, exec, logs,
#                               stop, rm   (VM_PART=detached)
# Skipped with the reason when no VM can boot here.
. "$(dirname "$0")/../lib.sh"
. "$TOP_SRCDIR/tests/vm/engines-host.sh"

command -v dockerd >/dev/null && command -v containerd >/dev/null ||
	skip "docker.io/containerd not installed (contrib/install-deps.sh installs them)"
case "${VM_PART:-run}" in
detached) VM_TESTS=${VM_TESTS:-'^t_detached$'} tag=docker-vm-detached ;;
*) VM_TESTS=${VM_TESTS:-'^t_(daemons|run_it|ctr)$'} tag=docker-vm ;;
esac
engines_vm_prepare
engines_vm_run "$tag" "$TOP_SRCDIR/tests/vm/test_docker_vm.sh"
engines_vm_finish
