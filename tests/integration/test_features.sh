#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun features`: valid JSON, the expected keys, what the running kernel
# supports, and (when python3-jsonschema and the runtime-spec schema are
# available) validation against features-schema.json.
. "$(dirname "$0")/../lib.sh"

# Where the runtime-spec JSON schemas live (features-schema.json, ...):
# OCI_SCHEMA_DIR, the schema/ directory of a runtime-spec checkout. The
# schemas are the spec's data, not the project's, and Debian's
# golang-github-opencontainers-specs-dev lacks features-schema.json:
# without OCI_SCHEMA_DIR the schema case skips with that reason.
OCI_SCHEMA_DIR=${OCI_SCHEMA_DIR:-}

t_json_valid() {
	require_cmd jq
	assert_status 0 "$AGENTRUN" features
	jq -e . "$OUT_FILE" >/dev/null || fail "not valid JSON: $OUT"
	assert_eq "$(jq -r .ociVersionMin "$OUT_FILE")" "1.0.0"
	assert_eq "$(jq -r .ociVersionMax "$OUT_FILE")" "1.2.0"
	# beautified, '/' not escaped
	assert_contains "$OUT" $'\n    "hooks": ['
	assert_not_contains "$OUT" '\/'
}

t_keys() {
	require_cmd jq
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r '.hooks | join(",")' "$OUT_FILE")" \
		"prestart,createRuntime,createContainer,startContainer,poststart,poststop"
	for o in ro rw bind rbind nosuid nodev noexec rprivate rslave \
		tmpcopyup idmap ridmap nosymfollow; do
		jq -e --arg o "$o" '.mountOptions | index($o)' "$OUT_FILE" \
			>/dev/null || fail "mount option $o missing"
	done
	assert_eq "$(jq -r '.linux.namespaces | sort | join(",")' "$OUT_FILE")" \
		"cgroup,ipc,mount,network,pid,time,user,uts"
	assert_eq "$(jq -r '.linux.cgroup.v2' "$OUT_FILE")" true
	assert_eq "$(jq -r '.linux.seccomp.enabled' "$OUT_FILE")" true
	assert_eq "$(jq -r '.linux.seccomp.actions | length' "$OUT_FILE")" 9
	assert_eq "$(jq -r '.linux.seccomp.operators | length' "$OUT_FILE")" 7
	jq -e '.linux.seccomp.archs | index("SCMP_ARCH_X86_64")' "$OUT_FILE" \
		>/dev/null || fail "x86_64 arch missing"
	# supportedFlags is a subset of knownFlags
	assert_eq "$(jq -r '.linux.seccomp as $s | [$s.supportedFlags[] |
		select(. as $f | $s.knownFlags | index($f) | not)] | length' \
		"$OUT_FILE")" 0
	if [ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" = Y ]; then
		assert_eq "$(jq -r '.linux.apparmor.enabled' "$OUT_FILE")" true
	else
		assert_eq "$(jq -r '.linux.apparmor.enabled' "$OUT_FILE")" false
	fi
	assert_eq "$(jq -r '.linux.intelRdt.enabled' "$OUT_FILE")" false
	jq -e '.linux.selinux.enabled | type == "boolean"' "$OUT_FILE" \
		>/dev/null || fail "selinux.enabled not a boolean"
	jq -e '.linux.mountExtensions.idmap.enabled | type == "boolean"' \
		"$OUT_FILE" >/dev/null || fail "idmap.enabled not a boolean"
	assert_match "$(jq -r '.annotations["io.github.seccomp.libseccomp.version"]' \
		"$OUT_FILE")" '^[0-9]+\.[0-9]+\.[0-9]+$'
	assert_match "$(jq -r '.annotations["run.agentrun.version"]' \
		"$OUT_FILE")" '^[0-9]+\.[0-9]+'
}

t_capabilities_match_kernel() {
	require_cmd jq
	local last
	[ -r /proc/sys/kernel/cap_last_cap ] || skip "no cap_last_cap"
	last=$(cat /proc/sys/kernel/cap_last_cap)
	assert_status 0 "$AGENTRUN" features
	assert_eq "$(jq -r '.linux.capabilities | length' "$OUT_FILE")" \
		"$((last + 1))"
	assert_eq "$(jq -r '.linux.capabilities[0]' "$OUT_FILE")" CAP_CHOWN
	jq -e '.linux.capabilities | index("CAP_SYS_ADMIN")' "$OUT_FILE" \
		>/dev/null || fail "CAP_SYS_ADMIN missing"
}

t_schema() {
	python3 -c 'import jsonschema' 2>/dev/null ||
		skip "python3 jsonschema not installed (apt-get install python3-jsonschema)"
	[ -n "$OCI_SCHEMA_DIR" ] ||
		skip "OCI_SCHEMA_DIR not set (the runtime-spec's schema directory)"
	[ -f "$OCI_SCHEMA_DIR/features-schema.json" ] ||
		skip "runtime-spec schema not found at OCI_SCHEMA_DIR=$OCI_SCHEMA_DIR"
	assert_status 0 "$AGENTRUN" features
	python3 - "$OCI_SCHEMA_DIR" "$OUT_FILE" <<'PY'
import json, os, sys, warnings
warnings.simplefilter("ignore")
import jsonschema

d, doc_file = sys.argv[1], sys.argv[2]
schema = json.load(open(os.path.join(d, "features-schema.json")))
doc = json.load(open(doc_file))
base = "file://" + os.path.abspath(d) + "/"
try:
    from referencing import Registry, Resource
    from referencing.jsonschema import DRAFT4
    res = {}
    for f in os.listdir(d):
        if f.endswith(".json"):
            res[base + f] = Resource.from_contents(
                json.load(open(os.path.join(d, f))), default_specification=DRAFT4)
    registry = Registry().with_resources(res.items())
    schema = dict(schema, id=base + "features-schema.json")
    v = jsonschema.Draft4Validator(schema, registry=registry)
except ImportError:
    resolver = jsonschema.RefResolver(base + "features-schema.json", schema)
    v = jsonschema.Draft4Validator(schema, resolver=resolver)
errors = sorted(v.iter_errors(doc), key=lambda e: list(e.path))
for e in errors:
    print("schema error at /%s: %s" % ("/".join(map(str, e.path)), e.message))
sys.exit(1 if errors else 0)
PY
}

t_bad_args() {
	assert_status 1 "$AGENTRUN" features extra
	assert_contains "$ERR" "unexpected argument"
	assert_status 0 "$AGENTRUN" features --help
	assert_contains "$OUT" "Usage: agentrun features"
}

run_test "features prints valid JSON" t_json_valid
run_test "features has the expected keys" t_keys
run_test "features lists the kernel's capabilities" t_capabilities_match_kernel
run_test "features validates against features-schema.json" t_schema
run_test "features rejects arguments" t_bad_args
finish
