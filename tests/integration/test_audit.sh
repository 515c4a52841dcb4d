#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun sandbox --audit FILE` (docs/audit.md) and `--learn PROFILE`:
# the JSON lines of a script that runs three commands and one connection,
# `--audit -` on stderr, the files changed, zero cost without --audit,
# and the learn -> enforce round trip. Rootless (the test user) and as
# root. Only loopback servers are contacted.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"


# au_setup MODE: a home and a git workspace (tests/sandbox-lib.sh) with
# in.txt; sets H, WS, MODE. au: the sandbox from $WS, as MODE.
au_setup()
{
	[ -x "$PY" ] || skip "needs $PY (to read the JSON lines)"
	sb_home "$1"
	echo "input" >"$WS/in.txt"
	sb_home_own
}

au()
{
	sb_run "$@"
}

# start_server: HTTP on 127.0.0.1:random port; sets PORT.
start_server()
{
	local dir=$TEST_TMP/www-$RANDOM$RANDOM
	mkdir -p "$dir"
	echo "hello-from-host" >"$dir/index.html"
	http_server "$dir"
}

# jq-like helper: run a python expression over the events of a log
# (variable `ev`: the list of objects; every line must be JSON).
events()
{
	"$PY" -c '
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(eval(sys.argv[2]))' "$@"
}

CURL="curl -sS -m 10 --noproxy ''"

t_three_commands_one_connection()
{
	au_setup "$1"
	start_server
	local log=$TEST_TMP/audit-$MODE.jsonl
	touch "$log"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$log"
	assert_status 0 au --audit "$log" --net "allow=127.0.0.1:$PORT" -- \
		sh -c "cat in.txt >out.txt; ls >/dev/null; $CURL http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "hello-from-host"
	cat "$log"
	# every line is one JSON object (events() fails otherwise)
	assert_eq "$(events "$log" '[e["event"] for e in ev][0] + "," + [e["event"] for e in ev][-1]')" "start,exit"
	assert_eq "$(events "$log" '" ".join(e["argv"][0] for e in ev if e["event"] == "exec")')" "sh cat ls curl"
	assert_eq "$(events "$log" '" ".join(e["path"] for e in ev if e["event"] == "exec")')" \
		"/usr/bin/sh /usr/bin/cat /usr/bin/ls /usr/bin/curl"
	assert_eq "$(events "$log" '[e["cwd"] for e in ev if e["event"] == "exec"][1]')" "$WS"
	# ppid of each command: the shell
	assert_eq "$(events "$log" 'len({e["ppid"] for e in ev if e["event"] == "exec" and e["argv"][0] != "sh"} - {e["pid"] for e in ev if e["event"] == "exec" and e["argv"][0] == "sh"})')" "0"
	# the one TCP connection: curl to the proxy, and the proxy's decision
	assert_eq "$(events "$log" '[(e["address"], e["port"]) for e in ev if e["event"] == "connect" and e["family"] in ("inet", "inet6")]')" \
		"[('127.0.0.1', 3128)]"
	assert_eq "$(events "$log" '[(e["host"], e["port"], e["allowed"]) for e in ev if e["event"] == "proxy"]')" \
		"[('127.0.0.1', $PORT, True)]"
	assert_eq "$(events "$log" '[c["path"] for e in ev if e["event"] == "files" for c in e["changes"] if c["change"] == "added"]')" \
		"['out.txt']"
	# and nothing else: the placeholders agentrun mounts over the missing
	# protected paths (.vscode, .mcp.json, ...) and removes after the run
	# are not the command's deletions
	assert_eq "$(events "$log" '[(c["change"], c["path"]) for e in ev if e["event"] == "files" for c in e["changes"]]')" \
		"[('added', 'out.txt')]"
	assert_eq "$(events "$log" '[e for e in ev if e["event"] == "start"][0]["workspace"]')" "$WS"
	assert_eq "$(events "$log" '"seccomp" in [e for e in ev if e["event"] == "start"][0]["protections"]')" "True"
	assert_eq "$(events "$log" '[e for e in ev if e["event"] == "exit"][0]["status"]')" "0"
}

t_refused_connection_and_stderr()
{
	au_setup "$1"
	start_server
	# --audit -: the lines go to stderr, with the deny line
	assert_status 7 au --audit - --net allow=example.invalid -- \
		sh -c "$CURL -o /dev/null http://127.0.0.1:$PORT/; exit 7"
	assert_contains "$ERR" '"event":"exec"'
	assert_contains "$ERR" '"argv":["curl"'
	assert_contains "$ERR" "\"event\":\"proxy\",\"proto\":\"http\",\"host\":\"127.0.0.1\",\"port\":$PORT,\"address\":null,\"allowed\":false"
	assert_contains "$ERR" "agentrun: blocked 127.0.0.1:$PORT"
	assert_contains "$ERR" '"event":"exit","status":7'
}

t_argv_escaping()
{
	au_setup "$1"
	local log=$TEST_TMP/esc-$MODE.jsonl
	touch "$log"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$log"
	# shellcheck disable=SC2016 # expanded by the sandbox's shell
	assert_status 0 au --audit "$log" -- \
		sh -c 'exec /usr/bin/true "a \"q\"" "$(printf "l1\nl2")" "$(printf "\377x")"'
	assert_eq "$(events "$log" 'ascii([e["argv"] for e in ev if e["event"] == "exec"][1])')" \
		"['/usr/bin/true', 'a \"q\"', 'l1\\nl2', '\\ufffdx']"
}

t_zero_cost_without_audit()
{
	au_setup "$1"
	local ready=$WS/ready
	# the supervisor of a plain run has one thread (the control plane's
	# starts when a client connects: test_sandbox_control_lazy.sh) and
	# its sockets (the control plane's, the init's channel, the
	# keeper's); with --audit, one more thread answers the notifications.
	au -- sh -c 'touch ready; sleep 3' &
	wait_until 10 test -e "$ready"
	local sup
	# the oldest: the newest is the placeholders' keeper, its fork
	sup=$(pgrep -f -o -- "sandbox --no-tty -- sh -c touch ready")
	local tasks=("/proc/$sup/task"/*)
	assert_eq "${#tasks[@]}" "1" "threads without --audit"
	# no listener socket either: the control socket, the supervisor's
	# end of the sandbox init's channel (an unnamed socketpair:
	# runtime/lib/init.h) and of the keeper's, nothing else
	local fd l unnamed=0
	for fd in "/proc/$sup/fd"/*; do
		l=$(readlink "$fd") || continue
		case $l in
		socket:*)
			l=${l#socket:[}
			l=${l%]}
			grep -qE " $l .*/\.control/[^/]*\.sock\$" "/proc/$sup/net/unix" && continue
			awk -v ino="$l" '$7 == ino && NF == 7 && $4 != "00010000" { found = 1 }
				END { exit !found }' "/proc/$sup/net/unix" ||
				fail "the supervisor holds a socket without --audit: $(grep -w "$l" "/proc/$sup/net/unix")"
			unnamed=$((unnamed + 1))
			;;
		esac
	done
	# the init's channel and the keeper's: agentrun's end of the socket
	# whose end of file tells the placeholders' keeper that agentrun is
	# gone (runtime/sandbox/protect/placeholder.c); a listener would be a
	# third
	[ "$unnamed" -le 2 ] ||
		fail "the supervisor holds more than the init's and the keeper's sockets: $(ls -l "/proc/$sup/fd")"
	wait
	rm -f "$ready"
	au --audit /dev/null -- sh -c 'touch ready; sleep 3' &
	wait_until 10 test -e "$ready"
	sup=$(pgrep -f -o -- "sandbox --no-tty --audit /dev/null -- sh -c touch ready")
	tasks=("/proc/$sup/task"/*)
	assert_eq "${#tasks[@]}" "2" "threads with --audit"
	wait
}

# au_debug ARGS: au with the global --debug (the listener's count)
au_debug()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --debug --root "$AR_ROOT" \
			sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" bash -c 'cd "$1" && shift && exec "$@"' \
			_ "$WS" "$AGENTRUN" --debug --root "$AR_USER_ROOT" \
			sandbox --no-tty "$@"
	fi
}

notifications()
{
	sed -n 's/.*the audit listener answered \([0-9]*\) notifications.*/\1/p' "$ERR_FILE"
}

# --audit observes writes by path only: 300 reads of a file cost no
# round trip to the listener, 300 writes cost one each.
t_reads_not_notified()
{
	au_setup "$1"
	local n
	# shellcheck disable=SC2016 # expanded by the sandbox's shell
	assert_status 0 au_debug --audit /dev/null -- sh -c \
		'i=0; while [ $i -lt 300 ]; do read x <in.txt; i=$((i+1)); done'
	n=$(notifications)
	[ -n "$n" ] || fail "no count in the debug log"
	[ "$n" -lt 20 ] || fail "$n notifications for 300 reads"
	# shellcheck disable=SC2016
	assert_status 0 au_debug --audit /dev/null -- sh -c \
		'i=0; while [ $i -lt 300 ]; do echo x >out.txt; i=$((i+1)); done'
	n=$(notifications)
	[ "$n" -ge 300 ] || fail "$n notifications for 300 writes"
}

# The listener takes over chmod and the creating opens: a setuid or
# setgid mode stays refused (EPERM), as the profile's own rules do.
t_setid_refused_under_audit()
{
	au_setup "$1"
	# shellcheck disable=SC2016 # expanded by the sandbox's shell
	assert_status 0 au --audit /dev/null -- sh -c '
		touch x; chmod 4755 x 2>/dev/null || echo CHMOD-REFUSED
		chmod 2755 x 2>/dev/null || echo CHMOD-G-REFUSED
		"$1" -c "import os; os.open(\"y\", os.O_CREAT | os.O_WRONLY, 0o4755)" 2>/dev/null || echo OPEN-REFUSED
		chmod 755 x && echo CHMOD-PLAIN' _ "$PY"
	assert_contains "$OUT" CHMOD-REFUSED
	assert_contains "$OUT" CHMOD-G-REFUSED
	assert_contains "$OUT" OPEN-REFUSED
	assert_contains "$OUT" CHMOD-PLAIN
	assert_eq "$(find "$WS" -perm /6000 | head -n3)" "" "setuid/setgid files"
}

t_overlay_files()
{
	au_setup "$1"
	local log=$TEST_TMP/ov-$MODE.jsonl name=audit-ov-$RANDOM
	touch "$log"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$log"
	au --audit "$log" --overlay --name "$name" -- sh -c 'echo x >made.txt' ||
		skip "--overlay is not available here: $(tail -1 "$ERR_FILE" 2>/dev/null)"
	defer au_discard "$name"
	assert_eq "$(events "$log" '[(e["source"], [c["path"] for c in e["changes"]]) for e in ev if e["event"] == "files"]')" \
		"[('overlay', ['made.txt'])]"
	[ ! -e "$WS/made.txt" ] || fail "the overlay run wrote into the workspace"
}

au_discard()
{
	if [ "$MODE" = root ]; then
		HOME=$H "$AGENTRUN" discard "$1"
	else
		as_test_user env HOME="$H" "$AGENTRUN" discard "$1"
	fi
}

# learn_fixture NAME: a fresh directory (mode 755) that the sandbox hides
# and learn mode binds read-only, wherever the checkout is: as root, under
# /var/lib; not root, the build tree when it is such a place. Removed after
# the test. Sets FIXTURE.
learn_fixture()
{
	if [ "$(id -u)" = 0 ]; then
		FIXTURE=$(mktemp -d "/var/lib/agentrun-test-$1.XXXXXX") ||
			fail "cannot make a fixture directory in /var/lib"
	else
		case "$TOP_BUILDDIR" in
		/tmp/* | /var/tmp/* | /usr/* | /opt/* | /home/* | /root/*)
			skip "not root, and the build tree $TOP_BUILDDIR is not a place the sandbox hides (as root the fixture goes to /var/lib)" ;;
		esac
		FIXTURE=$TOP_BUILDDIR/.audit-$1-$RANDOM$RANDOM
		mkdir -p "$FIXTURE"
	fi
	defer rm -rf "$FIXTURE"
	chmod 0755 "$FIXTURE"
}

# learn -> enforce: a host file outside the default set (a fixture
# directory: /tmp and the home are the sandbox's own) and a loopback server.
t_learn_round_trip()
{
	au_setup "$1"
	start_server
	learn_fixture learn
	local d=$FIXTURE prof=$H/learned.json
	echo "host-data" >"$d/data.txt"
	echo "not-learned" >"$d/other.txt"
	chmod 0644 "$d/data.txt" "$d/other.txt"
	# without the profile the file is not there
	assert_status '!0' au -- cat "$d/data.txt"
	assert_status 0 au --learn "$prof" -- \
		sh -c "cat $d/data.txt; $CURL http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "host-data"
	assert_contains "$OUT" "hello-from-host"
	cat "$prof"
	assert_eq "$("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["ro"], p["rw"], p["net"]["allow"])' "$prof")" \
		"['$d/data.txt'] [] ['127.0.0.1:$PORT']"
	# enforce with it: passes
	assert_status 0 au --profile "$prof" -- \
		sh -c "cat $d/data.txt; $CURL http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "host-data"
	assert_contains "$OUT" "hello-from-host"
	# a path not in the profile is denied (not there at all)
	assert_status '!0' au --profile "$prof" -- cat "$d/other.txt"
	assert_contains "$ERR" "No such file"
	# and so is another destination
	assert_status '!0' au --profile "$prof" -- \
		sh -c "$CURL -f http://127.0.0.2:$PORT/"
	assert_contains "$ERR" "connection blocked: 127.0.0.2:$PORT (not in the allowlist)"
}

# learn: a write outside the workspace fails in the learn run (the extra
# host directories are read-only there) but is recorded as "rw"; the
# enforce run with the profile may write.
t_learn_write()
{
	au_setup "$1"
	learn_fixture learnw
	local d=$FIXTURE prof=$H/learned-w.json
	echo old >"$d/out.txt"
	chmod 0777 "$d"
	chmod 0666 "$d/out.txt"
	assert_status 0 au --learn "$prof" -- sh -c "echo new >$d/out.txt || echo write-failed"
	assert_contains "$OUT" "write-failed"
	assert_eq "$(cat "$d/out.txt")" "old" "the learn run wrote a host file"
	cat "$prof"
	assert_eq "$("$PY" -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["ro"], p["rw"], "net" in p)' "$prof")" \
		"[] ['$d/out.txt'] False"
	assert_status 0 au --profile "$prof" -- sh -c "echo new >$d/out.txt"
	assert_eq "$(cat "$d/out.txt")" "new"
}

# The attack: attempts on protected paths spelled through the process's
# own /proc entries (/proc/self/cwd, /proc/self/fd/N, /proc/thread-self,
# a link to /proc/self/cwd in the workspace), which the kernel follows as
# the calling task's: each is refused and recorded as what it is. A path
# with terminal escapes is named quoted in the summary; no escape byte
# reaches stderr.
t_proc_self_attempts()
{
	[ -x "$PY" ] || skip "needs $PY (to read the JSON lines)"
	sb_home "$1"
	rm -rf "$WS/.git"
	git init -q "$WS"
	sb_home_own
	local log=$H/audit-self.jsonl esc=$'\033'
	assert_status 0 au --audit "$log" -- sh -c '
		exec 2>/dev/null
		echo x >".git/hooks/x$(printf "\033[2K\033[1A")"
		echo x >/proc/self/cwd/.git/hooks/pre-commit
		exec 3<.git; echo x >/proc/self/fd/3/hooks/pre-push
		echo x >/proc/thread-self/cwd/.git/hooks/post-checkout
		ln -s /proc/self/cwd w; echo x >w/.git/hooks/pre-rebase; rm w
		true'
	assert_eq "$("$PY" -c '
import json, sys
ws = sys.argv[2] + "/"
out = set()
for l in open(sys.argv[1]):
    e = json.loads(l)
    if e["event"] == "protected_attempt":
        out.add(e["op"] + " " + e["path"].replace(ws, "", 1))
print("\n".join(sorted(out)))' "$log" "$WS")" "open .git/hooks/post-checkout
open .git/hooks/pre-commit
open .git/hooks/pre-push
open .git/hooks/pre-rebase
open .git/hooks/x$esc[2K$esc[1A"
	assert_contains "$ERR" "agentrun: 5 attempts on protected paths: "
	assert_contains "$ERR" 'protected paths: ".git/hooks/x\033[2K\033[1A" (open), .git/hooks/pre-commit (open)'
	assert_not_contains "$ERR" "$esc"
	for f in pre-commit pre-push post-checkout pre-rebase; do
		[ ! -e "$WS/.git/hooks/$f" ] || fail "$f written"
	done
}

# The attack: a TCP connection opened without connect(2), by a send with
# MSG_FASTOPEN (sendto, sendmsg): recorded as a connect event naming the
# syscall; an ordinary send is not notified.
t_fastopen_recorded()
{
	au_setup "$1"
	local log=$H/audit-tfo.jsonl
	assert_status 0 au --audit "$log" -- "$PY" -c '
import socket
for how in ("sendto", "sendmsg"):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        if how == "sendto":
            s.sendto(b"x", socket.MSG_FASTOPEN, ("127.0.0.1", 9))
        else:
            s.sendmsg([b"x"], [], socket.MSG_FASTOPEN, ("127.0.0.1", 10))
    except OSError as e:
        pass
    s.close()
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
u.sendto(b"x", ("127.0.0.1", 11))
print("done")'
	assert_contains "$OUT" "done"
	assert_eq "$(events "$log" '",".join("%s:%s:%s" % (e.get("syscall"), e["address"], e["port"]) for e in ev if e["event"] == "connect")')" \
		"sendto:127.0.0.1:9,sendmsg:127.0.0.1:10"
}

t_option_errors()
{
	au_setup root
	assert_status 1 "$AGENTRUN" sandbox --audit /dev/null --print-bundle "$TEST_TMP/pb" -- true
	assert_contains "$ERR" "--print-bundle does not run"
	assert_status '!0' au --audit /nonexistent-dir/log -- true
	assert_contains "$ERR" "--audit \`/nonexistent-dir/log\`"
	assert_status '!0' au --learn "$TEST_TMP/l.json" --net host -- true
	assert_contains "$ERR" "cannot be combined with --net host"
}

for mode in user root; do
	run_test "audit ($mode): three commands and one connection, exactly" t_three_commands_one_connection $mode
	run_test "audit ($mode): --audit - streams to stderr; a refused connection" t_refused_connection_and_stderr $mode
	run_test "audit ($mode): argv with quotes, newlines, invalid UTF-8" t_argv_escaping $mode
	run_test "audit ($mode): without --audit no listener (zero cost)" t_zero_cost_without_audit $mode
	run_test "audit ($mode): reads are not notified, writes are" t_reads_not_notified $mode
	run_test "audit ($mode): setuid/setgid modes stay refused under the listener" t_setid_refused_under_audit $mode
	run_test "audit ($mode): --overlay: files changed from the upper layer" t_overlay_files $mode
	run_test "audit ($mode): attempts through /proc/self/cwd, /proc/self/fd/N, /proc/thread-self are recorded" t_proc_self_attempts $mode
	run_test "audit ($mode): a TCP Fast Open send is recorded as a connect" t_fastopen_recorded $mode
	run_test "learn ($mode): learn -> enforce round trip" t_learn_round_trip $mode
	run_test "learn ($mode): a write outside the workspace is learned as rw" t_learn_write $mode
done
run_test "audit: option errors" t_option_errors
finish
