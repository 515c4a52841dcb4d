#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A hostile command in `agentrun sandbox` tries to leave something the
# host runs or trusts later, or to reach what is not namespaced: setuid
# files (root mode), vsock, the home directory as the workspace, rc-file
# secrets, agent config written through a profile, a forged state root,
# learn mode widening grants. Each case asserts the host is untouched.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

SETID='
cp /bin/dash x && chmod 4755 x; chmod g+s x
cp /bin/dash y && chmod 6755 y
install -m 4755 /bin/dash z
python3 -c "import os; os.close(os.open(\"o\", os.O_CREAT|os.O_WRONLY, 0o4755))"
python3 -c "import os; os.mknod(\"n\", 0o100000|0o4755)"
mkdir -p d && chmod 2755 d
true'

t_setid_files()
{
	local mode=$1
	shift
	require_cmd python3
	sb_home "$mode"
	sb_home_own
	[ "${1:-}" != learn ] || set -- --learn "$H/learned.json"
	assert_status 0 sb_run "$@" -- sh -c "$SETID"
	[ -e "$WS/x" ] || fail "the command did not run: $ERR"
	assert_eq "$(find "$WS" -perm /6000 | sort)" "" "setuid/setgid files left"
}

t_vsock()
{
	require_cmd python3
	sb_home user
	sb_home_own
	assert_status 0 sb_run -- python3 -c '
import socket
for name, fam in (("vsock", 40), ("bluetooth", 31), ("inet", 2), ("unix", 1)):
    try:
        socket.socket(fam, socket.SOCK_STREAM).close(); print(name, "created")
    except OSError as e:
        print(name, e.errno)'
	assert_contains "$OUT" "vsock 1"
	assert_contains "$OUT" "bluetooth 1"
	assert_contains "$OUT" "inet created"
	assert_contains "$OUT" "unix created"
}

run_test "hostile: root mode leaves no setuid/setgid file" t_setid_files root
run_test "hostile: root mode --learn leaves no setuid/setgid file" t_setid_files root learn
run_test "hostile: rootless leaves no setuid/setgid file" t_setid_files user
run_test "hostile: AF_VSOCK and other non-namespaced families refused" t_vsock
finish
