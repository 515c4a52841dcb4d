#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The global logging options as crun has them: --log-level (error,
# warning, info, debug), --log [file:]PATH, syslog:IDENT and journald:ID.
# syslog and the journal are received by a listener of the test on
# /dev/log and /run/systemd/journal/socket inside a private mount
# namespace (an overlay on /dev, a tmpfs on /run/systemd): the host's are
# never touched. Each entry is parsed back as the receiver would: the
# syslog priority, the journal's fields in its native protocol (a message
# with a newline in the binary form).
. "$(dirname "$0")/../lib.sh"

# a run that warns (a relative NOTIFY_SOCKET is ignored with a warning)
# and logs debug lines: its stderr in $TEST_TMP/err.$1
warn_run()
{
	local tag=$1 b id
	shift
	b=$TEST_TMP/b.$tag
	make_bundle "$b"
	config_set "$b" '.process.args = ["true"]'
	id=$(unique_id)
	NOTIFY_SOCKET=relative/notify "$AGENTRUN" --root "$AR_ROOT" "$@" \
		run --bundle "$b" "$id" 2>"$TEST_TMP/err.$tag" ||
		fail "run failed: $(cat "$TEST_TMP/err.$tag")"
}

test_log_level()
{
	require_root
	warn_run default
	assert_contains "$(cat "$TEST_TMP/err.default")" "warning: NOTIFY_SOCKET"
	grep -qv 'warning:' "$TEST_TMP/err.default" &&
		fail "default level printed more than the warning: $(cat "$TEST_TMP/err.default")"
	warn_run error --log-level error
	[ ! -s "$TEST_TMP/err.error" ] ||
		fail "--log-level error printed: $(cat "$TEST_TMP/err.error")"
	warn_run warning --log-level warning
	assert_contains "$(cat "$TEST_TMP/err.warning")" "warning: NOTIFY_SOCKET"
	warn_run debug --log-level debug
	assert_contains "$(cat "$TEST_TMP/err.debug")" "warning: NOTIFY_SOCKET"
	[ "$(grep -vc 'warning:' "$TEST_TMP/err.debug")" -gt 0 ] ||
		fail "--log-level debug printed no debug line: $(cat "$TEST_TMP/err.debug")"
	# --debug is --log-level debug
	warn_run dbg --debug
	assert_eq "$(grep -vc 'warning:' "$TEST_TMP/err.dbg")" \
		"$(grep -vc 'warning:' "$TEST_TMP/err.debug")"
	# an error is printed at every level
	assert_status 1 ar --log-level error state nosuch-$$
	assert_contains "$(ar --log-level error state nosuch-$$ 2>&1)" "does not exist"
}

test_bad_options()
{
	local out
	out=$(ar --log-level verbose list 2>&1) && fail "--log-level verbose accepted"
	assert_contains "$out" "--log-level: unknown level \`verbose\`"
	out=$(cd "$TEST_TMP" && ar --log jounrald:x list 2>&1) && fail "--log jounrald:x accepted"
	assert_contains "$out" "unknown destination type \`jounrald:\`"
	[ ! -e "$TEST_TMP/jounrald:x" ] || fail "a typo of journald: became a file"
	out=$(ar --log file: list 2>&1) && fail "--log file: accepted"
	assert_contains "$out" "no path after file:"
	out=$(ar --log "$TEST_TMP/no/such/dir/log" list 2>&1) && fail "a log in a missing directory accepted"
	assert_contains "$out" "open log file \`$TEST_TMP/no/such/dir/log\`: No such file or directory"
}

test_log_file_prefix()
{
	local a=$TEST_TMP/plain.log c=$TEST_TMP/with:colon.log
	assert_status 1 ar --log "$a" state nosuch-$$
	assert_status 1 ar --log "file:$c" --log-format json state nosuch-$$
	assert_contains "$(cat "$a")" "error: container \`nosuch-$$\` does not exist"
	assert_eq "$(jq -r .level "$c")" error
	assert_contains "$(jq -r .msg "$c")" "does not exist"
	# a path with a slash before the colon is a file too (runc's --log)
	assert_status 1 ar --log "$TEST_TMP/./x:y.log" state nosuch-$$
	[ -s "$TEST_TMP/x:y.log" ] || fail "the log with a colon in its path is empty"
}

# in_private_ns SCRIPT: SCRIPT under bash in a private mount namespace
in_private_ns()
{
	unshare -m --propagation private bash -euc "$1"
}

cat_listener()
{
	cat >"$TEST_TMP/listen.py" <<'PY'
# listen.py PATH OUT READY: bind a datagram socket on PATH, touch READY,
# then write each datagram received until the test's END (send.py) to
# OUT as a JSON list of hex strings (no deadline of its own: the file's
# time limit is the bound, whatever the load).
import json, os, socket, sys
path, out, ready = sys.argv[1:4]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(path)
os.chmod(path, 0o666)
open(ready, "w").close()
got = []
while True:
    d = s.recv(1 << 20)
    if d == b"END":
        break
    got.append(d.hex())
json.dump(got, open(out, "w"))
PY
	cat >"$TEST_TMP/send_end.py" <<'PY'
import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"END", sys.argv[1])
PY
}

test_syslog()
{
	require_root
	require_cmd python3
	require_cmd unshare
	cat_listener
	mkdir -p "$TEST_TMP/devu" "$TEST_TMP/devw"
	# the error of a missing container, in text and in JSON
	in_private_ns "
		mount -t overlay overlay -o lowerdir=/dev,upperdir=$TEST_TMP/devu,workdir=$TEST_TMP/devw /dev
		python3 $TEST_TMP/listen.py /dev/log $TEST_TMP/syslog.json $TEST_TMP/ready &
		until [ -e $TEST_TMP/ready ]; do kill -0 \$! || exit 1; sleep 0.1; done
		! '$AGENTRUN' --root '$AR_ROOT' --log syslog:agentrun-test-$$ state nosuch-$$
		! '$AGENTRUN' --root '$AR_ROOT' --log syslog: --log-format json state nosuch2-$$
		python3 $TEST_TMP/send_end.py /dev/log
		wait
	" 2>"$TEST_TMP/syslog.err" || fail "the namespace's script failed: $(cat "$TEST_TMP/syslog.err")"
	# the error still reaches stderr
	assert_contains "$(cat "$TEST_TMP/syslog.err")" "container \`nosuch-$$\` does not exist"
	python3 - "$TEST_TMP/syslog.json" "$$" <<'PY' || fail "syslog entries: $(cat "$TEST_TMP/syslog.json")"
import json, re, sys
got = [bytes.fromhex(h).decode() for h in json.load(open(sys.argv[1]))]
pid = sys.argv[2]
assert len(got) == 2, got
# <PRI>TIMESTAMP IDENT: MESSAGE, PRI = LOG_USER (8) | LOG_ERR (3)
m = re.match(r"<11>\w{3} [ \d]\d \d\d:\d\d:\d\d (\S+): (.*)$", got[0])
assert m, got[0]
assert m.group(1) == "agentrun-test-" + pid, m.group(1)
assert m.group(2) == "container `nosuch-%s` does not exist" % pid, m.group(2)
# syslog: without IDENT: the container's id, as crun
m = re.match(r"<11>\w{3} [ \d]\d \d\d:\d\d:\d\d nosuch2-%s: (\{.*\})$" % pid, got[1])
assert m, got[1]
j = json.loads(m.group(1))
assert j["level"] == "error" and "nosuch2-" + pid in j["msg"], j
PY
}

test_journald()
{
	local b
	require_root
	require_cmd python3
	require_cmd unshare
	cat_listener
	# a message with a newline (a missing bundle's path has one): the
	# binary form keeps it whole
	b=$TEST_TMP/$'two\nlines'
	in_private_ns "
		mount -t tmpfs tmpfs /run/systemd
		mkdir /run/systemd/journal
		python3 $TEST_TMP/listen.py /run/systemd/journal/socket $TEST_TMP/journal.json $TEST_TMP/jready &
		until [ -e $TEST_TMP/jready ]; do kill -0 \$! || exit 1; sleep 0.1; done
		! '$AGENTRUN' --root '$AR_ROOT' --log journald:ctr-$$ create --bundle '$b' id-$$
		! '$AGENTRUN' --root '$AR_ROOT' --log journald: --log-level error state nosuch-$$
		python3 $TEST_TMP/send_end.py /run/systemd/journal/socket
		wait
	" 2>"$TEST_TMP/journal.err" || fail "the namespace's script failed: $(cat "$TEST_TMP/journal.err")"
	python3 - "$TEST_TMP/journal.json" "$$" "$b" <<'PY' || fail "journal entries: $(cat "$TEST_TMP/journal.json")"
import json, struct, sys
pid, bundle = sys.argv[2], sys.argv[3]

def parse(d):
    # the native protocol: KEY=VALUE\n, or KEY\n LE64-length DATA \n
    f = {}
    while d:
        nl = d.index(b"\n")
        line = d[:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            f[k.decode()] = v.decode()
            d = d[nl + 1:]
        else:
            n = struct.unpack("<Q", d[nl + 1:nl + 9])[0]
            f[line.decode()] = d[nl + 9:nl + 9 + n].decode()
            assert d[nl + 9 + n:nl + 10 + n] == b"\n", d
            d = d[nl + 10 + n:]
    return f

got = [parse(bytes.fromhex(h)) for h in json.load(open(sys.argv[1]))]
assert len(got) == 2, got
e = got[0]
assert e["PRIORITY"] == "3" and e["SYSLOG_IDENTIFIER"] == "agentrun", e
assert e["ID"] == "ctr-" + pid, e
assert bundle in e["MESSAGE"], (bundle, e["MESSAGE"])
e = got[1]
# journald: without ID: the container's id, as crun
assert e["ID"] == "nosuch-" + pid and e["PRIORITY"] == "3", e
assert e["MESSAGE"] == "container `nosuch-%s` does not exist" % pid, e
PY
	# no journal at all: the entry is lost, the error still on stderr,
	# the status the command's
	out=$(ar --log journald:x state nosuch-$$ 2>&1) && fail "state of a missing container succeeded"
	assert_contains "$out" "does not exist"
}

run_test "--log-level error, warning, debug; --debug" test_log_level
run_test "bad --log-level and --log values are errors" test_bad_options
run_test "--log file:PATH and PATH" test_log_file_prefix
run_test "--log syslog:IDENT" test_syslog
run_test "--log journald:ID (the native protocol)" test_journald
finish
