#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# agentrun's state root (--root: the containers' state, the sandboxes'
# control sockets in .control/, the --vm kernel cache's checksums) is
# never visible inside a sandbox, even when the user shows a directory
# that holds it (`--rw $XDG_RUNTIME_DIR` for an ssh-agent or a display
# socket, `--ro` of a parent, a workspace above it). A read-only view is
# not enough: connect(2) on a unix socket needs no write on the mount,
# so an agent that sees its own control socket grants itself what it
# asks (the user decides, "never the agent's own").
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# probe ROOT: what the agent finds there, and a policy request to every
# control socket it sees
PROBE='ls -A "$1" "$1/.control" 2>&1
for s in "$1"/.control/*.sock; do
	[ -S "$s" ] || continue
	python3 -c "import socket,sys
s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b\"{\\\"op\\\":\\\"policy\\\"}\\n\"); print(\"REPLY\", s.recv(4096))" "$s" 2>&1
done
true'

# run_root ROOT ARGS...: `agentrun --root ROOT sandbox --no-tty ARGS` as
# MODE's user from $WS with HOME=$H
run_root()
{
	local root=$1
	shift
	if [ "$MODE" = root ]; then
		(cd "$WS" && env HOME="$H" "$AGENTRUN" --root "$root" sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$root" sandbox --no-tty "$@"
	fi
}

# t_state_root MODE HOW: the state root at $H/run/agentrun (as
# $XDG_RUNTIME_DIR/agentrun is); HOW: rw (--rw of $H/run), ro-parent
# (--ro of $H/run), workspace (the workspace is $H/run)
t_state_root()
{
	sb_home "$1"
	require_cmd python3
	local root=$H/run/agentrun
	mkdir -p "$root"
	chmod 0700 "$H/run" "$root"
	sb_home_own
	# the sandbox's own control socket is bound at its start
	case $2 in
	rw) assert_status 0 run_root "$root" --rw "$H/run" -- sh -c "$PROBE" _ "$root" ;;
	ro-parent) assert_status 0 run_root "$root" --ro "$H/run" -- sh -c "$PROBE" _ "$root" ;;
	workspace) assert_status 0 run_root "$root" --workspace "$H/run" -- sh -c "$PROBE" _ "$root" ;;
	esac
	assert_not_contains "$OUT" "REPLY" "the agent reached a control socket"
	assert_not_contains "$OUT" ".sock" "the agent saw the control sockets"
	assert_not_contains "$OUT" "sandbox-" "the agent saw the containers' state"
}

for mode in root user; do
	run_test "state root ($mode): --rw of the state root shows nothing of it" t_state_root $mode rw
	run_test "state root ($mode): --ro of its parent shows nothing of it" t_state_root $mode ro-parent
	run_test "state root ($mode): a workspace above it shows nothing of it" t_state_root $mode workspace
done
finish
