#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The VM harness and a state root on 9p, in throwaway VMs
# (tests/vm/run-in-vm):
#   - `run-in-vm --self-test` (what tests/vm/README.md promises: pure cgroup
#     v2 with working controllers, the overlay root, the share, loopback
#     only, the delegated --user, status, stderr and the timeout), its
#     results relayed with the prefix [self-test];
#   - a state root on the VM's 9p share, a filesystem without
#     renameat2(RENAME_NOREPLACE) nor FIFOs: run; create fails with a
#     clear error; a second run -d of an id that exists, concurrent
#     run -d of one id (exactly one wins), delete.
# Skipped only where run-in-vm --check says no VM can run here.
#
# Environment: RUN_IN_VM (default $TOP_SRCDIR/tests/vm/run-in-vm),
# AGENTRUN_SKIP_VM=1 skips.
. "$(dirname "$0")/../lib.sh"

RUN_IN_VM=${RUN_IN_VM:-$TOP_SRCDIR/tests/vm/run-in-vm}
[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$RUN_IN_VM" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
require_cmd jq

# ---- the self-test, relayed
N=0
SELF_RC=0
TMPDIR=$TEST_TMP "$RUN_IN_VM" --self-test --timeout 200 >"$TEST_TMP/self.out" 2>"$TEST_TMP/self.err" ||
	SELF_RC=$?
while IFS= read -r line; do
	case $line in
	"ok - "* | "not ok - "*)
		N=$((N + 1))
		echo "${line%% - *} $N - [self-test] ${line#* - }"
		;;
	*) echo "# [self-test] $line" ;;
	esac
done <"$TEST_TMP/self.out"
sed 's/^/# [self-test] stderr: /' "$TEST_TMP/self.err" | tail -n 20
if [ "$N" = 0 ]; then
	N=$((N + 1))
	echo "not ok $N - [self-test] run-in-vm --self-test printed no results (exit $SELF_RC)"
fi
_AR_N=$N

# ---- a state root on 9p
# The share: the bundle (a static busybox), a copy of the binary, the
# guest script; the state roots are made in the share by the guest.
SHARE=$TEST_TMP/share
mkdir -p "$SHARE/bundle/rootfs/bin"
cp "$(command -v busybox)" "$SHARE/bundle/rootfs/bin/busybox"
cp "$AGENTRUN" "$SHARE/agentrun"
"$AGENTRUN" spec --bundle "$SHARE/bundle" >/dev/null
config_set "$SHARE/bundle" '.process.args=["/bin/busybox","echo","ran-on-9p"] | .process.terminal=false'
cat >"$SHARE/guest.sh" <<'EOF'
ar() { ./agentrun --root "$PWD/state" "$@"; }
echo "fstype: $(awk -v d="$PWD" '$2 == d { print $3 }' /proc/mounts)"
mkdir state
ar run --bundle bundle first
echo "run-status: $?"
ar create --bundle bundle made-by-create 2>create.err
echo "create-status: $?"
echo "create-error: $(cat create.err)"
ar run -d --bundle bundle dup >/dev/null 2>&1
echo "run-d-status: $?"
ar run -d --bundle bundle dup 2>run2.err
echo "run-d2-status: $?"
echo "run-d2-error: $(cat run2.err)"
ar delete --force dup
for i in 1 2 3 4 5 6; do
	(ar run -d --bundle bundle race >/dev/null 2>&1; echo "race-status $?") >race.$i &
done
wait
cat race.*
echo "race-listed: $(ar list -q | grep -c '^race$')"
ar delete --force race
echo "left: $(ls state | tr '\n' ' ')"
EOF
VM_RC=0
(cd "$SHARE" && "$RUN_IN_VM" --timeout 150 -- sh guest.sh) >"$TEST_TMP/9p.out" 2>"$TEST_TMP/9p.err" ||
	VM_RC=$?
OUT=$(cat "$TEST_TMP/9p.out")
sed 's/^/# [9p] /' "$TEST_TMP/9p.out"
sed 's/^/# [9p] stderr: /' "$TEST_TMP/9p.err" | tail -n 20

t_vm_ran()
{
	assert_eq "$VM_RC" 0 "run-in-vm exit status"
	assert_contains "$OUT" "fstype: 9p"
}

t_run_on_9p()
{
	assert_contains "$OUT" "ran-on-9p"
	assert_contains "$OUT" "run-status: 0"
}

t_create_on_9p()
{
	assert_contains "$OUT" "create-status: 1"
	assert_contains "$OUT" "create-error: agentrun: create the exec fifo in the state directory \`$SHARE/state/made-by-create\` (\`create\` needs a filesystem that holds FIFOs"
}

t_exists_on_9p()
{
	assert_contains "$OUT" "run-d-status: 0"
	assert_contains "$OUT" "run-d2-status: 1"
	assert_contains "$OUT" "run-d2-error: agentrun: container \`dup\` already exists"
}

t_race_on_9p()
{
	assert_eq "$(grep -c '^race-status 0$' <<<"$OUT")" 1 "runs of one id that succeeded"
	assert_eq "$(grep -c '^race-status 1$' <<<"$OUT")" 5 "runs of one id that failed"
	assert_contains "$OUT" "race-listed: 1"
	assert_eq "$(grep '^left:' <<<"$OUT")" "left: " "state directories left"
}

run_test "[9p] the VM ran the state test on its 9p share" t_vm_ran
run_test "[9p] agentrun run with its state root on 9p (no RENAME_NOREPLACE)" t_run_on_9p
run_test "[9p] create with its state root on 9p: a clear error (no FIFO there)" t_create_on_9p
run_test "[9p] a second run -d of an id on 9p: 'already exists'" t_exists_on_9p
run_test "[9p] six concurrent run -d of one id on 9p: exactly one wins" t_race_on_9p
finish
