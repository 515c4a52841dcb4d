#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun watch` (runtime/sandbox/watch/, docs/sandbox.md "The
# terminal dashboard") driven under tmux, rootless and as root: a --net
# ask sandbox's pending request appears in the pane within 1 s, a key
# answers it (o lets the waiting client through, r refuses naming the
# interface, a asks y/n), the kind filters toggle, a resize redraws the
# whole frame at the new size, q and Ctrl-C restore the terminal (the
# alternate screen left, the cursor shown, termios as before).
# Every destination is a loopback server of the test (http_server).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl tmux setpriv

# the test's own tmux server
TM=(tmux -L "agentrun-watch-test-$$" -f /dev/null)

pane()
{
	"${TM[@]}" capture-pane -p -t w
}

# wait_pane SECONDS REGEX: until the pane shows REGEX; WAIT_MS: how long
wait_pane()
{
	local t0 t1 limit=$(($1 * 1000))
	t0=$(date +%s%N)
	while :; do
		if grep -Eq -- "$2" <<<"$(pane)"; then
			t1=$(date +%s%N)
			WAIT_MS=$(((t1 - t0) / 1000000))
			return 0
		fi
		t1=$(date +%s%N)
		[ $(((t1 - t0) / 1000000)) -lt "$limit" ] ||
			fail "the pane did not show /$2/ within $1 s:
$(pane)"
		sleep 0.05
	done
}

# start_watch ARGS...: `agentrun watch ARGS` in an 80x24 tmux pane as
# MODE's user; the pane's shell saves `stty -a` before and after and
# stays, so the terminal after the exit can be looked at
start_watch()
{
	local who=() root=$AR_ROOT
	if [ "$MODE" != root ]; then
		who=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups
			env XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR" HOME="$TEST_HOME")
		root=$AR_USER_ROOT
	fi
	rm -f "$TEST_TMP/stty.before" "$TEST_TMP/stty.after"
	# a server of its own per case: a new session on a server that a
	# kill-server is still ending fails ("server exited unexpectedly")
	TM=(tmux -L "agentrun-watch-test-$$-$RANDOM$RANDOM" -f /dev/null)
	"${TM[@]}" new-session -d -s w -x 80 -y 24 \
		"stty -a >$TEST_TMP/stty.before; ${who[*]} $AGENTRUN --root $root watch $*; echo \"watch exited \$?\"; stty -a >$TEST_TMP/stty.after; sleep 600"
	defer "${TM[@]}" kill-server
	wait_pane 5 'agentrun watch: '
}

# the pane after watch exited: its status 0, the terminal as before
assert_restored()
{
	wait_pane 5 'watch exited'
	assert_contains "$(pane)" "watch exited 0"
	wait_until 5 test -s "$TEST_TMP/stty.after"
	# the modes, not the window's size: the test resizes the pane and
	# tmux applies the last resize when it gets to it
	assert_eq "$(sed -E 's/rows [0-9]+; columns [0-9]+; //' "$TEST_TMP/stty.after")" \
		"$(sed -E 's/rows [0-9]+; columns [0-9]+; //' "$TEST_TMP/stty.before")" "termios restored"
	assert_eq "$("${TM[@]}" display -p -t w '#{alternate_on}')" 0 "the alternate screen left"
	assert_eq "$("${TM[@]}" display -p -t w '#{cursor_flag}')" 1 "the cursor shown"
	assert_not_contains "$(pane)" "agentrun watch: "
}

t_watch()
{
	local name=wat$RANDOM id1 id2 id3
	sb_serve_home "$1"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
while [ ! -e go ]; do sleep 0.1; done
./get.sh $PORT r1; ./get.sh $PORT r2; ./get.sh $PORT r3
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/run.sh"
	sb_bg "$name" --net ask --ask-timeout 120 -- ./run.sh
	start_watch
	wait_pane 5 "sandboxes: .*$name"
	# the client asks: the request in the pane within 1 s of pending
	touch "$WS/go"
	id1=$(wait_request "$name")
	wait_pane 1 "^> $name +#$id1 +127\\.0\\.0\\.1:$PORT"
	echo "# request shown in the pane after $WAIT_MS ms"
	[ ! -e "$WS/r1" ] || fail "the client went through before any answer"
	# o: once; the client completes
	"${TM[@]}" send-keys -t w o
	wait_until 10 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 200
	assert_contains "$(cat "$WS/r1")" served
	wait_pane 2 "#$id1 of $name: once"
	wait_pane 2 "answer #$id1 once .* by uid $(ctl_uid)"
	# r: refuse, the reason names the interface
	id2=$(wait_request "$name" "$id1")
	wait_pane 1 "^> $name +#$id2 "
	"${TM[@]}" send-keys -t w r
	wait_until 10 test -e "$WS/r2"
	assert_contains "$(cat "$WS/r2")" 403
	assert_contains "$(cat "$WS/r2")" "refused by uid $(ctl_uid) (watch)"
	# a: asks y/n; n gives nothing, s grants the session
	id3=$(wait_request "$name" "$id1 $id2")
	wait_pane 1 "^> $name +#$id3 "
	"${TM[@]}" send-keys -t w a
	wait_pane 2 "always: grant $id3 of $name for good.*y/n"
	"${TM[@]}" send-keys -t w n
	wait_pane 2 "always: not given"
	assert_eq "$(pending_ids "$name")" "$id3" "still pending after n"
	"${TM[@]}" send-keys -t w s
	wait_until 10 test -e "$WS/r3"
	assert_contains "$(cat "$WS/r3")" 200
	# the filters: n hides the net events
	wait_pane 2 "net +127\\.0\\.0\\.1:$PORT .*allowed"
	"${TM[@]}" send-keys -t w n
	wait_pane 2 '\[n\]net\(off\)'
	assert_not_contains "$(pane)" "allowed"
	"${TM[@]}" send-keys -t w n
	wait_pane 2 "net +127\\.0\\.0\\.1:$PORT .*allowed"
	# 80x24: no line longer than the pane; the keys on the last line
	[ "$(pane | awk '{ if (length($0) > 80) n++ } END { print n + 0 }')" = 0 ] ||
		fail "a line wider than 80 columns"
	[[ "$(pane | sed -n 24p)" == "#$id3 of "* ]] ||
		fail "the status is not on line 24:
$(pane)"
	# a resize: the frame redrawn at the new size
	"${TM[@]}" resize-window -t w -x 120 -y 40
	for _ in $(seq 40); do
		[[ "$(pane | sed -n 40p)" == "#$id3 of "* ]] && break
		sleep 0.05
	done
	[[ "$(pane | sed -n 40p)" == "#$id3 of "* ]] ||
		fail "after the resize, the status is not on line 40:
$(pane)"
	"${TM[@]}" resize-window -t w -x 80 -y 24
	for _ in $(seq 40); do
		[[ "$(pane | sed -n 24p)" == "#$id3 of "* ]] && break
		sleep 0.05
	done
	[[ "$(pane | sed -n 24p)" == "#$id3 of "* ]] ||
		fail "after shrinking back, the status is not on line 24"
	# q: the terminal restored
	"${TM[@]}" send-keys -t w q
	assert_restored
	# Ctrl-C too
	start_watch "$name"
	"${TM[@]}" send-keys -t w C-c
	assert_restored
}

# Attack: the agent's strings reach the terminal quoted: an argv with
# an escape sequence (a window title, a screen clear) shows as \033...,
# the pane's title is untouched
t_quoted()
{
	local name=quo$RANDOM
	sb_home "$1"
	cat >"$WS/run.sh" <<'EOF'
#!/bin/sh
while [ ! -e go ]; do sleep 0.1; done
/bin/echo "X$(printf '\033]2;PWNED\007\033[2J')Y" >/dev/null
touch asked
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	sb_home_own
	sb_bg "$name" --audit "$H/audit.log" -- ./run.sh
	start_watch "$name"
	touch "$WS/go"
	wait_until 20 test -e "$WS/asked"
	wait_pane 5 'exec +pid [0-9]+ /bin/echo "X\\033\]2;PWNED\\a\\033\[2JY"'
	assert_not_contains "$("${TM[@]}" display -p -t w '#{pane_title}')" PWNED
	"${TM[@]}" send-keys -t w q
	assert_restored
}

t_no_terminal()
{
	assert_status 1 "$AGENTRUN" --root "$TEST_TMP/none" watch </dev/null
	assert_contains "$ERR" "needs a terminal"
	assert_status 2 "$AGENTRUN" watch a b
	assert_status 1 "$AGENTRUN" watch ../x
}

run_test "watch: a request shown within 1 s, answered with keys, filters, resize, q/Ctrl-C restore (rootless)" t_watch user
run_test "watch: a request shown within 1 s, answered with keys, filters, resize, q/Ctrl-C restore (root)" t_watch root
run_test "attack: escape sequences of the agent are quoted (rootless)" t_quoted user
run_test "attack: escape sequences of the agent are quoted (root)" t_quoted root
run_test "watch: no terminal, bad arguments" t_no_terminal
finish
