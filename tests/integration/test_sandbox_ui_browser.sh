#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The web dashboard (`agentrun ui`) in a real browser: Debian's chromium,
# headless, driven by playwright-core from npm (contrib/install-deps.sh
# installs both; without them the test skips and says so). The page
# opened from the printed URL shows the pending `--net ask` request and
# the process that asks (its executable's name and an argument are HTML:
# shown as text, nothing of them runs); a page of another origin
# (another loopback port, in the same browser) can neither read the API
# or the stream nor answer; a click on the grant lets the sandbox's
# waiting curl complete; the sandbox's policy, and the network policy in
# force updated without a reload by a `session` click and a live grant
# (no secret value in the page); an --overlay sandbox's change, its
# diff, commit. Screenshots of each
# page: build/tests/artifacts/ui/ (AR_ARTIFACTS names another directory).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl node
[ -x "$PY" ] || skip "needs $PY"
CHROMIUM=${CHROMIUM:-$(command -v chromium || true)}
[ -n "$CHROMIUM" ] || skip "needs Debian's chromium (contrib/install-deps.sh installs it)"
NODE_PATH=${NODE_PATH:-$(npm root -g 2>/dev/null || true)}
export NODE_PATH CHROMIUM
node -e "require('playwright-core')" 2>/dev/null ||
	skip "needs playwright-core from npm (contrib/install-deps.sh: npm install -g playwright-core)"

ARTIFACTS=${AR_ARTIFACTS:-$(cd "$(dirname "$AR_BUILT_AGENTRUN")" && pwd)/tests/artifacts/ui}
mkdir -p "$ARTIFACTS"

UI_DIR=$TEST_TMP/ui-assets
mkdir -p "$UI_DIR"
cp "$TOP_SRCDIR"/contrib/ui/index.html "$TOP_SRCDIR"/contrib/ui/app.js \
	"$TOP_SRCDIR"/contrib/ui/app.css "$UI_DIR/"

t_browser()
{
	local name=web$RANDOM out ui_url ui_port target evil res id ov tok=tok-$RANDOM$RANDOM-value
	local bad_exe='<img src=x onerror=window.pwned=1>' bad_arg='<script>window.pwned=2</script>'
	MODE=root
	require_root
	sb_serve_home root
	target=$PORT
	mkdir -p "$H/evil"
	cp "$AR_TEST_HELPERS/ui_evil.html" "$H/evil/evil.html"
	# the agent: its client under a name, and with an argument, that
	# are HTML (the process column shows them: as text, nothing runs);
	# a second request once the test says go2
	cp "$(command -v curl)" "$WS/$bad_exe"
	cat >"$WS/run.sh" <<EOF
#!/bin/sh
'./$bad_exe' -sS -m 120 --noproxy '' -x http://127.0.0.1:3128 -A '$bad_arg' \\
	-o r1.body -w '%{http_code}\n' "http://127.0.0.1:\$1/" >r1.tmp 2>&1
cat r1.body >>r1.tmp; mv r1.tmp r1
while [ ! -e go2 ]; do sleep 0.1; done
./get.sh "\$1" r2
sleep 600
EOF
	chmod 0755 "$WS/run.sh"
	# an --overlay sandbox with a change to look at and commit
	ov=ov$RANDOM
	(cd "$WS" && HOME=$H "$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty \
		--overlay --name "$ov" -- sh -c 'echo from-the-overlay >overlay.txt') ||
		fail "the --overlay sandbox"
	http_server "$H/evil"
	evil=$PORT
	# the dashboard
	out=$TEST_TMP/ui.out
	HOME=$H AGENTRUN_UI_DIR=$UI_DIR "$AGENTRUN" --root "$AR_ROOT" ui >"$out" 2>&1 &
	defer kill $!
	wait_until 10 grep -q 'http://127.0.0.1:' "$out"
	ui_url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/?token=[0-9a-f]*' "$out")
	ui_port=$(sed 's|http://127.0.0.1:\([0-9]*\)/.*|\1|' <<<"$ui_url")
	# the agent, whose curl waits for an answer; an allowlist and a
	# secret for the policy in force
	SB_ENV=("UI_TOKEN=$tok")
	sb_bg "$name" --net allow=allowed.example,ask --ask-timeout 120 \
		--secret UI_TOKEN=api.example.com -- ./run.sh "$target"
	SB_ENV=()
	id=$(wait_request "$name")
	# the browser
	res=$(AR_WS=$WS AR_ROOT=$AR_ROOT AGENTRUN=$AGENTRUN UI_TOKEN=$tok \
		timeout 150 node "$AR_TEST_HELPERS/ui_browser.js" "$ui_url" "$name" \
		"http://127.0.0.1:$evil/evil.html?ui=http://127.0.0.1:$ui_port&sb=$name&id=$id" \
		"$ARTIFACTS" "$ov" 2>"$TEST_TMP/browser.err") ||
		fail "the browser: $(cat "$TEST_TMP/browser.err") $res"
	echo "# $res"
	[ "$(jq -r .ok <<<"$res")" = true ] || fail "the browser: $(jq -r .error <<<"$res")"
	# the token was spent for an HttpOnly SameSite=Strict cookie
	assert_eq "$(jq -r .url_after_login <<<"$res")" "http://127.0.0.1:$ui_port/"
	assert_eq "$(jq -c '.cookie' <<<"$res")" '[{"name":"agentrun_ui","httpOnly":true,"sameSite":"Strict"}]'
	assert_contains "$(jq -r .row_text <<<"$res")" "127.0.0.1:$target"
	# attack: the process's names are shown as text; no element of
	# theirs in the page, nothing of theirs ran
	assert_contains "$(jq -r .process_text <<<"$res")" "$bad_exe"
	assert_contains "$(jq -r .process_text <<<"$res")" "$bad_arg"
	assert_eq "$(jq -c .injected <<<"$res")" '{"pwned":null,"elements":0}'
	# the other origin read nothing and answered nothing
	assert_match "$(jq -r .evil.read_api <<<"$res")" "^blocked"
	assert_match "$(jq -r .evil.read_session <<<"$res")" "^blocked"
	# Cross-Origin-Resource-Policy: even an opaque answer is withheld
	assert_match "$(jq -r .evil.read_api_nocors <<<"$res")" "^blocked"
	assert_match "$(jq -r .evil.stream <<<"$res")" "^blocked"
	assert_match "$(jq -r .evil.answer_cors <<<"$res")" "^blocked"
	assert_eq "$(jq -r .pending_after_evil <<<"$res")" true
	# the click: the agent's curl completes
	assert_contains "$(jq -r .answer_result <<<"$res")" "$name request $id: once"
	wait_until 20 test -e "$WS/r1"
	assert_contains "$(cat "$WS/r1")" 200
	assert_contains "$(cat "$WS/r1")" served
	# the policy: what it was made of, and the network policy in force,
	# updated without a reload by the session answer and the live grant
	assert_contains "$(jq -r .policy_text <<<"$res")" "$WS"
	assert_contains "$(jq -r .policy_text <<<"$res")" allowed.example
	assert_contains "$(jq -r .policy_text <<<"$res")" "secret UI_TOKEN"
	assert_contains "$(jq -r .policy_text <<<"$res")" "api.example.com"
	assert_contains "$(jq -r .policy_text <<<"$res")" "127.0.0.1:${target}answer by uid 0 (web)"
	assert_contains "$(jq -r .policy_text <<<"$res")" "granted.example:443"
	assert_eq "$(jq -r .no_reload <<<"$res")" true
	assert_eq "$(jq -r .token_in_page <<<"$res")" false
	wait_until 20 test -e "$WS/r2"
	assert_contains "$(cat "$WS/r2")" served
	# the overlay's diff and its commit
	assert_contains "$(jq -r .changes_text <<<"$res")" "overlay.txt"
	assert_contains "$(jq -r .diff_text <<<"$res")" "+from-the-overlay"
	assert_eq "$(cat "$WS/overlay.txt")" from-the-overlay
	for f in 1-pending 2-other-origin 3-answered 4-policy 5-overlay-diff 6-overlay-committed; do
		[ -s "$ARTIFACTS/$f.png" ] || fail "no screenshot $f.png"
	done
	echo "# screenshots: $ARTIFACTS"
}

run_test "ui in chromium: see the request and its process (HTML as text), another origin refused, click the grant, the agent's curl completes, the policy in force updates live" t_browser
finish
