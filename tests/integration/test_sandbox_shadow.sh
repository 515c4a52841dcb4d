#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shadow mode (runtime/sandbox/sandbox_shadow.c, docs/sandbox.md "Shadow
# mode"), rootless and as root: --shadow evaluates the network allowlist
# and does not enforce it; every would-be refusal is a would_deny event,
# summed up at exit; `agentrun sandbox learn --from LOG` makes profile
# lines of them. What guards the host stays enforced: address classes
# (host loopback), protected paths (.git/hooks), the never-share list.
# Destinations: a loopback server of the test, and (root) a server in a
# network namespace the test makes.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd jq curl
[ -x "$PY" ] || skip "needs $PY"

CURL="curl -sS -m 10 --noproxy '' -x http://127.0.0.1:3128"

sh_setup()
{
	sb_home "$1"
	mkdir -p "$H/srv" "$WS/.git/hooks"
	echo served >"$H/srv/index.html"
	printf '[core]\n\trepositoryformatversion = 0\n' >"$WS/.git/config"
	echo 'ref: refs/heads/main' >"$WS/.git/HEAD"
	sb_home_own
	http_server "$H/srv"
}

lrn()
{
	if [ "$MODE" = root ]; then
		"$AGENTRUN" sandbox learn "$@"
	else
		as_test_user env HOME="$H" "$AGENTRUN" sandbox learn "$@"
	fi
}

# The start line says it loudly; refused destinations are recorded and
# summed up; the host's loopback stays refused (an address class: a
# shadow grant is never the user's exact grant of an address).
t_shadow_records()
{
	local log
	sh_setup "$1"
	log=$H/audit.log
	assert_status 0 sb_run --shadow --net allow=nothing.invalid --audit "$log" -- sh -c "
		$CURL -i http://localhost:$PORT/ | head -1
		$CURL -i http://localhost:$PORT/again | head -1
		$CURL -i http://127.0.0.1:$PORT/ | head -1"
	assert_contains "$ERR" "SHADOW MODE (--shadow): THE NETWORK ALLOWLIST IS NOT ENFORCED"
	assert_contains "$ERR" "shadow mode: would have refused: net 3 connections to 2 destinations (localhost:$PORT x2, 127.0.0.1:$PORT x1)"
	# loopback: still refused, by its class
	assert_not_contains "$OUT" "200"
	assert_contains "$OUT" "403"
	assert_eq "$(grep -c '"event":"would_deny"' "$log")" 3
	assert_eq "$(grep '"event":"would_deny"' "$log" | head -1 | jq -r '.kind, .host, .port, .reason' | tr '\n' ' ')" \
		"net localhost $PORT not in the allowlist "
	grep '"event":"proxy"' "$log" | jq -e 'select(.allowed == true)' >/dev/null &&
		fail "a loopback connection went through in shadow mode"
	# without --shadow: refused, and no would_deny
	assert_status 0 sb_run --net allow=nothing.invalid --audit "$H/enforce.log" -- sh -c "$CURL -i http://localhost:$PORT/ | head -1"
	assert_contains "$OUT" 403
	assert_not_contains "$(cat "$H/enforce.log")" would_deny
	assert_not_contains "$ERR" "SHADOW"
	# nothing to shadow without an allowlist
	assert_status '!0' sb_run --shadow -- true
	assert_contains "$ERR" "--shadow evaluates the network allowlist"
}

# Attack: a shadow-mode agent leaves a git hook (and config) for the
# host to run: still refused, the host's .git untouched.
t_hooks_enforced()
{
	sh_setup "$1"
	assert_status 0 sb_run --shadow --net allow=nothing.invalid -- sh -c '
		printf "#!/bin/sh\ntouch /tmp/pwned\n" >.git/hooks/pre-commit && echo HOOK-WRITTEN
		chmod +x .git/hooks/pre-commit 2>/dev/null
		printf "[core]\n\thooksPath = /tmp\n" >>.git/config && echo CONFIG-WRITTEN
		true'
	assert_not_contains "$OUT" HOOK-WRITTEN
	assert_not_contains "$OUT" CONFIG-WRITTEN
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "a shadow-mode agent wrote .git/hooks/pre-commit"
	assert_not_contains "$(cat "$WS/.git/config")" hooksPath
}

# learn --from: the would-be refusals as a fragment or a whole profile;
# the profile, used, lets the destination through (here the loopback
# server: by its exact address, as --learn lists it); bad input.
t_learn_from()
{
	local log
	sh_setup "$1"
	log=$H/audit.log
	assert_status 0 sb_run --shadow --net allow=nothing.invalid --audit "$log" -- sh -c "$CURL -s http://localhost:$PORT/ >/dev/null"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$log"
	assert_status 0 lrn --from "$log"
	assert_eq "$(echo "$OUT" | jq -c .)" "{\"net\":{\"allow\":[\"127.0.0.1:$PORT\",\"localhost:$PORT\"]}}"
	assert_contains "$ERR" "1 would-be refusal in $log: 2 allowlist entries"
	assert_status 0 lrn --from "$log" -o "$H/learned.json"
	assert_eq "$(jq -c .net "$H/learned.json")" "{\"allow\":[\"127.0.0.1:$PORT\",\"localhost:$PORT\"]}"
	assert_status 0 sb_run --profile "$H/learned.json" -- sh -c "$CURL -s http://127.0.0.1:$PORT/"
	assert_contains "$OUT" served
	# an enforcing run's refusals are learned too
	assert_status 0 sb_run --net allow=nothing.invalid --audit "$H/enf.log" -- sh -c "$CURL -s http://localhost:$PORT/ >/dev/null"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$H/enf.log"
	assert_status 0 lrn --from "$H/enf.log"
	assert_contains "$OUT" "\"localhost:$PORT\""
	# bad input: clear errors, non-zero
	assert_status '!0' lrn --from "$H/none.log"
	assert_contains "$ERR" "none.log"
	printf 'not json\n{}\n' >"$H/bad.log"
	chmod 0644 "$H/bad.log"
	assert_status '!0' lrn --from "$H/bad.log"
	assert_contains "$ERR" "bad.log:1: not a JSON object"
	assert_status '!0' lrn
	assert_contains "$ERR" "expected --from LOG"
}

# A would-be refused destination goes through in shadow mode: a server
# at a public-class address (198.51.100.7, TEST-NET-2) in a network
# namespace made by this test, behind a veth; a name for it in a
# test-controlled /etc/hosts. Root only: the namespaces.
t_public_through()
{
	sh_setup root
	require_cmd unshare nsenter ip
	local hosts=$TEST_TMP/hosts-$RANDOM
	printf '127.0.0.1 localhost\n198.51.100.7 pub.test.example\n' >"$hosts"
	mkdir -p "$TEST_TMP/pub" && echo hello-public >"$TEST_TMP/pub/index.html"
	cat >"$TEST_TMP/pub.sh" <<EOF
set -u
mount --bind "$hosts" /etc/hosts
ip link set lo up
unshare --net sleep 60 &
B=\$!
sleep 0.2
ip link add va type veth peer name vb
ip link set vb netns \$B
ip addr add 198.51.100.1/24 dev va
ip link set va up
nsenter -t \$B -n sh -c 'ip link set lo up; ip addr add 198.51.100.7/24 dev vb; ip link set vb up'
cd "$TEST_TMP/pub"
nsenter -t \$B -n timeout 60 $PY -m http.server 8088 --bind 198.51.100.7 >/dev/null 2>&1 &
for i in \$(seq 50); do curl -s -o /dev/null http://198.51.100.7:8088/ && break; sleep 0.1; done
cd "$WS"
S="$AGENTRUN --root $AR_ROOT sandbox --no-tty"
echo "== enforce"
HOME=$H \$S --net allow=nothing.invalid -- sh -c "$CURL -s http://pub.test.example:8088/ | sed 's/^/enforce:/'"
echo "== shadow"
HOME=$H \$S --shadow --net allow=nothing.invalid --audit $H/pub.log -- sh -c "$CURL -s http://pub.test.example:8088/ | sed 's/^/shadow:/'"
kill \$B %2 2>/dev/null
true
EOF
	assert_status 0 unshare --mount --net bash "$TEST_TMP/pub.sh"
	assert_contains "$OUT" "enforce:agentrun: blocked pub.test.example:8088"
	assert_contains "$OUT" "shadow:hello-public"
	assert_eq "$(grep '"event":"would_deny"' "$H/pub.log" | jq -r .target)" "pub.test.example:8088"
	assert_contains "$ERR" "would have refused: net 1 connection to 1 destination (pub.test.example:8088 x1)"
}

for m in user root; do
	run_test "shadow: loud start, would_deny recorded and summed up, loopback still refused ($m)" t_shadow_records $m
	run_test "attack: a shadow-mode agent writes .git/hooks and .git/config ($m)" t_hooks_enforced $m
	run_test "shadow: learn --from LOG makes profile lines; bad input ($m)" t_learn_from $m
done
run_test "shadow (root): a would-be refused public destination goes through" t_public_through
finish
