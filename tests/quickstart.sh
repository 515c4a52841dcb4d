#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# quickstart.sh — build a tiny busybox bundle and run one command in it with
# agentrun, then one command in `agentrun sandbox`, to show that a fresh
# build works (tests/integration/test_quickstart.sh runs it).
#
# Usage: tests/quickstart.sh            (from the build directory)
#        AGENTRUN=/path/to/agentrun tests/quickstart.sh
#
# As a normal user it uses a rootless config (`agentrun spec --rootless`);
# as root, the default one. The bundle lives in a temp dir that is removed
# at the end. Exit status 0 iff the container and the sandbox printed the
# expected lines.
set -eu -o pipefail

die() { echo "quickstart: $*" >&2; exit 1; }

if [ -z "${AGENTRUN:-}" ]; then
	for c in ./agentrun "$(dirname "$0")/../agentrun"; do
		if [ -x "$c" ]; then
			AGENTRUN=$c
			break
		fi
	done
fi
[ -n "${AGENTRUN:-}" ] && [ -x "$AGENTRUN" ] ||
	die "agentrun binary not found: run me from the build directory or set AGENTRUN"
AGENTRUN=$(cd "$(dirname "$AGENTRUN")" && pwd)/$(basename "$AGENTRUN")

bb=$(command -v busybox) || die "busybox not found (install busybox-static)"
if ldd "$bb" >/dev/null 2>&1; then
	die "$bb is dynamically linked; install busybox-static"
fi
command -v jq >/dev/null || die "jq not found (install jq)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/agentrun-quickstart.XXXXXX")
id=quickstart-$$
cleanup()
{
	"$AGENTRUN" --root "$tmp/state" delete --force "$id" >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT

bundle=$tmp/bundle
mkdir -p "$bundle/rootfs/bin" "$bundle/rootfs/"{proc,sys,dev,tmp,etc,root}
cp "$bb" "$bundle/rootfs/bin/busybox"
for a in sh echo cat ls id; do
	ln -s busybox "$bundle/rootfs/bin/$a"
done

spec_args=(spec --bundle "$bundle")
if [ "$(id -u)" != 0 ]; then
	spec_args=(spec --rootless --bundle "$bundle")
fi
echo "+ agentrun ${spec_args[*]}"
"$AGENTRUN" "${spec_args[@]}"
jq '.process.args = ["echo", "hello from agentrun"] | .process.terminal = false' \
	"$bundle/config.json" >"$tmp/config.json"
mv "$tmp/config.json" "$bundle/config.json"

echo "+ agentrun run --bundle $bundle $id"
out=$("$AGENTRUN" --root "$tmp/state" run --bundle "$bundle" "$id" </dev/null)
echo "$out"
[ "$out" = "hello from agentrun" ] || die "unexpected output from the container"

# The agent layer: the same kind of command in a sandbox derived from this
# host (host /usr read-only, a private home, this directory as the
# workspace, no network).
mkdir -p "$tmp/workspace"
echo "+ cd $tmp/workspace && agentrun sandbox -- sh -c 'echo hello from the sandbox > note; cat note'"
out=$(cd "$tmp/workspace" && "$AGENTRUN" --root "$tmp/state" sandbox -- \
	sh -c 'echo hello from the sandbox > note; cat note' </dev/null)
echo "$out"
[ "$out" = "hello from the sandbox" ] || die "unexpected output from the sandbox"
[ "$(stat -c %u "$tmp/workspace/note")" = "$(id -u)" ] ||
	die "the sandbox's file in the workspace is not owned by $(id -un)"
echo "quickstart: OK"
