#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The agent channel (runtime/sandbox/control/control_channel.c,
# docs/sandbox.md "The agent channel"): srt's Sandbox-Agent channel on
# fd 3 (SANDBOX_AGENT_CHANNEL_FD), rootless and as root. The agent learns
# what was blocked, may ask and explain, never grant: its requests join
# the human queue of --net ask. Attacks: a forged grant, a flood, invalid
# and over-long lines, the control socket from inside, the fd's reach.
# Every destination is a loopback server of the test (http_server).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl
[ -x "$PY" ] || skip "needs $PY"

# ch_setup MODE: a home, the agent helper and curl client in the
# workspace, a loopback server (PORT)
ch_setup()
{
	sb_serve_home "$1"
	cp "$AR_TEST_HELPERS/agent_channel.py" "$WS/agent.py"
	chmod 0755 "$WS/agent.py"
	sb_home_own
}

# a script in the workspace, owned by MODE's user
ws_script()
{
	cat >"$WS/$1"
	chmod 0755 "$WS/$1"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/$1"
}

pending_json()
{
	ctl requests "$1" --json 2>/dev/null
}

# wait until NAME has a pending request; prints its id
wait_request()
{
	local id
	for _ in $(seq 200); do
		id=$(pending_json "$1" | jq -r '.[0].id // empty')
		[ -z "$id" ] || { echo "$id"; return 0; }
		sleep 0.05
	done
	fail "no pending request in $1 within 10 s"
}

# wait_pending NAME JQ-FILTER: until a pending request of NAME matches
wait_pending()
{
	for _ in $(seq 200); do
		pending_json "$1" | jq -e ".[] | select($2)" >/dev/null && return 0
		sleep 0.05
	done
	fail "no pending request of $1 with $2 within 10 s: $(pending_json "$1")"
}

# Off by default (as srt's --agent-channel); on with the flag or the
# profile's "agent_channel"; --no-agent-channel wins over the profile.
t_default_off()
{
	local probe='echo "env=${SANDBOX_AGENT_CHANNEL_FD:-unset}"; ls /proc/self/fd | tr "\n" " "; echo; [ -S /proc/self/fd/3 ] && echo fd3=socket || echo fd3=none'
	ch_setup "$1"
	assert_status 0 sb_run -- sh -c "$probe"
	assert_contains "$OUT" "env=unset"
	assert_contains "$OUT" "fd3=none"
	assert_status 0 sb_run --agent-channel -- sh -c "$probe"
	assert_contains "$OUT" "env=3"
	assert_contains "$OUT" "fd3=socket"
	# nothing else is passed: 0 1 2 3 and the fd of ls itself
	assert_match "$(echo "$OUT" | sed -n 2p)" '^0 1 2 3 [0-9]+ $'
	echo '{"agent_channel": true}' >"$H/ch.json"
	chmod 0644 "$H/ch.json"
	assert_status 0 sb_run --profile "$H/ch.json" -- sh -c "$probe"
	assert_contains "$OUT" "fd3=socket"
	assert_status 0 sb_run --profile "$H/ch.json" --no-agent-channel -- sh -c "$probe"
	assert_contains "$OUT" "fd3=none"
	echo '{"agent_channel": "yes"}' >"$H/bad.json"
	chmod 0644 "$H/bad.json"
	assert_status '!0' sb_run --profile "$H/bad.json" -- true
	assert_contains "$ERR" "agent_channel"
}

# The hello, then `blocked` for a refused connection (the reason in it),
# once per destination.
t_hello_blocked()
{
	ch_setup "$1"
	ws_script run.sh <<EOF
#!/bin/sh
./agent.py ch hello readtype:blocked drain:1 &
sleep 0.5
./get.sh $PORT g1
./get.sh $PORT g2
wait
EOF
	assert_status 0 sb_run --agent-channel --net allow=nothing.invalid -- ./run.sh
	assert_contains "$(cat "$WS/g1")" 403
	assert_eq "$(head -1 "$WS/ch")" '{"type":"hello","protocol_version":1}'
	assert_eq "$(grep -c '"blocked"' "$WS/ch")" 1 "blocked told once per destination"
	local b
	b=$(grep '"blocked"' "$WS/ch")
	assert_eq "$(echo "$b" | jq -r '.resource.type, .resource.host, .resource.port, .operation' | tr '\n' ' ')" \
		"network 127.0.0.1 $PORT connect "
	assert_contains "$(echo "$b" | jq -r .description)" "blocked"
}

# With --audit (whose listener sees them), a refused write on a
# protected path is told as `blocked` too: resource file, once per path.
t_blocked_protected()
{
	ch_setup "$1"
	mkdir -p "$WS/.git/hooks"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS/.git"
	ws_script run.sh <<'EOF'
#!/bin/sh
./agent.py ch hello drain:2 &
sleep 0.5
echo x >.git/hooks/pre-commit
echo x >.git/hooks/pre-commit
wait
EOF
	assert_status 0 sb_run --agent-channel --audit "$H/audit.log" -- ./run.sh
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "the hook was written"
	assert_eq "$(grep -c '"blocked"' "$WS/ch")" 1 "told once per path"
	assert_eq "$(grep '"blocked"' "$WS/ch" | jq -r '.resource.type, .resource.path, .operation' | tr '\n' ' ')" \
		"file $WS/.git/hooks/pre-commit write "
	assert_contains "$(grep '"blocked"' "$WS/ch" | jq -r .description)" "protected path (git hooks)"
}

# The agent asks with its explanation: the request is the human's,
# marked as the agent's, its words quoted; `session` comes back as allow
# and the connection goes through; `refuse` comes back as deny.
t_ask_answered()
{
	local name=cha$RANDOM id js
	ch_setup "$1"
	ws_script run.sh <<EOF
#!/bin/sh
./agent.py ch hello \
 'send:{"type":"permission_request","id":"r1","resource":{"type":"network","host":"127.0.0.1","port":$PORT},"operation":"connect","description":"need the docs \u001b[31mNOW"}' \
 readtype:permission_response
./get.sh $PORT after
./agent.py ch2 'send:{"type":"hello","protocol_version":1}' \
 'send:{"type":"permission_request","id":"r2","resource":{"type":"network","host":"127.0.0.1","port":1},"operation":"connect","description":"second"}' \
 readtype:permission_response
sleep 600
EOF
	sb_bg "$name" --agent-channel --net ask --ask-timeout 120 -- ./run.sh
	id=$(wait_request "$name")
	js=$(pending_json "$name")
	assert_eq "$(echo "$js" | jq -r '.[0].from')" agent
	assert_eq "$(echo "$js" | jq -r '.[0].target')" "127.0.0.1:$PORT"
	# its words, quoted: no escape character reaches a terminal
	assert_contains "$(echo "$js" | jq -r '.[0].explanation')" 'need the docs \033[31mNOW'
	assert_not_contains "$(echo "$js" | jq -r '.[0].explanation')" $'\033'
	# the table too, for a terminal
	assert_status 0 ctl requests "$name"
	assert_contains "$OUT" 'asked by the agent: "need the docs \033[31mNOW"'
	assert_not_contains "$OUT" $'\033'
	assert_status 0 ctl answer "$name" "$id" session
	wait_until 20 test -e "$WS/after"
	assert_contains "$(cat "$WS/ch")" '"id":"r1","behavior":"allow"'
	assert_contains "$(cat "$WS/after")" 200
	assert_contains "$(cat "$WS/after")" served
	# the second: refused by the human, denied to the agent with who
	wait_pending "$name" '.target == "127.0.0.1:1"'
	id=$(pending_json "$name" | jq -r '.[] | select(.target == "127.0.0.1:1") | .id')
	assert_status 0 ctl answer "$name" "$id" refuse
	wait_until 20 test -e "$WS/ch2.done"
	assert_contains "$(cat "$WS/ch2")" '"id":"r2","behavior":"deny"'
	assert_contains "$(cat "$WS/ch2")" "refused by uid"
}

# Attack: the agent grants itself: a permission_response (srt's own
# direction) for a pending request's id, for its own request's id, and a
# forged answer field. Nothing is granted; each is counted in the log.
t_forged_grant()
{
	local name=chf$RANDOM id log
	ch_setup "$1"
	log=$H/audit.log
	ws_script run.sh <<EOF
#!/bin/sh
./get.sh $PORT waits &
sleep 1
./agent.py ch hello \
 'send:{"type":"permission_request","id":"mine","resource":{"type":"network","host":"127.0.0.1","port":$PORT},"operation":"connect","description":"x"}' \
 'send:{"type":"permission_response","id":"mine","behavior":"allow"}' \
 'send:{"type":"permission_response","id":"1","behavior":"allow"}' \
 'send:{"type":"permission_response","id":"pr_1","behavior":"allow"}' \
 'send:{"type":"answer","id":"1","answer":"session"}' \
 'send:{"op":"answer","id":"1","answer":"session","interface":"cli"}' \
 drain:2
sleep 600
EOF
	sb_bg "$name" --agent-channel --audit "$log" --net ask --ask-timeout 120 -- ./run.sh
	id=$(wait_request "$name")
	wait_until 20 test -e "$WS/ch.done"
	sleep 1
	[ ! -e "$WS/waits" ] || fail "the agent granted its own request: $(cat "$WS/waits")"
	assert_not_contains "$(cat "$WS/ch")" '"behavior":"allow"'
	assert_eq "$(pending_json "$name" | jq -r '.[].id')" "$id" "the request is still pending"
	assert_eq "$(pending_json "$name" | jq -r '.[0].from')" agent
	# the log names them
	wait_until 10 grep -q '"problem":"forged_response"' "$log"
	assert_status 0 ctl answer "$name" "$id" refuse
	wait_until 20 test -e "$WS/waits"
	assert_contains "$(cat "$WS/waits")" 403
	ctl stop -t 0 "$name" >/dev/null 2>&1 || true
	wait_until 20 grep -q '"problem":"summary"' "$log"
	assert_eq "$(grep '"problem":"summary"' "$log" | jq -r '.forged_response')" 3
	# {"type":"answer"}: unknown; {"op":"answer"}: no type, invalid
	assert_eq "$(grep '"problem":"summary"' "$log" | jq -r '.unknown')" 1
	assert_eq "$(grep '"problem":"summary"' "$log" | jq -r '.invalid')" 1
}

# Attack: a flood (10,000 requests, 10,000 junk lines, a 1 MiB line):
# bounded, counted, nothing crashes; the sandbox and its control plane
# keep working, the pending list stays capped, a later request is still
# answered.
t_flood()
{
	local name=chx$RANDOM log n t0 t1
	ch_setup "$1"
	log=$H/audit.log
	ws_script run.sh <<EOF
#!/bin/sh
./agent.py ch hello flood:10000 junk:10000 big:1048576 drain:3
./get.sh $PORT after-flood
sleep 600
EOF
	sb_bg "$name" --agent-channel --audit "$log" --net ask --ask-timeout 120 -- ./run.sh
	wait_until 60 test -e "$WS/ch.done"
	t0=$(date +%s%N)
	assert_status 0 ctl requests "$name" --json
	t1=$(date +%s%N)
	n=$(echo "$OUT" | jq length)
	[ "$n" -le 64 ] || fail "pending list not capped: $n"
	[ $(((t1 - t0) / 1000000)) -lt 2000 ] || fail "requests took $(((t1 - t0) / 1000000)) ms"
	# the agent got answers, the over-cap ones denied at once
	assert_contains "$(cat "$WS/ch")" "too many requests of the agent"
	# the sandbox works: a connection asks and is answered
	wait_pending "$name" '.from == "connection"'
	assert_status 0 ctl answer "$name" "$(pending_json "$name" | jq -r '.[] | select(.from == "connection") | .id')" once
	wait_until 20 test -e "$WS/after-flood"
	assert_contains "$(cat "$WS/after-flood")" 200
	ctl stop -t 0 "$name" >/dev/null 2>&1 || true
	wait_until 30 grep -q '"problem":"summary"' "$log"
	assert_eq "$(grep '"problem":"summary"' "$log" | jq -r '.invalid')" 10000
	assert_eq "$(grep '"problem":"summary"' "$log" | jq -r '.oversized')" 1
	[ "$(grep '"problem":"summary"' "$log" | jq -r '.too_many_requests')" -ge 9000 ] ||
		fail "too_many_requests: $(grep '"problem":"summary"' "$log")"
	# a flood costs the log a few lines: one per power of two
	[ "$(grep -c '"event":"agent_channel"' "$log")" -lt 80 ] ||
		fail "$(grep -c '"event":"agent_channel"' "$log") agent_channel lines"
}

# Attack: from the channel's side, the control socket: its path, the
# abstract names, /proc/net/unix. And the channel's fd reaches only the
# program and its children (as srt: fd 3 inherited, not close-on-exec):
# not pid 1 (the init), not agentrun's own processes on the host, not a
# process joined by `sandbox exec` (nor its environment).
t_reach()
{
	local name=chr$RANDOM dir ino holders pid comm
	ch_setup "$1"
	dir=$(ctl_root_dir)
	ws_script run.sh <<'EOF'
#!/bin/sh
readlink /proc/self/fd/3 >fd3.tmp && mv fd3.tmp fd3
sh -c 'readlink /proc/self/fd/3 >child3'
exec sleep 600
EOF
	sb_bg "$name" --agent-channel --net ask -- ./run.sh
	wait_until 10 test -s "$WS/child3"
	ino=$(cat "$WS/fd3")
	assert_match "$ino" '^socket:\[[0-9]+\]$'
	assert_eq "$(cat "$WS/child3")" "$ino" "the program's child inherits it"
	assert_status 0 ctl exec "$name" -- "$PY" -c "
import socket, os
for p in ['$dir/.control/$name.sock', '$dir/.control', '$dir']:
    print(p, 'exists' if os.path.lexists(p) else 'absent')
for a in ['$dir/.control/$name.sock', '\0$dir/.control/$name.sock', '\0agentrun', '\0$name.sock']:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(a); print('REACHED', repr(a))
    except OSError as e:
        print('refused', repr(a), e.errno)
print('unix sockets:', sum(1 for l in open('/proc/net/unix') if 'control' in l or '$name' in l))
print('exec fd3:', os.path.exists('/proc/self/fd/3'))
print('exec env:', os.environ.get('SANDBOX_AGENT_CHANNEL_FD', 'unset'))
"
	assert_not_contains "$OUT" REACHED
	assert_not_contains "$OUT" "$dir/.control/$name.sock exists"
	assert_contains "$OUT" "unix sockets: 0"
	assert_contains "$OUT" "exec fd3: False"
	assert_contains "$OUT" "exec env: unset"
	# from the host (root sees every /proc/PID/fd): who holds the inner end
	holders=""
	for pid in $(ls /proc | grep -E '^[0-9]+$'); do
		if ls -l "/proc/$pid/fd" 2>/dev/null | grep -qF "$ino"; then
			comm=$(cat "/proc/$pid/comm" 2>/dev/null || echo gone)
			holders="$holders $comm"
		fi
	done
	assert_eq "$holders" " sleep" "only the program holds the channel's inner end"
}

for m in user root; do
	run_test "channel: off by default, flag, profile key, --no-agent-channel ($m)" t_default_off $m
	run_test "channel: hello, blocked told once with the reason ($m)" t_hello_blocked $m
	run_test "channel: a refused write on a protected path told as blocked ($m)" t_blocked_protected $m
	run_test "channel: the agent asks and explains, the human answers ($m)" t_ask_answered $m
	run_test "attack: the agent grants itself over the channel ($m)" t_forged_grant $m
	run_test "attack: a flood of requests, junk and a 1 MiB line ($m)" t_flood $m
	run_test "attack: the control socket and the fd's reach from inside ($m)" t_reach $m
done
finish
