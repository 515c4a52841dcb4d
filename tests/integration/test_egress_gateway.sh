#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A model gateway on the host's loopback in plain HTTP (a LiteLLM-style
# proxy): `--secret NAME=http://127.0.0.1:PORT` gives it the real value
# of NAME in the request head, only there; a placeholder going to a host
# its --secret does not list is said once, naming the host and the
# option. The gateway is a python server on 127.0.0.1 made by the test.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

SECRET=real-gateway-key-51c0e2

# gw_server LOG: a plain-HTTP server on 127.0.0.1 writing "host=H
# auth=A" per request to LOG; sets PORT
gw_server()
{
	local log=$1 pf=$TEST_TMP/gw-port-$RANDOM
	require_cmd curl timeout
	[ -x "$PY" ] || skip "needs $PY"
	timeout 120 "$PY" "$AR_TEST_HELPERS/http_server.py" --port-file "$pf" \
		--log "$log" --fields host,auth=x-api-key,body --reply ok-from-gateway &
	defer kill $!
	wait_until 10 test -s "$pf"
	PORT=$(cat "$pf")
}

gw_run()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && KEY=$SECRET HOME=$H \
			"$AGENTRUN" --root "$AR_ROOT" sandbox --no-tty "$@")
	else
		as_test_user env HOME="$H" KEY=$SECRET \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
	fi
}

t_gateway_gets_value()
{
	sb_home "$1"
	sb_home_own
	local log=$TEST_TMP/gw-$RANDOM
	: >"$log"
	gw_server "$log"
	assert_status 0 gw_run --net allow=example.invalid \
		--secret "KEY=http://127.0.0.1:$PORT" -- sh -c "
		echo inside=\$KEY
		curl -sS -m 10 -H \"x-api-key: \$KEY\" -d \"body-\$KEY\" http://127.0.0.1:$PORT/v1/messages
		# another Host header than the gateway: no value
		curl -sS -m 10 -H 'Host: evil.example' -H \"x-api-key: \$KEY\" -d x http://127.0.0.1:$PORT/
		grep -c '$SECRET' /proc/[0-9]*/environ 2>/dev/null | grep -v ':0' | sed s/^/env-hit:/
		echo done"
	assert_contains "$OUT" "ok-from-gateway"
	assert_match "$OUT" "inside=agentrun-secret-[0-9a-f]{32}"
	assert_not_contains "$OUT" "env-hit:"
	assert_contains "$OUT" "done"
	assert_contains "$(cat "$log")" "host=127.0.0.1:$PORT auth=$SECRET body=body-agentrun-secret-"
	assert_contains "$(cat "$log")" "host=evil.example auth=agentrun-secret-"
	assert_not_contains "$(grep evil "$log")" "$SECRET"
	assert_contains "$ERR" "not for its host"
}

# What the user did in issue 30: the key for the vendor's host, the
# gateway allowed as a host loopback service; the gateway gets the
# placeholder, and the end of the run says so, with the option.
t_placeholder_out_said()
{
	sb_home "$1"
	sb_home_own
	local log=$TEST_TMP/gw-$RANDOM
	: >"$log"
	gw_server "$log"
	assert_status 0 gw_run --net "allow=127.0.0.1:$PORT,api.example.invalid" \
		--secret "KEY=api.example.invalid" -- sh -c "
		curl -sS -m 10 -H \"x-api-key: \$KEY\" -d a http://127.0.0.1:$PORT/
		curl -sS -m 10 -H \"x-api-key: \$KEY\" -d b http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "ok-from-gateway"
	assert_not_contains "$(cat "$log")" "$SECRET"
	assert_contains "$ERR" "KEY's placeholder went to 127.0.0.1:$PORT, which its --secret does not list"
	assert_contains "$ERR" "--secret KEY=http://127.0.0.1:$PORT"
	assert_eq "$(grep -c "placeholder went to" "$ERR_FILE")" 1 "said once"
}

# The claude profile names KEY for the vendor's host; the command line's
# --secret KEY=http://... replaces it (one placeholder per variable).
t_gateway_beats_profile()
{
	sb_home "$1"
	local log=$TEST_TMP/gw-$RANDOM
	printf '{"net": {"allow": ["api.example.invalid:443"]}, "secret": ["KEY=api.example.invalid:443"]}\n' >"$H/p.json"
	sb_home_own
	: >"$log"
	gw_server "$log"
	assert_status 0 gw_run --profile "$H/p.json" --secret "KEY=http://localhost:$PORT" -- \
		sh -c "curl -sS -m 10 -H \"x-api-key: \$KEY\" -d z http://localhost:$PORT/"
	assert_contains "$OUT" "ok-from-gateway"
	assert_contains "$(cat "$log")" "host=localhost:$PORT auth=$SECRET body=z"
}

t_gateway_errors()
{
	sb_home "$1"
	sb_home_own
	assert_status '!0' gw_run --net allow=example.invalid --secret "KEY=http://api.example.com:80" -- true
	assert_contains "$ERR" "plain HTTP (http://) goes only to a gateway on the host's loopback"
	assert_status '!0' gw_run --net allow=example.invalid --secret "KEY=http://127.0.0.1" -- true
	assert_contains "$ERR" "with its port"
	assert_status '!0' gw_run --net allow=example.invalid --secret "KEY=http://10.0.0.1:4000" -- true
	assert_contains "$ERR" "loopback"
}

for mode in root user; do
	run_test "gateway ($mode): a plain-HTTP gateway on loopback gets the value, named by Host only" t_gateway_gets_value $mode
	run_test "gateway ($mode): a placeholder sent to an unlisted gateway is said once, with the option" t_placeholder_out_said $mode
	run_test "gateway ($mode): the command line's gateway replaces the profile's secret of that name" t_gateway_beats_profile $mode
	run_test "gateway ($mode): errors" t_gateway_errors $mode
done
finish
