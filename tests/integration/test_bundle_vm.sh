#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The vm handler of plain OCI bundles (docs/vm.md, "Plain bundles"): a
# config.json with the annotation run.agentrun.handler=vm runs its process
# in a guest kernel, QEMU being the container's process. Four guest boots:
# `run` as root (the guest's kernel and processes, the bundle's mounts in
# order: binds read-write and read-only, the guest's own proc/sysfs/tmpfs,
# masked and read-only paths, a read-only root, the hostname, the exit
# status) with a guest root attacking the exports; `run` rootless (files
# the guest makes belong to the user); create/start/exec/kill/delete
# (exec runs in the guest: stdin, stderr, the status, its directory);
# podman with --annotation (run -d, exec, logs, stop, rm). Then the
# refusals, without a boot. Under TCG a boot takes 10-60 s on the loaded
# dev host. Skipped where QEMU, the guest kernel or busybox-static are
# missing (tests/vm/run-in-vm --check), or AGENTRUN_SKIP_VM=1.
. "$(dirname "$0")/../lib.sh"
# shellcheck source=../podman-lib.sh
. "$(dirname "$0")/../podman-lib.sh"

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$TOP_SRCDIR/tests/vm/run-in-vm" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"
require_root
require_cmd jq

# the helpers where the test user reaches them (the checkout may be private)
VMLIB=$TEST_TMP/vmlib
mkdir -p "$VMLIB"
cp "$TOP_SRCDIR/runtime/sandbox/vm/agentrun-vm" "$TOP_SRCDIR/runtime/sandbox/vm/vm-init.sh" "$VMLIB/"
chmod -R a+rX "$VMLIB"
NL=$'\n'

# vm_env USER: the environment of agentrun for a bundle of the handler:
# the helpers, a kernel cache of the test's own
vm_env()
{
	local cache=$TEST_TMP/vmcache-$1
	ensure_test_user
	mkdir -p "$cache"
	[ "$1" = root ] || chown "$TEST_UID:$TEST_GID" "$cache"
	VM_ENV=(AGENTRUN_VM_DIR="$VMLIB" XDG_CACHE_HOME="$cache")
}

# vmar ARGS: agentrun as root with VM_ENV; vmar_user: as the test user
vmar()
{
	env "${VM_ENV[@]}" "$AGENTRUN" --root "$AR_ROOT" "$@"
}
vmar_user()
{
	ar_user_prep
	as_test_user env "${VM_ENV[@]}" "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
}
ar_user_prep()
{
	ensure_test_user
	if [ ! -d "$AR_USER_ROOT" ]; then
		mkdir -p "$AR_USER_ROOT"
		chown "$TEST_UID:$TEST_GID" "$AR_USER_ROOT"
		chmod 0700 "$AR_USER_ROOT"
	fi
}

# vm_bundle DIR [--rootless]: a default bundle with the annotation
vm_bundle()
{
	if [ "${2:-}" = --rootless ]; then
		bundle_for 1 "$1"
	else
		bundle_for 0 "$1"
	fi
	config_set "$1" '.annotations["run.agentrun.handler"]="vm"'
}

# ---- run as root: what the command sees, what the guest's root can do ----
t_run_root()
{
	local b=$TEST_TMP/b-root id before after
	vm_env root
	vm_bundle "$b"
	mkdir -p "$TEST_TMP/data"
	echo host-data >"$TEST_TMP/data/f"
	echo "127.0.0.9 vm-test-host" >"$TEST_TMP/hosts"
	# a host process the guest must not see
	local marker=agentrun-bundle-vm-marker-$RANDOM$RANDOM
	(exec -a "$marker" sleep 300) &
	defer kill $!
	cat >"$b/rootfs/guest.sh" <<'EOS'
echo "init=$(tr '\0' ' ' </proc/1/cmdline)"
echo "host=$(hostname)"
echo "id=$(id -u):$(id -g)"
echo "cwd=$(pwd)"
echo "data=$(cat /data/f)"
echo "made in the guest" >/data/made && echo data-write-ok
echo "hosts=$(cat /etc/hosts)"
echo x 2>/dev/null >>/etc/hosts || echo hosts-ro
echo x 2>/dev/null >/root-write || echo root-ro
echo "kcore=$(wc -c </proc/kcore)"
echo "domain=$(cat /proc/sys/kernel/domainname)"
echo "pingrange=$(cat /proc/sys/net/ipv4/ping_group_range | tr -s ' \t' ' ')"
echo x 2>/dev/null >/proc/sys/kernel/hostname || echo procsys-ro
echo "sysfs=$(grep -c ' /sys sysfs ' /proc/mounts)"
echo "tmp=$(grep ' /run ' /proc/mounts | cut -d' ' -f3)"
echo "procs=$(cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\0' ' ')"
# the guest's root attacks the exports: the read-only root and the
# read-only file bind remounted read-write (the remounts succeed in the
# guest: the exports below them must refuse the writes), the 9p tags
# mounted again (a tag in use cannot be)
mount -o remount,rw / && echo remount-root-ok
echo pwned 2>/dev/null >/attack-root && echo attack-root-written
mount -o remount,bind,rw /etc/hosts && echo remount-hosts-ok
echo pwned 2>/dev/null >>/etc/hosts && echo attack-hosts-written
for t in root groot binds; do
	mkdir -p "/mnt/$t" && mount -t 9p -o trans=virtio,version=9p2000.L "$t" "/mnt/$t" 2>/dev/null &&
		echo "attack-tag-$t-mounted"
done
exit 3
EOS
	config_set "$b" '.process.args=["sh","/guest.sh"] | .process.cwd="/tmp" | .hostname="vm-bundle-host"
		| .linux.sysctl={"kernel.domainname":"vm-bundle-domain","net/ipv4/ping_group_range":"0 2147483647"}
		| .root.readonly=true | .process.capabilities=null
		| .mounts += [{"destination":"/data","type":"bind","source":"'"$TEST_TMP/data"'","options":["rbind","rw"]},
			{"destination":"/etc/hosts","type":"bind","source":"'"$TEST_TMP/hosts"'","options":["bind","ro"]},
			{"destination":"/run","type":"tmpfs","source":"tmpfs","options":["nosuid","nodev","mode=755"]}]'
	before=$(cd "$b/rootfs" && find . -printf '%p %s %m\n' | sort)
	id=$(unique_id)
	assert_status 3 vmar run -b "$b" "$id"
	assert_contains "$OUT" "init=/run/vm/busybox sh /run/vm/init stage2"
	assert_contains "$OUT" "host=vm-bundle-host"
	assert_contains "$OUT" "id=0:0"
	assert_contains "$OUT" "cwd=/tmp"
	assert_contains "$OUT" "data=host-data"
	assert_contains "$OUT" "data-write-ok"
	assert_contains "$OUT" "hosts=127.0.0.9 vm-test-host"
	assert_contains "$OUT" "hosts-ro"
	assert_contains "$OUT" "root-ro"
	assert_contains "$OUT" "kcore=0"
	# linux.sysctl: set in the guest's kernel
	assert_contains "$OUT" "domain=vm-bundle-domain"
	assert_contains "$OUT" "pingrange=0 2147483647"
	assert_contains "$OUT" "procsys-ro"
	assert_contains "$OUT" "sysfs=1"
	assert_contains "$OUT" "tmp=tmpfs"
	assert_not_contains "$OUT" "$marker"
	assert_not_contains "$OUT" "attack-"
	# the attacks got as far as the exports (the guest's remounts worked)
	assert_contains "$OUT" "remount-root-ok"
	assert_contains "$OUT" "remount-hosts-ok"
	assert_eq "$(cat "$TEST_TMP/data/made")" "made in the guest"
	assert_file_owner "$TEST_TMP/data/made" 0:0
	assert_eq "$(cat "$TEST_TMP/hosts")" "127.0.0.9 vm-test-host"
	# the bundle's root: nothing of the guest's, only the mount points
	# made as runc makes them (mount points that existed stay as they were)
	after=$(cd "$b/rootfs" && find . -printf '%p %s %m\n' | sort)
	assert_eq "$(diff <(echo "$before") <(echo "$after") | grep '^[<>]')" "> ./data 4096 755${NL}> ./etc/hosts 0 644"
	assert_status '!0' ar state "$id"
	assert_eq "$(leftover_procs "$b")" ""
}

# ---- rootless: the guest's files belong to the user ----------------------
t_run_rootless()
{
	local b=$TEST_TMP/b-user id
	vm_env user
	vm_bundle "$b" --rootless
	# the workspace annotation (hooks/) with the handler: its bind is
	# the guest's too
	mkdir -p "$TEST_TMP/uws"
	chown "$TEST_UID:$TEST_GID" "$TEST_TMP/uws"
	config_set "$b" '.root.readonly=false
		| .annotations["run.agentrun.workspace"]="'"$TEST_TMP/uws"':/work"
		| .process.args=["sh","-c","id -u; echo made >/tmp/made; echo ws >/work/made-ws; tr \"\\0\" \" \" </proc/1/cmdline; echo; exit 5"]'
	id=$(unique_id)
	assert_status 5 vmar_user run -b "$b" "$id"
	assert_contains "$OUT" "/run/vm/init stage2"
	assert_eq "$(cat "$b/rootfs/tmp/made")" made
	assert_file_owner "$b/rootfs/tmp/made" "$TEST_UID:$TEST_GID"
	assert_eq "$(cat "$TEST_TMP/uws/made-ws")" ws
	assert_file_owner "$TEST_TMP/uws/made-ws" "$TEST_UID:$TEST_GID"
}

# ---- create, start, exec, kill, delete -----------------------------------
t_exec()
{
	local b=$TEST_TMP/b-exec id
	vm_env root
	vm_bundle "$b"
	mkdir -p "$TEST_TMP/xdata"
	chmod 1777 "$TEST_TMP/xdata"
	# CAP_CHOWN and CAP_FOWNER (podman's default set has both): QEMU
	# gives the files the guest makes the owner the guest asks for
	# (without them, QEMU's own)
	config_set "$b" '.root.readonly=false
		| .process.capabilities.bounding += ["CAP_CHOWN","CAP_FOWNER"]
		| .process.capabilities.effective += ["CAP_CHOWN","CAP_FOWNER"]
		| .process.capabilities.permitted += ["CAP_CHOWN","CAP_FOWNER"]
		| .process.user.gid=5 | .process.user.additionalGids=[10,27]
		| .process.args=["sh","-c","id -G >/xdata/main-groups; echo started >/xdata/started; trap \"exit 0\" TERM; while :; do sleep 0.2; done"]
		| .mounts += [{"destination":"/xdata","type":"bind","source":"'"$TEST_TMP/xdata"'","options":["rbind"]}]'
	id=$(unique_id)
	assert_status 0 vmar create -b "$b" "$id"
	defer "$AGENTRUN" --root "$AR_ROOT" delete -f "$id"
	assert_eq "$(ar state "$id" | jq -r '.annotations["run.agentrun.handler"]')" vm
	# list shows the bundle's root, not QEMU's view
	assert_eq "$(ar list --format json | jq -r ".[] | select(.id == \"$id\") | .rootfs")" "$b/rootfs"
	assert_status 0 vmar start "$id"
	wait_until 300 test -s "$TEST_TMP/xdata/started" ||
		fail "the guest did not start the command"
	assert_status 4 vmar exec "$id" sh -c 'tr "\0" " " </proc/1/cmdline; echo; pwd; echo to-stderr >&2; exit 4'
	assert_contains "$OUT" "/run/vm/init stage2"
	assert_contains "$OUT" "$NL/"
	assert_eq "$ERR" "to-stderr"
	assert_status 0 vmar exec --cwd /xdata "$id" sh -c 'pwd; cat started'
	assert_eq "$OUT" "/xdata${NL}started"
	OUT=$(printf 'line1\nline2\n' | vmar exec "$id" sh -c 'cat; echo end') ||
		fail "exec with stdin failed"
	assert_eq "$OUT" "line1${NL}line2${NL}end"
	assert_status 127 vmar exec "$id" /no/such/program
	# another user: the guest runs the command as that user
	assert_status 0 vmar exec --user 1000:1001 "$id" sh -c 'id -u; id -g; id -G; echo x >/xdata/as-user'
	assert_eq "$OUT" "1000${NL}1001${NL}1001"
	assert_file_owner "$TEST_TMP/xdata/as-user" 1000:1001
	# the groups: process.user's gid and additionalGids reach the guest,
	# the command's (root's too) and an exec's (--process)
	assert_eq "$(cat "$TEST_TMP/xdata/main-groups")" "5 10 27"
	jq '.process | .args=["id","-G"] | .user={"uid":1000,"gid":1001,"additionalGids":[44,4294967294]}' \
		"$b/config.json" >"$TEST_TMP/exec-groups.json"
	assert_status 0 vmar exec --process "$TEST_TMP/exec-groups.json" "$id"
	assert_eq "$OUT" "1001 44 4294967294"
	assert_status 0 vmar kill "$id" TERM
	wait_until 60 status_is 0 "$id" stopped || fail "not stopped after SIGTERM"
	assert_status 0 vmar delete "$id"
	assert_eq "$(leftover_procs "$b")" ""
}

# ---- podman, the real client ---------------------------------------------
t_podman()
{
	local pmd=$TEST_TMP/podman c image=localhost/agentrun-test-busybox
	if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
		skip "podman/conmon not installed (contrib/install-deps.sh installs them)"
	fi
	vm_env root
	podman_setup "$pmd" && podman_import "$pmd" "$image" || fail "podman setup failed"
	assert_status 0 env "${VM_ENV[@]}" "$pmd/pm" run -d --cgroups=disabled --network=none \
		--annotation run.agentrun.handler=vm "$image" \
		sh -c 'echo started; trap "exit 0" TERM; while :; do sleep 0.2; done'
	c=$OUT
	defer "$pmd/pm" rm -f "$c"
	wait_until 300 sh -c "'$pmd/pm' logs '$c' 2>/dev/null | grep -q started" ||
		fail "the guest did not start: $("$pmd/pm" logs "$c" 2>&1)"
	assert_status 6 env "${VM_ENV[@]}" "$pmd/pm" exec "$c" sh -c 'tr "\0" " " </proc/1/cmdline; exit 6'
	assert_contains "$OUT" "/run/vm/init stage2"
	assert_status 0 env "${VM_ENV[@]}" "$pmd/pm" exec -e FOO=bar -w /tmp "$c" sh -c 'echo $FOO; pwd'
	assert_eq "$OUT" "bar${NL}/tmp"
	assert_status 0 "$pmd/pm" stop -t 30 "$c"
	assert_status 0 "$pmd/pm" inspect --format '{{.State.Status}}' "$c"
	assert_eq "$OUT" exited
	assert_status 0 "$pmd/pm" rm "$c"
}

# ---- refusals: no boot ---------------------------------------------------
t_refusals()
{
	local b=$TEST_TMP/b-ref id
	vm_env root
	vm_bundle "$b"
	config_set "$b" '.process.args=["sh","-c","echo RAN"]'
	id=$(unique_id)
	config_set "$b" '.annotations["run.agentrun.handler"]="krun"'
	assert_status '!0' vmar run -b "$b" "$id"
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" 'annotations["run.agentrun.handler"]: unknown handler `krun`'
	config_set "$b" '.annotations["run.agentrun.handler"]="vm"'
	# no usable helpers: the reason and the fix, never a run without the VM
	assert_status '!0' env AGENTRUN_VM_DIR=/nonexistent "$AGENTRUN" --root "$AR_ROOT" run -b "$b" "$id"
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" 'annotations["run.agentrun.handler"] = "vm": the helper scripts'
	assert_contains "$ERR" AGENTRUN_VM_DIR
	# what the guest cannot mount
	config_set "$b" '.mounts += [{"destination":"/o","type":"overlay","source":"overlay","options":["lowerdir=/a"]}]'
	assert_status '!0' vmar run -b "$b" "$id"
	assert_not_contains "$OUT" RAN
	assert_match "$ERR" 'mounts\[[0-9]+\]: type `overlay` at `/o` cannot be mounted in the guest'
	# a sysctl the guest's kernel does not have: the guest says which,
	# the command never runs
	config_set "$b" '.mounts |= map(select(.type != "overlay")) | .linux.sysctl={"kernel.no_such_knob":"1"}'
	assert_status '!0' vmar run -b "$b" "$id"
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "linux.sysctl: cannot set kernel.no_such_knob to '1'"
	# a name that leads out of /proc/sys: refused before any VM
	config_set "$b" '.linux.sysctl={"kernel/../../x":"1"}'
	assert_status '!0' vmar run -b "$b" "$id"
	assert_contains "$ERR" 'linux.sysctl["kernel/../../x"]: not a sysctl name'
	# no mount namespace
	config_set "$b" 'del(.linux.sysctl) | .linux.namespaces |= map(select(.type != "mount"))'
	assert_status '!0' vmar run -b "$b" "$id"
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "needs a mount namespace"
	assert_status '!0' ar state "$id"
	# without the annotation: the plain container, as before
	config_set "$b" '.linux.namespaces += [{"type":"mount"}] | del(.annotations["run.agentrun.handler"])'
	assert_status 0 vmar run -b "$b" "$id"
	assert_eq "$OUT" RAN
}

run_test "run as root: the guest's kernel, the bundle's mounts, masked/read-only paths, a read-only root; the guest's root cannot write the exports" t_run_root
run_test "run rootless: files the guest makes belong to the user, in the root and in the workspace annotation's bind" t_run_rootless
run_test "create/start/exec/kill/delete: exec runs in the guest (stdin, stderr, status, cwd, another user)" t_exec
run_test "podman --annotation run.agentrun.handler=vm: run -d, exec, stop, rm" t_podman
run_test "refusals: another handler, no helpers, a mount the guest cannot make, no mount namespace; no annotation runs as before" t_refusals

finish
