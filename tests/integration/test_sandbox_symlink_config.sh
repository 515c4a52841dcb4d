#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# A config directory that is a symbolic link (~/.claude -> ~/dotfiles/claude):
# with --rw ~/.claude (or a profile's path) the target is shown at the
# link's path and at its own; a target outside the home is said; a target
# on the never-share list, the home itself, or holding a secret is refused.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

t_link_shown()
{
	sb_home "$1"
	mkdir -p "$H/dotfiles/claude"
	echo state >"$H/dotfiles/claude/s.json"
	ln -s dotfiles/claude "$H/.claude"
	printf '{"rw": ["~/.claude/"], "ro": ["~/.claude/settings.json"]}\n' >"$H/p.json"
	sb_home_own
	assert_status 0 sb_run --rw '~/.claude' -- sh -c 'cat ~/.claude/s.json; echo new >~/.claude/n; cat ~/dotfiles/claude/n'
	assert_contains "$OUT" "state"
	assert_contains "$OUT" "new"
	assert_eq "$(cat "$H/dotfiles/claude/n")" "new"
	# the profile's path: settings.json made and read-only through the link
	assert_status 0 sb_run --profile "$H/p.json" -- sh -c 'cat ~/.claude/s.json; echo x >~/.claude/settings.json && echo WROTE; echo y >~/dotfiles/claude/settings.json && echo WROTE; true'
	assert_contains "$OUT" "state"
	assert_not_contains "$OUT" "WROTE"
	assert_file_owner "$H/dotfiles/claude/settings.json" "$(stat -c %u:%g "$H/dotfiles/claude")"
}

t_link_outside_home()
{
	sb_home "$1"
	local out=$TEST_TMP/elsewhere-$RANDOM
	mkdir -p "$out"
	echo far >"$out/f"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$out"
	ln -s "$out" "$H/.cfgdir"
	sb_home_own
	assert_status 0 sb_run --rw '~/.cfgdir' -- sh -c 'cat ~/.cfgdir/f'
	assert_contains "$OUT" "far"
	assert_contains "$ERR" "is a symbolic link to $out, outside your home directory"
}

# The attack: a config directory that leads to a secret store, to the
# home itself, or to a directory holding one.
t_link_to_secret_refused()
{
	sb_home "$1"
	mkdir -p "$H/.ssh" "$H/.config/gcloud"
	echo KEY >"$H/.ssh/id_rsa"
	echo GC >"$H/.config/gcloud/c.db"
	ln -s .ssh "$H/.claude"
	ln -s . "$H/.codex"
	ln -s .config "$H/.gemini"
	printf '{"rw": ["~/.claude/"]}\n' >"$H/p.json"
	sb_home_own
	assert_status '!0' sb_run --rw '~/.claude' -- cat '~/.claude/id_rsa'
	assert_contains "$ERR" "never-share"
	assert_not_contains "$OUT" "KEY"
	assert_status '!0' sb_run --profile "$H/p.json" -- sh -c 'cat ~/.claude/id_rsa'
	assert_not_contains "$OUT" "KEY"
	assert_status '!0' sb_run --rw '~/.codex' -- sh -c 'cat ~/.codex/.ssh/id_rsa'
	assert_not_contains "$OUT" "KEY"
	assert_status '!0' sb_run --ro '~/.gemini' -- sh -c 'cat ~/.gemini/gcloud/c.db'
	assert_not_contains "$OUT" "GC"
	assert_contains "$ERR" "holds"
}

for mode in root user; do
	run_test "symlinked config ($mode): shown at the link's path and the target's" t_link_shown $mode
	run_test "symlinked config ($mode): a target outside the home is said" t_link_outside_home $mode
	run_test "symlinked config ($mode): a link to a secret, the home, or a parent of a secret is refused" t_link_to_secret_refused $mode
done
finish
