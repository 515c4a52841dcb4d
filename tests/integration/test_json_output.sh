#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every JSON document agentrun writes stays valid JSON when a string in it
# holds the characters JSON must escape: a bundle path with '"', '\', a
# tab and a newline goes through state, list --format json, the hooks'
# stdin, the seccomp listener's process state, the JSON log
# (--log-format json) and the error it logs; each
# output is parsed back with jq and the path compared byte for byte.
. "$(dirname "$0")/../lib.sh"

WEIRD=$'we"ird\\dir\twith\nnewline'

# weird_bundle: a bundle in $TEST_TMP/$WEIRD whose prestart hook copies its
# stdin (the state JSON) to $TEST_TMP/hook.json.
weird_bundle()
{
	local b=$TEST_TMP/$WEIRD
	make_bundle "$b"
	config_set "$b" '.process.args = ["true"]
	  | .hooks = {createRuntime: [{path: "/bin/sh",
	      args: ["sh", "-c", "cat >\"$OUT\""],
	      env: ["OUT=" + $out]}]}' --arg out "$TEST_TMP/hook.json"
	echo "$b"
}

test_state_and_list()
{
	local b id out
	b=$(weird_bundle)
	id=$(unique_id)
	ar create --bundle "$b" "$id"
	defer ar delete --force "$id"
	out=$(ar state "$id")
	assert_eq "$(jq -r .bundle <<<"$out")" "$b"
	out=$(ar list --format json)
	jq -e . <<<"$out" >/dev/null || fail "list --format json is not JSON: $out"
	assert_eq "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .bundle' <<<"$out")" "$b"
	# The hook's stdin.
	jq -e . "$TEST_TMP/hook.json" >/dev/null ||
		fail "the hook's state is not JSON: $(cat "$TEST_TMP/hook.json")"
	assert_eq "$(jq -r .bundle "$TEST_TMP/hook.json")" "$b"
}

test_json_log()
{
	local b id log line n=0
	b=$TEST_TMP/$WEIRD-missing
	id=$(unique_id)
	log=$TEST_TMP/log.json
	: >"$log"
	# A bundle that does not exist: the error names the path, in the log.
	if ar --log "$log" --log-format json create --bundle "$b" "$id" 2>/dev/null; then
		ar delete --force "$id"
		fail "create of a missing bundle succeeded"
	fi
	[ -s "$log" ] || fail "nothing logged"
	while IFS= read -r line; do
		jq -e . <<<"$line" >/dev/null || fail "log line is not JSON: $line"
		n=$((n + 1))
	done <"$log"
	# The whole path, escapes undone, is in one message.
	jq -r .msg "$log" | grep -qF "we\"ird\\dir" ||
		fail "the logged error does not name the path: $(cat "$log")"
	echo "# $n JSON log line(s)"
}


# The seccomp agent on listenerPath receives the container's state inside
# the process state (config-linux.md): parsed back, the bundle is intact.
test_seccomp_listener()
{
	local b id sock=$TEST_TMP/listener.sock lpid
	require_cmd python3
	b=$(weird_bundle)
	cat >"$TEST_TMP/listener.py" <<'PY'
import json, socket, sys
path, out = sys.argv[1], sys.argv[2]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(30)
open(path + ".ready", "w").close()
conn, _ = srv.accept()
conn.settimeout(10)
msg, _, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(16))
while True:
    try:
        state = json.loads(msg)
        break
    except ValueError:
        more = conn.recv(1 << 16)
        if not more:
            open(out, "w").write(repr(msg))
            sys.exit(1)
        msg += more
json.dump(state, open(out, "w"))
PY
	python3 "$TEST_TMP/listener.py" "$sock" "$TEST_TMP/seen.json" \
		>"$TEST_TMP/listener.log" 2>&1 &
	lpid=$!
	defer kill "$lpid"
	wait_until 10 test -e "$sock.ready"
	config_set "$b" '.hooks = {}
	  | .linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
	      listenerPath: $s,
	      syscalls: [{names: ["getpriority"], action: "SCMP_ACT_NOTIFY"}]}' \
		--arg s "$sock"
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 timeout 60 "$AGENTRUN" --root "$AR_ROOT" run \
		--bundle "$b" "$id"
	wait "$lpid" || fail "the listener got no valid JSON: $(cat "$TEST_TMP/seen.json" "$TEST_TMP/listener.log" 2>&1)"
	assert_eq "$(jq -r .state.bundle "$TEST_TMP/seen.json")" "$b"
	assert_eq "$(jq -r .state.status "$TEST_TMP/seen.json")" creating
}

run_test "bundle path with quote, backslash, tab, newline: state, list --format json, hook stdin" test_state_and_list
run_test "bundle path with quote, backslash, tab, newline: seccomp listener's process state" test_seccomp_listener
run_test "JSON log of an error naming such a path" test_json_log
finish
