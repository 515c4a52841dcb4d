#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# vm-selftest.sh — the guest side of `run-in-vm --self-test`: checks what
# tests/vm/README.md promises, once as root and once as the --user.  Prints
# "ok - ..." / "not ok - ..." lines (counted by the host), writes
# "selftest-marker" to stderr and exits 7: the host checks that stdout,
# stderr and the exit status come back apart.  SELFTEST_SHARE is the shared
# directory (the current one).

check() # check DESCRIPTION: the status of the last command decides
{
	if [ "$?" = 0 ]; then echo "ok - [$who] $1"; else echo "not ok - [$who] $1"; fi
}
# in_cgroup DIR CMD...: run CMD as a member of cgroup DIR
in_cgroup() { sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' in_cgroup "$@"; }
key() { awk -v k="$1" '$1 == k { print $2 }' "$2"; }

me=$(id -u)
if [ "$me" = 0 ]; then who=root; else who="uid $me"; fi
own=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
own=${own%/}
# test cgroups go beside our own (root: at the top; the user: in
# user@UID.service, whose init.scope holds us)
if [ "$own" = /sys/fs/cgroup ]; then base=$own; else base=${own%/*}; fi

# ---- the machine
[ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ] && ! grep -q ' cgroup ' /proc/mounts
check "/sys/fs/cgroup is cgroup2 and no cgroup v1 hierarchy is mounted"
missing=
for c in cpu cpuset io memory pids hugetlb; do
	grep -qw "$c" "$base/cgroup.subtree_control" || missing="$missing $c"
done
[ -z "$missing" ]
check "every controller is enabled for the children of $base${missing:+ (missing:$missing)}"
[ "$(echo /sys/class/net/*)" = /sys/class/net/lo ] && ip -o link show lo | grep -q 'state UNKNOWN\|LOWER_UP'
check "the only network interface is lo, and it is up ($(echo /sys/class/net/* | sed 's|/sys/class/net/||g'))"
fstype=$(awk -v d="$SELFTEST_SHARE" '$2 == d { t = $3 } END { print t }' /proc/mounts)
[ "$(pwd -P)" = "$SELFTEST_SHARE" ] && [ "$fstype" = 9p ]
check "the working directory is the host's, shared over 9p ($(pwd -P), ${fstype:-not mounted})"
echo "written-in-the-guest by $me" >"guest-$me.txt"
check "the shared directory is writable"
if [ "$me" = 0 ]; then
	echo guest >/etc/run-in-vm-selftest && grep -q guest /etc/run-in-vm-selftest
	check "the root filesystem is writable"
	[ "$(awk '$2 == "/" { print $3 }' /proc/mounts)" = overlay ]
	check "the root is an overlay"
	[ -x /usr/bin/setpriv ] && [ -r /etc/os-release ] && [ -d "/lib/modules/$(uname -r)" ]
	check "the host's programs, /etc and the kernel's modules are there"
fi
[ "$(hostname)" = run-in-vm ]
check "the hostname is run-in-vm"

# ---- the user's setup
if [ "$me" != 0 ]; then
	name=$(id -un)
	grep -q "^$name:" /etc/subuid && grep -q "^$name:" /etc/subgid
	check "/etc/subuid and /etc/subgid have a range for $name"
	[ "$XDG_RUNTIME_DIR" = "/run/user/$me" ] && [ -O "$XDG_RUNTIME_DIR" ] &&
		[ "$(stat -c %a "$XDG_RUNTIME_DIR")" = 700 ]
	check "XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR, ours, mode 700"
	case $own in */user.slice/user-$me.slice/user@$me.service/init.scope) true ;; *) false ;; esac
	check "we are in user@$me.service/init.scope ($own)"
	[ "$(stat -c %u "$base")" = "$me" ] && [ -w "$base/cgroup.procs" ] &&
		[ -w "$base/cgroup.subtree_control" ] && [ -w "$base/cgroup.threads" ]
	check "user@$me.service is delegated to us"
	! { echo max >"$base/memory.max"; } 2>/dev/null
	check "the delegated cgroup's own limits are not ours to write"
	mkdir "$base/nest" && echo "+memory +pids" >"$base/nest/cgroup.subtree_control" &&
		mkdir "$base/nest/child" && echo 16M >"$base/nest/child/memory.max"
	check "controllers can be enabled and limits set below the delegated cgroup"
	rmdir "$base/nest/child" "$base/nest"
	n=$(unshare --map-auto cat /proc/self/uid_map 2>&1 | awk '{ s += $3 } END { print s + 0 }')
	[ "$n" -ge 65536 ]
	check "newuidmap maps our subuid range ($n ids)"
	out=$(unshare -Urm sh -c 'mount -t tmpfs none /mnt && echo mounted' 2>&1)
	[ "$out" = mounted ]
	check "an unprivileged user namespace can mount ($out)"
fi

# ---- the controllers work
m=$base/selftest-memory
mkdir "$m" && echo 32M >"$m/memory.max" && echo 0 >"$m/memory.swap.max"
{ in_cgroup "$m" dd if=/dev/zero of=/dev/null bs=96M count=1; } 2>/dev/null
rc=$?
[ "$rc" = 137 ] && [ "$(key oom_kill "$m/memory.events")" -ge 1 ]
check "memory.max=32M OOM-kills a 96M allocation (exit $rc)"
echo 256M >"$m/memory.max"
in_cgroup "$m" dd if=/dev/zero of=/dev/null bs=96M count=1 2>/dev/null
check "memory.max=256M lets it through"
rmdir "$m"

p=$base/selftest-pids
mkdir "$p" && echo 4 >"$p/pids.max"
in_cgroup "$p" sh -c 'for i in 1 2 3 4 5 6 7 8; do sleep 5 & done; wait' 2>/dev/null &
sleep 1
cur=$(cat "$p/pids.current") denied=$(key max "$p/pids.events")
echo 1 >"$p/cgroup.kill"
wait
[ "$cur" -le 4 ] && [ "${denied:-0}" -ge 1 ]
check "pids.max=4 stops the 5th process (current $cur, denied ${denied:-0})"
sleep 0.2
rmdir "$p"

c=$base/selftest-cpu
mkdir "$c" && echo "10000 100000" >"$c/cpu.max"
# the bound is loose: under emulation on a busy host the guest's periods
# stretch and shrink
t0=$(date +%s%N)
in_cgroup "$c" timeout 2 sh -c 'while :; do :; done'
wall=$((($(date +%s%N) - t0) / 1000))
used=$(key usage_usec "$c/cpu.stat") throttled=$(key nr_throttled "$c/cpu.stat")
[ "$used" -lt $((wall * 40 / 100)) ] && [ "$throttled" -ge 1 ]
check "cpu.max=10% throttles a busy loop (${used} us of ${wall} us, throttled ${throttled}x)"
rmdir "$c"

f=$base/selftest-freezer
mkdir "$f"
in_cgroup "$f" sleep 30 &
sleep 0.3
echo 1 >"$f/cgroup.freeze"
sleep 0.3
grep -q '^frozen 1' "$f/cgroup.events"
check "cgroup.freeze freezes"
echo 1 >"$f/cgroup.kill"
wait
sleep 0.2
rmdir "$f"

echo selftest-marker >&2
exit 7
