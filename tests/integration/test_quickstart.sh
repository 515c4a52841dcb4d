#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The README's quick start (tests/quickstart.sh): a busybox container and a
# sandboxed command, as root and as the unprivileged test user.
. "$(dirname "$0")/../lib.sh"

t_root()
{
	require_root
	assert_status 0 env AGENTRUN="$AGENTRUN" TMPDIR="$TEST_TMP" \
		bash "$TOP_SRCDIR/tests/quickstart.sh"
	assert_contains "$OUT" "hello from agentrun"
	assert_contains "$OUT" "hello from the sandbox"
	assert_contains "$OUT" "quickstart: OK"
}

t_user()
{
	ensure_test_user
	require_agentrun_as_test_user
	# a copy the test user can read wherever the clone is
	install -m 0755 "$TOP_SRCDIR/tests/quickstart.sh" "$TEST_TMP/quickstart.sh"
	assert_status 0 as_test_user env TMPDIR=/tmp \
		bash "$TEST_TMP/quickstart.sh"
	assert_contains "$OUT" "hello from the sandbox"
	assert_contains "$OUT" "quickstart: OK"
}

run_test "quick start as root" t_root
run_test "quick start as the test user" t_user
finish
