#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The user's git configuration inside `agentrun sandbox` (docs/sandbox.md,
# "The user's git configuration"): every file git reads for the user
# (~/.gitconfig, its include.path/includeIf targets, the XDG config,
# core.excludesFile, core.attributesFile) shown read-only at its path,
# the keys that run a command left out, the never-share list first.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

require_cmd git

# A home whose git identity is in an included file and whose global
# excludes name .env; a workspace with one commit and a .env.
gc_setup()
{
	sb_home "$1"
	rm -rf "$WS/.git"
	git -C "$WS" init -q -b main
	printf '[include]\n\tpath = ~/.gitconfig.local\n[core]\n\texcludesFile = ~/.gitignore_global\n\tattributesFile = ~/dot/attributes\n[protocol "file"]\n\tallow = always\n' >"$H/.gitconfig"
	printf '[user]\n\tname = Included Name\n\temail = inc@example.invalid\n' >"$H/.gitconfig.local"
	printf '.env\n' >"$H/.gitignore_global"
	mkdir -p "$H/dot"
	printf '*.bin binary\n' >"$H/dot/attributes"
	echo "API_KEY=x" >"$WS/.env"
	echo hi >"$WS/a.txt"
}

t_excludes_and_identity()
{
	gc_setup "$1"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'git status --porcelain --ignored=no; echo ---; git add -A && git commit -qm first && git log -1 --format="%an <%ae>"; git ls-files; git check-attr binary x.bin'
	assert_not_contains "${OUT%%---*}" ".env" "core.excludesFile hides .env"
	assert_contains "$OUT" "Included Name <inc@example.invalid>" "include.path gives the identity"
	assert_contains "$OUT" "a.txt"
	assert_not_contains "${OUT#*---}" ".env" "git add -A leaves .env out"
	assert_contains "$OUT" "x.bin: binary: set" "core.attributesFile is read"
}

# Gemini CLI runs its shell tool's git with GIT_CONFIG_GLOBAL=/dev/null,
# GIT_CONFIG_SYSTEM=/dev/null and GIT_CONFIG_NOSYSTEM=1 (on the host too):
# only git's default excludes and attributes files (~/.config/git/ignore,
# attributes), which need no config, reach it. Without them on the host,
# the files core.excludesFile and core.attributesFile name are shown
# there, read-only: .env was listed as untracked for Gemini's git.
t_excludes_without_global_config()
{
	gc_setup "$1"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_SYSTEM=/dev/null GIT_CONFIG_NOSYSTEM=1 git status --porcelain --untracked-files=all; GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 git check-attr binary x.bin; (echo evil >>~/.config/git/ignore) 2>/dev/null && echo WROTE; true'
	assert_not_contains "$OUT" ".env" "git without the global config lists .env"
	assert_contains "$OUT" "a.txt"
	assert_contains "$OUT" "x.bin: binary: set"
	assert_not_contains "$OUT" "WROTE"
	[ ! -e "$H/.config/git/ignore" ] || fail "made ~/.config/git/ignore on the host"
}

# The keys that name a command are left out, wherever they are.
t_code_keys_out()
{
	gc_setup "$1"
	printf '[core]\n\tpager = touch %s/PAGER-RAN\n\tfsmonitor = %s/fsm.sh\n[credential]\n\thelper = store\n[alias]\n\tst = !touch %s/ALIAS-RAN\n' \
		"$WS" "$WS" "$WS" >>"$H/.gitconfig.local"
	# a value only this case's filtered copies hold (other sandboxes of
	# the machine make and remove theirs meanwhile)
	local mark="gc-mark-$$-$RANDOM-$SECONDS"
	printf '[credential "https://example.invalid"]\n\thelper = !echo password=leak\n[diff "x"]\n\ttextconv = cat\n[user]\n\tsigningKey = k\n[xtest]\n\tmark = %s\n' "$mark" >>"$H/.gitconfig"
	mkdir -p "$H/.config/git"
	printf '[core]\n\tsshCommand = ssh -i /x\n[color]\n\tui = never\n' >"$H/.config/git/config"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'git config --global --list --show-origin 2>&1; git config --list 2>&1; echo; git -c core.pager=cat log -1 2>&1 || true; git config --get core.pager; echo rc=$?'
	assert_not_contains "$OUT" "PAGER-RAN"
	assert_not_contains "$OUT" "fsm.sh"
	assert_not_contains "$OUT" "credential"
	assert_not_contains "$OUT" "ALIAS-RAN"
	assert_not_contains "$OUT" "textconv"
	assert_not_contains "$OUT" "sshcommand"
	assert_contains "$OUT" "user.name=Included Name" "the rest of the included file stays"
	assert_contains "$OUT" "color.ui=never" "the XDG config is read"
	assert_contains "$OUT" "user.signingkey=k"
	assert_contains "$OUT" "rc=1"
	assert_contains "$OUT" "xtest.mark=$mark" "the filtered copy holds the case's mark"
	assert_status '!0' sb_run -- sh -c 'echo WRITTEN-IN >>~/.gitconfig.local || exit 2; echo WRITTEN-IN >>~/.gitconfig'
	assert_not_contains "$(cat "$H/.gitconfig.local" "$H/.gitconfig")" "WRITTEN-IN"
	! grep -rqsF -- "$mark" /tmp/agentrun-git-* || fail "a filtered copy left in /tmp"
	[ ! -e "$WS/PAGER-RAN" ] || fail "core.pager ran"
}

# An include that names a secret (directly, through a symbolic link or
# `..`) does not bring it in; git still works.
t_secret_includes()
{
	gc_setup "$1"
	mkdir -p "$H/.ssh" "$H/.aws"
	printf '[user]\n\tname = KEY-MATERIAL\n' >"$H/.ssh/id_rsa"
	printf '[user]\n\temail = AWS-MATERIAL\n' >"$H/.aws/config"
	ln -s .ssh/id_rsa "$H/linked.inc"
	printf '[include]\n\tpath = ~/.ssh/id_rsa\n\tpath = linked.inc\n\tpath = dot/../.aws/config\n[includeIf "gitdir:/"]\n\tpath = ~/.ssh/id_rsa\n' >>"$H/.gitconfig"
	sb_home_own
	assert_status 0 sb_run -- sh -c 'git config --list 2>&1; cat ~/linked.inc ~/.ssh/id_rsa 2>&1; true'
	assert_not_contains "$OUT" "KEY-MATERIAL"
	assert_not_contains "$OUT" "AWS-MATERIAL"
	assert_contains "$OUT" "user.name=Included Name"
	assert_contains "$ERR" "on the never-share list: not shown inside"
}

for mode in root user; do
	run_test "gitconfig ($mode): global excludes hide .env, an included identity commits" t_excludes_and_identity $mode
	run_test "gitconfig ($mode): the global excludes reach git run with GIT_CONFIG_GLOBAL=/dev/null (Gemini CLI's shell tool)" t_excludes_without_global_config $mode
	run_test "gitconfig ($mode): keys that run a command are left out" t_code_keys_out $mode
	run_test "gitconfig ($mode): an include naming a secret (link, ..) brings nothing" t_secret_includes $mode
done
finish
