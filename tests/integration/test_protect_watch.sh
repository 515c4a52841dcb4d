#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The end-of-run check from the kernel's list of changed directories
# (runtime/sandbox/protect/change_watch.c: fanotify, a mark on the
# workspace's filesystem, as root) instead of a walk of every directory;
# rootless (no such mark) the walk, and these attacks must be caught
# either way. A hostile agent changes repositories the start's search
# does not find (deeper than its four levels: their hooks and config
# are not bound read-only) in the ways a list of changed directories
# could miss: a hook written in .git/hooks (a directory that is not a
# repository itself), a repository made elsewhere and renamed into
# place, a disabled hook made executable (only its mode changes), and
# more directories than the list keeps (the check then reads them all).
# The user's next git command runs none of it.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

DEEP=a/b/c/d/e/deep

setup()
{
	sb_home "$1"
	rm -rf "$WS/.git"
	git init -q "$WS"
	mkdir -p "$WS/$DEEP"
	git init -q "$WS/$DEEP"
	MARK=$H/pwned
	printf '#!/bin/sh\necho disabled-hook >>%s\n' "$MARK" >"$WS/$DEEP/.git/hooks/pre-commit"
	chmod 0644 "$WS/$DEEP/.git/hooks/pre-commit"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n' >"$H/.gitconfig"
	sb_home_own
}

nothing_ran()
{
	[ ! -e "$MARK" ] || fail "the host ran the sandbox's code ($1): $(cat "$MARK")"
}

host_commit()
{
	host sh -c 'cd "$1" && echo u >>u && git add u && git commit -qm u >/dev/null 2>&1; git status >/dev/null 2>&1; true' _ "$1"
}

# sb_watch_run ARGS: sb_run with --debug; as root the check must have
# used the kernel's list (unless expected otherwise: WATCH_FALLBACK=1)
sb_watch_run()
{
	assert_status 0 sb_as_mode --debug sandbox --no-tty "$@"
	if [ "$MODE" = root ] && [ -z "${WATCH_FALLBACK:-}" ]; then
		assert_contains "$ERR" "change watch:"
		assert_not_contains "$ERR" "not all known"
	fi
}

# A hook written into a deep repository (only .git/hooks changes).
t_deep_hook()
{
	setup "$1"
	sb_watch_run -- sh -c 'cd "$1" &&
		printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/post-commit &&
		chmod +x .git/hooks/post-commit' _ "$WS/$DEEP" "$MARK"
	host_commit "$WS/$DEEP"
	nothing_ran "a hook written in a deep repository"
	assert_contains "$ERR" "$WS/$DEEP/.git/hooks/post-commit"
}

# An fsmonitor set in a deep repository's config.
t_deep_config()
{
	setup "$1"
	sb_watch_run -- sh -c 'cd "$1" &&
		git config core.fsmonitor "echo fsmonitor >>$2; false"' _ "$WS/$DEEP" "$MARK"
	host_commit "$WS/$DEEP"
	nothing_ran "an fsmonitor set in a deep repository"
	assert_contains "$ERR" "$WS/$DEEP/.git/config"
}

# The user's disabled hook made executable: only its mode changes.
t_chmod_hook()
{
	setup "$1"
	sb_watch_run -- chmod +x "$WS/$DEEP/.git/hooks/pre-commit"
	host_commit "$WS/$DEEP"
	nothing_ran "a disabled hook enabled"
	assert_contains "$ERR" "$WS/$DEEP/.git/hooks/pre-commit"
}

# A repository made in a scratch directory, then renamed below another
# one: its directories changed under other names.
t_renamed_repo()
{
	setup "$1"
	sb_watch_run -- sh -c 'cd "$1" && mkdir -p tmp1/r && cd tmp1/r &&
		git init -q && echo e >e && git add e &&
		git -c user.name=a -c user.email=a@b commit -qm e &&
		printf "#!/bin/sh\necho hook >>%s\n" "$2" >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit && cd "$1" &&
		mv tmp1/r a/b/c/d/r2 && rmdir tmp1' _ "$WS" "$MARK"
	host_commit "$WS/a/b/c/d/r2"
	nothing_ran "a repository renamed into place"
	assert_contains "$ERR" "$WS/a/b/c/d/r2/.git/hooks/pre-commit"
}

# More changed directories than the list keeps (SB_WATCH_MAX_DIRS,
# 20,000), then a hook: the check reads every directory.
t_too_many()
{
	setup "$1"
	WATCH_FALLBACK=1 sb_watch_run -- sh -c 'cd "$1" && mkdir m && cd m &&
		seq 1 20100 | sed "s,$,/x," | xargs mkdir -p && cd "$1" &&
		printf "#!/bin/sh\necho hook >>%s\n" "$2" >$3/.git/hooks/post-commit &&
		chmod +x $3/.git/hooks/post-commit' _ "$WS" "$MARK" "$DEEP"
	[ "$MODE" != root ] || assert_contains "$ERR" "not all known"
	host_commit "$WS/$DEEP"
	nothing_ran "a hook after 20,100 new directories"
	assert_contains "$ERR" "$WS/$DEEP/.git/hooks/post-commit"
}

# Legitimate work: nothing neutralised, as root from the list.
t_clean()
{
	setup "$1"
	sb_watch_run -- sh -c 'cd "$1" && mkdir -p src/x && echo hi >src/x/f &&
		git add src && git -c user.name=a -c user.email=a@b commit -qm c' _ "$WS"
	assert_not_contains "$ERR" "neutralised"
}

for m in root user; do
	run_test "a hook in a deep repository ($m)" t_deep_hook $m
	run_test "an fsmonitor in a deep repository ($m)" t_deep_config $m
	run_test "a disabled hook made executable ($m)" t_chmod_hook $m
	run_test "a repository renamed into place ($m)" t_renamed_repo $m
	run_test "more changed directories than kept ($m)" t_too_many $m
	run_test "legitimate work: nothing neutralised ($m)" t_clean $m
done
finish
