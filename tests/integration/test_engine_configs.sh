#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The shipped engine configuration snippets parse and say what the docs say:
# contrib/docker/daemon.json (JSON), contrib/kubernetes/containerd-agentrun.toml
# (TOML, containerd config version 2) and contrib/kubernetes/runtimeclass.yaml
# (YAML). dockerd and containerd load the first two for real in
# test_docker_vm.sh (inside the VM: the daemons never run on the host).
. "$(dirname "$0")/../lib.sh"

C=$TOP_SRCDIR/contrib

# py SCRIPT ARGS...: python3 with a clear skip when it is missing
py()
{
	require_cmd python3
	python3 -c "$@"
}

t_daemon_json()
{
	assert_status 0 py '
import json, sys
f = sys.argv[1]
try:
    d = json.load(open(f))
except ValueError as e:
    sys.exit("%s: not JSON: %s" % (f, e))
p = d.get("runtimes", {}).get("agentrun", {}).get("path")
if not isinstance(p, str) or not p.startswith("/"):
    sys.exit("%s: runtimes.agentrun.path: missing or not an absolute path" % f)
print(p)' "$C/docker/daemon.json"
	assert_eq "$OUT" /usr/local/bin/agentrun
}
run_test "contrib/docker/daemon.json registers runtimes.agentrun" t_daemon_json

t_containerd_toml()
{
	py 'import tomllib' 2>/dev/null || skip "python3 has no tomllib (needs 3.11+)"
	assert_status 0 py '
import tomllib, sys
f = sys.argv[1]
try:
    d = tomllib.load(open(f, "rb"))
except tomllib.TOMLDecodeError as e:
    sys.exit("%s: not TOML: %s" % (f, e))
if d.get("version") != 2:
    sys.exit("%s: version: want 2 (containerd 1.6/1.7 config)" % f)
rt = d["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]
for name, r in rt.items():
    print(name, r["runtime_type"], r["options"]["BinaryName"])' \
		"$C/kubernetes/containerd-agentrun.toml"
	assert_eq "$OUT" "agentrun io.containerd.runc.v2 /usr/local/bin/agentrun"
}
run_test "contrib/kubernetes/containerd-agentrun.toml: CRI runtimes.agentrun" t_containerd_toml

t_runtimeclass()
{
	local f=$C/kubernetes/runtimeclass.yaml
	if py 'import yaml' 2>/dev/null; then
		assert_status 0 py '
import yaml, sys
f = sys.argv[1]
docs = [d for d in yaml.safe_load_all(open(f)) if d]
if len(docs) != 1:
    sys.exit("%s: want one document, got %d" % (f, len(docs)))
d = docs[0]
print(d["apiVersion"], d["kind"], d["metadata"]["name"], d["handler"])' "$f"
	else
		# no PyYAML: the four top-level keys as plain "key: value" lines
		OUT="$(sed -n 's/^apiVersion: //p' "$f") $(sed -n 's/^kind: //p' "$f") $(sed -n 's/^  name: //p' "$f") $(sed -n 's/^handler: //p' "$f")"
	fi
	assert_eq "$OUT" "node.k8s.io/v1 RuntimeClass agentrun agentrun"
	# the handler names the containerd runtime of the CRI snippet
	grep -q '^\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.agentrun\]$' \
		"$C/kubernetes/containerd-agentrun.toml" ||
		fail "containerd-agentrun.toml has no runtimes.agentrun table for handler agentrun"
}
run_test "contrib/kubernetes/runtimeclass.yaml: RuntimeClass agentrun" t_runtimeclass

finish
