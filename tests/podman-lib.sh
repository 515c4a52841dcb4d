# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# tests/podman-lib.sh — podman driving agentrun for the tests that need it
# (test_podman, test_devcontainer, test_workspace): podman on storage of
# its own, agentrun registered by NAME through the shipped containers.conf
# drop-in, as after `make install`. Sourced after tests/lib.sh.

# podman_setup DIR [--log FILE] [--events none|file] [--no-runtime-flag]
#
#   DIR/containers.conf  contrib/podman/containers.conf.d/agentrun.conf
#       (CONTAINERS_CONF: the only config file podman then reads) with the
#       runtime's path replaced: $AGENTRUN, or with --log DIR/bin/agentrun,
#       a wrapper that appends its arguments to FILE and execs $AGENTRUN.
#       nofile/nproc are lowered: raising them needs CAP_SYS_RESOURCE,
#       which some CI sandboxes lack (crun fails there too). With --events
#       file (`devcontainer up` waits for the start event) the events log
#       is DIR/events.log.
#   DIR/pm ARGS  podman with that config on vfs storage in DIR, cgroupfs,
#       and `--runtime agentrun` (unless --no-runtime-flag: the caller's
#       command lines name the runtime themselves).
#   DIR/rootfs  the busybox rootfs of make_rootfs, for podman_import.
podman_setup()
{
	local d=$1 log= events=none rt_flag="--runtime agentrun" runtime
	local conf=$TOP_SRCDIR/contrib/podman/containers.conf.d/agentrun.conf
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		--log) log=$2; shift 2 ;;
		--events) events=$2; shift 2 ;;
		--no-runtime-flag) rt_flag=; shift ;;
		*) echo "Bail out! podman_setup: unknown option $1"; exit 1 ;;
		esac
	done
	mkdir -p "$d/tmp"
	runtime=$AGENTRUN
	if [ -n "$log" ]; then
		runtime=$d/bin/agentrun
		mkdir -p "$d/bin"
		cat >"$runtime" <<-EOF
		#!/bin/sh
		echo "\$*" >>"$log"
		exec "$AGENTRUN" "\$@"
		EOF
		chmod 0755 "$runtime"
		: >"$log"
	fi
	sed -e '/^agentrun = \[/,/^\]/c agentrun = ["'"$runtime"'"]' \
		"$conf" >"$d/containers.conf"
	if [ "$events" = file ]; then
		sed -i '/^\[engine\]/a events_logfile_path = "'"$d/events.log"'"' \
			"$d/containers.conf"
	fi
	grep -q "^agentrun = \[\"$runtime\"\]" "$d/containers.conf" ||
		{ echo "Bail out! cannot rewrite $conf"; exit 1; }
	cat >>"$d/containers.conf" <<-EOF

	[containers]
	default_ulimits = ["nofile=1024:1024", "nproc=1024:1024"]
	EOF
	cat >"$d/pm" <<-EOF
	#!/bin/sh
	export CONTAINERS_CONF="$d/containers.conf"
	exec podman --root "$d/storage" --runroot "$d/run" \\
		--storage-driver vfs --tmpdir "$d/tmp" --events-backend $events \\
		--cgroup-manager cgroupfs $rt_flag "\$@"
	EOF
	chmod 0755 "$d/pm"
	make_rootfs "$d/rootfs"
}

# podman_import DIR IMAGE [user]: DIR/rootfs as IMAGE in DIR's storage; with
# "user", DIR is handed to the test user, who imports (rootless podman).
podman_import()
{
	local d=$1 image=$2
	if [ "${3:-}" = user ]; then
		ensure_test_user
		chown -R "$TEST_UID:$TEST_GID" "$d"
		(cd "$d" && as_test_user sh -c \
			"tar -C '$d/rootfs' -c . | '$d/pm' import - '$image'") \
			>/dev/null 2>&1
	else
		tar -C "$d/rootfs" -c . | "$d/pm" import - "$image" >/dev/null 2>&1
	fi
}
