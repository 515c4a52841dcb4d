#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The last steps before execve: the seccomp filter comes after the
# runtime's own calls (chdir, getcwd, the executable lookup, fd cleanup),
# so a profile that denies them still runs the container's program.
. "$(dirname "$0")/../lib.sh"

# deny_profile NAMES...: allow everything, EPERM for NAMES
deny_profile()
{
	jq -n --args '{defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_AARCH64"], syscalls: [{names: $ARGS.positional, action: "SCMP_ACT_ERRNO"}]}' "$@"
}

t_seccomp_denies_runtime_calls()
{
	local u=$1 b=$TEST_TMP/sc$1 id nnp prof
	bundle_for "$u" "$b"
	for nnp in false true; do
		prof=$(deny_profile getcwd)
		# with no_new_privileges the filter is the very last step:
		# deny more of what the runtime itself calls
		[ "$nnp" = true ] && prof=$(deny_profile getcwd close_range \
			faccessat faccessat2 access newfstatat stat keyctl \
			landlock_create_ruleset landlock_restrict_self)
		config_set "$b" '.process.noNewPrivileges=($n == "true") | .linux.seccomp=$p | .process.cwd="/tmp" | .process.args=["/bin/echo","ran"]' \
			--arg n "$nnp" --argjson p "$prof"
		id=$(unique_id)
		defer arr "$u" delete --force "$id"
		assert_status 0 arr "$u" run --bundle "$b" "$id"
		assert_eq "$OUT" ran "noNewPrivileges=$nnp"
	done
	# exec: the same order
	config_set "$b" '.process.args=["sleep","1000"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --detach --bundle "$b" "$id"
	assert_status 0 arr "$u" exec --cwd /tmp "$id" /bin/echo exec-ran
	assert_eq "$OUT" exec-ran
}

run_test "seccomp denying getcwd and others the runtime uses: the program runs" t_seccomp_denies_runtime_calls 0
run_test "rootless: seccomp denying the runtime's calls: the program runs" t_seccomp_denies_runtime_calls 1
finish
