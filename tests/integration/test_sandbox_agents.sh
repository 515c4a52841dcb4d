#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The agent CLIs' first day inside (issue 30): what the codex, gemini and
# opencode profiles give the CLI in a fresh home (root and rootless), and
# each real CLI (from npm, as in test_sandbox_profiles.sh; skipped with
# the reason when npm or the registry is unavailable) run twice in a fresh
# home against a mock of its model API on the host's 127.0.0.1
# (tests/helpers/agent_mock.py): the model asks for a shell
# `git status --short --untracked-files=all`, the CLI runs it inside,
# the model quotes the result. Asserted: the tool ran, its git honoured
# the user's core.excludesFile (.env not listed; Gemini CLI 0.61 runs git
# with GIT_CONFIG_GLOBAL=/dev/null itself: the excludes file is shown at
# git's default ~/.config/git/ignore too), the key reached the mock through --secret, the CLI's state from
# run 1 is on the host and run 2 works with it. Non-interactive modes
# (codex exec, gemini -p, opencode run): the interactive screens (trust,
# onboarding, ^Z/fg) were driven in tmux by hand (issue 30's closing note).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# the profile NAME where the test user can read it
profile()
{
	install -m 0644 "$TOP_SRCDIR/contrib/profiles/$1.json" "$TEST_TMP/$1.json"
	PROFILE=$TEST_TMP/$1.json
}

# ---- what the profiles give the CLI ----------------------------------------

# Codex's "Trust and continue" saved nothing inside (config.toml is
# read-only: "failed to persist config.toml") and there was no way past
# the screen; its managed app-server binary, which the host's codex runs,
# was installed in the writable ~/.codex/packages.
t_codex_config()
{
	sb_home "$1"
	sb_home_own
	profile codex
	assert_status 0 sb_run --profile "$PROFILE" -- cat /etc/codex/config.toml
	printf '%s\n' "$OUT" >"$TEST_TMP/codex.toml"
	assert_status 0 "$PY" -c '
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
assert c["projects"][sys.argv[2]]["trust_level"] == "trusted", c
assert c["features"]["daemon_auto_start"] is False, c
assert c["sandbox_mode"] == "danger-full-access", c
' "$TEST_TMP/codex.toml" "$(realpath "$WS")"
	# the binary the host's codex runs is not the agent's to replace
	assert_status '!0' sb_run --profile "$PROFILE" -- sh -c \
		'mkdir -p ~/.codex/packages/app-server-daemon && echo evil >~/.codex/packages/app-server-daemon/codex'
	[ ! -e "$H/.codex/packages/app-server-daemon" ] ||
		fail "the agent wrote into ~/.codex/packages"
	[ -d "$H/.codex/packages" ] || fail "~/.codex/packages was not created"
	# nothing of the sandbox's trust reaches the user's config.toml
	[ ! -s "$H/.codex/config.toml" ] || fail "config.toml changed: $(cat "$H/.codex/config.toml")"
}

# A workspace path that would end the TOML string: the trust line stays
# one key of one table.
t_codex_config_odd_workspace()
{
	sb_home "$1"
	local odd="$H/p\"]
notify = [\"touch\", \"/tmp/pwned\"]
x"
	mkdir -p "$odd/.git"
	sb_home_own
	profile codex
	WS=$odd
	assert_status 0 sb_run --profile "$PROFILE" -- cat /etc/codex/config.toml
	printf '%s\n' "$OUT" >"$TEST_TMP/codex.toml"
	assert_status 0 "$PY" -c '
import sys, tomllib
c = tomllib.load(open(sys.argv[1], "rb"))
assert "notify" not in c, c
assert c["projects"][sys.argv[2]]["trust_level"] == "trusted", c
' "$TEST_TMP/codex.toml" "$odd"
}

# sb_run_env NAME=VALUE [SANDBOX OPTIONS] -- CMD: sb_run with NAME set
# in the caller's environment (as_test_user clears it)
sb_run_env()
{
	local kv=$1
	shift
	if [ "$MODE" = root ]; then
		(export "${kv?}" && sb_run "$@")
	else
		as_test_user env HOME="$H" "$kv" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

# Gemini CLI's trust dialog: "Failed to save trust settings. Exiting
# Gemini CLI." (trustedFolders.json is read-only). Its API key was passed
# in as it is: the agent could read it and send it anywhere allowed.
t_gemini_config()
{
	sb_home "$1"
	sb_home_own
	profile gemini
	assert_status 0 sb_run_env GEMINI_API_KEY=real-gemini-key --profile "$PROFILE" -- \
		sh -c 'echo "$GEMINI_CLI_TRUST_WORKSPACE $GEMINI_API_KEY"'
	assert_match "$OUT" '^true agentrun-secret-[0-9a-f]+$'
}

# Gemini CLI saves the auth type (and theme, model) chosen at its first
# start in ~/.gemini/settings.json, which also holds what the host's
# Gemini runs (mcpServers, hooks): read-only inside, the choice was lost
# ("Failed to save settings: Read-only file system") and run 2 showed the
# login-method screen again. The profile's "keep": a writable copy
# inside; only the listed keys reach the next run, through agentrun's
# state; the host's file is never written.
GEMINI_SAVE='cat ~/.gemini/settings.json; echo "{\"security\":{\"auth\":{\"selectedType\":\"gemini-api-key\"}},\"ui\":{\"theme\":\"Dracula\"},\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch /tmp/pwned\"}]}]},\"mcpServers\":{\"evil\":{\"command\":\"evil-server\"}}}" >~/.gemini/settings.json && echo SAVED'
t_gemini_keep()
{
	sb_home "$1"
	mkdir -p "$H/.gemini"
	printf '{"mcpServers": {"mine": {"command": "my-server"}}}\n' >"$H/.gemini/settings.json"
	sb_home_own
	profile gemini
	local before
	before=$(cat "$H/.gemini/settings.json")
	assert_status 0 sb_run --profile "$PROFILE" -- sh -c "$GEMINI_SAVE"
	assert_contains "$OUT" "SAVED" "run 1 could not save its choice"
	assert_eq "$(cat "$H/.gemini/settings.json")" "$before" "the host's settings.json changed"
	# run 2: the choice is there, the agent's hook and server are not
	assert_status 0 sb_run --profile "$PROFILE" -- sh -c 'cat ~/.gemini/settings.json'
	printf '%s\n' "$OUT" >"$TEST_TMP/run2.json"
	assert_status 0 "$PY" -c '
import json, sys
s = json.load(open(sys.argv[1]))
assert s["security"]["auth"]["selectedType"] == "gemini-api-key", s
assert s["ui"]["theme"] == "Dracula", s
assert "hooks" not in s and "evil" not in s["mcpServers"], s
assert s["mcpServers"]["mine"]["command"] == "my-server", s
' "$TEST_TMP/run2.json"
	assert_eq "$(cat "$H/.gemini/settings.json")" "$before" "the host's settings.json changed"
	# the host's own choice wins over a kept one
	printf '{"security": {"auth": {"selectedType": "oauth-personal"}}}\n' >"$H/.gemini/settings.json"
	sb_home_own
	assert_status 0 sb_run --profile "$PROFILE" -- sh -c 'cat ~/.gemini/settings.json'
	assert_contains "$OUT" '"oauth-personal"'
	assert_contains "$OUT" '"Dracula"'
}

# opencode's providers' keys were passed in as they are.
t_opencode_keys()
{
	sb_home "$1"
	sb_home_own
	profile opencode
	assert_status 0 sb_run_env ANTHROPIC_API_KEY=real-anthropic-key --profile "$PROFILE" -- \
		printenv ANTHROPIC_API_KEY
	assert_match "$OUT" '^agentrun-secret-[0-9a-f]+$'
}

# opencode 1.18 fetches its model catalogue from models.opencode.ai
# ("Failed to fetch models.dev ... 403 GET https://models.opencode.ai/api.json").
t_opencode_catalogue()
{
	sb_home "$1"
	sb_home_own
	profile opencode
	assert_status 0 sb_run --profile "$PROFILE" -- "$PY" -c '
import socket
print(socket.getaddrinfo("models.opencode.ai", 443, socket.AF_INET)[0][4][0])'
	assert_match "$OUT" '^198\.(18|19)\.'
}

# ---- the real CLIs against the mock -----------------------------------------

# e2e NAME PACKAGE CMD: a fresh home with a real git workspace whose
# ~/.gitconfig names ~/.gitignore_global (listing .env), the mock started
sb_e2e_home()
{
	npm_cli "$1" "$2" "$3"
	[ -x "$PY" ] || skip "needs $PY"
	sb_home user
	rm -rf "$WS/.git"
	printf '.env\n' >"$H/.gitignore_global"
	printf '[user]\n\tname = T\n\temail = t@example.com\n[core]\n\texcludesFile = ~/.gitignore_global\n' >"$H/.gitconfig"
	(cd "$WS" && git init -q && echo x >README && git add README &&
		git -c user.name=t -c user.email=t@e commit -qm init &&
		echo SECRET=1 >.env && echo n >notes.txt)
	MOCK=$TEST_TMP/mock-$1
	mkdir -p "$MOCK"
	timeout 600 "$PY" "$TOP_SRCDIR/tests/helpers/agent_mock.py" "$MOCK" </dev/null >"$MOCK/err" 2>&1 &
	defer kill $!
	wait_until 10 test -s "$MOCK/port"
	PORT=$(cat "$MOCK/port")
}

# e2e_check KEY: the tool's output and the final answer
e2e_check()
{
	local key=$1 tool
	tool=$(cat "$MOCK/tool-output.log" 2>/dev/null) || true
	assert_contains "$tool" "?? notes.txt" "the shell tool did not run git status inside: $(tail -n 20 "$MOCK/requests.log" 2>/dev/null | cut -c1-300)"
	assert_contains "$OUT$ERR" "mock: the tool said:"
	grep -q "auth=.*$key" "$MOCK/requests.log" ||
		fail "the mock never got the real key: $(grep -m3 '^POST' "$MOCK/requests.log")"
}

t_codex_e2e()
{
	sb_e2e_home codex @openai/codex codex
	mkdir -p "$H/.codex"
	printf 'model = "mock-model"\nmodel_provider = "mock"\n[model_providers.mock]\nname = "Mock"\nbase_url = "http://127.0.0.1:%s/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n' \
		"$PORT" >"$H/.codex/config.toml"
	sb_home_own
	profile codex
	for run in 1 2; do
		: >"$MOCK/tool-output.log"
		assert_status 0 as_test_user env HOME="$H" OPENAI_API_KEY=sk-real-$run \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			timeout 300 "$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty \
			--profile "$PROFILE" --ro "$NPM_CACHE/codex" \
			--secret OPENAI_API_KEY=http://127.0.0.1:$PORT -- \
			"$BIN" exec "run git status"
		e2e_check "sk-real-$run"
		assert_not_contains "$(cat "$MOCK/tool-output.log")" ".env" "codex's git ignored core.excludesFile"
		assert_not_contains "$ERR" "rerun with --nested"
		ls "$H/.codex/sessions"/*/*/*/*.jsonl >/dev/null 2>&1 ||
			fail "run $run left no session in ~/.codex/sessions on the host"
	done
}

t_gemini_e2e()
{
	sb_e2e_home gemini @google/gemini-cli gemini
	# the auth type chosen on the host (settings.json is read-only inside)
	mkdir -p "$H/.gemini"
	printf '{"security": {"auth": {"selectedType": "gemini-api-key"}}}\n' >"$H/.gemini/settings.json"
	sb_home_own
	profile gemini
	for run in 1 2; do
		: >"$MOCK/tool-output.log"
		assert_status 0 as_test_user env HOME="$H" GEMINI_API_KEY=real-gemini-$run \
			GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$PORT \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			timeout 300 "$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty \
			--profile "$PROFILE" --ro "$NPM_CACHE/gemini" \
			--secret GEMINI_API_KEY=http://127.0.0.1:$PORT -- "$BIN" --yolo -p "run git status"
		e2e_check "real-gemini-$run"
		# Gemini's git runs without any config file: the excludes reach
		# it through git's default ~/.config/git/ignore (sandbox_gitconfig.c)
		assert_not_contains "$(cat "$MOCK/tool-output.log")" ".env" "gemini's git listed .env"
		[ -s "$H/.gemini/projects.json" ] || fail "run $run left no ~/.gemini/projects.json on the host"
	done
}

# The real Gemini CLI's TUI twice in a fresh home under tmux: run 1 shows
# the login-method screen (the API key option chosen, the key dialog
# submitted), run 2 none ("Authenticated with gemini-api-key"): the
# choice is kept through the profile's "keep", the host's settings.json
# unchanged. Before, run 2 showed the screen again.
t_gemini_tui()
{
	require_cmd tmux setpriv
	sb_e2e_home gemini @google/gemini-cli gemini
	sb_home_own
	profile gemini
	local tm=(tmux -L "agentrun-gemini-test-$$-$RANDOM" -f /dev/null) before
	local win=g1 sh
	pane() { "${tm[@]}" capture-pane -p -t "$win"; }
	wait_pane()
	{
		local end=$((SECONDS + $1))
		until grep -Eq -- "$2" <<<"$(pane)"; do
			[ "$SECONDS" -lt "$end" ] || fail "the pane did not show /$2/ within $1 s:
$(pane)"
			sleep 0.5
		done
	}
	sh="cd $WS && exec setpriv --reuid=$TEST_UID --regid=$TEST_GID --init-groups env -i HOME=$H USER=$TEST_USER PATH=/usr/local/bin:/usr/bin:/bin TERM=xterm-256color XDG_RUNTIME_DIR=$TEST_XDG_RUNTIME_DIR GEMINI_API_KEY=real-gemini-tui GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:$PORT bash --norc --noprofile -i"
	# quit N: /quit typed, Enter until the shell prints EXIT-N (an Enter
	# typed while the TUI is busy is lost)
	quit()
	{
		local end=$((SECONDS + 60))
		"${tm[@]}" send-keys -t "$win" /quit
		wait_pane 30 '> /quit'
		until grep -Eq "EXIT-$1=[0-9]" <<<"$(pane)"; do
			[ "$SECONDS" -lt "$end" ] || fail "run $1 did not end: $(pane)"
			"${tm[@]}" send-keys -t "$win" Enter
			sleep 3
		done
	}
	"${tm[@]}" new-session -d -s g1 -x 120 -y 45 "$sh"
	defer "${tm[@]}" kill-server
	"${tm[@]}" send-keys -t g1 "PS1='$ '" Enter
	local run="$AGENTRUN --root $AR_USER_ROOT sandbox --profile $PROFILE --ro $NPM_CACHE/gemini --secret GEMINI_API_KEY=http://127.0.0.1:$PORT -- $BIN"
	# run 1: the login-method screen, the API key option (preselected)
	"${tm[@]}" send-keys -t "$win" "$run; echo EXIT-1=\$?" Enter
	wait_pane 240 'How would you like to authenticate'
	"${tm[@]}" send-keys -t "$win" Enter
	wait_pane 60 'Enter Gemini API Key'
	"${tm[@]}" send-keys -t "$win" Enter
	wait_pane 120 'Type your message'
	quit 1
	assert_contains "$(pane)" "EXIT-1=0"
	before=$(cat "$H/.gemini/settings.json")
	# run 2, in a terminal of its own: no screen
	"${tm[@]}" new-session -d -s g2 -x 120 -y 45 "$sh"
	win=g2
	"${tm[@]}" send-keys -t g2 "PS1='$ '" Enter
	"${tm[@]}" send-keys -t g2 "$run; echo EXIT-2=\$?" Enter
	wait_pane 240 'Type your message|How would you like to authenticate'
	assert_not_contains "$(pane)" "How would you like to authenticate" "run 2 showed the login-method screen again"
	[ -s "$H/.local/state/agentrun/kept/.gemini!settings.json" ] ||
		fail "run 1 kept nothing: $(ls -la "$H/.local/state/agentrun/kept" 2>&1)"
	quit 2
	assert_eq "$(cat "$H/.gemini/settings.json")" "$before" "the host's settings.json changed"
	assert_not_contains "$before" "selectedType"
}

t_opencode_e2e()
{
	sb_e2e_home opencode opencode-ai opencode
	mkdir -p "$H/.config/opencode"
	printf '{"provider": {"mock": {"npm": "@ai-sdk/openai-compatible", "name": "Mock", "options": {"baseURL": "http://127.0.0.1:%s/v1", "apiKey": "{env:OPENAI_API_KEY}"}, "models": {"mock-model": {"name": "Mock", "tool_call": true}}}}, "model": "mock/mock-model", "small_model": "mock/mock-model", "autoupdate": false, "share": "disabled"}\n' \
		"$PORT" >"$H/.config/opencode/opencode.json"
	sb_home_own
	profile opencode
	for run in 1 2; do
		: >"$MOCK/tool-output.log"
		assert_status 0 as_test_user env HOME="$H" OPENAI_API_KEY=sk-real-$run \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			timeout 300 "$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty \
			--profile "$PROFILE" --ro "$NPM_CACHE/opencode" \
			--secret OPENAI_API_KEY=http://127.0.0.1:$PORT -- \
			"$BIN" run "run git status"
		e2e_check "sk-real-$run"
		assert_not_contains "$(cat "$MOCK/tool-output.log")" ".env" "opencode's git ignored core.excludesFile"
		[ -s "$H/.local/share/opencode/opencode.db" ] ||
			fail "run $run left no ~/.local/share/opencode/opencode.db on the host"
	done
}

# AGENTS_ONLY: which part (test_sandbox_agents_{codex,gemini,opencode}.sh
# run one real CLI each: a file of its own for the time limit)
case ${AGENTS_ONLY:-profiles} in
profiles)
	for mode in user root; do
		run_test "codex profile: workspace trusted inside only, no daemon, packages read-only ($mode)" t_codex_config "$mode"
		run_test "codex profile: a workspace path with a quote and a newline stays one TOML key ($mode)" t_codex_config_odd_workspace "$mode"
		run_test "gemini profile: the workspace trusted for the run, the API key a placeholder ($mode)" t_gemini_config "$mode"
		run_test "gemini profile: the auth type chosen in run 1 is there in run 2, the agent's hooks are not, the host's file unchanged ($mode)" t_gemini_keep "$mode"
		run_test "opencode profile: its model catalogue models.opencode.ai allowed ($mode)" t_opencode_catalogue "$mode"
		run_test "opencode profile: the providers' keys are placeholders inside ($mode)" t_opencode_keys "$mode"
	done
	;;
codex) run_test "codex exec twice against a mock: git status honours the global excludes" t_codex_e2e ;;
gemini)
	run_test "gemini -p twice against a mock: its shell tool runs git status" t_gemini_e2e
	run_test "gemini's TUI twice in a fresh home: the login-method screen in run 1 only (rootless)" t_gemini_tui
	;;
opencode) run_test "opencode run twice against a mock: git status honours the global excludes" t_opencode_e2e ;;
*) fail "AGENTS_ONLY=$AGENTS_ONLY: profiles, codex, gemini or opencode" ;;
esac
finish
