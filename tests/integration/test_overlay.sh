#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The review flow of `agentrun sandbox --overlay` (changes, diff, commit,
# discard, overlays), rootless and as root: commit refuses while the
# sandbox runs; commit cannot be raced into reading through a symlink of
# the upper layer; conflicts with host edits never lose them; fifos,
# sockets, devices, sparse files, setuid bits; names quoted as git does;
# git-compatible diff; interactive commit through a pty.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# ov_setup MODE: a home with a secret, a workspace with a few files.
ov_setup()
{
	sb_home "$1"
	mkdir -p "$H/.ssh" "$WS/sub" "$WS/conf"
	echo "PRIVATE-KEY-MATERIAL" >"$H/.ssh/id_ed25519"
	echo "old" >"$WS/existing.txt"
	echo "keep" >"$WS/sub/keep"
	echo "c=1" >"$WS/conf/settings"
	chmod 0700 "$H/.ssh"
	sb_home_own
	SBD=$H/.local/share/agentrun/sandboxes
}

# ov ARGS...: agentrun ARGS as MODE, from $WS, with the test home.
ov()
{
	if [ "$MODE" = root ]; then
		(cd "$WS" && HOME=$H "$AGENTRUN" --root "$AR_ROOT" "$@")
	else
		as_test_user env HOME="$H" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "$WS" \
			"$AGENTRUN" --root "$AR_USER_ROOT" "$@"
	fi
}

# as_mode CMD...: CMD as MODE's user.
as_mode()
{
	if [ "$MODE" = root ]; then "$@"; else as_test_user "$@"; fi
}

sb_overlay()
{
	sb_run --overlay "$@" 2>"$TEST_TMP/sb.err" ||
		skip_if_no_overlay "$?"
}

skip_if_no_overlay()
{
	if grep -q "doctor check \`overlay\`" "$TEST_TMP/sb.err"; then
		skip "--overlay is not available here: $(tail -1 "$TEST_TMP/sb.err")"
	fi
	cat "$TEST_TMP/sb.err" >&2
	return "$1"
}

# A run that changed nothing leaves no overlay to discard by hand; one
# that changed something keeps it.
t_empty_discarded()
{
	ov_setup "$1"
	sb_overlay --name empty1 -- sh -c 'cat existing.txt >/dev/null'
	assert_contains "$(cat "$TEST_TMP/sb.err")" "changed nothing in the workspace: its overlay is discarded"
	[ ! -e "$SBD/empty1" ] || fail "the empty overlay is still there"
	assert_status 0 ov overlays
	assert_not_contains "$OUT" "empty1"
	sb_overlay --name full1 -- sh -c 'echo x >new.txt'
	assert_contains "$(cat "$TEST_TMP/sb.err")" "changes are kept in"
	assert_status 0 ov changes full1
	assert_contains "$OUT" "A  new.txt"
	assert_status 0 ov discard full1
}

# An agent committing inside: git's own data is one line per repository
# with its count; --all lists it path by path.
t_git_grouped()
{
	ov_setup "$1"
	command -v git >/dev/null || skip "needs git"
	rm -rf "$WS/.git"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	as_mode sh -c "cd '$WS' && git init -q . && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm init"
	sb_overlay --name gitg -- sh -c 'echo n >n.txt && git add n.txt && git -c user.name=t -c user.email=t@t commit -qm two'
	assert_status 0 ov changes gitg
	assert_eq "$(grep -c '\.git/' <<<"$OUT")" 1 "one line for .git"
	assert_match "$OUT" "\.git/ \(in the git directory: [0-9]+ changes"
	assert_contains "$OUT" "A  n.txt"
	assert_status 0 ov changes --all gitg
	assert_contains "$OUT" ".git/objects/"
	assert_contains "$OUT" ".git/index"
	assert_status 0 ov discard gitg
}

t_lock_while_running()
{
	local pid i
	ov_setup "$1"
	sb_run --overlay --name lk -- sh -c 'echo agent > existing.txt; exec sleep 873' \
		>/dev/null 2>"$TEST_TMP/sb.err" &
	wait_until 20 test -e "$SBD/lk/upper/existing.txt"
	pid=$(cat "$SBD/lk/lock")
	[ -n "$pid" ] && [ -d "/proc/$pid" ] || fail "no live pid in the lock file"
	assert_status 1 ov commit lk
	assert_contains "$ERR" "sandbox \`lk\` is running (pid $pid): commit it after it exits"
	assert_eq "$(cat "$WS/existing.txt")" "old" "nothing committed while it runs"
	assert_status 1 ov discard lk
	assert_contains "$ERR" "is running (pid $pid)"
	[ -d "$SBD/lk/upper" ] || fail "discard removed a running sandbox"
	assert_status 0 ov overlays
	assert_match "$OUT" "lk +[0-9]+s +1 +running \\($pid\\) +$WS"
	# SIGKILL of the runtime: its pid namespace goes with it (the init
	# dies with the runtime), and so does the lock
	kill -KILL "$pid"
	for i in $(seq 50); do
		pgrep -f 'sleep 873' >/dev/null || break
		sleep 0.1
	done
	pgrep -f 'sleep 873' >/dev/null && fail "a sandbox process outlived the runtime"
	wait || true
	assert_status 0 ov overlays
	assert_match "$OUT" "lk +[0-9]+s +1 +stopped"
	assert_status 0 ov commit lk
	assert_eq "$OUT" "M  existing.txt"
	assert_eq "$(cat "$WS/existing.txt")" "agent"
	assert_status 0 ov discard lk
}

# --detach: the monitor process keeps the lock (and says so with its pid)
# until `sandbox stop`.
t_lock_detached()
{
	local pid
	ov_setup "$1"
	assert_status 0 sb_run --overlay --name dl --detach -- sh -c 'echo agent > existing.txt; exec sleep 874'
	defer ov sandbox stop dl
	wait_until 20 test -e "$SBD/dl/upper/existing.txt"
	pid=$(cat "$SBD/dl/lock")
	[ -d "/proc/$pid" ] || fail "the lock names pid $pid, which is gone"
	assert_status 1 ov commit dl
	assert_contains "$ERR" "sandbox \`dl\` is running (pid $pid)"
	assert_eq "$(cat "$WS/existing.txt")" "old"
	assert_status 0 ov sandbox stop dl
	assert_status 0 ov commit dl
	assert_eq "$(cat "$WS/existing.txt")" "agent"
}

# A process left with access to the upper layer (modelled by the same
# user on the host, which is more than a sandbox process could have)
# swaps a directory of the upper layer with a symlink to ~/.ssh in a
# loop (renameat2 RENAME_EXCHANGE) while commit runs, many times.
t_commit_race_symlink_swap()
{
	local up i n=60 stop
	ov_setup "$1"
	[ -x "$PY" ] || skip "needs $PY"
	for i in $(seq $n); do echo "PRIVATE-KEY-MATERIAL $i" >"$H/.ssh/f$i"; done
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$H/.ssh"
	sb_overlay --name race -- sh -c "for i in \$(seq $n); do echo agent > sub/f\$i; done"
	up=$SBD/race/upper
	as_mode ln -s "$H/.ssh" "$up/lnk"
	stop=$TEST_TMP/stop-swap-$MODE-$RANDOM
	as_mode "$PY" -c '
import ctypes, os, sys, time
nr = {"x86_64": 316, "aarch64": 276}.get(os.uname().machine)
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (s.encode() for s in sys.argv[1:4])
end = time.time() + 120
n = 0
while not os.path.exists(stop) and time.time() < end:
    libc.syscall(nr, -100, a, -100, b, 2)  # RENAME_EXCHANGE
    n += 1
print(n)' "$up/sub" "$up/lnk" "$stop" >"$TEST_TMP/swaps" &
	defer touch "$stop"
	for i in $(seq 20); do
		ov commit race >/dev/null 2>&1 || true
		if grep -rl PRIVATE-KEY-MATERIAL "$WS"; then
			fail "the secret landed in the workspace (round $i)"
		fi
		[ "$(find "$H/.ssh" -type f | wc -l)" = $((n + 1)) ] ||
			fail "files were added to or removed from ~/.ssh (round $i)"
		# back to a workspace the next commit changes again; nothing
		# here follows a symlink the commit may have made
		rm -f "$WS/lnk" 2>/dev/null || rm -rf "$WS/lnk"
		[ -L "$WS/sub" ] && rm "$WS/sub"
		mkdir -p "$WS/sub"
		find "$WS/sub" -mindepth 1 -name 'f*' -delete
	done
	touch "$stop"
	wait
	assert_eq "$(cat "$H/.ssh/id_ed25519")" "PRIVATE-KEY-MATERIAL"
	[ "$(cat "$TEST_TMP/swaps")" -gt 1000 ] ||
		fail "the swap loop hardly ran: $(cat "$TEST_TMP/swaps")"
	echo "# $(cat "$TEST_TMP/swaps") swaps"
}

# Symlinks, directories replaced by symlinks, hardlinks: created as what
# they are in the sandbox, nothing outside the workspace read or changed.
t_commit_links()
{
	ov_setup "$1"
	sb_overlay --name lnk -- sh -c "
		ln -s '$H/.ssh/id_ed25519' keylink
		rm -r conf && ln -s '$H/.ssh' conf
		ln existing.txt hard"
	assert_status 0 ov changes lnk
	assert_contains "$OUT" "D  conf/"
	assert_contains "$OUT" "A  conf"
	assert_status 0 ov commit lnk
	[ -L "$WS/keylink" ] || fail "keylink is not a symlink"
	assert_eq "$(readlink "$WS/keylink")" "$H/.ssh/id_ed25519"
	[ -L "$WS/conf" ] || fail "conf is not a symlink"
	assert_eq "$(ls -A "$H/.ssh")" "id_ed25519" "~/.ssh untouched"
	assert_eq "$(cat "$H/.ssh/id_ed25519")" "PRIVATE-KEY-MATERIAL"
	assert_eq "$(stat -c %h "$WS/existing.txt")" 1 "no hardlink to a host file"
	assert_eq "$(cat "$WS/hard")" "old"
	assert_ne "$(stat -c %i "$WS/hard")" "$(stat -c %i "$WS/existing.txt")"
}

t_conflict()
{
	ov_setup "$1"
	echo "c-host" >"$WS/c.txt"
	echo "b-host" >"$WS/b.txt"
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS"/*.txt
	sb_overlay --name cf -- sh -c 'echo agent > existing.txt; echo agent > b.txt; rm c.txt; echo agent > sub/keep'
	# the user edits on the host after the sandbox started
	as_mode sh -c "echo host-edit > '$WS/existing.txt'; echo c-edit > '$WS/c.txt'; echo host > '$WS/sub/keep'"
	assert_status 0 ov changes cf
	assert_eq "$OUT" "M  b.txt
DU c.txt (conflict: changed on the host since the sandbox started)
MU existing.txt (conflict: changed on the host since the sandbox started)
MU sub/keep (conflict: changed on the host since the sandbox started)"
	assert_status 1 ov commit cf
	assert_contains "$OUT" "M  b.txt"
	assert_contains "$OUT" "conflict: existing.txt: changed on the host"
	assert_contains "$ERR" "3 conflict(s) not applied"
	assert_eq "$(cat "$WS/b.txt")" "agent" "the others are applied"
	assert_eq "$(cat "$WS/existing.txt")" "host-edit" "the host edit survives"
	assert_eq "$(cat "$WS/c.txt")" "c-edit"
	assert_status 1 ov commit cf existing.txt
	assert_eq "$(cat "$WS/existing.txt")" "host-edit"
	# --force applies it and keeps the host's version
	assert_status 0 ov commit --force cf existing.txt c.txt
	assert_contains "$OUT" "the host's version is kept as existing.txt.orig"
	assert_eq "$(cat "$WS/existing.txt")" "agent"
	assert_eq "$(cat "$WS/existing.txt.orig")" "host-edit"
	[ ! -e "$WS/c.txt" ] || fail "c.txt not deleted"
	assert_eq "$(cat "$WS/c.txt.orig")" "c-edit"
	assert_status 0 ov commit --force cf sub
	assert_contains "$OUT" "the host's version is kept as sub/keep.orig"
	assert_eq "$(cat "$WS/sub/keep") $(cat "$WS/sub/keep.orig")" "agent host"
	assert_status 0 ov changes cf
	assert_eq "$OUT" ""
}

# A fifo (commit used to hang on it), a socket, a device node, a sparse
# file, a setuid file.
t_special_files()
{
	local n
	ov_setup "$1"
	sb_overlay --name sp -- sh -c '
		mkfifo ff
		python3 -c "import socket; socket.socket(socket.AF_UNIX).bind(\"sock\")" 2>/dev/null || true
		truncate -s 2G sparse && echo tail >> sparse'
	# the sandbox refuses setuid/setgid modes (agent seccomp profile):
	# the setuid file is made in the upper layer here
	as_mode sh -c 'cp /bin/true "$1/su" && chmod 4755 "$1/su"' _ "$SBD/sp/upper"
	if [ "$MODE" = root ]; then
		# a sandbox cannot mknod; a device in the upper layer is
		# made here (/dev/null's numbers)
		mknod "$SBD/sp/upper/dev" c 1 3
	fi
	assert_status 0 ov changes sp
	assert_contains "$OUT" "A  ff (fifo: not committed)"
	assert_contains "$OUT" "A  su (setuid/setgid: dropped on commit)"
	assert_status 0 as_mode timeout 60 env HOME="$H" "$AGENTRUN" commit sp
	assert_contains "$OUT" "note: ff: fifo in the sandbox: skipped (never opened)"
	assert_contains "$OUT" "note: su: setuid/setgid bit dropped"
	[ ! -e "$WS/ff" ] || fail "the fifo was committed"
	[ ! -e "$WS/sock" ] || fail "the socket was committed"
	[ ! -e "$WS/dev" ] || fail "the device node was committed"
	if [ "$MODE" = root ]; then
		assert_contains "$OUT" "note: dev: character device in the sandbox: skipped"
	fi
	assert_eq "$(stat -c %s "$WS/sparse")" $((2 * 1024 * 1024 * 1024 + 5))
	n=$(du -k "$WS/sparse" | cut -f1)
	[ "$n" -lt 1024 ] || fail "the sparse file takes ${n} KiB on disk"
	assert_eq "$(tail -c 5 "$WS/sparse")" "tail"
	assert_eq "$(stat -c %a "$WS/su")" "755"
	assert_status 0 ov changes sp
	assert_not_contains "$OUT" "sparse"
	assert_not_contains "$OUT" " su"
}

t_quoted_names()
{
	local esc
	ov_setup "$1"
	esc=$(printf 'evil\033[2K\rname')
	sb_overlay --name qn -- sh -c 'printf x > "$(printf "evil\033[2K\rname")"; echo q > "say \"hi\""'
	assert_status 0 ov changes qn
	assert_not_contains "$OUT" "$esc"
	assert_contains "$OUT" 'A  "evil\033[2K\rname"'
	assert_contains "$OUT" 'A  "say \"hi\""'
	assert_status 0 ov diff --stat qn
	assert_not_contains "$OUT" "$esc"
	assert_status 0 ov diff qn
	assert_contains "$OUT" 'diff --git "a/evil\033[2K\rname" "b/evil\033[2K\rname"'
	assert_status 0 ov commit qn
	assert_not_contains "$OUT" "$esc"
	assert_contains "$OUT" 'A  "evil\033[2K\rname"'
	assert_eq "$(cat "$WS/$esc")" "x"
}

# changes/diff/commit output, unknown paths, overlays, default names,
# the start line.
t_output()
{
	local n1 n2
	ov_setup "$1"
	command -v git >/dev/null || skip "needs git"
	rm -rf "$WS/.git"
	echo "#!/bin/sh" >"$WS/run.sh"
	mkdir -p "$WS/gone/deep"
	echo 1 >"$WS/gone/one"
	echo 2 >"$WS/gone/deep/two"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	as_mode sh -c "cd '$WS' && git init -q . && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm init"
	sb_run --overlay --name out -- sh -c 'chmod +x run.sh; rm -r gone; echo new > new.txt; echo more >> existing.txt; mv conf/settings conf/settings.new' 2>"$TEST_TMP/sb.err" ||
		skip_if_no_overlay $?
	assert_contains "$(cat "$TEST_TMP/sb.err")" "workspace $WS (overlay)"
	assert_status 0 ov changes out
	assert_eq "$OUT" "R  conf/settings -> conf/settings.new
M  existing.txt
D  gone/
D  gone/deep/
D  gone/deep/two
D  gone/one
A  new.txt
M  run.sh (mode 0644 -> 0755)"
	assert_status 0 ov diff out
	assert_contains "$OUT" "diff --git a/run.sh b/run.sh
old mode 100644
new mode 100755"
	assert_contains "$OUT" "diff --git a/conf/settings b/conf/settings.new
similarity index 100%
rename from conf/settings
rename to conf/settings.new"
	assert_contains "$OUT" "diff --git a/gone/deep/two b/gone/deep/two
deleted file mode 100644
--- a/gone/deep/two
+++ /dev/null
@@ -1 +0,0 @@
-2"
	echo "$OUT" >"$TEST_TMP/p.diff"
	as_mode git -C "$WS" apply --check "$TEST_TMP/p.diff" ||
		fail "git apply --check refused the diff"
	assert_status 0 ov diff --stat out
	assert_match "$OUT" " gone/deep/two +\|     1 -"
	assert_contains "$OUT" " conf/settings => conf/settings.new |     0"
	assert_contains "$OUT" " 6 files changed, 2 insertions(+), 2 deletions(-)"
	# unknown paths are errors
	assert_status 1 ov diff out bogus-path
	assert_contains "$ERR" "bogus-path: no change of sandbox \`out\` under this path"
	assert_status 1 ov changes out bogus-path
	assert_status 1 ov commit out bogus-path
	assert_status 1 ov commit out /etc/passwd
	assert_contains "$ERR" "is not inside the workspace"
	# per path
	assert_status 0 ov commit out gone
	assert_eq "$OUT" "D  gone/one
D  gone/deep/two
D  gone/deep/
D  gone/"
	[ ! -e "$WS/gone" ] || fail "gone/ not deleted"
	assert_status 0 ov commit out
	assert_eq "$OUT" "R  conf/settings -> conf/settings.new
M  existing.txt
A  new.txt
M  run.sh (mode 0644 -> 0755)"
	assert_eq "$(stat -c %a "$WS/run.sh")" 755
	[ ! -e "$WS/conf/settings" ] && [ "$(cat "$WS/conf/settings.new")" = c=1 ] ||
		fail "the rename was not applied"
	assert_status 0 ov discard out
	# default names never collide, even when made in the same second
	# (each writes a file: an overlay without changes is discarded)
	sb_run --overlay -- sh -c 'echo a >a.new' 2>"$TEST_TMP/a.err" &
	sb_run --overlay -- sh -c 'echo b >b.new' 2>"$TEST_TMP/b.err" &
	wait
	n1=$(grep -o "sandbox \`sandbox-[0-9-]*\`" "$TEST_TMP/a.err")
	n2=$(grep -o "sandbox \`sandbox-[0-9-]*\`" "$TEST_TMP/b.err")
	[ -n "$n1" ] && [ -n "$n2" ] || fail "no names: $(cat "$TEST_TMP/a.err" "$TEST_TMP/b.err")"
	assert_ne "$n1" "$n2"
	assert_status 0 ov overlays
	assert_eq "$(grep -c '^sandbox-' <<<"$OUT")" 2
}

# commit -i through a pseudo-terminal (script(1)): y, n, d then y, q.
t_interactive_commit()
{
	ov_setup "$1"
	require_cmd script
	sb_overlay --name ia -- sh -c 'echo 1 > a1; echo 2 > a2; echo 3 > a3; echo 4 > a4'
	printf 'y\nn\nd\ny\nq\n' >"$TEST_TMP/answers"
	[ "$MODE" = root ] || chmod 0644 "$TEST_TMP/answers"
	assert_status 0 as_mode sh -c 'HOME=$1 script -qec "$2 commit -i ia" /dev/null <"$3"' \
		_ "$H" "$AGENTRUN" "$TEST_TMP/answers"
	assert_contains "$OUT" "Commit this change [y,n,d,q,?]?"
	assert_contains "$OUT" "+++ b/a3"
	assert_eq "$(cat "$WS/a1")" 1
	[ ! -e "$WS/a2" ] || fail "a2 committed after n"
	assert_eq "$(cat "$WS/a3")" 3
	[ ! -e "$WS/a4" ] || fail "a4 committed after q"
	assert_status 0 ov changes ia
	assert_eq "$OUT" "A  a2
A  a4"
}

# The agent plants what the host runs later, in an --overlay run; commit
# applies the ordinary files only, holds the rest back (kept in the
# overlay), changes/diff mark them; the host's git runs nothing.
ov_attack()
{
	# shellcheck disable=SC2016
	sb_overlay --name "$1" -- sh -c '
		m=$1
		for i in $(seq 40); do echo "file $i" > "f$i.txt"; done
		git add f1.txt && git -c user.name=a -c user.email=a@a commit -qm agent
		echo "$m/common" > .git/commondir || true
		mkdir -p .git/hooks
		printf "#!/bin/sh\ntouch %s/ran-hook\n" "$m" > .git/hooks/pre-commit || true
		chmod +x .git/hooks/pre-commit || true
		printf "[core]\n\tfsmonitor = \"touch %s/ran-fsmonitor; false\"\n" "$m" >> .git/config || true
		mkdir -p .vscode .claude evil/.git/objects evil/.git/refs bare/objects bare/refs linked/objects
		echo "ref: refs/heads/main" > linked/HEAD
		ln -s objects linked/refs
		printf "[core]\n\tfsmonitor = \"touch %s/ran-linked; false\"\n" "$m" > linked/config
		echo "{\"tasks\":[{\"command\":\"touch $m/ran-vscode\"}]}" > .vscode/tasks.json
		echo "{\"mcpServers\":{\"x\":{\"command\":\"touch $m/ran-mcp\"}}}" > .mcp.json
		echo "{\"hooks\":{}}" > .claude/settings.json
		echo "ref: refs/heads/main" > evil/.git/HEAD
		printf "[core]\n\tfsmonitor = \"touch %s/ran-evil; false\"\n" "$m" > evil/.git/config
		echo "ref: refs/heads/main" > bare/HEAD
		printf "[core]\n\tbare = false\n\tworktree = ..\n\tfsmonitor = \"touch %s/ran-bare; false\"\n" "$m" > bare/config
		echo ok > evil/readme
		mkdir -p .husky
		printf "#!/bin/sh\ntouch %s/ran-husky\n" "$m" > .husky/pre-commit
		chmod +x .husky/pre-commit
	' _ "$MK"
}

t_protected_held()
{
	local l p
	ov_setup "$1"
	MK=$TEST_TMP/marks-$1
	command -v git >/dev/null || skip "needs git"
	rm -rf "$WS/.git"
	mkdir -p "$MK"
	chmod 0777 "$MK"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	as_mode sh -c "cd '$WS' && git init -q . && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm init &&
		rm -rf .git/hooks && git config core.hooksPath .husky"
	ov_attack pr
	assert_status 0 ov changes pr
	# every protected line is marked in the second column, whatever
	# pads the list, and counted at the end
	for p in .git/ .vscode/tasks.json .mcp.json .claude/settings.json \
		evil/.git/ bare/ linked/; do
		l=$(grep -F " $p" <<<"$OUT" | head -1)
		assert_match "$l" "^.! " "$p marked: $l"
	done
	# shellcheck disable=SC2016
	grep -q '^! [0-9]* protected changes (.*): marked `!`, held back by `agentrun commit`' <<<"$OUT" ||
		fail "no summary line: $OUT"
	assert_contains "$OUT" "A! .git/hooks/pre-commit (protected: git hooks)"
	assert_contains "$OUT" "A! .husky/pre-commit (protected: git hooks (core.hooksPath))"
	# what git commit inside wrote to .git: one line
	assert_match "$(grep -c '^.! \.git/' <<<"$OUT")" '^4$'
	assert_match "$OUT" "M! .git/ \(in the git directory: [0-9]+ changes to git's own data"
	assert_match "$(grep -c '^A  f[0-9]*\.txt$' <<<"$OUT")" '^40$'
	assert_status 0 ov diff pr
	assert_contains "$OUT" "# agentrun: protected: .vscode/tasks.json"
	assert_status 0 ov commit pr
	assert_contains "$ERR" "held back"
	for p in .vscode .mcp.json .claude/settings.json evil/.git bare/HEAD bare/config bare/objects .git/commondir .husky linked; do
		[ ! -e "$WS/$p" ] || fail "commit applied protected $p"
	done
	assert_not_contains "$(cat "$WS/.git/config")" fsmonitor
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "commit applied the hook"
	assert_eq "$(cat "$WS/f40.txt")" "file 40"
	assert_eq "$(cat "$WS/evil/readme")" "ok"
	# the host's git runs nothing of it
	as_mode sh -c "cd '$WS' && git status --short >/dev/null &&
		git add -A && git -c user.name=t -c user.email=t@t commit -qm host &&
		(cd evil && git status) >/dev/null 2>&1; (cd bare && git status) >/dev/null 2>&1; true"
	[ "$(as_mode git -C "$SBD/pr/upper/linked" rev-parse --is-inside-git-dir 2>/dev/null)" = true ] ||
		fail "linked/ (refs a symlink) is not a git directory for git: the test is wrong"
	assert_eq "$(ls "$MK")" "" "the host ran something"
	# held back, not lost
	assert_status 0 ov changes pr
	assert_contains "$OUT" ".vscode/tasks.json"
	assert_not_contains "$OUT" "f1.txt"
	# named, it is applied
	assert_status 0 ov commit pr .mcp.json
	assert_contains "$(cat "$WS/.mcp.json")" mcpServers
	assert_status 0 ov commit --include-protected pr .vscode
	[ -e "$WS/.vscode/tasks.json" ] || fail "--include-protected did not apply it"
	# naming a path above a protected one does not apply it
	assert_status 0 ov commit pr evil
	assert_contains "$ERR" "evil/.git/config (protected: git config)"
	[ ! -e "$WS/evil/.git" ] || fail "commit evil applied evil/.git"
	# the check above is live: the hook, named, runs on the host
	assert_status 0 ov commit pr .husky
	as_mode sh -c "cd '$WS' && echo x >> f2.txt && git add f2.txt &&
		git -c user.name=t -c user.email=t@t commit -qm host2"
	[ -e "$MK/ran-husky" ] || fail "the named hook was not applied"
	# a diff of some paths is still one git apply takes
	assert_status 0 ov diff pr .git/hooks
	assert_contains "$OUT" "# agentrun: protected: .git/hooks/pre-commit (git hooks)"
	assert_status 0 ov diff pr evil
	assert_contains "$OUT" "# agentrun: protected: evil/.git/ (git directory): 4 changes"
	assert_status 0 ov diff pr bare/config .claude
	assert_contains "$OUT" "# agentrun: protected: bare/config (git config)"
	echo "$OUT" >"$TEST_TMP/p-$1.diff"
	as_mode git -C "$TEST_TMP" apply --check --directory=x "$TEST_TMP/p-$1.diff" ||
		fail "git apply --check refused the diff"
}

# An installed hook that runs a worktree script and a framework's config
# (pre-commit's installed hook names --config=.pre-commit-config.yaml;
# lefthook's names no file): commit holds back what the hook names,
# not the directories it passes (`lint src`).
t_protected_hook_refs()
{
	ov_setup "$1"
	MK=$TEST_TMP/marks-refs-$1
	command -v git >/dev/null || skip "needs git"
	rm -rf "$WS/.git"
	mkdir -p "$MK" "$WS/scripts" "$WS/src"
	chmod 0777 "$MK"
	printf '#!/bin/sh\nexit 0\n' >"$WS/scripts/check.sh"
	chmod +x "$WS/scripts/check.sh"
	echo "int a;" >"$WS/src/a.c"
	[ "$MODE" = root ] || chown -R "$TEST_UID:$TEST_GID" "$WS"
	as_mode sh -c "cd '$WS' && git init -q . && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm init &&
		printf '#!/bin/sh\nscripts/check.sh --config=.pre-commit-config.yaml src\nlefthook run pre-commit 2>/dev/null; exit 0\n' >.git/hooks/pre-commit &&
		chmod +x .git/hooks/pre-commit"
	# shellcheck disable=SC2016
	sb_overlay --name hr -- sh -c '
		printf "#!/bin/sh\ntouch %s/ran-script\n" "$1" > scripts/check.sh
		echo "repos: []" > .pre-commit-config.yaml
		echo "pre-commit: {}" > lefthook.yml
		echo "int b;" > src/a.c
	' _ "$MK"
	assert_status 0 ov changes hr
	assert_contains "$OUT" "M! scripts/check.sh (protected: a file an installed git hook names)"
	assert_contains "$OUT" "A! .pre-commit-config.yaml (protected: a file an installed git hook names)"
	assert_contains "$OUT" "A! lefthook.yml (protected: lefthook config"
	assert_contains "$OUT" "M  src/a.c"
	assert_status 0 ov commit hr
	assert_eq "$OUT" "M  src/a.c"
	assert_contains "$ERR" "M! scripts/check.sh"
	[ ! -e "$WS/.pre-commit-config.yaml" ] && [ ! -e "$WS/lefthook.yml" ] ||
		fail "a hook framework's config was applied"
	as_mode sh -c "cd '$WS' && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm host"
	assert_eq "$(ls "$MK")" "" "the host's hook ran the agent's script"
}

for mode in user root; do
	run_test "overlay ($mode): a run that changed nothing is discarded, said" t_empty_discarded $mode
	run_test "overlay ($mode): git's own data one line per repository, --all lists it" t_git_grouped $mode
	run_test "overlay ($mode): commit and discard refuse while the sandbox runs" t_lock_while_running $mode
	run_test "overlay ($mode): a --detach sandbox holds the lock until stopped" t_lock_detached $mode
	run_test "overlay ($mode): commit raced by a symlink swap never copies the secret" t_commit_race_symlink_swap $mode
	run_test "overlay ($mode): symlinks, a directory replaced by a symlink, hardlinks" t_commit_links $mode
	run_test "overlay ($mode): a host edit is a conflict and survives" t_conflict $mode
	run_test "overlay ($mode): fifo, socket, device, sparse, setuid" t_special_files $mode
	run_test "overlay ($mode): names quoted as git quotes them" t_quoted_names $mode
	run_test "overlay ($mode): changes, diff, --stat, unknown paths, names" t_output $mode
	run_test "overlay ($mode): commit -i through a pty" t_interactive_commit $mode
	run_test "overlay ($mode): commit holds back what the host would run" t_protected_held $mode
	run_test "overlay ($mode): commit holds back what an installed hook runs" t_protected_hook_refs $mode
done
finish
