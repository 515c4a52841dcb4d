#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `agentrun sandbox --print-bundle` output runs unchanged under crun.
# crun does not run on the development host (its cgroup v1 layout), so
# this runs in a throwaway VM (tests/vm/run-in-vm, pure cgroup v2) as
# an unprivileged user (--user 1000): the sandbox writes the bundle, crun
# runs it, and the tests below check what the command saw and did. One VM
# boot for the whole file; skipped where run-in-vm --check says no VM can
# run here or crun is missing; a VM that does not run is a failure.
#
# Environment: RUN_IN_VM (default $TOP_SRCDIR/tests/vm/run-in-vm),
# AGENTRUN_SKIP_VM=1 to skip, VM_TIMEOUT (seconds, default the file's
# TEST_TIMEOUT less 30).
. "$(dirname "$0")/../lib.sh"

RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$RUN_IN_VM" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
command -v crun >/dev/null || skip "crun is not installed"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"

# The VM shares the current directory read-write at the same path; uid
# 1000 runs a copy of the binary from it (the build tree may be private).
VMDIR=$TEST_TMP/vm
mkdir -p "$VMDIR"
chmod 0777 "$VMDIR"
cp "$AGENTRUN" "$VMDIR/agentrun"
chmod 0755 "$VMDIR/agentrun"

# In the guest, as uid 1000: a git workspace and a home with a secret;
# the sandbox writes the bundle (it does not run anything), crun runs it.
cat >"$VMDIR/guest.sh" <<'EOF'
set -u
d=$1 agentrun=$2
[ -x "$agentrun" ] || { echo "agentrun-not-executable"; exit 0; }
export HOME=$d/home
mkdir -p "$HOME/.ssh" "$d/ws/.git"
echo PRIVATE-KEY-MATERIAL >"$HOME/.ssh/id_ed25519"
chmod 0600 "$HOME/.ssh/id_ed25519"
export FOO_TOKEN=secret-token-value
cd "$d/ws" || exit 1
"$agentrun" sandbox --no-tty --print-bundle "$d/bundle" -- sh -c '
	echo from-bundle
	echo uid=$(id -u)
	grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status
	umask 022; echo made >made-by-crun; mkdir dir-by-crun
	cat ~/.ssh/id_ed25519 2>/dev/null || echo no-secret-file
	echo "token=${FOO_TOKEN:-unset}"
	touch /usr/x 2>/dev/null && echo wrote-usr || echo usr-read-only
	echo cwd=$(pwd)' || { echo "print-bundle failed: $?"; exit 1; }
echo "print-bundle: ok"
cd "$d/bundle" || exit 1
crun --root "$d/crun-state" run "ar-crun-$$"
echo "crun-status=$?"
ls -ln "$d/ws" | sed -n 's/^\([^ ]*\) *[0-9]* *\([0-9]*\) *\([0-9]*\) .* \([^ ]*\)$/owner \4 \2:\3 \1/p'
EOF

VM_STATUS=0
(cd "$VMDIR" && "$RUN_IN_VM" --user 1000 --timeout "${VM_TIMEOUT:-$((${TEST_TIMEOUT:-300} - 30))}" \
	-- sh "$VMDIR/guest.sh" "$VMDIR" "$VMDIR/agentrun") \
	>"$TEST_TMP/vm.out" 2>"$TEST_TMP/vm.err" || VM_STATUS=$?
VM_OUT=$(cat "$TEST_TMP/vm.out")
case $VM_STATUS in
124 | 125)
	echo "# $(tail -n 20 "$TEST_TMP/vm.err")"
	fail "the VM did not run (run-in-vm exit $VM_STATUS): $(grep -m1 "^run-in-vm: the guest's kernel hung: " "$TEST_TMP/vm.err" ||
		tail -n 3 "$TEST_TMP/vm.err")" ;;
esac

vm_ok()
{
	assert_contains "$VM_OUT" "print-bundle: ok" \
		"guest: $VM_OUT / $(tail -5 "$TEST_TMP/vm.err")"
	assert_contains "$VM_OUT" "crun-status=0" \
		"crun: $(tail -5 "$TEST_TMP/vm.err")"
}

t_crun_runs_bundle()
{
	vm_ok
	assert_contains "$VM_OUT" from-bundle
	assert_contains "$VM_OUT" uid=1000
	assert_contains "$VM_OUT" "cwd=$VMDIR/ws"
}

t_crun_confinement()
{
	vm_ok
	assert_contains "$VM_OUT" "CapEff:	0000000000000000"
	assert_contains "$VM_OUT" "CapBnd:	0000000000000000"
	assert_contains "$VM_OUT" "NoNewPrivs:	1"
	assert_match "$VM_OUT" "Seccomp:[[:space:]]+2"
	assert_contains "$VM_OUT" no-secret-file
	assert_not_contains "$VM_OUT" PRIVATE-KEY-MATERIAL
	assert_contains "$VM_OUT" token=unset
	assert_contains "$VM_OUT" usr-read-only
}

t_crun_workspace_owner()
{
	vm_ok
	assert_contains "$VM_OUT" "owner made-by-crun 1000:1000 -rw-r--r--"
	assert_contains "$VM_OUT" "owner dir-by-crun 1000:1000 drwxr-xr-x"
	assert_eq "$(cat "$VMDIR/ws/made-by-crun")" made
}

run_test "crun runs the --print-bundle output unchanged" t_crun_runs_bundle
run_test "crun: no capabilities, NNP, seccomp, secrets hidden, /usr read-only" \
	t_crun_confinement
run_test "crun: workspace files belong to the user, with their mode" \
	t_crun_workspace_owner
finish
