#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# test-timeout: 900
# The real Codex CLI (@openai/codex) run twice through its profile against a
# local mock of its API (test_sandbox_agents.sh's end-to-end case, a file
# of its own: a node CLI's start takes minutes on a loaded machine).
AGENTS_ONLY=codex
. "$(dirname "$0")/test_sandbox_agents.sh"
