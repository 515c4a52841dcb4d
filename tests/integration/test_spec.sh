#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun spec`, and configs from other tools (crun, runc, podman) parse.
. "$(dirname "$0")/../lib.sh"

# The unit-test binary that parses the files named in $PARSE_CORPUS.
CORPUS_BIN=$TOP_BUILDDIR/tests/unit/test_parse_corpus

# parse_ok FILE...: every FILE parses with spec/ (oci_config_load_file).
parse_ok()
{
	local list
	[ -x "$CORPUS_BIN" ] || skip "$CORPUS_BIN not built (make check builds it)"
	list=$(IFS=:; echo "$*")
	assert_status 0 env PARSE_CORPUS="$list" "$CORPUS_BIN"
	assert_contains "$OUT" "ok 5 - corpus_files_from_env"
	assert_not_contains "$OUT" "not ok 5"
}

t_spec_default()
{
	require_cmd jq
	local b=$TEST_TMP/default
	mkdir -p "$b"
	(cd "$b" && "$AGENTRUN" spec) || fail "agentrun spec failed"
	[ -f "$b/config.json" ] || fail "no config.json"
	assert_eq "$(config_get "$b" .ociVersion)" "1.2.0"
	assert_eq "$(config_get "$b" .process.terminal)" "false"
	assert_eq "$(config_get "$b" '.process.args|join(" ")')" "sh"
	assert_eq "$(config_get "$b" .hostname)" "agentrun"
	assert_eq "$(config_get "$b" .root.path)" "rootfs"
	assert_eq "$(config_get "$b" .root.readonly)" "true"
	assert_eq "$(config_get "$b" .process.noNewPrivileges)" "true"
	assert_eq "$(config_get "$b" '[.linux.namespaces[].type]|join(",")')" \
		"pid,network,ipc,uts,mount,cgroup"
	assert_eq "$(config_get "$b" '.mounts[]|select(.destination=="/sys")|.type')" "sysfs"
	assert_eq "$(config_get "$b" '.linux.seccomp.defaultAction|type')" "string"
	# '/' is not escaped, the output is indented
	assert_status 0 grep -q '"/proc/sys"' "$b/config.json"
	assert_status 1 grep -qF '\/' "$b/config.json"
	assert_status 0 grep -q '^	"ociVersion": "1.2.0",$' "$b/config.json"
	parse_ok "$b/config.json"
}

t_spec_bundle_option()
{
	local b1=$TEST_TMP/b1 b2=$TEST_TMP/b2
	mkdir -p "$b1" "$b2"
	assert_status 0 "$AGENTRUN" spec --bundle "$b1"
	assert_status 0 "$AGENTRUN" spec -b "$b2"
	[ -s "$b1/config.json" ] || fail "--bundle did not write $b1/config.json"
	[ -s "$b2/config.json" ] || fail "-b did not write $b2/config.json"
	assert_status '!0' "$AGENTRUN" spec --bundle "$TEST_TMP/does-not-exist"
	assert_contains "$ERR" "does-not-exist"
}

# crun's --file: another file than config.json, relative to the bundle
# directory, replaced when it exists; config.json itself untouched
t_spec_file_option()
{
	local b=$TEST_TMP/bf
	mkdir -p "$b"
	echo '{"mine": true}' >"$b/config.json"
	assert_status 0 "$AGENTRUN" spec -b "$b" --file alt.json
	assert_match "$(jq -r .ociVersion "$b/alt.json")" '^1\.[0-9]+\.[0-9]+$'
	assert_eq "$(cat "$b/config.json")" '{"mine": true}'
	echo stale >"$b/alt.json"
	assert_status 0 "$AGENTRUN" spec -b "$b" -f alt.json --rootless
	assert_eq "$(jq -r '.linux.uidMappings[0].hostID' "$b/alt.json")" "$(id -u)"
	assert_status 0 "$AGENTRUN" spec -f "$TEST_TMP/abs.json"
	jq -e .process "$TEST_TMP/abs.json" >/dev/null || fail "--file with an absolute path"
	assert_status 1 "$AGENTRUN" spec -b "$b" -f no/such/dir/x.json
	assert_contains "$ERR" "no/such/dir/x.json"
}

t_spec_refuses_overwrite()
{
	local b=$TEST_TMP/over before
	mkdir -p "$b"
	echo '{"mine": true}' >"$b/config.json"
	before=$(sha256sum <"$b/config.json")
	assert_status '!0' "$AGENTRUN" spec --bundle "$b"
	assert_contains "$ERR" "config.json already exists"
	assert_eq "$(sha256sum <"$b/config.json")" "$before" "config.json was changed"
	# a symlink named config.json is not followed
	rm "$b/config.json"
	ln -s "$TEST_TMP/target" "$b/config.json"
	assert_status '!0' "$AGENTRUN" spec --bundle "$b"
	[ ! -e "$TEST_TMP/target" ] || fail "followed the config.json symlink"
}

t_spec_rootless()
{
	require_cmd jq
	local b=$TEST_TMP/rootless
	mkdir -p "$b"
	assert_status 0 "$AGENTRUN" spec --rootless --bundle "$b"
	assert_eq "$(config_get "$b" '[.linux.namespaces[]|select(.type=="user")]|length')" 1
	assert_eq "$(config_get "$b" '.linux.uidMappings|length')" 1
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].containerID')" 0
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].hostID')" "$(id -u)"
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].size')" 1
	assert_eq "$(config_get "$b" '.linux.gidMappings[0].hostID')" "$(id -g)"
	assert_eq "$(config_get "$b" '.mounts[]|select(.destination=="/sys")|.source')" "/sys"
	assert_eq "$(config_get "$b" '[.mounts[]|select(.destination=="/sys")|.options[]]|index("rbind")!=null')" "true"
	assert_eq "$(config_get "$b" '[.mounts[]|select(.destination=="/dev/pts")|.options[]|select(startswith("gid="))]|length')" 0
	assert_eq "$(config_get "$b" '[.linux.namespaces[].type]|index("network")!=null')" "true"
	parse_ok "$b/config.json"
}

t_spec_rootless_as_user()
{
	require_cmd jq
	ensure_test_user
	require_agentrun_as_test_user
	local b=$TEST_TMP/user-bundle
	mkdir -p "$b"
	chown "$TEST_UID:$TEST_GID" "$b"
	assert_status 0 as_test_user "$AGENTRUN" spec --rootless --bundle "$b"
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].hostID')" "$TEST_UID"
	assert_eq "$(config_get "$b" '.linux.gidMappings[0].hostID')" "$TEST_GID"
	assert_eq "$(stat -c %u "$b/config.json")" "$TEST_UID"
	parse_ok "$b/config.json"
}

t_spec_help_and_bad_options()
{
	assert_status 0 "$AGENTRUN" spec --help
	assert_contains "$OUT" "--rootless"
	assert_contains "$OUT" "terminal"
	assert_status '!0' "$AGENTRUN" spec --bogus
	assert_status '!0' "$AGENTRUN" spec extra-argument
	assert_contains "$ERR" "extra-argument"
}

# spec_of TOOL DIR [ARGS]: TOOL spec ARGS in DIR
spec_of()
{
	local tool=$1 dir=$2
	shift 2
	mkdir -p "$dir"
	(cd "$dir" && "$tool" spec "$@") || fail "$tool spec $* failed"
}

t_corpus_crun_runc()
{
	local files=() tool
	for tool in crun runc; do
		command -v "$tool" >/dev/null 2>&1 || continue
		spec_of "$tool" "$TEST_TMP/$tool" 
		spec_of "$tool" "$TEST_TMP/$tool-rootless" --rootless
		files+=("$TEST_TMP/$tool/config.json" "$TEST_TMP/$tool-rootless/config.json")
	done
	[ ${#files[@]} -gt 0 ] || skip "neither crun nor runc is installed"
	parse_ok "${files[@]}"
}

# A config.json written by podman: a fake runtime named "crun" (podman only
# allows --cgroups=disabled with crun) copies the bundle's config.json and
# fails the create. Podman runs with private storage under $TEST_TMP.
t_corpus_podman()
{
	require_root
	require_cmd podman tar
	local d=$TEST_TMP/podman bb
	bb=$(command -v busybox) || skip "needs busybox"
	mkdir -p "$d/rootfs/bin" "$d/bin"
	cp "$bb" "$d/rootfs/bin/busybox"
	ln -s busybox "$d/rootfs/bin/sh"
	ln -s busybox "$d/rootfs/bin/true"
	tar -C "$d/rootfs" -cf "$d/rootfs.tar" .
	cat >"$d/bin/crun" <<EOF
#!/bin/sh
bundle= prev=
for a in "\$@"; do
	case "\$prev" in --bundle|-b) bundle=\$a ;; esac
	case "\$a" in --bundle=*) bundle=\${a#--bundle=} ;; esac
	prev=\$a
done
if [ -n "\$bundle" ] && [ -f "\$bundle/config.json" ]; then
	cp "\$bundle/config.json" "$d/config-\$\$.json"
fi
echo "capture runtime: not a real runtime" >&2
exit 1
EOF
	chmod +x "$d/bin/crun"
	local p=(podman --root "$d/store" --runroot "$d/run"
		--storage-driver vfs --cgroup-manager cgroupfs
		--events-backend none)
	defer rm -rf "$d/store" "$d/run"
	"${p[@]}" import "$d/rootfs.tar" localhost/agentrun-spec-test >/dev/null 2>&1 ||
		skip "podman import failed"
	local run=("${p[@]}" run --rm --runtime "$d/bin/crun" --cgroups=disabled
		--network=none)
	timeout 60 "${run[@]}" localhost/agentrun-spec-test true >/dev/null 2>&1 || true
	timeout 60 "${run[@]}" --cap-add SYS_ADMIN --pids-limit 100 \
		--ulimit nofile=100:200 -e FOO=bar --hostname hh --read-only \
		--tmpfs /x --security-opt seccomp=unconfined \
		localhost/agentrun-spec-test true >/dev/null 2>&1 || true
	"${p[@]}" rm -a -f >/dev/null 2>&1 || true
	local files=("$d"/config-*.json)
	[ -f "${files[0]}" ] || skip "podman did not call the capture runtime"
	parse_ok "${files[@]}"
}

# The generated config really runs (with the embedded seccomp profile).
t_spec_config_runs()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/runs id
	id=$(unique_id)
	mkdir -p "$b"
	make_rootfs "$b/rootfs"
	assert_status 0 "$AGENTRUN" spec --bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo hello; grep ^Seccomp: /proc/self/status; hostname"]'
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_contains "$OUT" "hello"
	assert_match "$OUT" "Seccomp:[[:space:]]+2"
	assert_contains "$OUT" "agentrun"
}

t_spec_rootless_config_runs()
{
	require_cmd jq
	ensure_test_user
	require_agentrun_as_test_user
	local b=$TEST_TMP/runs-rootless id
	id=$(unique_id)
	mkdir -p "$b"
	make_rootfs "$b/rootfs"
	chown -hR "$TEST_UID:$TEST_GID" "$b"
	assert_status 0 as_test_user "$AGENTRUN" spec --rootless --bundle "$b"
	config_set "$b" '.process.args=["sh","-c","id -u; ls /sys/kernel >/dev/null && echo sys-ok"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	assert_eq "$(head -n1 <<<"$OUT")" "0" "not root in the container"
	assert_contains "$OUT" "sys-ok"
}

run_test "spec writes a default config.json in the cwd" t_spec_default
run_test "spec --bundle / -b" t_spec_bundle_option
run_test "spec --file / -f (crun)" t_spec_file_option
run_test "spec refuses to overwrite config.json" t_spec_refuses_overwrite
run_test "spec --rootless maps root to the caller" t_spec_rootless
run_test "spec --rootless as an unprivileged user" t_spec_rootless_as_user
run_test "spec --help and bad options" t_spec_help_and_bad_options
run_test "the default config runs" t_spec_config_runs
run_test "the --rootless config runs as an unprivileged user" t_spec_rootless_config_runs
run_test "crun/runc spec output parses" t_corpus_crun_runc
run_test "podman-generated config.json parses" t_corpus_podman
finish
