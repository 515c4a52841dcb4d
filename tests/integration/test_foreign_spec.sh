#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The default configs of `crun spec`, `runc spec` and `agentrun spec`
# (and their --rootless variants) run unmodified: process.terminal true,
# args ["sh"] (told to exit on its terminal), ambient
# capabilities that are not in the inheritable set.
. "$(dirname "$0")/../lib.sh"

# t_spec_runs TOOL 0|1
t_spec_runs()
{
	local tool=$1 u=$2 b=$TEST_TMP/$1$2 id gen=()
	require_root
	[ "$tool" = agentrun ] || require_cmd "$tool"
	id=$(unique_id)
	mkdir -p "$b"
	make_rootfs "$b/rootfs"
	gen=("$tool" spec)
	[ "$tool" = agentrun ] && gen=("$AGENTRUN" spec)
	[ "$u" = 1 ] && gen+=(--rootless)
	if [ "$u" = 1 ]; then
		require_subids
		require_agentrun_as_test_user
		chown -hR "$TEST_UID:$TEST_GID" "$b"
		(cd "$b" && as_test_user "${gen[@]}") || fail "${gen[*]} failed"
	else
		(cd "$b" && "${gen[@]}") || fail "${gen[*]} failed"
	fi
	[ "$tool" = agentrun ] ||
		assert_eq "$(config_get "$b" '.process.terminal')" true
	defer arr "$u" delete --force "$id"
	[ "$u" = 1 ] && ar_user list >/dev/null # creates AR_USER_ROOT
	local runner=("$AGENTRUN" --root "$AR_ROOT")
	[ "$u" = 1 ] && runner=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID"
		--init-groups env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin
		HOME="$TEST_HOME" XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR"
		"$AGENTRUN" --root "$AR_USER_ROOT")
	# "exit" typed again and again: a line typed before the shell set
	# up its terminal may be flushed
	cd "$b"
	set +o pipefail
	(while sleep 0.2; do echo "exit 0" 2>/dev/null || exit 0; done) |
		timeout 60 "${runner[@]}" run "$id" >"$TEST_TMP/out" 2>&1
	STATUS=${PIPESTATUS[1]}
	set -o pipefail
	assert_eq "$STATUS" 0 "the unmodified '${gen[*]}' config does not run: $(cat "$TEST_TMP/out")"
}

# The ambient set of crun's/runc's spec is not in inheritable: the process
# starts, without those ambient capabilities (as crun and runc).
t_ambient_not_inheritable()
{
	require_root
	local b=$TEST_TMP/amb id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.capabilities.inheritable=[] | .process.capabilities.ambient=["CAP_KILL","CAP_NET_BIND_SERVICE"] | .process.args=["sh","-c","grep -E \"^Cap(Amb|Prm):\" /proc/self/status"]'
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_match "$(grep CapAmb <<<"$OUT")" "CapAmb:[[:space:]]+0+$"
	# a non-root user keeps only what the kernel let into ambient
	id=$(unique_id)
	config_set "$b" '.process.user={"uid":1000,"gid":1000} | .process.capabilities.inheritable=["CAP_KILL"]'
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_match "$(grep CapAmb <<<"$OUT")" "CapAmb:[[:space:]]+0+20$" "CAP_KILL (bit 5) only"
	assert_match "$(grep CapPrm <<<"$OUT")" "CapPrm:[[:space:]]+0+20$" "CAP_KILL (bit 5) only"
}

run_test "crun spec runs unmodified" t_spec_runs crun 0
run_test "runc spec runs unmodified" t_spec_runs runc 0
run_test "agentrun spec runs unmodified" t_spec_runs agentrun 0
run_test "rootless: crun spec --rootless runs unmodified" t_spec_runs crun 1
run_test "rootless: runc spec --rootless runs unmodified" t_spec_runs runc 1
run_test "rootless: agentrun spec --rootless runs unmodified" t_spec_runs agentrun 1
run_test "ambient capabilities not in inheritable are not raised" t_ambient_not_inheritable
finish
