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

run_test "a missing .claude under --nested: protected names refused, nothing on the host (rootless)" t_claude_dir_writes user
run_test "a missing .claude under --nested: protected names refused, nothing on the host (root)" t_claude_dir_writes root
run_test "Claude Code's bubblewrap sandbox under --nested, no .claude in the project (rootless)" t_claude_bwrap
finish
