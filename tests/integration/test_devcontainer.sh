#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# contrib/devcontainer/ runs through podman with agentrun: (1) the podman
# command lines that devcontainer.json amounts to (`devcontainer up` runs
# the image with its runArgs, the workspace bind-mounted at
# /workspace, then `podman exec`s into it); (2) the real Dev Containers
# CLI (`devcontainer up --docker-path podman` + `devcontainer exec`) when
# it is installed (in PATH, or $DEVCONTAINER). No registry is reachable:
# the config's image is replaced by a local busybox image (`podman import`)
# and, as root on a host with cgroup v1 trees, `--cgroups=disabled` is
# added. agentrun's argv log proves podman really ran agentrun.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../podman-lib.sh
. "$(dirname "$0")/../podman-lib.sh"

if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
	skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
fi
if [ "$(id -u)" != 0 ]; then
	skip "needs root (podman with isolated storage under TEST_TMP)"
fi
command -v jq >/dev/null || skip "jq not installed"

PM=$TEST_TMP/podman
CALLS=$PM/calls.log
IMAGE=localhost/agentrun-devcontainer-busybox
CONF=$TOP_SRCDIR/contrib/devcontainer/devcontainer.json

# podman on storage of its own, agentrun by name through the shipped
# drop-in (tests/podman-lib.sh); the devcontainer's runArgs name the
# runtime; the file events backend: `devcontainer up` waits for the start
# event.
setup_podman()
{
	podman_setup "$PM" --log "$CALLS" --events file --no-runtime-flag &&
		podman_import "$PM" "$IMAGE"
}

pm()
{
	"$PM/pm" "$@"
}

# The workspace with the config as .devcontainer/devcontainer.json, its
# image replaced by the local one.
make_workspace()
{
	local ws=$1
	mkdir -p "$ws/.devcontainer"
	jq --arg img "$IMAGE" '.image = $img | .runArgs += ["--cgroups=disabled"]' \
		"$CONF" >"$ws/.devcontainer/devcontainer.json"
	echo from-host >"$ws/file.txt"
}

t_config_is_valid()
{
	# shellcheck disable=SC2016 # jq's $i
	assert_status 0 jq -e '.runArgs | index("--runtime") as $i
		| .[$i + 1] == "agentrun"' "$CONF"
	assert_status 0 jq -e '.workspaceFolder == "/workspace"' "$CONF"
}

# What `devcontainer up` + `devcontainer exec` run, by hand.
t_podman_command_lines()
{
	local ws=$TEST_TMP/ws1 c
	make_workspace "$ws"
	: >"$CALLS"
	local -a run_args
	mapfile -t run_args < <(jq -r '.runArgs[]' "$ws/.devcontainer/devcontainer.json")
	assert_status 0 pm run -d \
		--mount "source=$ws,target=/workspace,type=bind" \
		-u "$(jq -r .containerUser "$CONF")" "${run_args[@]}" \
		--entrypoint /bin/sh "$IMAGE" \
		-c 'echo Container started; trap "exit 0" 15; while sleep 1 & wait $!; do :; done'
	c=$OUT
	defer pm rm -f "$c"
	assert_status 0 pm exec -w "$(jq -r .workspaceFolder "$CONF")" "$c" \
		sh -c 'cat file.txt; echo from-container >out.txt'
	assert_eq "$OUT" from-host
	assert_eq "$(cat "$ws/out.txt")" from-container
	# the runArgs took effect: no capabilities, no network but lo
	assert_status 0 pm exec "$c" sh -c 'grep CapEff /proc/self/status; ls /sys/class/net'
	assert_contains "$OUT" "CapEff:	0000000000000000"
	assert_eq "$(echo "$OUT" | tail -n1)" lo
	assert_status 0 pm stop -t 2 "$c"
	grep -q ' create ' "$CALLS" || fail "agentrun was not called: $(cat "$CALLS")"
	grep -q ' exec ' "$CALLS" || fail "agentrun exec was not called"
}

t_devcontainer_cli()
{
	local ws=$TEST_TMP/ws2 dc=${DEVCONTAINER:-} major id
	[ -n "$dc" ] || dc=$(command -v devcontainer || true)
	[ -n "$dc" ] ||
		skip "the Dev Containers CLI is not installed (npm install -g @devcontainers/cli, or DEVCONTAINER=PATH)"
	major=$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/')
	[ "${major:-0}" -ge 20 ] ||
		skip "the Dev Containers CLI needs node >= 20 (have ${major:-none})"
	make_workspace "$ws"
	: >"$CALLS"
	assert_status 0 timeout 120 "$dc" up --docker-path "$PM/pm" \
		--workspace-folder "$ws"
	assert_contains "$OUT" '"outcome":"success"'
	id=$(grep -o '"containerId":"[0-9a-f]*"' <<<"$OUT" | cut -d'"' -f4)
	[ -n "$id" ] || fail "no containerId in: $OUT"
	defer pm rm -f "$id"
	assert_status 5 timeout 60 "$dc" exec --docker-path "$PM/pm" \
		--workspace-folder "$ws" sh -c 'cat /workspace/file.txt; pwd; exit 5'
	assert_contains "$OUT" from-host
	assert_contains "$OUT" /workspace
	grep -q "create --bundle .*$id" "$CALLS" ||
		fail "podman did not create the container with agentrun: $(cat "$CALLS")"
	grep -q ' exec ' "$CALLS" || fail "agentrun exec was not called"
}

# A non-root remoteUser, rootless (podman's --userns=keep-id, which the CLI
# adds, is rootless only): `devcontainer up` first builds the uid-update
# image (a Dockerfile with a RUN step, run by agentrun: the engine's
# default runtime here), then runs it. --cap-drop ALL is left out: the
# CLI itself writes /etc/environment as root, and with keep-id this
# image's /etc belongs to the remote user.
t_devcontainer_cli_remote_user()
{
	local pmu=$TEST_TMP/podman-user ws=$TEST_TMP/ws-user dc=${DEVCONTAINER:-}
	local major id
	[ -n "$dc" ] || dc=$(command -v devcontainer || true)
	[ -n "$dc" ] ||
		skip "the Dev Containers CLI is not installed (npm install -g @devcontainers/cli, or DEVCONTAINER=PATH)"
	major=$(node --version 2>/dev/null | sed 's/^v\([0-9]*\).*/\1/')
	[ "${major:-0}" -ge 20 ] ||
		skip "the Dev Containers CLI needs node >= 20 (have ${major:-none})"
	require_subids
	require_agentrun_as_test_user
	podman_setup "$pmu" --log "$pmu/calls.log" --events file \
		--no-runtime-flag || fail "podman setup"
	# the uid-update build runs with the engine's default runtime
	sed -i '/^\[engine\]$/a runtime = "agentrun"' "$pmu/containers.conf"
	podman_import "$pmu" "$IMAGE" user
	chmod 0666 "$pmu/calls.log"
	mkdir -p "$ws/.devcontainer"
	jq --arg img "$IMAGE" '.image = $img | .remoteUser = "testuser"
		| .runArgs -= ["--cap-drop", "ALL"]' "$CONF" \
		>"$ws/.devcontainer/devcontainer.json"
	echo from-host >"$ws/file.txt"
	chown -R "$TEST_UID:$TEST_GID" "$ws"
	STATUS=0
	(cd "$pmu" && as_test_user timeout 300 "$dc" up --docker-path "$pmu/pm" \
		--workspace-folder "$ws") >"$TEST_TMP/o" 2>&1 || STATUS=$?
	OUT=$(cat "$TEST_TMP/o")
	assert_eq "$STATUS" 0 "devcontainer up: $(tail -n 5 "$TEST_TMP/o")"
	assert_contains "$OUT" '"outcome":"success"'
	assert_contains "$OUT" '"remoteUser":"testuser"'
	id=$(grep -o '"containerId":"[0-9a-f]*"' <<<"$OUT" | cut -d'"' -f4)
	[ -n "$id" ] || fail "no containerId in: $OUT"
	defer sh -c "cd '$pmu' && exec setpriv --reuid '$TEST_UID' --regid '$TEST_GID' --init-groups env XDG_RUNTIME_DIR='$TEST_XDG_RUNTIME_DIR' '$pmu/pm' rm -f '$id'"
	# the uid-update build's RUN step ran through agentrun
	grep -q "create --bundle /var/tmp/buildah" "$pmu/calls.log" ||
		fail "the uid-update build did not run agentrun: $(cat "$pmu/calls.log")"
	STATUS=0
	(cd "$pmu" && as_test_user timeout 60 "$dc" exec --docker-path \
		"$pmu/pm" --workspace-folder "$ws" \
		sh -c 'id -un; id -u; cat /workspace/file.txt') \
		>"$TEST_TMP/o" 2>&1 || STATUS=$?
	assert_eq "$STATUS" 0 "devcontainer exec: $(cat "$TEST_TMP/o")"
	assert_contains "$(cat "$TEST_TMP/o")" testuser
	# the remote user's uid was updated to the host user's
	assert_contains "$(cat "$TEST_TMP/o")" "$TEST_UID"
	assert_contains "$(cat "$TEST_TMP/o")" from-host
}

setup_podman
run_test "devcontainer: devcontainer.json names agentrun and /workspace" \
	t_config_is_valid
run_test "devcontainer: its podman command lines run with agentrun" \
	t_podman_command_lines
run_test "devcontainer: devcontainer up/exec through podman with agentrun" \
	t_devcontainer_cli
run_test "devcontainer rootless: up with a non-root remoteUser (uid-update build)" \
	t_devcontainer_cli_remote_user
finish
