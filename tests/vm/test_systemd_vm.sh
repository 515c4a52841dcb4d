#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The systemd cgroup manager (runtime/lib/cgroup_systemd.c) against a real
# systemd: runs INSIDE `tests/vm/run-in-vm --systemd` (systemd is PID 1,
# pure cgroup v2), as root; tests/integration/test_systemd_vm.sh starts
# it. Root and rootless (the test user's systemd instance, user@UID.service
# started here; its commands run in that instance through
# `systemd-run --user`): `agentrun --systemd-cgroup run -d` makes the
# transient scope prefix-name.scope in the slice, with the memory limit
# in systemd's MemoryMax and the scope's memory.max, and `delete` removes
# the unit; podman with cgroup_manager = "systemd" drives agentrun the
# same way (run --memory, systemctl status of its scope, stop).
. "$(dirname "$0")/../lib.sh"

[ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] ||
	skip "systemd is not PID 1 (run tests/integration/test_systemd_vm.sh)"
[ "$(id -u)" = 0 ] || skip "needs root (starts the user's systemd)"
[ -n "${ENGINES_ROOTFS_TAR:-}" ] && [ -r "$ENGINES_ROOTFS_TAR" ] ||
	skip "ENGINES_ROOTFS_TAR (a busybox rootfs tarball) is not set"

T0=$(date +%s)
echo "guest uptime at the start: $(cut -d' ' -f1 /proc/uptime) s"
W=$TEST_TMP/sd
mkdir -p "$W"
chmod 0755 "$TEST_TMP" "$W"
mkdir -p "$W/rootfs"
tar -C "$W/rootfs" -xf "$ENGINES_ROOTFS_TAR" || {
	echo "Bail out! cannot unpack $ENGINES_ROOTFS_TAR"
	exit 1
}

# Docker with native.cgroupdriver=systemd, started now in the background
# (minutes under emulation): containerd, then dockerd with the shipped
# contrib/docker/daemon.json plus the systemd driver, agentrun through a
# wrapper that logs its argv. $DW/up gets 1 once the image is imported.
start_docker()
{
	local dw=$W/docker
	mkdir -p "$dw/bin"
	printf '#!/bin/sh\necho "$*" >>"%s"\nexec "%s" "$@"\n' "$dw/calls.log" "$AGENTRUN" >"$dw/bin/agentrun"
	chmod 0755 "$dw/bin/agentrun"
	sed "s|/usr/local/bin/agentrun|$dw/bin/agentrun|" "$TOP_SRCDIR/contrib/docker/daemon.json" |
		jq '. + {"exec-opts": ["native.cgroupdriver=systemd"]}' >"$dw/daemon.json"
	containerd >"$dw/containerd.log" 2>&1 &
	(
		for _ in $(seq 600); do
			[ -S /run/containerd/containerd.sock ] && break
			sleep 0.2
		done
		dockerd --config-file "$dw/daemon.json" --bridge=none --iptables=false \
			--ip6tables=false --storage-driver=vfs \
			--containerd=/run/containerd/containerd.sock >"$dw/dockerd.log" 2>&1 &
		for _ in $(seq 1000); do
			[ -S /var/run/docker.sock ] && break
			sleep 0.2
		done
		if /usr/bin/docker info >"$dw/info" 2>&1 &&
			/usr/bin/docker import "$ENGINES_ROOTFS_TAR" agentrun-test-busybox:latest \
				>"$dw/import.log" 2>&1; then
			echo "dockerd up and the image imported after $(($(date +%s) - T0)) s"
			echo 1 >"$dw/up"
		else
			echo 0 >"$dw/up"
		fi
	) &
	DOCKER_PID=$!
}
# only here, in the VM: the file bails out above unless systemd is PID 1
if { [ -z "${VM_TESTS:-}" ] || [[ t_docker_systemd =~ $VM_TESTS ]]; } &&
	command -v dockerd >/dev/null && command -v containerd >/dev/null &&
	[ -x /usr/bin/docker ]; then
	start_docker
fi

# the test user and its systemd instance (the system bus is up: the unit
# run-in-vm.service is ordered after dbus.socket)
ensure_test_user
U=$TEST_UID
UW=$W/user
mkdir -p "$UW"
chown "$U:$TEST_GID" "$UW"
systemctl start "user@$U.service" >"$W/user-start.log" 2>&1
echo "user@$U.service: $(systemctl is-active "user@$U.service") after $(($(date +%s) - T0)) s"
systemd-analyze blame --no-pager 2>/dev/null | head -n 8 | sed 's/^/boot: /'

# as_user CMD...: CMD in the user's systemd instance, in a delegated
# service of its own (what a login session's processes have).
# KillMode=process: what CMD leaves running stays when it exits, as in a
# login session (rootless podman's conmon stays in its caller's cgroup)
as_user()
{
	runuser -u "$TEST_USER" -- env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$UW" XDG_RUNTIME_DIR="/run/user/$U" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$U/bus" \
		systemd-run --user --quiet --wait --pipe --collect -p Delegate=yes \
		-p KillMode=process \
		-E HOME="$UW" -E PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		-- "$@"
}

# user_ctl ARGS...: systemctl --user of the test user (a query needs no
# service of its own)
user_ctl()
{
	runuser -u "$TEST_USER" -- env XDG_RUNTIME_DIR="/run/user/$U" systemctl --user "$@"
}

vm_test()
{
	if [ -n "${VM_TESTS:-}" ] && ! [[ $2 =~ $VM_TESTS ]]; then
		return 0
	fi
	run_test "$@"
}

# bundle DIR ROOTLESS: a detached `sleep` with a 48 MiB memory limit,
# the shared rootfs
bundle()
{
	mkdir -p "$1"
	ln -sfn "$W/rootfs" "$1/rootfs"
	if [ "$2" = 1 ]; then
		"$AGENTRUN" spec --rootless --bundle "$1" >/dev/null
		# the spec maps the caller's ids: the test user's
		jq --argjson u "$U" --argjson g "$TEST_GID" \
			'.linux.uidMappings[0].hostID=$u | .linux.gidMappings[0].hostID=$g' \
			"$1/config.json" >"$1/c.json" && mv "$1/c.json" "$1/config.json"
	else
		"$AGENTRUN" spec --bundle "$1" >/dev/null
	fi
	jq '.process.args=["sleep","1000"] | .linux.resources.memory.limit=50331648 | .linux.resources.pids.limit=20' \
		"$1/config.json" >"$1/c.json" && mv "$1/c.json" "$1/config.json"
	[ "$2" = 1 ] && chown -R "$U:$TEST_GID" "$1"
	return 0
}

t_version()
{
	assert_status 0 "$AGENTRUN" --version
	assert_contains "$OUT" "+SYSTEMD"
}
vm_test "agentrun --version says +SYSTEMD" t_version

t_direct_root()
{
	local b=$W/b-root id=sdroot st=$W/state-root unit cg
	bundle "$b" 0
	config_set "$b" '.linux.cgroupsPath="system.slice:agentrun-t:sdroot"'
	unit=agentrun-t-$id.scope
	defer "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_eq "$(systemctl is-active "$unit")" active "systemd has the scope $unit"
	cg=/sys/fs/cgroup/system.slice/$unit
	assert_eq "$(cat "$cg/memory.max")" 50331648 "memory.max of $cg"
	assert_eq "$(cat "$cg/pids.max")" 20 "pids.max of $cg"
	assert_eq "$(systemctl show -P MemoryMax "$unit")" 50331648 "systemd's MemoryMax of $unit"
	assert_eq "$(systemctl show -P TasksMax "$unit")" 20 "systemd's TasksMax of $unit"
	assert_eq "$(systemctl show -P Delegate "$unit")" yes
	assert_contains "$(cat "$st/$id/state.json")" "\"$cg\"" "state.json names the scope's cgroup"
	assert_status 0 "$AGENTRUN" --root "$st" delete --force "$id"
	assert_eq "$(systemctl show -P LoadState "$unit")" not-found "the unit is gone after delete"
	[ ! -d "$cg" ] || fail "$cg is still there after delete"
}
vm_test "[root] agentrun --systemd-cgroup run: a transient scope with MemoryMax, removed by delete" t_direct_root

t_direct_root_default_path()
{
	local b=$W/b-root2 id=sdroot2 st=$W/state-root
	bundle "$b" 0
	defer "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$st" --cgroup-manager=systemd run -d --bundle "$b" "$id"
	assert_eq "$(systemctl is-active "agentrun-$id.scope")" active
	assert_eq "$(systemctl show -P Slice "agentrun-$id.scope")" system.slice
	# a plain path is refused, naming the form
	config_set "$b" '.linux.cgroupsPath="/foo/bar"'
	assert_status '!0' "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" sdroot3
	assert_contains "$ERR" "slice:prefix:name"
}
vm_test "[root] --cgroup-manager=systemd without cgroupsPath: agentrun-ID.scope in system.slice; a path is refused" t_direct_root_default_path

t_direct_root_subgroup()
{
	local b=$W/b-sub id=sdsub st=$W/state-root unit=agentrun-s-sdsub.scope cg pid
	bundle "$b" 0
	config_set "$b" '.linux.cgroupsPath="system.slice:agentrun-s:sdsub" | .annotations["run.oci.systemd.subgroup"]="container"'
	defer "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	cg=/sys/fs/cgroup/system.slice/$unit/container
	pid=$(jq -r .agentrun.pid "$st/$id/state.json")
	assert_eq "$(sed -n 's/^0:://p' "/proc/$pid/cgroup")" "/system.slice/$unit/container" "the process is in the subgroup"
	assert_eq "$(cat "$cg/memory.max")" 50331648 "memory.max of $cg"
	assert_eq "$(cat "/sys/fs/cgroup/system.slice/$unit/cgroup.procs")" "" "the scope itself holds no process"
	assert_status 0 "$AGENTRUN" --root "$st" delete --force "$id"
	assert_eq "$(systemctl show -P LoadState "$unit")" not-found "the unit is gone after delete"
}
vm_test "[root] run.oci.systemd.subgroup=container: the process and limits in SCOPE/container" t_direct_root_subgroup

t_direct_rootless()
{
	local b=$UW/b-user id=sduser st=$UW/state unit=agentrun-u-sduser.scope cg
	[ "$(systemctl is-active "user@$U.service")" = active ] ||
		fail "user@$U.service did not start: $(cat "$W/user-start.log")"
	bundle "$b" 1
	config_set "$b" '.linux.cgroupsPath="user.slice:agentrun-u:sduser"'
	chown "$U:$TEST_GID" "$b/config.json"
	defer as_user "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 as_user "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_eq "$(user_ctl is-active "$unit")" active "the user's systemd has $unit"
	cg=/sys/fs/cgroup/user.slice/user-$U.slice/user@$U.service/user.slice/$unit
	assert_eq "$(cat "$cg/memory.max")" 50331648 "memory.max of $cg"
	assert_eq "$(user_ctl show -P MemoryMax "$unit")" 50331648 "the user's systemd holds MemoryMax"
	assert_status 0 as_user "$AGENTRUN" --root "$st" delete --force "$id"
	assert_eq "$(user_ctl show -P LoadState "$unit")" not-found "the unit is gone after delete"
}
vm_test "[rootless] agentrun --systemd-cgroup run: a scope of the user's systemd, removed by delete" t_direct_rootless

# podman with the systemd cgroup manager, through a wrapper that logs the
# runtime's argv (podman keys features on the runtime's name)
podman_conf()
{
	local d=$1
	mkdir -p "$d/bin"
	cat >"$d/bin/agentrun" <<EOF
#!/bin/sh
echo "\$*" >>"$d/calls.log"
exec "$AGENTRUN" "\$@"
EOF
	chmod 0755 "$d/bin/agentrun"
	sed -e '/^agentrun = \[/,/^\]/c agentrun = ["'"$d/bin/agentrun"'"]' \
		-e '/^\[engine\]/a cgroup_manager = "systemd"\nevents_logger = "none"' \
		"$TOP_SRCDIR/contrib/podman/containers.conf.d/agentrun.conf" >"$d/containers.conf"
	grep -q '^cgroup_manager = "systemd"' "$d/containers.conf" ||
		fail "no [engine] section in contrib/podman/containers.conf.d/agentrun.conf"
	mkdir -p "$d/rootfs"
	tar -C "$d/rootfs" -xf "$ENGINES_ROOTFS_TAR"
}

t_podman_root()
{
	local d=$W/pm c unit cg
	command -v podman >/dev/null && command -v conmon >/dev/null || skip "podman/conmon not installed"
	podman_conf "$d"
	pm() { CONTAINERS_CONF=$d/containers.conf podman --root "$d/storage" --runroot "$d/run" \
		--storage-driver vfs --tmpdir "$d" --runtime agentrun "$@"; }
	assert_status 0 pm run -d --network none --memory 40m --rootfs "$d/rootfs" sleep 1000
	c=$OUT
	grep -q -- "--systemd-cgroup" "$d/calls.log" ||
		fail "podman did not call agentrun --systemd-cgroup: $(cat "$d/calls.log")"
	unit=libpod-$c.scope
	assert_eq "$(systemctl is-active "$unit")" active "systemd has $unit"
	assert_status 0 systemctl status --no-pager "$unit"
	assert_contains "$OUT" "$unit"
	cg=/sys/fs/cgroup/machine.slice/$unit
	assert_eq "$(cat "$cg/memory.max")" 41943040 "memory.max of $cg"
	assert_status 0 pm stop -t 1 "$c"
	wait_until 20 sh -c '[ "$(systemctl show -P LoadState "$1")" = not-found ]' unit "$unit"
}
vm_test "[root] podman cgroup_manager=systemd: run --memory 40m in libpod-ID.scope, stop removes it" t_podman_root

t_podman_rootless()
{
	local d=$UW/pm c unit cg
	command -v podman >/dev/null && command -v conmon >/dev/null || skip "podman/conmon not installed"
	podman_conf "$d"
	chown -R "$U:$TEST_GID" "$d"
	upm() { as_user env CONTAINERS_CONF="$d/containers.conf" podman --root "$d/storage" \
		--runroot "$d/run" --storage-driver vfs --tmpdir "$d" --runtime agentrun "$@"; }
	assert_status 0 upm run -d --network none --memory 40m --rootfs "$d/rootfs" sleep 1000
	c=$OUT
	grep -q -- "--systemd-cgroup" "$d/calls.log" ||
		fail "podman did not call agentrun --systemd-cgroup: $(cat "$d/calls.log")"
	unit=libpod-$c.scope
	assert_status 0 user_ctl status --no-pager "$unit"
	assert_contains "$OUT" "$unit"
	cg=$(find /sys/fs/cgroup/user.slice/user-$U.slice/user@$U.service -type d -name "$unit" | head -n 1)
	[ -n "$cg" ] || fail "no cgroup $unit below user@$U.service"
	assert_eq "$(cat "$cg/memory.max")" 41943040 "memory.max of $cg"
	assert_status 0 upm stop -t 1 "$c"
	wait_until 30 sh -c '[ "$(runuser -u "$1" -- env XDG_RUNTIME_DIR=/run/user/$2 systemctl --user show -P LoadState "$3")" = not-found ]' \
		unit "$TEST_USER" "$U" "$unit"
}
vm_test "[rootless] podman cgroup_manager=systemd: run --memory 40m in the user's libpod-ID.scope, stop removes it" t_podman_rootless

# `agentrun update` of a container in a systemd scope: systemd must hold
# the new limits too (SetUnitProperties), or a daemon-reload puts the
# unit's old MemoryMax/TasksMax back into the cgroup.
t_update_reload()
{
	local b=$W/b-upd id=sdupd st=$W/state-root unit=agentrun-t-sdupd.scope cg
	bundle "$b" 0
	config_set "$b" '.linux.cgroupsPath="system.slice:agentrun-t:sdupd"'
	defer "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	cg=/sys/fs/cgroup/system.slice/$unit
	assert_status 0 "$AGENTRUN" --root "$st" update --memory 64m --pids-limit 30 \
		--cpu-quota 50000 --cpu-period 100000 "$id"
	assert_eq "$(cat "$cg/memory.max")" 67108864 "memory.max right after update"
	assert_status 0 systemctl daemon-reload
	assert_eq "$(cat "$cg/memory.max")" 67108864 "memory.max after systemctl daemon-reload"
	assert_eq "$(cat "$cg/pids.max")" 30 "pids.max after systemctl daemon-reload"
	assert_eq "$(cat "$cg/cpu.max")" "50000 100000" "cpu.max after systemctl daemon-reload"
	assert_eq "$(systemctl show -P MemoryMax "$unit")" 67108864 "systemd's MemoryMax after update"
	assert_eq "$(systemctl show -P TasksMax "$unit")" 30 "systemd's TasksMax after update"
	assert_eq "$(systemctl show -P CPUQuotaPerSecUSec "$unit")" 500ms "systemd's CPUQuotaPerSecUSec after update"
	# back to no memory limit
	assert_status 0 "$AGENTRUN" --root "$st" update --memory -1 "$id"
	assert_status 0 systemctl daemon-reload
	assert_eq "$(cat "$cg/memory.max")" max "memory.max after update --memory -1 and a reload"
	assert_status 0 "$AGENTRUN" --root "$st" delete --force "$id"
}
vm_test "[root] update of a systemd scope: SetUnitProperties, the limits survive systemctl daemon-reload" t_update_reload

t_update_reload_rootless()
{
	local b=$UW/b-updu id=sdupdu st=$UW/state unit=agentrun-u-sdupdu.scope cg
	[ "$(systemctl is-active "user@$U.service")" = active ] ||
		fail "user@$U.service did not start: $(cat "$W/user-start.log")"
	bundle "$b" 1
	config_set "$b" '.linux.cgroupsPath="user.slice:agentrun-u:sdupdu"'
	chown "$U:$TEST_GID" "$b/config.json"
	defer as_user "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 as_user "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	cg=/sys/fs/cgroup/user.slice/user-$U.slice/user@$U.service/user.slice/$unit
	assert_status 0 as_user "$AGENTRUN" --root "$st" update --memory 64m "$id"
	assert_status 0 user_ctl daemon-reload
	assert_eq "$(cat "$cg/memory.max")" 67108864 "memory.max after systemctl --user daemon-reload"
	assert_eq "$(user_ctl show -P MemoryMax "$unit")" 67108864 "the user's systemd holds the new MemoryMax"
	assert_status 0 as_user "$AGENTRUN" --root "$st" delete --force "$id"
}
vm_test "[rootless] update of a user's systemd scope: the limit survives systemctl --user daemon-reload" t_update_reload_rootless

# runc's org.systemd.property.* annotations: unit properties of the scope
t_property_annotations()
{
	local b=$W/b-ann id=sdann st=$W/state-root unit=agentrun-t-sdann.scope
	bundle "$b" 0
	config_set "$b" '.linux.cgroupsPath="system.slice:agentrun-t:sdann" | .annotations += {
		"org.systemd.property.TimeoutStopUSec": "uint64 123456789",
		"org.systemd.property.CollectMode": "'"'inactive-or-failed'"'",
		"org.systemd.property.RuntimeMaxSec": "uint64 5000",
		"org.systemd.property.SendSIGHUP": "true"}'
	defer "$AGENTRUN" --root "$st" delete --force "$id"
	assert_status 0 "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_eq "$(systemctl show -P TimeoutStopUSec "$unit")" "2min 3.456789s" "TimeoutStopUSec from the annotation"
	assert_eq "$(systemctl show -P CollectMode "$unit")" inactive-or-failed
	assert_eq "$(systemctl show -P RuntimeMaxUSec "$unit")" "1h 23min 20s" "RuntimeMaxSec (seconds) became RuntimeMaxUSec"
	assert_eq "$(systemctl show -P SendSIGHUP "$unit")" yes
	assert_status 0 "$AGENTRUN" --root "$st" delete --force "$id"
	# a malformed value, a bad name, a property systemd refuses: errors
	# naming the annotation, nothing left behind
	config_set "$b" '.annotations={"org.systemd.property.TimeoutStopUSec": "uint64 12x"}'
	assert_status '!0' "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_contains "$ERR" "org.systemd.property.TimeoutStopUSec"
	config_set "$b" '.annotations={"org.systemd.property.Bad_Name": "true"}'
	assert_status '!0' "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_contains "$ERR" "org.systemd.property.Bad_Name"
	config_set "$b" '.annotations={"org.systemd.property.NoSuchPropertyHere": "true"}'
	assert_status '!0' "$AGENTRUN" --root "$st" --systemd-cgroup run -d --bundle "$b" "$id"
	assert_contains "$ERR" "NoSuchPropertyHere"
	assert_eq "$(systemctl show -P LoadState "$unit")" not-found "no unit left after the failures"
	[ ! -e "$st/$id" ] || fail "a container was left behind"
}
vm_test "[root] org.systemd.property.* annotations become unit properties; a malformed one is an error naming it" t_property_annotations

# Docker with native.cgroupdriver=systemd: dockerd and containerd are
# started in the background at the top of this file (they take minutes
# under emulation).
DOCKER=/usr/bin/docker
IMAGE=agentrun-test-busybox:latest
DW=$W/docker
dk()
{
	"$DOCKER" "$@"
}

# docker_systemd RUNTIME: a detached container with --memory 32m
# through RUNTIME, its docker-ID.scope in system.slice with Delegate and
# MemoryMax, gone after stop and rm
docker_systemd()
{
	local rt=$1 c unit cg
	[ -n "${DOCKER_PID:-}" ] || skip "docker.io/containerd not installed"
	wait_until 300 test -e "$DW/up"
	[ "$(cat "$DW/up")" = 1 ] ||
		fail "dockerd did not start or the import failed: $(tail -n 20 "$DW/dockerd.log" "$DW/import.log" 2>&1)"
	assert_contains "$(cat "$DW/info")" "Cgroup Driver: systemd" "docker info"
	: >"$DW/calls.log"
	assert_status 0 dk run -d --network none --runtime "$rt" --memory 32m "$IMAGE" \
		sh -c 'trap "exit 0" TERM; sleep 1000 & wait'
	c=$OUT
	unit=docker-$c.scope
	cg=/sys/fs/cgroup/system.slice/$unit
	if [ "$rt" = agentrun ]; then
		grep -q -- "--systemd-cgroup" "$DW/calls.log" ||
			fail "docker did not call agentrun --systemd-cgroup: $(cut -c1-300 "$DW/calls.log")"
	fi
	assert_eq "$(systemctl is-active "$unit")" active "systemd has $unit"
	assert_eq "$(systemctl show -P Slice "$unit")" system.slice
	assert_eq "$(systemctl show -P Delegate "$unit")" yes
	assert_eq "$(systemctl show -P MemoryMax "$unit")" 33554432 "systemd's MemoryMax of $unit"
	assert_eq "$(cat "$cg/memory.max")" 33554432 "memory.max of $cg"
	assert_eq "$(dk exec "$c" cat /proc/self/cgroup)" "0::/" "the container sees its cgroup as /"
	assert_status 0 dk update --memory 48m "$c"
	assert_eq "$(systemctl show -P MemoryMax "$unit")" 50331648 "systemd's MemoryMax after docker update"
	assert_eq "$(cat "$cg/memory.max")" 50331648 "memory.max after docker update"
	assert_status 0 dk stop -t 30 "$c"
	assert_status 0 dk rm "$c"
	wait_until 30 sh -c '[ "$(systemctl show -P LoadState "$1")" = not-found ]' unit "$unit"
	[ ! -d "$cg" ] || fail "$cg left behind"
}

t_docker_systemd()
{
	docker_systemd agentrun
}
vm_test "[root] docker native.cgroupdriver=systemd --runtime agentrun: docker-ID.scope, Delegate, MemoryMax, update, stop/rm" t_docker_systemd

t_docker_systemd_runc()
{
	command -v runc >/dev/null || skip "runc is not installed"
	docker_systemd runc
}
vm_test "[root] the same with Docker's runc (the reference)" t_docker_systemd_runc

echo "# the tests took $(($(date +%s) - T0)) s"
finish
