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
