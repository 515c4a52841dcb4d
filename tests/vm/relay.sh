# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# vm_relay TAG FILE STATUS: print the TAP output (FILE) of tests that ran
# in a VM as results of this file, renumbered from VM_N + 1 and prefixed
# with [TAG]; other lines become comments. STATUS is what the VM's command
# exited with. A "Bail out!", fewer or more results than the plans in
# FILE announced, or a non-zero STATUS with no failure to show for it
# each add a failure: a VM run that stopped early never passes.
# Sourced by the host side of the VM tests (tests/integration/test_*_vm*.sh).

VM_N=${VM_N:-0}

vm_relay()
{
	local tag=$1 file=$2 status=$3 line result rest planned=0 ran=0 failed=0
	while IFS= read -r line; do
		case "$line" in
		"ok "* | "not ok "*)
			result=${line%% [0-9]*}
			rest=${line#"$result" }
			rest=${rest#* }
			rest=${rest#- }
			VM_N=$((VM_N + 1))
			ran=$((ran + 1))
			[ "$result" = ok ] || failed=$((failed + 1))
			echo "$result $VM_N - [$tag] $rest"
			;;
		"1..0"*)
			VM_N=$((VM_N + 1))
			echo "ok $VM_N - [$tag] all tests # SKIP ${line#*# SKIP }"
			;;
		"1.."[0-9]*)
			rest=${line#1..}
			planned=$((planned + ${rest%%[!0-9]*}))
			;;
		"Bail out!"*)
			VM_N=$((VM_N + 1))
			failed=$((failed + 1))
			rest=${line#Bail out!}
			echo "not ok $VM_N - [$tag] the tests in the VM bailed out: ${rest# }"
			;;
		*) echo "# [$tag] $line" ;;
		esac
	done <"$file"
	if [ "$planned" != "$ran" ]; then
		VM_N=$((VM_N + 1))
		failed=$((failed + 1))
		echo "not ok $VM_N - [$tag] the tests in the VM planned $planned results but gave $ran"
	fi
	if [ "$status" != 0 ] && [ "$failed" = 0 ]; then
		VM_N=$((VM_N + 1))
		echo "not ok $VM_N - [$tag] the tests in the VM exited with status $status"
	fi
}

# vm_kernel_said TAG OUTFILE CONSOLEFILE: when a result in OUTFILE failed,
# the guest kernel's own lines of its console (RUN_IN_VM_CONSOLE; not the
# init's progress marks) as comments: an OOM kill, a warning, a segfault
# say why a container stopped that the test expected running
vm_kernel_said()
{
	local tag=$1 out=$2 console=$3
	grep -q '^not ok ' "$out" 2>/dev/null && [ -s "$console" ] || return 0
	grep -v '^run-in-vm guest: ' "$console" | grep -v '^[[:space:]]*$' | tail -n 30 |
		sed "s/^/# [$tag] guest kernel: /"
}

# vm_not_run TAG ERRFILE: the failure of a VM that did not run the tests to
# their end (run-in-vm exit 125), with run-in-vm's reason in the result's
# own line (what a CI summary shows of it) and the rest of its stderr as
# comments: a guest kernel's hang report whole, else the stderr's end
vm_not_run()
{
	local tag=$1 err=$2 why
	VM_N=$((VM_N + 1))
	why=$(sed -n "s/^run-in-vm: \(the guest's kernel hung: .*\)/\1/p" "$err" | head -n 1)
	if [ -n "$why" ]; then
		echo "not ok $VM_N - [$tag] $why"
		sed -n "/^run-in-vm: the guest's kernel hung: /,\$p" "$err" | head -n 80 | sed 's/^/# /'
		return
	fi
	echo "not ok $VM_N - [$tag] the VM did not run the tests (run-in-vm exit 125)"
	sed 's/^/# /' "$err" | tail -n 30
}
