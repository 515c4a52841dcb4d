#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Faults (issue 31): agentrun killed with SIGKILL in the middle of `run`
# (a plain OCI bundle), `sandbox` and `commit` (--overlay), as root and
# rootless. What must survive and what must not:
#   - run / sandbox: no process of the container left (its pid 1 dies
#     with agentrun: PR_SET_PDEATHSIG), no mount of it on the host,
#     `list` shows it and `delete` removes its state;
#   - sandbox: what the agent left that the host would execute (a new
#     repository with a pre-commit hook) is neutralised by the keeper
#     process once the container has ended -- the end-of-run check the
#     killed agentrun could not run (docs/sandbox.md, "A killed
#     sandbox"); the user's next `git commit` runs nothing;
#   - commit: see test_faults_commit.sh.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# as MODE on the host, with the fake home
host()
{
	if [ "$MODE" = root ]; then
		HOME=$H "$@"
	else
		as_test_user env HOME="$H" "$@"
	fi
}

# tagged MODE TAG CMD...: CMD (agentrun ...) as MODE with FAULT_TAG=TAG in
# its environment, from $WS (or / without WS)
tagged()
{
	local mode=$1 tag=$2
	shift 2
	if [ "$mode" = root ]; then
		(cd "${WS:-/}" && exec env FAULT_TAG="$tag" HOME="${H:-$HOME}" "$@")
	else
		as_test_user env HOME="${H:-/}" FAULT_TAG="$tag" \
			bash -c 'cd "$1" && shift && exec "$@"' _ "${WS:-/}" "$@"
	fi
}

# tag_pids TAG COMM: live processes named COMM with FAULT_TAG=TAG
tag_pids()
{
	local f p
	for f in $(grep -lsFz "FAULT_TAG=$1" /proc/[0-9]*/environ); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] || continue
		grep -q '^State:[[:space:]]*Z' "/proc/$p/status" 2>/dev/null && continue
		echo "$p"
	done
}

# main_pid TAG: the agentrun process itself (its clones carry the tag
# too, but their parent does as well)
main_pid()
{
	local p pp
	for p in $(tag_pids "$1" agentrun); do
		pp=$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null) || continue
		grep -qsFz "FAULT_TAG=$1" "/proc/$pp/environ" || echo "$p"
	done
}

# cr MODE ARGS...: agentrun ARGS as MODE, with MODE's state root
cr()
{
	local mode=$1
	shift
	if [ "$mode" = root ]; then ar "$@"; else ar_user "$@"; fi
}

no_pid()
{
	[ -z "$("$@")" ]
}

gone()
{
	[ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

running()
{
	cr "$1" state "$2" 2>/dev/null | grep -q '"running"'
}

# -- run -----------------------------------------------------------------

t_kill_run()
{
	local mode=$1 b=$TEST_TMP/run-$1 id tag pid apid root nspid
	require_root
	id=$(unique_id)
	tag=run-$id
	if [ "$mode" = root ]; then
		root=$AR_ROOT
		make_bundle "$b"
	else
		require_subids
		require_agentrun_as_test_user
		root=$AR_USER_ROOT
		make_bundle_as_test_user "$b" --rootless
		ar_user list -q >/dev/null
	fi
	config_set "$b" '.process.args=["sleep","9871"] | .process.terminal=false'
	tagged "$mode" "$tag" "$AGENTRUN" --root "$root" run --bundle "$b" "$id" \
		>/dev/null 2>&1 &
	defer cr "$mode" delete --force "$id"
	wait_until 30 running "$mode" "$id"
	pid=$(cr "$mode" state "$id" | jq -r .pid)
	apid=$(main_pid "$tag")
	[ -n "$apid" ] || fail "agentrun run not found"
	# the container's first process is pid 1 of its namespace, and dies
	# with the runtime (PR_SET_PDEATHSIG = SIGKILL)
	nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$pid/status")
	assert_eq "$nspid" 1 "the container's process is pid 1 of its namespace"
	kill -KILL "$apid"
	wait_until 10 gone "$pid"
	wait_until 10 no_pid tag_pids "$tag" agentrun
	! grep -qF "$b/rootfs" /proc/self/mountinfo || fail "a mount of the bundle is left: $(grep -F "$b/rootfs" /proc/self/mountinfo)"
	assert_status 0 cr "$mode" list
	assert_contains "$OUT" "$id"
	assert_status 0 cr "$mode" state "$id"
	assert_eq "$(jq -r .status <<<"$OUT")" stopped
	assert_status 0 cr "$mode" delete "$id"
	[ ! -e "$root/$id" ] || fail "the state directory $root/$id is left"
	assert_status 0 cr "$mode" list -q
	assert_not_contains "$OUT" "$id"
}

# -- sandbox -------------------------------------------------------------

MARK=
sandbox_setup()
{
	require_cmd git jq
	sb_home "$1"
	rm -rf "$WS/.git"
	printf '[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n' >"$H/.gitconfig"
	sb_home_own
	MARK=$H/pwned
	host git -C "$WS" init -q
	host sh -c 'cd "$1" && echo a >a.txt && git add -A && git commit -qm one' _ "$WS"
}

# The attack: the agent makes a repository with a pre-commit hook, and
# agentrun is killed while the agent still runs.
t_kill_sandbox()
{
	local mode=$1 tag apid keeper root t0 t1 k
	sandbox_setup "$mode"
	tag=sb-$RANDOM$RANDOM
	root=$AR_ROOT
	[ "$mode" = root ] || root=$AR_USER_ROOT
	tagged "$mode" "$tag" "$AGENTRUN" --root "$root" sandbox --no-tty -- sh -c '
		git init -q evil && printf "#!/bin/sh\necho hook >>%s\n" "$1" >evil/.git/hooks/pre-commit &&
		chmod +x evil/.git/hooks/pre-commit && echo e >evil/e && touch ready && exec sleep 9872' _ "$MARK" \
		>"$TEST_TMP/sb.out" 2>"$TEST_TMP/sb.err" &
	wait_until 60 test -e "$WS/ready"
	apid=$(main_pid "$tag")
	keeper=$(tag_pids "$tag" agentrun-keep)
	[ -n "$apid" ] || fail "agentrun sandbox not found"
	[ -n "$keeper" ] || fail "no keeper process (agentrun-keep) beside agentrun sandbox"
	t0=$(date +%s%N)
	kill -KILL "$apid"
	# the agent dies with agentrun, then the keeper checks and leaves
	wait_until 10 no_pid pgrep -f "sleep 9872"
	echo "# agentrun $apid, keeper(s) $keeper"
	for k in $keeper; do
		wait_until 20 gone "$k"
	done
	wait_until 5 grep -q "ended before its sandbox" "$TEST_TMP/sb.err"
	t1=$(date +%s%N)
	echo "# the keeper's check finished $(((t1 - t0) / 1000000)) ms after the SIGKILL"
	# the user's next commit in the agent's repository runs nothing
	host sh -c 'cd "$1/evil" && git add e && git commit -qm e' _ "$WS" >/dev/null 2>&1 || true
	[ ! -e "$MARK" ] || fail "the host ran the hook the killed sandbox left: $(cat "$MARK"); agentrun said: $(cat "$TEST_TMP/sb.err")"
	[ ! -x "$WS/evil/.git/hooks/pre-commit" ] || fail "the hook is still armed"
	assert_contains "$(cat "$H"/.local/state/agentrun/quarantine/*/MANIFEST)" "$WS/evil/.git/hooks/pre-commit"
	# named where agentrun's stderr went
	assert_contains "$(cat "$TEST_TMP/sb.err")" "ended before its sandbox: its keeper"
	assert_contains "$(cat "$TEST_TMP/sb.err")" "evil/.git/hooks/pre-commit"
	# the agent's work stays
	assert_eq "$(cat "$WS/evil/e")" e
	# nothing mounted on the host, no process of the run
	! grep -qF "$WS" /proc/self/mountinfo || fail "a mount is left: $(grep -F "$WS" /proc/self/mountinfo)"
	wait_until 10 no_pid tag_pids "$tag" agentrun
	# the state: listed, then removed by delete
	assert_status 0 cr "$mode" list -q
	local id
	for id in $OUT; do
		assert_status 0 cr "$mode" delete --force "$id"
	done
	assert_status 0 cr "$mode" list -q
	assert_eq "$OUT" ""
}

for mode in root user; do
	run_test "faults ($mode): agentrun run killed: no process, no mount, delete cleans up" t_kill_run $mode
	run_test "faults ($mode): agentrun sandbox killed: the keeper neutralises the hook the agent left" t_kill_sandbox $mode
done
finish
