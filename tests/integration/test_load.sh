#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Load (issue 9): LOAD_CONTAINERS containers (default 200) through
# LOAD_WORKERS concurrent workers (default 8) against one --root, while
# `list` and `state` are hammered concurrently. Half the containers go
# through `run` (their exit code must come back exactly), half through
# create/start/state/kill/delete. Afterwards: no state left, no process
# left, no new host mount, no worker error, every `list --format json`
# output valid JSON and every `state` output valid JSON with a known
# status; no file descriptor of any process (the test's shells included)
# left pointing into the test's directory, and the test shell holds no
# more fds than before.
. "$(dirname "$0")/../lib.sh"

LOAD_CONTAINERS=${LOAD_CONTAINERS:-200}
LOAD_WORKERS=${LOAD_WORKERS:-8}

# File descriptors of any process, other than the test's own output
# log, that point into TEST_TMP (a leaked state dir, fifo, bundle file).
leftover_fds()
{
	find /proc/[0-9]*/fd -mindepth 1 -maxdepth 1 -lname "$TEST_TMP/*" \
		-printf '%p -> %l\n' 2>/dev/null | grep -vF "$TEST_TMP/.log." || true
}

state_dirs()
{
	ls -A "$AR_ROOT" 2>/dev/null | grep -vx '.seccomp-cache' || true
}

# worker W: containers W, W+WORKERS, ... ; errors to $LOAD/err.W
worker()
{
	local w=$1 i id b code rc st
	for ((i = w; i < LOAD_CONTAINERS; i += LOAD_WORKERS)); do
		id=load-$$-$i
		b=$LOAD/b$i
		mkdir -p "$b"
		code=$((i % 120))
		if ((i % 2 == 0)); then
			jq --arg s "exit $code" '.process.args=["sh","-c",$s]' \
				"$LOAD/config.json" >"$b/config.json"
			rc=0
			timeout 60 env AR_LOAD_TAG="$LOAD_TAG" "$AGENTRUN" --root "$AR_ROOT" run --bundle "$b" \
				"$id" </dev/null >/dev/null 2>"$b/err" || rc=$?
			[ "$rc" = "$code" ] ||
				echo "$id: run exit $rc, expected $code: $(cat "$b/err")"
		else
			jq '.process.args=["sleep","1000"]' "$LOAD/config.json" \
				>"$b/config.json"
			timeout 60 env AR_LOAD_TAG="$LOAD_TAG" "$AGENTRUN" --root "$AR_ROOT" create --bundle "$b" \
				"$id" </dev/null >/dev/null 2>"$b/err" ||
				{ echo "$id: create failed: $(cat "$b/err")"; continue; }
			st=$(timeout 30 "$AGENTRUN" --root "$AR_ROOT" state "$id" | jq -r .status)
			[ "$st" = created ] || echo "$id: status after create: $st"
			timeout 60 "$AGENTRUN" --root "$AR_ROOT" start "$id" 2>"$b/err" ||
				echo "$id: start failed: $(cat "$b/err")"
			st=$(timeout 30 "$AGENTRUN" --root "$AR_ROOT" state "$id" | jq -r .status)
			[ "$st" = running ] || echo "$id: status after start: $st"
			timeout 30 "$AGENTRUN" --root "$AR_ROOT" kill "$id" KILL 2>"$b/err" ||
				echo "$id: kill failed: $(cat "$b/err")"
			for _ in $(seq 100); do
				st=$(timeout 30 "$AGENTRUN" --root "$AR_ROOT" state "$id" | jq -r .status)
				[ "$st" = stopped ] && break
				sleep 0.1
			done
			[ "$st" = stopped ] || echo "$id: not stopped after kill: $st"
			timeout 60 "$AGENTRUN" --root "$AR_ROOT" delete "$id" 2>"$b/err" ||
				echo "$id: delete failed: $(cat "$b/err")"
		fi
		rm -rf "$b"
	done >"$LOAD/err.$w" 2>&1
}

# hammer: list and state of random ids until $LOAD/stop exists.
hammer()
{
	local n=0 out i st
	while [ ! -e "$LOAD/stop" ]; do
		n=$((n + 1))
		sleep 0.02 # hammer, but leave the 2 cores to the workers too
		out=$("$AGENTRUN" --root "$AR_ROOT" list --format json 2>&1) ||
			echo "list failed: $out"
		jq -e 'type == "array"' <<<"$out" >/dev/null 2>&1 ||
			echo "list printed invalid JSON: ${out:0:300}"
		i=$((RANDOM % LOAD_CONTAINERS))
		if out=$("$AGENTRUN" --root "$AR_ROOT" state "load-$$-$i" 2>&1); then
			st=$(jq -r .status <<<"$out" 2>/dev/null) ||
				echo "state printed invalid JSON: ${out:0:300}"
			case "$st" in
			creating|created|running|stopped|paused) ;;
			*) echo "state: unknown status '$st': ${out:0:300}" ;;
			esac
		else
			# Only "does not exist" is expected (not yet made, or
			# deleted meanwhile).
			case "$out" in
			*"does not exist"*) ;;
			*) echo "state failed: $out" ;;
			esac
		fi
	done >"$LOAD/hammer.$1" 2>&1
	echo "$n" >"$LOAD/hammer-count.$1"
}

t_load()
{
	require_root
	local w mounts_before mounts_after errs t0 secs hammered fds_before
	LOAD=$TEST_TMP/load
	LOAD_TAG=$$-$RANDOM
	mkdir -p "$LOAD"
	make_bundle "$LOAD/base"
	# One shared read-only rootfs; a bundle per container holds only
	# its config.json.
	jq --arg r "$LOAD/base/rootfs" --arg t "AR_LOAD_TAG=$LOAD_TAG" \
		'.root={path:$r,readonly:true} | .process.terminal=false |
		 .process.env += [$t]' \
		"$LOAD/base/config.json" >"$LOAD/config.json"
	mounts_before=$(host_mounts)
	fds_before=$(ls /proc/$BASHPID/fd | wc -l)
	[ -z "$(leftover_fds)" ] || fail "fds into TEST_TMP before the test: $(leftover_fds)"
	t0=$(date +%s)
	hammer 1 &
	hammer 2 &
	for ((w = 0; w < LOAD_WORKERS; w++)); do
		worker "$w" &
	done
	# Wait for the workers (the hammers are the first two jobs).
	wait $(jobs -p | tail -n +3)
	touch "$LOAD/stop"
	wait
	secs=$(($(date +%s) - t0))
	hammered=$(cat "$LOAD"/hammer-count.* | awk '{ s += $1 } END { print s }')
	echo "# $LOAD_CONTAINERS containers, $LOAD_WORKERS workers: ${secs}s; $hammered list+state rounds"
	errs=$(cat "$LOAD"/err.* "$LOAD"/hammer.[0-9]* 2>/dev/null | head -n 40)
	[ -z "$errs" ] || fail "errors under load:
$errs"
	[ -z "$(state_dirs)" ] || fail "state left in --root: $(state_dirs | head)"
	wait_no_leftover_procs "$AR_ROOT" "AR_LOAD_TAG=$LOAD_TAG"
	[ -z "$(leftover_fds)" ] || fail "fds left into TEST_TMP: $(leftover_fds | head)"
	assert_eq "$(ls /proc/$BASHPID/fd | wc -l)" "$fds_before" \
		"fds of the test shell"
	mounts_after=$(host_mounts)
	if [ "$mounts_before" != "$mounts_after" ]; then
		local new
		new=$(diff <(echo "$mounts_before") <(echo "$mounts_after") | grep '^>' || true)
		[ -z "$new" ] || fail "new host mounts: $new"
	fi
}

run_test "load: $LOAD_CONTAINERS containers, $LOAD_WORKERS workers, list/state hammered" t_load
finish
