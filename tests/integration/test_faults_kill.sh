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
		grep -qsFz "FAULT_TAG=$1" "/proc/$pp/environ" &&
			[ "$(cat "/proc/$pp/comm" 2>/dev/null)" = agentrun ] || echo "$p"
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
	# a key git runs a command from: the config is shown as a filtered
	# copy in a private directory of /tmp, which the keeper removes too
	printf '[credential]\n\thelper = store-%s\n' "$tag" >>"$H/.gitconfig"
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
	# no filtered git config copy left in /tmp (every killed run left
	# one before)
	assert_eq "$(grep -ls -- "store-$tag" /tmp/agentrun-git-*/* || true)" "" \
		"the run's filtered git config copy is left"
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

# -- agentrun and its keeper killed together ----------------------------
#
# The agent makes a repository with a pre-commit hook and a
# core.fsmonitor in its config (both run by the host's next git command
# there), then agentrun is killed the way a shell, a terminal or the
# kernel kills a whole job:
#   group: `kill -9 -- -PGID` of agentrun's process group: the keeper,
#          in a session of its own, is not in it and checks;
#   hup:   the terminal agentrun runs in is closed (SIGHUP to its
#          session): same;
#   both:  agentrun and its keeper SIGKILLed at once (what the OOM killer
#          or a cgroup kill does): nothing can check then; the run's
#          record (run_record.h) makes the next `agentrun sandbox` start
#          of the user check it first, and say so.

# planted MODE: what the agent left is harmless to the host's git, and
# was neutralised by a check (quarantine MANIFEST)
planted_neutralised()
{
	host sh -c 'cd "$1/evil" && git add e && git commit -qm e; git status >/dev/null' _ "$WS" >/dev/null 2>&1 || true
	[ ! -e "$MARK" ] || fail "the host ran what the killed sandbox left: $(cat "$MARK")"
	[ ! -x "$WS/evil/.git/hooks/pre-commit" ] || fail "the hook is still armed"
	! git config -f "$WS/evil/.git/config" core.fsmonitor >/dev/null ||
		fail "core.fsmonitor is still set: $(cat "$WS/evil/.git/config")"
	assert_contains "$(cat "$H"/.local/state/agentrun/quarantine/*/MANIFEST)" "$WS/evil/.git/hooks/pre-commit"
	assert_eq "$(cat "$WS/evil/e")" e
}

# start_agent MODE TAG [WRAPPER...]: agentrun sandbox as MODE (through
# WRAPPER: setsid, a terminal...) whose agent plants the hook and the
# fsmonitor, then waits; returns once the agent is ready
# kill_tag TAG: what a failed test left of the run it started (its
# agentrun, keeper and terminal, by their tag); the agent dies with them
kill_tag()
{
	local p
	for p in $(tag_pids "$1" agentrun) $(tag_pids "$1" agentrun-keep) $(tag_pids "$1" script); do
		kill -KILL "$p" 2>/dev/null || true
	done
}

# The agent also marks its repository's directories as placeholders
# (the xattr a placeholder carries, naming the directory itself): the
# check of a killed run at the next start leaves a leftover placeholder's
# content alone, and must not take these for one.
FORGE_MARK='
import os, sys
for d in sys.argv[1:]:
    st = os.stat(d)
    os.setxattr(d, "user.agentrun.placeholder", b"%d:%d" % (st.st_dev, st.st_ino))'

start_agent()
{
	local mode=$1 tag=$2 root=$AR_ROOT
	shift 2
	defer kill_tag "$tag"
	[ "$mode" = root ] || root=$AR_USER_ROOT
	tagged "$mode" "$tag" "$@" "$AGENTRUN" --root "$root" sandbox --no-tty -- sh -c '
		git init -q evil && printf "#!/bin/sh\necho hook >>%s\n" "$1" >evil/.git/hooks/pre-commit &&
		chmod +x evil/.git/hooks/pre-commit && git -C evil config core.fsmonitor "echo fsmonitor >>$1; false" &&
		{ python3 -c "$2" evil/.git/hooks evil/.git evil 2>/dev/null || true; } &&
		echo e >evil/e && touch ready && exec sleep 9874' _ "$MARK" "$FORGE_MARK" \
		>"$TEST_TMP/sb-$tag.out" 2>"$TEST_TMP/sb-$tag.err" &
	wait_until 60 test -e "$WS/ready"
}

pgid_of()
{
	awk '{sub(/^.*\) /, ""); print $3}' "/proc/$1/stat"
}

sid_of()
{
	awk '{sub(/^.*\) /, ""); print $4}' "/proc/$1/stat"
}

# after the keeper's check: nothing of the run left, no record of it
run_gone()
{
	local tag=$1 k
	wait_until 10 no_pid pgrep -f "sleep 9874"
	for k in $(tag_pids "$tag" agentrun-keep); do
		wait_until 20 gone "$k"
	done
	wait_until 10 no_pid tag_pids "$tag" agentrun
	wait_until 10 no_pid tag_pids "$tag" agentrun-keep
	! grep -qF "$WS" /proc/self/mountinfo || fail "a mount is left: $(grep -F "$WS" /proc/self/mountinfo)"
}

no_record()
{
	local left
	left=$(ls -A "$H/.local/state/agentrun/unchecked" 2>/dev/null || true)
	assert_eq "$left" "" "records of runs left in $H/.local/state/agentrun/unchecked"
}

delete_all()
{
	local id
	assert_status 0 cr "$1" list -q
	for id in $OUT; do
		assert_status 0 cr "$1" delete --force "$id"
	done
}

t_kill_group()
{
	local mode=$1 tag apid keeper pgid
	sandbox_setup "$mode"
	tag=grp-$RANDOM$RANDOM
	start_agent "$mode" "$tag" setsid
	apid=$(main_pid "$tag")
	keeper=$(tag_pids "$tag" agentrun-keep)
	[ -n "$apid" ] || fail "agentrun sandbox not found"
	[ -n "$keeper" ] || fail "no keeper process (agentrun-keep)"
	pgid=$(pgid_of "$apid")
	# the group is agentrun's own (setsid), never this test's
	[ "$pgid" != "$(pgid_of $$)" ] && [ "$pgid" -gt 1 ] || fail "agentrun is in the test's process group"
	echo "# agentrun $apid: group $pgid, session $(sid_of "$apid"); keeper $keeper: group $(pgid_of "$keeper"), session $(sid_of "$keeper")"
	kill -KILL -- "-$pgid"
	run_gone "$tag"
	planted_neutralised
	wait_until 5 grep -q "ended before its sandbox" "$TEST_TMP/sb-$tag.err"
	no_record
	delete_all "$mode"
}

t_kill_hup()
{
	local mode=$1 tag apid keeper spid launch
	require_cmd script
	sandbox_setup "$mode"
	tag=hup-$RANDOM$RANDOM
	# script(1): a terminal of its own, agentrun in its session; killing
	# script closes the terminal (a hangup: SIGHUP to the session)
	launch=$H/in-tty-$tag
	printf '%s\n' '#!/bin/bash' 'SHELL=/bin/bash exec script -qec "$(printf "%q " "$@")" /dev/null' >"$launch"
	chmod 0755 "$launch"
	start_agent "$mode" "$tag" "$launch"
	apid=$(main_pid "$tag")
	keeper=$(tag_pids "$tag" agentrun-keep)
	[ -n "$apid" ] || fail "agentrun sandbox not found"
	[ -n "$keeper" ] || fail "no keeper process (agentrun-keep)"
	spid=$(tag_pids "$tag" script)
	[ -n "$spid" ] || fail "script(1) not found"
	[ "$(sid_of "$apid")" != "$(sid_of $$)" ] || fail "agentrun is in the test's session"
	kill -KILL "$spid"
	run_gone "$tag"
	planted_neutralised
	no_record
	delete_all "$mode"
}

t_kill_both()
{
	local mode=$1 tag apid keeper out
	sandbox_setup "$mode"
	tag=both-$RANDOM$RANDOM
	start_agent "$mode" "$tag"
	apid=$(main_pid "$tag")
	keeper=$(tag_pids "$tag" agentrun-keep)
	[ -n "$apid" ] || fail "agentrun sandbox not found"
	[ -n "$keeper" ] || fail "no keeper process (agentrun-keep)"
	# both: nothing of the run is left to check. The keeper first: with
	# agentrun first, a test preempted between the two kills (a loaded
	# machine) let the keeper see agentrun gone and check (the flake
	# budget met "the hook is gone already" once); a keeper killed while
	# agentrun lives has not started anything
	kill -KILL $keeper
	kill -KILL "$apid"
	run_gone "$tag"
	[ -x "$WS/evil/.git/hooks/pre-commit" ] || fail "the hook is gone already: the test did not kill the keeper in time"
	# the user's next sandbox (anywhere) checks the run first
	rm -f "$WS/ready"
	assert_status 0 sb_run -- true
	echo "# $(grep -F 'earlier run' <<<"$ERR" || true)"
	planted_neutralised
	assert_contains "$ERR" "an earlier run on \`$WS\`"
	assert_contains "$ERR" "ended without its end-of-run check"
	assert_contains "$ERR" "evil/.git/hooks/pre-commit"
	no_record
	# and only once
	assert_status 0 sb_run -- true
	assert_not_contains "$ERR" "earlier run"
	delete_all "$mode"
}

# a run that ends well leaves no keeper and no record
t_no_leak()
{
	local mode=$1 tag
	sandbox_setup "$mode"
	tag=ok-$RANDOM$RANDOM
	assert_status 0 tagged "$mode" "$tag" "$AGENTRUN" --root "$( [ "$mode" = root ] && echo "$AR_ROOT" || echo "$AR_USER_ROOT")" sandbox --no-tty -- true
	no_pid tag_pids "$tag" agentrun-keep || fail "a keeper outlived its run: $(tag_pids "$tag" agentrun-keep)"
	no_record
}

# the OOM killer: the agent's score is raised (an unprivileged process
# may raise a score, never lower it), so memory pressure takes the agent
# before agentrun and its keeper
t_oom()
{
	sandbox_setup "$1"
	assert_status 0 sb_run -- cat /proc/self/oom_score_adj
	assert_eq "$OUT" 500
}

for mode in root user; do
	run_test "faults ($mode): the agent's oom_score_adj is raised above agentrun's" t_oom $mode
	run_test "faults ($mode): agentrun run killed: no process, no mount, delete cleans up" t_kill_run $mode
	run_test "faults ($mode): agentrun sandbox killed: the keeper neutralises the hook the agent left" t_kill_sandbox $mode
	run_test "faults ($mode): kill -9 of agentrun's process group: the keeper, in its own session, checks" t_kill_group $mode
	run_test "faults ($mode): agentrun's terminal closed (SIGHUP): the run is checked" t_kill_hup $mode
	run_test "faults ($mode): agentrun and its keeper killed at once: the next start checks the run" t_kill_both $mode
	run_test "faults ($mode): a run that ends leaves no keeper and no record" t_no_leak $mode
done
finish
