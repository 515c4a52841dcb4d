#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The agents' own sandboxes (bubblewrap: Claude Code's sandbox, Codex's
# default one) under --nested, and what a hostile agent can do with the
# nested user namespace they need: the protected paths of the workspace
# (.git/hooks, .git/config, the placeholders of missing editor and agent
# config) are mounts of the sandbox's mount namespace; a mount namespace
# made from a nested user namespace gets them locked (the kernel's
# MNT_LOCKED: no unmount, no move, no read-write remount, no bind of a
# parent without them), so no unmount, bind or remount reaches the
# host's files under them. Real bwrap and unshare, as the test user and
# as root; the host's workspace is checked after each run.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

BWRAP=$(command -v bwrap || true)

pn_setup()
{
	[ -n "$BWRAP" ] || skip "bubblewrap is not installed (contrib/install-deps.sh installs it)"
	require_cmd unshare
	sb_home "$1"
	rm -rf "$WS/.git"
	git init -q "$WS"
	sb_home_own
	cp "$WS/.git/config" "$TEST_TMP/config.before"
}

# host_untouched: nothing of the attacks reached the host's workspace
host_untouched()
{
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "the host's .git/hooks/pre-commit was written: $(cat "$WS/.git/hooks/pre-commit")"
	cmp -s "$WS/.git/config" "$TEST_TMP/config.before" || fail "the host's .git/config was changed: $(cat "$WS/.git/config")"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail "the host's .vscode/tasks.json was written"
	[ ! -e "$WS/.vscode" ] || [ -z "$(ls -A "$WS/.vscode")" ] || fail "the host's .vscode has content"
}

# The attacks, from a nested user + mount namespace (unshare, then
# bwrap): each line says whether it got through. Inside a namespace
# that maps the caller to root when it can (rootless), unmapped
# otherwise (root: mapping root needs CAP_SETFCAP); CAP_SYS_ADMIN over
# the new mount namespace either way.
ATTACKS='
ws=$PWD
u() { unshare -Urm "$@" 2>/dev/null || unshare -Um "$@"; }
u sh -c "
	umount .git/hooks 2>/dev/null && echo UNMOUNTED-HOOKS
	umount -l .git/config 2>/dev/null && echo UNMOUNTED-CONFIG
	umount .vscode 2>/dev/null && echo UNMOUNTED-PLACEHOLDER
	mount -o remount,bind,rw .git/hooks 2>/dev/null && echo REMOUNTED-RW
	mkdir -p /tmp/g /tmp/m && mount --bind .git /tmp/g 2>/dev/null && echo BOUND-PARENT
	mount --bind $ws /tmp/g 2>/dev/null && echo BOUND-WORKSPACE
	mount --move .git/hooks /tmp/m 2>/dev/null && echo MOVED
	mount --make-private / 2>/dev/null
	mount -t tmpfs x .git/hooks 2>/dev/null && echo hostile > .git/hooks/pre-commit 2>/dev/null && echo OVERMOUNTED-INSIDE-ONLY
	echo x > /tmp/g/hooks/pre-commit 2>/dev/null && echo WROTE-VIA-BIND
	echo nested-done"
bwrap --bind / / --dev /dev -- sh -c "
	echo hostile > $ws/.git/hooks/pre-commit 2>/dev/null && echo BWRAP-WROTE-HOOK
	echo \"[core] hooksPath = /tmp\" >> $ws/.git/config 2>/dev/null && echo BWRAP-WROTE-CONFIG
	mkdir -p $ws/.vscode/x 2>/dev/null && echo BWRAP-WROTE-PLACEHOLDER
	echo bwrap-done" 2>&1 | grep -v "^bwrap: No permissions\|^bwrap: setting up uid map" || true
mkdir -p gbind
bwrap --ro-bind / / --dev /dev --bind $ws/.git $ws/gbind -- sh -c "
	echo hostile > $ws/gbind/hooks/pre-commit 2>/dev/null && echo BWRAP-BIND-WROTE-HOOK
	echo bwrap-bind-done" 2>&1 | grep -v "^bwrap: No permissions\|^bwrap: setting up uid map" || true
'

t_nested_attack_user()
{
	pn_setup user
	assert_status 0 sb_run --nested -- sh -c "$ATTACKS"
	assert_contains "$OUT" nested-done
	assert_contains "$OUT" bwrap-done
	assert_contains "$OUT" bwrap-bind-done
	for w in UNMOUNTED-HOOKS UNMOUNTED-CONFIG UNMOUNTED-PLACEHOLDER \
		REMOUNTED-RW BOUND-PARENT MOVED WROTE-VIA-BIND BWRAP-WROTE-HOOK \
		BWRAP-WROTE-CONFIG BWRAP-WROTE-PLACEHOLDER BWRAP-BIND-WROTE-HOOK; do
		assert_not_contains "$OUT" "$w"
	done
	host_untouched
}

# As root --nested keeps every mask (docs/sandbox.md) and bwrap fails
# to map root; the unshare attacks still run (an unmapped nested user
# namespace holds CAP_SYS_ADMIN over its mount namespace) and fail.
t_nested_attack_root()
{
	pn_setup root
	assert_status 0 sb_run --nested -- sh -c "$ATTACKS"
	assert_contains "$OUT" nested-done
	for w in UNMOUNTED-HOOKS UNMOUNTED-CONFIG UNMOUNTED-PLACEHOLDER \
		REMOUNTED-RW BOUND-PARENT MOVED WROTE-VIA-BIND BWRAP-WROTE-HOOK \
		BWRAP-WROTE-CONFIG BWRAP-WROTE-PLACEHOLDER BWRAP-BIND-WROTE-HOOK; do
		assert_not_contains "$OUT" "$w"
	done
	host_untouched
}

# What the agents' sandboxes do: bwrap with the host's / read-only and
# the workspace bound read-write (Claude Code's and Codex's layout), a
# write into the workspace through bwrap's bind, git status inside
# bwrap without a warning about a placeholder it cannot read, and a bind
# over a placeholder (Claude Code binds .claude/settings.json).
t_agent_bwrap_layout()
{
	pn_setup user
	mkdir -p "$WS/.claude"
	chown "$TEST_UID:$TEST_GID" "$WS/.claude"
	assert_status 0 sb_run --nested -- sh -c '
		ws=$PWD
		bwrap --ro-bind / / --dev /dev --proc /proc -- true && echo plain-ok
		bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" \
			--unshare-pid --unshare-net --die-with-parent -- sh -c "
			echo via-bwrap > $ws/written-in-bwrap && echo wrote
			git -C $ws status --porcelain 2>&1 | sed s/^/status:/"
		ls -ld .vscode .claude/settings.json | sed s/^/ls:/
		bwrap --ro-bind / / --dev /dev --proc /proc --bind "$ws" "$ws" \
			--ro-bind "$ws/.vscode" "$ws/.vscode" -- true && echo bind-over-placeholder-ok'
	assert_contains "$OUT" plain-ok
	assert_contains "$OUT" wrote
	assert_eq "$(cat "$WS/written-in-bwrap")" via-bwrap
	assert_not_contains "$OUT" "Permission denied"
	assert_not_contains "$OUT" "could not open directory"
	assert_contains "$OUT" "ls:dr-xr-xr-x 2 $TEST_USER $TEST_USER"
	assert_contains "$OUT" bind-over-placeholder-ok
	host_untouched
}

run_test "protect nested (user): a nested user namespace cannot unmount, move, remount or bypass the protected binds" t_nested_attack_user
run_test "protect nested (root): the same attacks from an unmapped nested user namespace fail" t_nested_attack_root
run_test "protect nested (user): the agents' bwrap layout works, placeholders readable" t_agent_bwrap_layout
finish
