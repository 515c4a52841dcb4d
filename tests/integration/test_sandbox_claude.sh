#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Claude Code inside `agentrun sandbox`: its own bubblewrap sandbox under
# --nested in a project without .claude/ (item 11 of issue 30), and the
# real CLI end to end (t_e2e): started twice under tmux in a fresh home,
# driven by a mock of the Messages API on the host's loopback
# (tests/helpers/mock_anthropic.py) through the documented gateway way
# (--secret NAME=http://127.0.0.1:PORT --net allow=127.0.0.1:PORT).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# What Claude Code 2.1's sandbox binds below an existing project .claude
# (read from its bwrap command line, `strace -f -e execve`): the name
# itself when it exists, /dev/null over it (bwrap makes the mount point)
# when it does not.
CLAUDE_BINDS="settings.json settings.local.json skills hooks launch.json workflows routines scheduled_tasks.json commands agents"

# The agent writes below a missing .claude under --nested: the protected
# names stay refused, nothing reaches the host.
t_claude_dir_writes()
{
	sb_home "$1"
	sb_home_own
	cat >"$TEST_TMP/w.sh" <<'EOF'
for f in settings.json settings.local.json; do
	[ -f .claude/$f ] || echo "NOT A FILE $f"
	(echo '{"hooks":{}}' >.claude/$f) 2>/dev/null
	[ ! -s .claude/$f ] || echo "WROTE $f"
	(rm -f .claude/$f && echo x >.claude/$f) 2>/dev/null && echo "REPLACED $f"
done
for d in commands agents; do
	if mkdir .claude/$d/x 2>/dev/null || (echo x >.claude/$d/x.md) 2>/dev/null; then echo "WROTE $d"; fi
done
(mkdir -p .claude/skills/s && echo scratch >.claude/skills/s/SKILL.md) 2>&1 && echo "scratch ok"
EOF
	chmod 0644 "$TEST_TMP/w.sh"
	assert_status 0 sb_run --nested -- sh -c "$(cat "$TEST_TMP/w.sh")"
	assert_not_contains "$OUT" "WROTE"
	assert_not_contains "$OUT" "REPLACED"
	assert_not_contains "$OUT" "NOT A FILE"
	assert_contains "$OUT" "scratch ok"
	[ ! -e "$WS/.claude" ] || fail "the host's workspace has .claude after the run: $(ls -la "$WS/.claude")"
}

# Claude Code's own sandbox (bubblewrap, as Claude Code 2.1 calls it)
# under --nested in a project without .claude: it runs git status.
t_claude_bwrap()
{
	require_cmd bwrap
	sb_home user
	rm -rf "$WS/.git"
	git init -q "$WS"
	echo 'print(1)' >"$WS/app.py"
	echo 'SECRET=1' >"$WS/.env"
	echo '.env' >"$H/.gitignore_global"
	git config -f "$H/.gitconfig" core.excludesFile '~/.gitignore_global'
	sb_home_own
	cat >"$TEST_TMP/cc.sh" <<EOF
ws=\$PWD
set -- --ro-bind / / --bind "\$ws" "\$ws"
for n in $CLAUDE_BINDS; do
	p=\$ws/.claude/\$n
	if [ -e "\$p" ]; then set -- "\$@" --ro-bind "\$p" "\$p"
	else set -- "\$@" --ro-bind /dev/null "\$p"; fi
done
exec bwrap "\$@" --dev /dev --unshare-pid --unshare-net --proc /proc -- git status --short --untracked-files=all
EOF
	chmod 0644 "$TEST_TMP/cc.sh"
	assert_status 0 sb_run --nested -- sh -c "$(cat "$TEST_TMP/cc.sh")"
	assert_not_contains "$ERR" "Can't create file"
	assert_contains "$OUT" "?? app.py"
	assert_not_contains "$OUT$ERR" ".env"
	assert_not_contains "$ERR" "could not open directory"
	[ ! -e "$WS/.claude" ] || fail "the host's workspace has .claude after the run: $(ls -la "$WS/.claude")"
}

# A project whose .claude lacks settings.local.json (it is per user and
# git-ignored: the usual case): Claude Code reads it at every start, and
# a directory there stopped it with a "Settings Error" dialog (EISDIR).
t_claude_settings_file()
{
	sb_home "$1"
	mkdir -p "$WS/.claude"
	echo '{"permissions":{}}' >"$WS/.claude/settings.json"
	sb_home_own
	assert_status 0 sb_run -- sh -c '
		for f in settings.json settings.local.json; do
			[ -f .claude/$f ] && echo "FILE $f"
			(echo "{\"hooks\":{}}" >.claude/$f) 2>/dev/null && echo "WROTE $f"
		done
		cat .claude/settings.local.json'
	assert_contains "$OUT" "FILE settings.json"
	assert_contains "$OUT" "FILE settings.local.json"
	assert_not_contains "$OUT" "WROTE"
	assert_eq "$(cat "$WS/.claude/settings.json")" '{"permissions":{}}'
	# a file placeholder for the run: nothing left in the user's project
	# (before, a {} file made on the host stayed there for good)
	[ ! -e "$WS/.claude/settings.local.json" ] ||
		fail "settings.local.json left in the project: $(cat "$WS/.claude/settings.local.json")"
}

# ---- the real CLI, end to end ------------------------------------------
# claude_cli: set CLAUDE to the real Claude Code CLI (a system install,
# `npm install -g @anthropic-ai/claude-code`, or test_sandbox_profiles'
# npm cache) and CLAUDE_RO to what must be shown for it; skip otherwise.
claude_cli()
{
	local cache=${AR_TEST_NPM_CACHE:-/var/cache/agentrun-test/npm}/claude
	CLAUDE_RO=()
	CLAUDE=$(command -v claude 2>/dev/null || true)
	if [ -z "$CLAUDE" ] && [ -x "$cache/node_modules/.bin/claude" ]; then
		CLAUDE=$cache/node_modules/.bin/claude
		CLAUDE_RO=(--ro "$cache")
	fi
	[ -n "$CLAUDE" ] ||
		skip "Claude Code is not installed (npm install -g @anthropic-ai/claude-code, or contrib/install-deps.sh)"
	as_test_user "$CLAUDE" --version >"$TEST_TMP/claude-version" 2>&1 ||
		skip "$CLAUDE --version fails as $TEST_USER: $(head -c 300 "$TEST_TMP/claude-version")"
}

# mock_start: the API mock in a directory of its own (MOCK_PORT,
# MOCK_LOG). The cases share TEST_TMP: with one port file for all, the
# wait for it returned at once with the port of an earlier case's mock,
# gone by then ("Connection refused" in egress.log, Claude's "API error ·
# Retrying", CI of 2026-12-05).
mock_start()
{
	local dir
	dir=$(mktemp -d "$TEST_TMP/mock.XXXXXX")
	MOCK_LOG=$dir/log
	"$PY" "$TOP_SRCDIR/tests/helpers/mock_anthropic.py" "$dir/port" "$MOCK_LOG" &
	defer kill $!
	wait_until 10 test -s "$dir/port"
	MOCK_PORT=$(cat "$dir/port")
}

# The real CLI in print mode in a project whose .claude has neither
# settings file: the file placeholders are read as {} ("Settings Error"
# with a directory there), the answer comes from the mock, nothing is
# left in the project.
t_claude_print_placeholders()
{
	require_cmd jq
	claude_cli
	sb_home user
	mkdir -p "$WS/.claude/commands"
	sb_home_own
	install -m 0644 "$TOP_SRCDIR/contrib/profiles/claude.json" "$TEST_TMP/claude.json"
	mock_start
	local port=$MOCK_PORT
	assert_status 0 as_test_user env HOME="$H" ANTHROPIC_BASE_URL=http://127.0.0.1:$port \
		ANTHROPIC_AUTH_TOKEN=sk-ant-test DISABLE_AUTOUPDATER=1 \
		bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
		timeout 300 "$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty \
		--profile "$TEST_TMP/claude.json" "${CLAUDE_RO[@]}" \
		--secret ANTHROPIC_AUTH_TOKEN=http://127.0.0.1:$port --net allow=127.0.0.1:$port -- \
		"$CLAUDE" -p "say hello" --debug
	assert_not_contains "$OUT$ERR" "EISDIR"
	assert_not_contains "$OUT$ERR" "Settings Error"
	assert_not_contains "$OUT$ERR" "Invalid settings"
	[ -s "$MOCK_LOG" ] || fail "the mock got no request: $OUT $ERR"
	[ ! -e "$WS/.claude/settings.json" ] && [ ! -e "$WS/.claude/settings.local.json" ] ||
		fail "a settings file left in the project: $(ls -la "$WS/.claude")"
}

TM=()
pane() { "${TM[@]}" capture-pane -p -t c; }

# wait_pane SECONDS REGEX
wait_pane()
{
	local end=$((SECONDS + $1))
	until grep -Eq -- "$2" <<<"$(pane)"; do
		[ "$SECONDS" -lt "$end" ] ||
			fail "the pane did not show /$2/ within $1 s:
$(pane)"
		sleep 0.2
	done
}

# type_line TEXT: typed once the TUI shows its prompt, then Enter once
# the TUI shows the text (an Enter typed before it is drawn is lost)
type_line()
{
	wait_pane 60 'for shortcuts'
	"${TM[@]}" send-keys -t c -l "$1"
	wait_pane 10 "$1"
	"${TM[@]}" send-keys -t c Enter
}

# claude_start N: start run N in the pane and answer any first-run
# screen with Enter until the prompt shows; SCREENS: the ones answered
claude_start()
{
	local end=$((SECONDS + 90)) p
	SCREENS=""
	"${TM[@]}" send-keys -t c -l "$RUN_CMD"
	"${TM[@]}" send-keys -t c Enter
	while :; do
		p=$(pane)
		if grep -q 'for shortcuts' <<<"$p"; then
			break
		elif grep -q 'Choose the text style' <<<"$p"; then
			SCREENS="$SCREENS theme"
		elif grep -q 'Security notes' <<<"$p"; then
			SCREENS="$SCREENS security"
		elif grep -q 'trust this folder' <<<"$p"; then
			SCREENS="$SCREENS trust"
		elif grep -q 'agentrun: error' <<<"$p"; then
			fail "run $1:
$p"
		else
			[ "$SECONDS" -lt "$end" ] || fail "run $1: no prompt within 90 s:
$p"
			sleep 0.3
			continue
		fi
		[ "$SECONDS" -lt "$end" ] || fail "run $1: stuck on a first-run screen:
$p"
		echo "--- run $1 screen:"
		echo "$p"
		"${TM[@]}" send-keys -t c Enter
		# until the screen answered is gone
		while [ "$SECONDS" -lt "$end" ] && [ "$(pane)" = "$p" ]; do
			sleep 0.2
		done
		sleep 0.5
	done
}

# claude_git_status N: the model's tool loop runs `git status` (in
# Claude Code's own sandbox) and the mock's final text shows
claude_git_status()
{
	type_line "Please run git status, run $1"
	# on a failure, what the API mock received and what the egress
	# proxy decided (an "API error · Retrying" pane was seen twice under
	# load, 2026-12-05, and not reproduced since)
	if ! (wait_pane 90 'MOCK-DONE On branch'); then
		echo "--- the mock's log:"
		cat "$MOCK_LOG"
		echo "--- egress.log:"
		tail -n 30 "$H/.local/state/agentrun/egress.log" 2>&1
		fail "run $1: no MOCK-DONE within 90 s:
$(pane)"
	fi
}

# (the exit status asked for afterwards: `CMD; echo $?` would print 148
# at the Ctrl-Z, and nothing after fg)
claude_exit()
{
	type_line "/exit"
	wait_pane 30 'Resume this session with'
	# typed only once the shell's prompt is back: keys typed while the
	# CLI and agentrun are still ending are eaten by the TUI's raw mode
	# (seen under load)
	local end=$((SECONDS + 60))
	until [ "$(pane | sed '/^[[:space:]]*$/d' | tail -n 1)" = '$' ]; do
		[ "$SECONDS" -lt "$end" ] || fail "no shell prompt 60 s after /exit:
$(pane)"
		sleep 0.2
	done
	"${TM[@]}" send-keys -t c -l "echo RUN$1-EXIT=\$?"
	"${TM[@]}" send-keys -t c Enter
	wait_pane 30 "^RUN$1-EXIT=0"
	"${TM[@]}" send-keys -t c clear Enter
	sleep 0.5
}

t_e2e()
{
	require_cmd tmux setpriv bwrap socat jq
	claude_cli
	sb_home user
	rm -rf "$WS/.git"
	git init -q -b main "$WS"
	echo 'print(1)' >"$WS/app.py"
	git -C "$WS" add app.py
	git -C "$WS" -c user.name=t -c user.email=t@e commit -qm init
	echo 'SECRET=1' >"$WS/.env"
	printf '[core]\n\texcludesFile = ~/.gitignore_global\n' >"$H/.gitconfig"
	echo '.env' >"$H/.gitignore_global"
	mkdir -p "$H/.claude"
	echo '{"sandbox": {"enabled": true}}' >"$H/.claude/settings.json"
	sb_home_own
	install -m 0644 "$TOP_SRCDIR/contrib/profiles/claude.json" "$TEST_TMP/claude.json"

	mock_start
	local port=$MOCK_PORT token=sk-ant-test-$RANDOM$RANDOM

	RUN_CMD="$AGENTRUN --root $AR_USER_ROOT sandbox --nested --profile $TEST_TMP/claude.json ${CLAUDE_RO[*]} --secret ANTHROPIC_AUTH_TOKEN=http://127.0.0.1:$port --net allow=127.0.0.1:$port -- $CLAUDE"
	TM=(tmux -L "agentrun-claude-test-$$-$RANDOM" -f /dev/null)
	"${TM[@]}" new-session -d -s c -x 120 -y 45 \
		"cd $WS && exec setpriv --reuid=$TEST_UID --regid=$TEST_GID --init-groups env -i HOME=$H USER=$TEST_USER PATH=/usr/local/bin:/usr/bin:/bin TERM=xterm-256color XDG_RUNTIME_DIR=$TEST_XDG_RUNTIME_DIR ANTHROPIC_BASE_URL=http://127.0.0.1:$port ANTHROPIC_AUTH_TOKEN=$token bash --norc --noprofile -i"
	defer "${TM[@]}" kill-server
	"${TM[@]}" send-keys -t c "PS1='$ '" Enter

	# run 1: the first-run screens, once
	claude_start 1
	local first=$SCREENS
	claude_git_status 1
	claude_exit 1
	echo "run 1 answered:$first"
	assert_contains "$first" "trust"
	assert_eq "$(jq -r '.hasCompletedOnboarding' "$H/.claude.json")" true "onboarding kept on the host"
	assert_eq "$(jq -r --arg w "$WS" '.projects[$w].hasTrustDialogAccepted' "$H/.claude.json")" true "trust kept on the host"

	# run 2: none of them; Ctrl-Z gives the shell back, fg the TUI
	claude_start 2
	assert_eq "$SCREENS" "" "run 2 showed first-run screens"
	"${TM[@]}" send-keys -t c C-z
	wait_pane 20 'Stopped'
	"${TM[@]}" send-keys -t c "echo SHELL-IS-BACK" Enter
	wait_pane 10 '^SHELL-IS-BACK'
	echo "--- after Ctrl-Z:"
	pane
	"${TM[@]}" send-keys -t c "fg" Enter
	claude_git_status 2
	echo "--- run 2 after fg:"
	pane
	claude_exit 2

	# what the gateway got: the real token, the two results of git
	# status run by the agent in Claude Code's sandbox, .env not in them
	local results
	assert_eq "$(jq -r 'select(.path|startswith("/v1/messages")) | .authorization' "$MOCK_LOG" | sort -u)" "Bearer $token" "the gateway got the token"
	results=$(jq -r '.tool_results[]' "$MOCK_LOG")
	assert_eq "$(grep -c '^On branch main' <<<"$results")" 2 "git status ran twice:
$results"
	assert_not_contains "$results" ".env"
	assert_not_contains "$results" "bwrap:"
	[ ! -e "$WS/.claude" ] || fail "the host's workspace has .claude after the runs"
}

run_test "a project .claude without settings.local.json: an empty read-only file inside (rootless)" t_claude_settings_file user
run_test "a project .claude without settings.local.json: an empty read-only file inside (root)" t_claude_settings_file root
run_test "the real Claude Code in print mode, a project .claude without settings files: no settings error, nothing left (rootless)" t_claude_print_placeholders
run_test "a missing .claude under --nested: protected names refused, nothing on the host (rootless)" t_claude_dir_writes user
run_test "a missing .claude under --nested: protected names refused, nothing on the host (root)" t_claude_dir_writes root
run_test "Claude Code's bubblewrap sandbox under --nested, no .claude in the project (rootless)" t_claude_bwrap
run_test "the real Claude Code twice in a fresh home with a mock API: first-run screens once, Ctrl-Z/fg, git status in its sandbox (rootless)" t_e2e
finish
