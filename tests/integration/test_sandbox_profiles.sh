#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The agent profiles of contrib/profiles/, each with its real CLI: the
# package is installed from the npm registry into a scratch prefix
# (cached in /var/cache/agentrun-test/npm/NAME as root, else in the build
# tree's tests/work/npm/NAME; skipped with the reason
# when npm or the registry is unavailable), and `CMD --version` runs
# inside `agentrun sandbox --profile FILE` as the unprivileged test user.
# aider is a Python package (PyPI is not reachable from the test machines):
# its profile is only parsed (tests/unit/test_sandbox_profile.c).
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# As root the cache lives where the test user can read it whatever the
# build tree's parents allow (a clone in a mode-700 home), and is kept
# between runs; otherwise in the build tree.
if [ "$(id -u)" = 0 ]; then
	NPM_CACHE=${AR_TEST_NPM_CACHE:-/var/cache/agentrun-test/npm}
else
	NPM_CACHE=${AR_TEST_NPM_CACHE:-$TOP_BUILDDIR/tests/work/npm}
fi

# npm_cli NAME PACKAGE CMD: install PACKAGE (once), set BIN to CMD in it
npm_cli()
{
	local name=$1 pkg=$2 cmd=$3 dir=$NPM_CACHE/$1
	require_cmd npm node
	BIN=$dir/node_modules/.bin/$cmd
	if [ ! -x "$BIN" ]; then
		mkdir -p "$NPM_CACHE"
		chmod 0755 "$NPM_CACHE" "$(dirname "$NPM_CACHE")" 2>/dev/null || true
		rm -rf "$dir.tmp"
		timeout 600 npm install --prefix "$dir.tmp" --no-audit --no-fund \
			--loglevel=error "$pkg" >"$TEST_TMP/npm-$name.log" 2>&1 ||
			skip "npm install $pkg failed (registry unreachable?): $(tail -n 3 "$TEST_TMP/npm-$name.log")"
		rm -rf "$dir"
		mv "$dir.tmp" "$dir"
	fi
	[ -x "$BIN" ] || skip "$pkg has no $cmd"
	chmod -R a+rX "$dir"
	as_test_user test -x "$BIN" ||
		skip "$BIN is not executable by $TEST_USER (a parent directory is not searchable by others?)"
}

# profile_version NAME PACKAGE CMD PATTERN
profile_version()
{
	local name=$1 pkg=$2 cmd=$3 pattern=$4
	npm_cli "$name" "$pkg" "$cmd"
	sb_home user
	sb_home_own
	# a copy the test user can read wherever the clone is
	install -m 0644 "$TOP_SRCDIR/contrib/profiles/$name.json" "$TEST_TMP/$name.json"
	assert_status 0 sb_run --profile "$TEST_TMP/$name.json" \
		--ro "$NPM_CACHE/$name" -- "$BIN" --version
	assert_match "$OUT" "$pattern"
	assert_contains "$ERR" "egress-proxy(allowlist)"
}

t_claude() { profile_version claude @anthropic-ai/claude-code claude '^[0-9]+\.[0-9]+\.[0-9]+ \(Claude Code\)'; }
t_codex() { profile_version codex @openai/codex codex '^codex-cli [0-9]+\.[0-9]+'; }
t_gemini() { profile_version gemini @google/gemini-cli gemini '^[0-9]+\.[0-9]+\.[0-9]+'; }
t_opencode() { profile_version opencode opencode-ai opencode '^[0-9]+\.[0-9]+\.[0-9]+'; }

run_test "profile claude: claude --version inside" t_claude
run_test "profile codex: codex --version inside" t_codex
run_test "profile gemini: gemini --version inside" t_gemini
run_test "profile opencode: opencode --version inside" t_opencode
finish
