#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun sandbox`, run as the unprivileged test user: workspace
# ownership, secrets (files and environment), writes outside the
# workspace, network isolation, --print-bundle, profiles.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"


# sbx_setup: a fake home for the test user in TEST_TMP, with secrets, and a
# git workspace inside it. Sets H (home) and WS (workspace).
sbx_setup()
{
	sb_home user
	mkdir -p "$H/.ssh" "$H/.config/gcloud" "$H/.config/tool" "$WS/src"
	echo "PRIVATE-KEY-MATERIAL" >"$H/.ssh/id_ed25519"
	echo "GCLOUD-SECRET" >"$H/.config/gcloud/credentials.db"
	echo "tool-config" >"$H/.config/tool/config"
	printf '[user]\n\tname = Test\n' >"$H/.gitconfig"
	echo "old" >"$WS/existing.txt"
	chmod 0700 "$H/.ssh"
	chmod 0600 "$H/.ssh/id_ed25519"
	sb_home_own
}

# sbx [SANDBOX OPTIONS] -- CMD...: run the sandbox as the test user, from
# $WS (or $SBX_CWD), with a fake home and a secret in the environment.
sbx()
{
	as_test_user env HOME="$H" FOO_TOKEN=secret-token-value \
		GITHUB_TOKEN=gh-secret MY_VISIBLE=1 \
		bash -c 'cd "$1" && shift && exec "$@"' _ "${SBX_CWD:-$WS}" \
		"$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty "$@"
}

t_identity_and_caps()
{
	sbx_setup
	assert_status 0 sbx -- sh -c 'id -u; id -g; id -un; grep CapEff /proc/self/status; grep CapBnd /proc/self/status; pwd'
	assert_contains "$OUT" "$TEST_UID"
	assert_contains "$OUT" "$TEST_USER"
	assert_contains "$OUT" "CapEff:	0000000000000000"
	assert_contains "$OUT" "CapBnd:	0000000000000000"
	assert_contains "$OUT" "$WS"
	assert_contains "$ERR" "protections: userns"
}

t_workspace_ownership()
{
	local before after
	sbx_setup
	# (.git's mtime changes: protected-path placeholders come and go
	# in it, docs/sandbox.md)
	before=$(stat -c '%u:%g %Y' "$WS/existing.txt"; stat -c '%u:%g' "$WS/.git")
	SBX_CWD=$WS/src
	assert_status 0 sbx -- sh -c 'umask 022; echo hi > ../new.txt; mkdir ../newdir; echo x > ../newdir/f; chmod 0640 ../new.txt; ln -s new.txt ../link; pwd'
	assert_eq "$(cat "$WS/new.txt")" "hi"
	assert_file_owner "$WS/new.txt" "$TEST_UID:$TEST_GID"
	assert_file_owner "$WS/newdir" "$TEST_UID:$TEST_GID"
	assert_file_owner "$WS/newdir/f" "$TEST_UID:$TEST_GID"
	assert_file_owner "$WS/link" "$TEST_UID:$TEST_GID"
	assert_eq "$(stat -c %a "$WS/new.txt")" "640"
	assert_eq "$(stat -c %a "$WS/newdir")" "755"
	after=$(stat -c '%u:%g %Y' "$WS/existing.txt"; stat -c '%u:%g' "$WS/.git")
	assert_eq "$after" "$before" "nothing re-owned or touched"
	# the cwd was kept (a subdirectory of the workspace)
	assert_contains "$OUT" "$WS/src"
}

t_secret_files_hidden()
{
	sbx_setup
	assert_status 0 sbx -- sh -c 'cat ~/.ssh/id_ed25519 2>&1; ls -A ~ | grep -x .ssh && echo SSH-VISIBLE; cat ~/.gitconfig; cat ~/.config/gcloud/credentials.db 2>&1; true'
	assert_not_contains "$OUT" "PRIVATE-KEY-MATERIAL"
	assert_not_contains "$OUT" "GCLOUD-SECRET"
	assert_not_contains "$OUT" "SSH-VISIBLE"
	assert_contains "$OUT" "name = Test" "~/.gitconfig is on the default allowlist"
}

t_secret_hidden_under_parent_bind()
{
	sbx_setup
	# binding ~/.config still hides ~/.config/gcloud
	assert_status 0 sbx --ro "~/.config" -- sh -c 'cat ~/.config/tool/config; ls -A ~/.config/gcloud | wc -l; cat ~/.config/gcloud/credentials.db 2>&1; true'
	assert_contains "$OUT" "tool-config"
	assert_not_contains "$OUT" "GCLOUD-SECRET"
	# the home as the workspace still hides ~/.ssh
	SBX_CWD=$H
	assert_status 0 sbx --workspace "$H" -- sh -c 'ls -A ~/.ssh | wc -l; cat ~/.ssh/id_ed25519 2>&1; echo x > ~/.ssh/new 2>&1; true'
	assert_not_contains "$OUT" "PRIVATE-KEY-MATERIAL"
	[ ! -e "$H/.ssh/new" ] || fail "wrote into the hidden ~/.ssh"
	# asking for the secret store itself is refused
	SBX_CWD=$WS
	assert_status '!0' sbx --ro "~/.ssh" -- true
	assert_contains "$ERR" "never-share"
}

t_secret_env_filtered()
{
	sbx_setup
	assert_status 0 sbx -- sh -c 'env'
	assert_not_contains "$OUT" "secret-token-value"
	assert_not_contains "$OUT" "gh-secret"
	assert_not_contains "$OUT" "FOO_TOKEN"
	assert_not_contains "$OUT" "MY_VISIBLE"
	assert_contains "$OUT" "HOME=$H"
	# --env NAME is explicit consent; --env NAME=VALUE sets
	assert_status 0 sbx --env FOO_TOKEN --env BAR=baz -- sh -c 'echo "$FOO_TOKEN $BAR ${GITHUB_TOKEN:-none}"'
	assert_eq "$OUT" "secret-token-value baz none"
}

t_write_outside_workspace_fails()
{
	sbx_setup
	assert_status 0 sbx -- sh -c '
		for p in /usr/x /etc/x /x "$(dirname "$PWD")/x"; do
			if echo bad > "$p" 2>/dev/null; then echo "WROTE $p"; fi
		done
		echo ephemeral > ~/outside; echo ephemeral > /tmp/outside
		echo done'
	assert_contains "$OUT" "done"
	assert_not_contains "$OUT" "WROTE /usr/x"
	assert_not_contains "$OUT" "WROTE /etc/x"
	assert_not_contains "$OUT" "WROTE /x"
	[ ! -e "$H/outside" ] || fail "a write to \$HOME reached the host"
	[ ! -e /usr/x ] && [ ! -e /etc/x ] || fail "a write reached /usr or /etc"
	# the parent of the workspace (the fake home) is not the host's
	[ ! -e "$H/x" ] || fail "a write next to the workspace reached the host"
	# --ro and --rw
	mkdir -p "$TEST_TMP/ro-$$" "$TEST_TMP/rw-$$"
	chown "$TEST_UID:$TEST_GID" "$TEST_TMP/ro-$$" "$TEST_TMP/rw-$$"
	assert_status 0 sbx --ro "$TEST_TMP/ro-$$" --rw "$TEST_TMP/rw-$$" -- sh -c "
		echo a > $TEST_TMP/ro-$$/f 2>/dev/null && echo WROTE-RO
		echo b > $TEST_TMP/rw-$$/f && echo WROTE-RW"
	assert_not_contains "$OUT" "WROTE-RO"
	assert_contains "$OUT" "WROTE-RW"
	[ ! -e "$TEST_TMP/ro-$$/f" ] || fail "--ro path was written"
	assert_eq "$(cat "$TEST_TMP/rw-$$/f")" "b"
}

t_minimal_etc()
{
	sbx_setup
	assert_status 0 sbx -- sh -c 'ls /etc; grep "^$(id -un):" /etc/passwd; test -e /etc/shadow && echo HAS-SHADOW; true'
	assert_contains "$OUT" "resolv.conf"
	assert_contains "$OUT" "nsswitch.conf"
	assert_contains "$OUT" "$TEST_USER:x:$TEST_UID:$TEST_GID:"
	assert_not_contains "$OUT" "HAS-SHADOW"
	assert_not_contains "$OUT" "sudoers"
}

# start_server: HTTP on 127.0.0.1:random port (tests/sandbox-lib.sh);
# sets PORT and SERVER_PID.
start_server()
{
	local dir=$TEST_TMP/www-$RANDOM
	mkdir -p "$dir"
	echo "hello-from-host" >"$dir/index.html"
	http_server "$dir"
}

t_net_none_blocks_host_services()
{
	sbx_setup
	start_server
	assert_status 0 sbx -- sh -c "
		curl -fsS -m 3 http://127.0.0.1:$PORT/ 2>&1 && echo CURL-REACHED
		wget -q -T 3 -O - http://127.0.0.1:$PORT/ 2>&1 && echo WGET-REACHED
		(exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null && echo TCP-REACHED
		ssh -o BatchMode=yes -o ConnectTimeout=3 -p $PORT 127.0.0.1 true 2>&1
		cat /sys/class/net/lo/operstate; ls /sys/class/net
		true"
	assert_not_contains "$OUT" "hello-from-host"
	assert_not_contains "$OUT" "REACHED"
	# loopback is up and private to the sandbox
	assert_not_contains "$OUT" "down"
	assert_status 0 sbx -- "$PY" -c '
import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=3)
print("loopback-ok")'
	assert_contains "$OUT" "loopback-ok"
}

t_net_host_opt_in()
{
	sbx_setup
	start_server
	assert_status 0 sbx --net host -- curl -fsS -m 5 "http://127.0.0.1:$PORT/"
	assert_contains "$OUT" "hello-from-host"
	assert_contains "$ERR" "warning: sandbox: --net host"
}

t_exit_status()
{
	sbx_setup
	assert_status 7 sbx -- sh -c 'exit 7'
	assert_status '!0' sbx -- /nonexistent/cmd
}

t_print_bundle_runs_unchanged()
{
	local b id made
	sbx_setup
	# a git config key that runs a command: the sandbox sees a filtered
	# copy, made in the bundle's directory (not /tmp, where each
	# --print-bundle left one), named in config.json by absolute path
	printf '[core]\n\tpager = less\n' >>"$H/.gitconfig"
	# inside the workspace (or a --rw directory), the command could
	# rewrite the bundle it will be run from next: refused, nothing made
	assert_status '!0' sbx --print-bundle bundle -- true
	assert_contains "$ERR" "is inside \`$WS\`, which the sandbox's command can write"
	[ ! -e "$WS/bundle" ] || fail "a refused --print-bundle left $WS/bundle"
	mkdir -p "$H/extra"
	sb_home_own
	assert_status '!0' sbx --rw "$H/extra" --print-bundle "$H/extra/b" -- true
	assert_contains "$ERR" "is inside \`$H/extra\`"
	# a relative DIR outside it
	b=$H/bundle
	assert_status 0 sbx --print-bundle ../bundle -- sh -c 'echo from-bundle; id -u; cat ~/.ssh/id_ed25519 2>&1; git config core.pager || echo no-pager; true'
	[ -f "$b/config.json" ] || fail "no config.json"
	[ -d "$b/rootfs" ] || fail "no rootfs"
	made=$(grep -o '"/[^"]*agentrun-[a-z]*-[A-Za-z0-9]*/[0-9]*"' "$b/config.json" | tr -d '"' | sort -u)
	[ -n "$made" ] || fail "config.json names no filtered git config"
	for f in $made; do
		assert_match "$f" "^$b/agentrun-git-[A-Za-z0-9]+/[0-9]+$"
		[ -f "$f" ] || fail "the filtered git config $f is not in the bundle"
	done
	assert_eq "$(config_get "$b" '.root.path')" "rootfs"
	assert_contains "$(config_get "$b" '.annotations["run.agentrun.sandbox.protections"]')" "userns"
	assert_eq "$(config_get "$b" '.annotations["run.agentrun.net.loopback"]')" "up"
	assert_eq "$(config_get "$b" '.linux.uidMappings[0].hostID')" "$TEST_UID"
	if grep -q secret-token-value "$b/config.json"; then
		fail "a secret reached config.json"
	fi
	# a second --print-bundle into the same directory is refused
	assert_status '!0' sbx --print-bundle "$b" -- true
	assert_contains "$ERR" "already holds a bundle"
	# a --print-bundle that fails leaves no directory behind
	assert_status '!0' sbx --print-bundle "$H/b2" --secret FOO_TOKEN=x.test -- true
	assert_contains "$ERR" "--secret needs --net allow"
	[ ! -e "$H/b2" ] || fail "a failed --print-bundle left $H/b2"
	id=$(unique_id)
	defer ar_user delete --force "$id"
	assert_status 0 as_test_user env HOME="$H" bash -c 'cd "$1" && exec "$AGENTRUN" --root "$AR_USER_ROOT" run "$2"' _ "$b" "$id"
	assert_contains "$OUT" "from-bundle"
	assert_contains "$OUT" "no-pager"
	assert_contains "$OUT" "$TEST_UID"
	assert_not_contains "$OUT" "PRIVATE-KEY-MATERIAL"
	# crun does not work on this host (see docs/sandbox.md); when it
	# does, the same bundle must run there too
	if command -v crun >/dev/null 2>&1 && [ -n "${AR_TEST_CRUN:-}" ]; then
		assert_status 0 as_test_user bash -c 'cd "$1" && crun run "$2"' _ "$b" "$id-crun"
		assert_contains "$OUT" "from-bundle"
	fi
}

t_profile()
{
	local p
	sbx_setup
	mkdir -p "$H/.agent"
	echo "agent-state" >"$H/.agent/state"
	chown -R "$TEST_UID:$TEST_GID" "$H/.agent"
	p=$TEST_TMP/profile-$RANDOM.json
	cat >"$p" <<-EOF
	{
		"description": "test agent",
		"rw": ["~/.agent", "~/.missing-is-skipped"],
		"hide": ["~/proj/src"],
		"env": ["FOO_TOKEN", "SET_BY_PROFILE=yes"],
		"net": "none"
	}
	EOF
	chmod 0644 "$p"
	assert_status 0 sbx --profile "$p" -- sh -c 'cat ~/.agent/state; echo more >> ~/.agent/state; echo "$FOO_TOKEN $SET_BY_PROFILE"; ls -A "$HOME/proj/src" | wc -l; touch "$HOME/proj/src/x" 2>/dev/null && echo WROTE-HIDDEN; true'
	assert_contains "$OUT" "agent-state"
	assert_contains "$OUT" "secret-token-value yes"
	assert_not_contains "$OUT" "WROTE-HIDDEN"
	assert_eq "$(tail -1 "$H/.agent/state")" "more"
	# a profile by name: ~/.config/agentrun/profiles/NAME.json
	mkdir -p "$H/.config/agentrun/profiles"
	cp "$p" "$H/.config/agentrun/profiles/mytool.json"
	chown -R "$TEST_UID:$TEST_GID" "$H/.config"
	assert_status 0 sbx --profile mytool -- sh -c 'echo "$FOO_TOKEN $SET_BY_PROFILE"'
	assert_contains "$OUT" "secret-token-value yes"
	assert_status 1 sbx --profile nosuchtool -- true
	assert_contains "$ERR" "no such profile"
	assert_contains "$ERR" "$H/.config/agentrun/profiles"
	# errors in a profile name the file and the JSON path
	echo '{"rw": ["~/.agent", 3]}' >"$p"
	assert_status 1 sbx --profile "$p" -- true
	assert_contains "$ERR" "rw[1]"
}

t_refuses_when_userns_unavailable()
{
	local fake
	sbx_setup
	fake=$TEST_TMP/fakeproc-$RANDOM
	mkdir -p "$fake/sys/kernel/seccomp" "$fake/sys/user" "$fake/self"
	echo 0 >"$fake/sys/kernel/unprivileged_userns_clone"
	echo 1000 >"$fake/sys/user/max_user_namespaces"
	cp /proc/sys/kernel/seccomp/actions_avail "$fake/sys/kernel/seccomp/"
	chmod -R a+rX "$fake"
	assert_status 1 as_test_user env HOME="$H" AGENTRUN_DOCTOR_PROC="$fake" \
		bash -c 'cd "$1" && exec "$AGENTRUN" --root "$AR_USER_ROOT" sandbox --no-tty -- sh -c "echo RAN > ran"' _ "$WS"
	assert_contains "$ERR" "refusing to start"
	assert_contains "$ERR" "user namespaces"
	assert_contains "$ERR" "unprivileged_userns_clone"
	[ ! -e "$WS/ran" ] || fail "the command ran without its sandbox"
}

t_landlock_layer()
{
	local b id n
	sbx_setup
	as_test_user "$AGENTRUN" doctor | grep -Eq '^ok +landlock ' ||
		skip "the kernel has no Landlock"
	assert_status 0 sbx --landlock off --print-bundle "$H/b-off" -- true
	assert_eq "$(config_get "$H/b-off" '.annotations["run.agentrun.landlock"]')" "null"
	b=$H/b-on
	if ! assert_status 0 sbx --landlock on --print-bundle "$b" -- sh -c 'echo a > /tmp/x && echo TMP-WRITTEN; echo b > "$PWD/w" && echo WS-WRITTEN; true'; then
		return 1
	fi
	assert_contains "$(config_get "$b" '.annotations["run.agentrun.landlock"]')" "rw:$WS"
	assert_contains "$(config_get "$b" '.annotations["run.agentrun.sandbox.protections"]')" "landlock"
	# The sandbox's own run: the same rules, handed to the runtime as
	# data (the annotation is their record; nothing parses it back).
	n=$(config_get "$b" '.annotations["run.agentrun.landlock"]' | grep -c .)
	assert_status 0 as_test_user env HOME="$H" bash -c 'cd "$1" && exec "$AGENTRUN" --root "$AR_USER_ROOT" --debug --log "$2" sandbox --no-tty --landlock on -- sh -c "echo a > /tmp/x && echo TMP-WRITTEN"' _ "$WS" "$WS/ll.log"
	assert_contains "$OUT" "TMP-WRITTEN"
	assert_contains "$(cat "$WS/ll.log")" "landlock: $n rules from the runtime's options"
	assert_not_contains "$(cat "$WS/ll.log")" "rules from annotations"
	id=$(unique_id)
	defer ar_user delete --force "$id"
	assert_status 0 as_test_user bash -c 'cd "$1" && exec "$AGENTRUN" --root "$AR_USER_ROOT" run "$2"' _ "$b" "$id"
	assert_contains "$OUT" "TMP-WRITTEN"
	assert_contains "$OUT" "WS-WRITTEN"
	# Without its rw rule, the writable /tmp tmpfs is closed by Landlock
	# alone: the mount still allows the write.
	rm -f "$WS/w"
	config_set "$b" '.annotations["run.agentrun.landlock"] |= (split("\n") | map(select(. != "rw:/tmp")) | join("\n"))'
	assert_not_contains "$(config_get "$b" '.annotations["run.agentrun.landlock"]')" "rw:/tmp"$'\n'
	id=$(unique_id)
	defer ar_user delete --force "$id"
	assert_status 0 as_test_user bash -c 'cd "$1" && exec "$AGENTRUN" --root "$AR_USER_ROOT" run "$2" 2>&1' _ "$b" "$id"
	assert_not_contains "$OUT" "TMP-WRITTEN"
	assert_contains "$OUT" "WS-WRITTEN"
}

# ar_h ARGS...: agentrun as the test user with the fake home.
ar_h()
{
	as_test_user env HOME="$H" "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
}

t_overlay()
{
	local before ino_a
	sbx_setup
	echo "b" >"$WS/b"
	mkdir -p "$WS/d"
	echo "c" >"$WS/d/c"
	chown -R "$TEST_UID:$TEST_GID" "$WS"
	before=$(cd "$WS" && find . -printf '%p %s %T@ %i\n' | sort)
	ino_a=$(stat -c %i "$WS/existing.txt")
	assert_status 0 sbx --overlay --name ov1 -- sh -c '
		echo new-content > existing.txt; rm b; rm -r d; mkdir d
		echo n > d/n; echo z > z; mkdir -p nd/sub; echo q > nd/sub/q
		cat existing.txt'
	assert_contains "$OUT" "new-content"
	assert_contains "$ERR" "agentrun commit ov1"
	assert_eq "$(cd "$WS" && find . -printf '%p %s %T@ %i\n' | sort)" "$before" \
		"the real workspace changed before commit"
	[ -d "$H/.local/share/agentrun/sandboxes/ov1/upper" ] ||
		fail "no upper layer outside the workspace"

	assert_status 0 ar_h changes ov1
	assert_eq "$OUT" "D  b
D  d/c
A  d/n
M  existing.txt
A  nd/
A  nd/sub/
A  nd/sub/q
A  z"
	assert_status 0 ar_h diff ov1 existing.txt
	assert_contains "$OUT" "--- a/existing.txt"
	assert_contains "$OUT" "+new-content"
	assert_contains "$OUT" "-old"
	assert_not_contains "$OUT" "b/z"

	# a subset first
	assert_status 0 ar_h commit ov1 existing.txt "$WS/nd"
	assert_eq "$(cat "$WS/existing.txt")" "new-content"
	assert_ne "$(stat -c %i "$WS/existing.txt")" "$ino_a" \
		"a committed file is replaced by rename, not rewritten"
	assert_file_owner "$WS/existing.txt" "$TEST_UID:$TEST_GID"
	assert_eq "$(cat "$WS/nd/sub/q")" "q"
	[ -e "$WS/b" ] && [ ! -e "$WS/z" ] || fail "commit went beyond PATHS"
	assert_status 0 ar_h changes ov1
	assert_eq "$OUT" "D  b
D  d/c
A  d/n
A  z"
	# then the rest
	assert_status 0 ar_h commit ov1
	[ ! -e "$WS/b" ] && [ ! -e "$WS/d/c" ] || fail "deletions not applied"
	assert_eq "$(cat "$WS/d/n") $(cat "$WS/z")" "n z"
	if ls -a "$WS" "$WS/d" "$WS/nd/sub" | grep -q agentrun-commit; then
		fail "temporary files left behind"
	fi
	assert_status 0 ar_h changes ov1
	assert_eq "$OUT" ""
	# names are unique until discarded
	assert_status 1 sbx --overlay --name ov1 -- true
	assert_contains "$ERR" "exists"
	assert_status 0 ar_h discard ov1
	[ ! -e "$H/.local/share/agentrun/sandboxes/ov1" ] || fail "discard left files"
	assert_status 1 ar_h changes ov1
}

t_overlay_discard()
{
	sbx_setup
	assert_status 0 sbx --overlay --name ov2 -- sh -c 'echo gone > existing.txt; echo x > new'
	assert_status 0 ar_h discard ov2
	assert_eq "$(cat "$WS/existing.txt")" "old"
	[ ! -e "$WS/new" ] || fail "a discarded change reached the workspace"
}

# The start path writes nothing on the host: the root is a tmpfs made in
# the sandbox (docs/performance.md), the config stays in memory.
t_root_is_tmpfs_nothing_on_host()
{
	local xdg i id
	sbx_setup
	xdg=$TEST_XDG_RUNTIME_DIR
	assert_status 0 sbx -- sh -c 'stat -f -c %T /; ls /etc/passwd /bin/sh'
	assert_contains "$OUT" "tmpfs"
	assert_contains "$OUT" "/etc/passwd"
	if [ -d "$xdg/agentrun-sandbox-root" ]; then
		assert_eq "$(ls -A "$xdg/agentrun-sandbox-root")" ""
	fi
	assert_eq "$(find "$xdg" -maxdepth 1 -name 'agentrun-sandbox-[0-9]*' | wc -l)" "0"
	# exec into a running sandbox: a clear refusal, not a missing file
	sbx -- sleep 20 >/dev/null 2>&1 &
	for i in $(seq 50); do
		id=$(as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" list -q |
			grep '^sandbox-' | head -n1) || true
		[ -n "$id" ] && break
		sleep 0.1
	done
	[ -n "$id" ] || fail "the sandbox did not show in list"
	assert_status 1 as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" exec "$id" true
	assert_contains "$ERR" "exec into it is not supported"
	as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" kill "$id" KILL
	wait
}

run_test "sandbox: own uid, no capabilities, cwd kept" t_identity_and_caps
run_test "sandbox: files written in the workspace belong to the user" t_workspace_ownership
run_test "sandbox: ~/.ssh and other secrets are invisible" t_secret_files_hidden
run_test "sandbox: secrets stay hidden under a parent bind" t_secret_hidden_under_parent_bind
run_test "sandbox: secret environment variables are dropped" t_secret_env_filtered
run_test "sandbox: writes outside the workspace fail or stay inside" t_write_outside_workspace_fails
run_test "sandbox: minimal /etc" t_minimal_etc
run_test "sandbox: --net none: host services on 127.0.0.1 unreachable" t_net_none_blocks_host_services
run_test "sandbox: --net host is an explicit, warned opt-in" t_net_host_opt_in
run_test "sandbox: exit status passes through" t_exit_status
run_test "sandbox: --print-bundle output runs with agentrun run; a bundle directory the sandbox can write is refused" t_print_bundle_runs_unchanged
run_test "sandbox: --profile" t_profile
run_test "sandbox: refuses to start without user namespaces" t_refuses_when_userns_unavailable
run_test "sandbox: Landlock mirrors the mounts" t_landlock_layer
run_test "sandbox: --overlay, changes, diff, commit (atomic per file)" t_overlay
run_test "sandbox: --overlay then discard" t_overlay_discard
run_test "sandbox: tmpfs root, nothing on the host, exec refused clearly" t_root_is_tmpfs_nothing_on_host
finish
