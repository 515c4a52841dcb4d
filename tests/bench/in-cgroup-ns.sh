#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/bench/in-cgroup-ns.sh CMD [ARGS...] — run CMD (as root) where crun
# and runc run on a host whose cgroups are hybrid (v1 controllers plus a
# controller-less v2 tree on /sys/fs/cgroup/unified): in a private mount +
# cgroup namespace whose /sys/fs/cgroup is a fresh cgroup2 mount of a new,
# empty child of the v2 tree.
#
#   1. mkdir V2/agentrun-bench.PID (V2 = the v2 tree) and move a subshell
#      into it, so the new cgroup namespace is rooted there;
#   2. `unshare -m -C`: a private mount namespace (propagation private) and
#      a cgroup namespace;
#   3. mount cgroup2 on /sys/fs/cgroup there (over the host's tmpfs of v1
#      hierarchies, in the private namespace only: nothing is unmounted);
#   4. run CMD; afterwards kill what is left in the child (only processes
#      CMD started can be there) and rmdir the child and the cgroups the
#      runtimes made below it, deepest first.
#
# Nothing is written outside the child; no v1 hierarchy is touched. Exit
# status: CMD's, or 125 when the namespace cannot be set up.

set -u

if [ "${1:-}" = --inside ]; then
	shift
	mount -t cgroup2 none /sys/fs/cgroup || {
		echo "in-cgroup-ns.sh: cannot mount cgroup2 on /sys/fs/cgroup" >&2
		exit 125
	}
	exec "$@"
fi

[ $# -gt 0 ] || {
	echo "usage: in-cgroup-ns.sh CMD [ARGS...]" >&2
	exit 2
}
[ "$(id -u)" = 0 ] || {
	echo "in-cgroup-ns.sh: needs root" >&2
	exit 125
}
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
	V2=/sys/fs/cgroup
elif [ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]; then
	V2=/sys/fs/cgroup/unified
else
	echo "in-cgroup-ns.sh: no cgroup v2 hierarchy mounted" >&2
	exit 125
fi

CG=$V2/agentrun-bench.$$
mkdir "$CG" || exit 125

cleanup()
{
	local d
	[ -d "$CG" ] || return 0
	if [ -s "$CG/cgroup.procs" ] || grep -q '^populated 1' "$CG/cgroup.events" 2>/dev/null; then
		echo 1 >"$CG/cgroup.kill" 2>/dev/null
		for _ in $(seq 50); do
			grep -q '^populated 0' "$CG/cgroup.events" 2>/dev/null && break
			sleep 0.1
		done
	fi
	# Deepest first: the cgroups runtimes left below the child, then it.
	while IFS= read -r d; do
		rmdir "$d" 2>/dev/null
	done < <(find "$CG" -depth -mindepth 1 -type d 2>/dev/null)
	rmdir "$CG" 2>/dev/null ||
		echo "in-cgroup-ns.sh: could not remove $CG" >&2
}
trap cleanup EXIT
trap 'exit 130' INT TERM

(
	echo "$BASHPID" >"$CG/cgroup.procs" || exit 125
	exec unshare -m -C --propagation private -- bash "$0" --inside "$@"
)
rc=$?
exit "$rc"
