#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# vm-init.sh — PID 1 of a run-in-vm guest (busybox sh); run-in-vm puts it
# into the initramfs as /init.  Two stages:
#   1 (initramfs): load the modules listed in /modules/order; mount the
#     host root (9p tag "hostroot", read-only) as the lower layer of an
#     overlay on tmpfs; fresh tmpfs on /run and /tmp; the control share
#     (tag "ctl") on /run/vm/ctl; the shared directory (tag "share",
#     read-write) at its host path; then switch_root into the overlay.
#   2 (the new root): cgroup2 alone on /sys/fs/cgroup with every controller
#     enabled, /dev as a real system has it, loopback up, the user's setup
#     for --user, then the command, with stdout and stderr on the virtio
#     ports the host named "stdout" and "stderr"; its exit status goes to
#     ctl/status and the VM powers off.
# With --systemd (VM_SYSTEMD=1) stage 2 writes run-in-vm.target and
# run-in-vm.service into the overlay's /etc and execs systemd as PID 1:
# systemd mounts cgroup2 and /dev's file systems, and the service runs
# this file's stage "command" (the ports, the command, its status,
# poweroff) once basic.target and the system bus are up.
# ctl/config sets VM_CWD, VM_USER (UID[:GID] or empty), VM_SYSTEMD and VM_TERM;
# ctl/cmd exports the --env variables and sets the command's arguments.
# shellcheck shell=dash disable=SC1091,SC2015,SC2016

BB=/bin/busybox
[ "$1" = stage2 ] || [ "$1" = command ] && BB=/run/vm/busybox
CTL=/run/vm/ctl
NINEP=trans=virtio,version=9p2000.L,msize=524288

# mark STAGE: a progress line with the guest's uptime on the console (the
# host prints the console's end when a run stalls or times out)
mark()
{
	echo "run-in-vm guest: $($BB cut -d' ' -f1 /proc/uptime) s: $*" >/dev/console 2>/dev/null || true
}

die()
{
	echo "run-in-vm guest: $*" >&2
	[ -d "$CTL" ] && echo "run-in-vm guest: $*" >>"$CTL/error"
	$BB sync
	$BB poweroff -f
}

# enable_all DIR: every controller of DIR for DIR's children
enable_all()
{
	for c in $($BB cat "$1/cgroup.controllers"); do
		echo "+$c" >"$1/cgroup.subtree_control" || die "cannot enable the $c controller in $1"
	done
}

stage1()
{
	export PATH=/bin
	$BB mount -t proc proc /proc
	$BB mount -t sysfs sysfs /sys
	$BB mount -t devtmpfs devtmpfs /dev
	mark "init (stage 1)"
	while read -r m; do
		$BB insmod "/modules/$m" || die "insmod $m failed"
	done </modules/order
	$BB mount -t 9p -o "$NINEP" ctl /ctl || die "cannot mount the control share"
	CTL=/ctl
	: >/ctl/booted
	mark "modules loaded, control share mounted"
	. /ctl/config
	$BB mount -t 9p -o "$NINEP,ro,cache=loose" hostroot /lower || die "cannot mount the host root (9p)"
	$BB mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount the overlay's tmpfs"
	$BB mkdir /rw/upper /rw/work
	$BB mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
		die "cannot mount the overlay on the host root"
	$BB mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || die "cannot mount /run"
	$BB mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/tmp || die "cannot mount /tmp"
	$BB mkdir -p /newroot/run/vm/ctl
	$BB mount -o move /ctl /newroot/run/vm/ctl
	$BB cp $BB /init /newroot/run/vm/
	$BB mkdir -p "/newroot$VM_CWD" &&
		$BB mount -t 9p -o "$NINEP,cache=mmap" share "/newroot$VM_CWD" ||
		die "cannot mount the shared directory at $VM_CWD"
	mark "host root and share mounted"
	for d in dev proc sys; do $BB mount -o move /$d /newroot/$d; done
	exec $BB switch_root /newroot /run/vm/busybox sh /run/vm/init stage2
}

# add_user UID GID: passwd, group, subuid/subgid entries, home, runtime dir
# and a delegated cgroup; sets NAME HOME_DIR CGROUP
add_user()
{
	uid=$1 gid=$2
	NAME=$($BB awk -F: -v u="$uid" '$3 == u { print $1; exit }' /etc/passwd)
	if [ -z "$NAME" ]; then
		NAME=vmuser$uid
		echo "$NAME:x:$uid:$gid:run-in-vm user:/home/$NAME:/bin/sh" >>/etc/passwd
	fi
	$BB awk -F: -v g="$gid" '$3 == g { f = 1 } END { exit !f }' /etc/group ||
		echo "$NAME:x:$gid:" >>/etc/group
	HOME_DIR=$($BB awk -F: -v u="$uid" '$3 == u { print $6; exit }' /etc/passwd)
	# the host's home of that uid may be missing or someone else's: /home
	# is the overlay, so make it the user's
	$BB mkdir -p "$HOME_DIR" && $BB chown "$uid:$gid" "$HOME_DIR" || die "cannot make the home $HOME_DIR"
	for f in /etc/subuid /etc/subgid; do
		$BB grep -qE "^($NAME|$uid):" "$f" 2>/dev/null && continue
		start=$($BB awk -F: '$2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }' "$f" 2>/dev/null)
		echo "$NAME:${start:-100000}:65536" >>"$f"
	done
	XDG_RUNTIME_DIR=/run/user/$uid
	$BB mkdir -p "$XDG_RUNTIME_DIR" && $BB chown "$uid:$gid" "$XDG_RUNTIME_DIR" &&
		$BB chmod 0700 "$XDG_RUNTIME_DIR" || die "cannot make $XDG_RUNTIME_DIR"
	# systemd's layout: the user's manager owns user@UID.service (the
	# directory and the files a delegate may write), its processes are in
	# init.scope below it
	slice=/sys/fs/cgroup/user.slice
	service=$slice/user-$uid.slice/user@$uid.service
	$BB mkdir -p "$service/init.scope" || die "cannot make $service"
	enable_all $slice
	enable_all "$slice/user-$uid.slice"
	enable_all "$service"
	$BB chown "$uid:$gid" "$service" "$service/cgroup.procs" "$service/cgroup.threads" \
		"$service/cgroup.subtree_control" || die "cannot delegate $service"
	$BB chown -R "$uid:$gid" "$service/init.scope" || die "cannot delegate $service/init.scope"
	CGROUP=$service/init.scope
}

# find_ports: OUT and ERR, the virtio ports the host named stdout, stderr
find_ports()
{
	OUT='' ERR=''
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		for p in /sys/class/virtio-ports/*; do
			case $($BB cat "$p/name" 2>/dev/null) in
			stdout) OUT=/dev/${p##*/} ;;
			stderr) ERR=/dev/${p##*/} ;;
			esac
		done
		[ -c "$OUT" ] && [ -c "$ERR" ] && break
		$BB usleep 50000
	done
	[ -c "$OUT" ] && [ -c "$ERR" ] || die "no virtio ports named stdout and stderr"
}

# the host's units the guest has no use for, or that would slow its boot
# down under TCG (udev: devtmpfs has the nodes already; podman's units are
# in the host's default.target.wants, which run-in-vm.target inherits as
# the default target; modprobe@: a module loads when its node is opened)
SYSTEMD_MASK="docker.socket podman.socket avahi-daemon.socket apparmor.service
systemd-pstore.service systemd-timesyncd.service systemd-udevd.service
systemd-udev-trigger.service systemd-udevd-control.socket
systemd-udevd-kernel.socket systemd-hwdb-update.service
systemd-random-seed.service systemd-firstboot.service ldconfig.service
systemd-journal-catalog-update.service systemd-update-done.service
keyboard-setup.service console-setup.service systemd-binfmt.service
proc-sys-fs-binfmt_misc.automount systemd-remount-fs.service
systemd-ask-password-console.path systemd-ask-password-wall.path
getty.target timers.target podman.service podman-restart.service
podman-auto-update.service modprobe@dm_mod.service modprobe@loop.service
modprobe@fuse.service modprobe@drm.service modprobe@efi_pstore.service"

# boot_systemd: systemd as PID 1, default.target = run-in-vm.target
boot_systemd()
{
	u=/etc/systemd/system
	$BB mkdir -p $u
	for m in $SYSTEMD_MASK; do $BB ln -sf /dev/null "$u/$m"; done
	$BB cat >$u/run-in-vm.target <<-EOT
		[Unit]
		Description=run-in-vm
		Requires=basic.target
		Wants=run-in-vm.service dbus.socket
		After=basic.target
		AllowIsolate=yes
	EOT
	$BB cat >$u/run-in-vm.service <<-EOT
		[Unit]
		Description=run-in-vm command
		Wants=dbus.socket
		After=basic.target dbus.socket
		[Service]
		Type=exec
		ExecStart=/run/vm/busybox sh /run/vm/init command
		StandardInput=null
	EOT
	$BB ln -sf run-in-vm.target $u/default.target
	echo run-in-vm >/etc/hostname
	mark "systemd starting"
	exec /lib/systemd/systemd
}

# stage "command" (--systemd): run-in-vm.service
command_stage()
{
	. $CTL/config
	find_ports
	mark "systemd reached run-in-vm.service"
	$BB cut -d' ' -f1 /proc/uptime >$CTL/started
	mark "command started"
	$BB env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root USER=root LOGNAME=root TERM="$VM_TERM" LANG=C.UTF-8 \
		/bin/sh -c 'cd "$1" || exit 125; . /run/vm/ctl/cmd || exit 125; exec "$@"' command "$VM_CWD" \
		</dev/null >"$OUT" 2>"$ERR"
	echo $? >$CTL/status
	mark "command exited with status $($BB cat $CTL/status)"
	$BB sync
	$BB poweroff -f
}

stage2()
{
	mark "switched root (stage 2)"
	. $CTL/config
	[ "$VM_SYSTEMD" = 1 ] && boot_systemd
	$BB mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup ||
		die "cannot mount cgroup2"
	enable_all /sys/fs/cgroup
	$BB mkdir -p /dev/pts /dev/shm /dev/mqueue
	$BB mount -t devpts -o newinstance,ptmxmode=0666,mode=0620,gid=5 devpts /dev/pts
	$BB ln -sf pts/ptmx /dev/ptmx
	$BB mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
	$BB mount -t mqueue mqueue /dev/mqueue 2>/dev/null
	$BB mount -t bpf bpf /sys/fs/bpf 2>/dev/null
	$BB ln -sf /proc/self/fd /dev/fd
	$BB ln -sf /proc/self/fd/0 /dev/stdin
	$BB ln -sf /proc/self/fd/1 /dev/stdout
	$BB ln -sf /proc/self/fd/2 /dev/stderr
	# the static nodes kmod and udev make (/dev/fuse, /dev/net/tun,
	# /dev/loop-control, ...); opening one loads its module
	while read -r _ node dev; do
		case $dev in
		c*:*)
			[ -e "/dev/$node" ] && continue
			case $node in */*) $BB mkdir -p "/dev/${node%/*}" ;; esac
			major=${dev#c}
			$BB mknod "/dev/$node" c "${major%:*}" "${dev#*:}"
			;;
		esac
	done <"/lib/modules/$($BB uname -r)/modules.devname"
	$BB chmod 0666 /dev/fuse /dev/net/tun 2>/dev/null
	$BB hostname run-in-vm
	$BB ip link set lo up || die "cannot bring up lo"

	find_ports
	mark "devices, cgroup2 and ports ready"

	NAME=root HOME_DIR=/root CGROUP=/sys/fs/cgroup DROP='' XDG_RUNTIME_DIR=''
	if [ -n "$VM_USER" ]; then
		uid=${VM_USER%%:*} gid=${VM_USER#*:}
		[ "$gid" = "$VM_USER" ] && gid=$uid
		add_user "$uid" "$gid"
		# the user reaches the shared directory even when a parent is
		# private on the host (a clone in a mode-700 home): o+x on the
		# parents, in the overlay only (the share itself is never changed)
		d=$VM_CWD
		while [ -n "${d%/*}" ]; do
			d=${d%/*}
			[ "$($BB stat -c %A "$d" | $BB cut -c10)" = x ] || $BB chmod o+x "$d" ||
				die "cannot make $d searchable for uid $uid"
		done
		DROP="/usr/bin/setpriv --reuid=$uid --regid=$gid --init-groups --"
	fi
	$BB cut -d' ' -f1 /proc/uptime >$CTL/started
	mark "command started"
	# join the cgroup, drop to the user, cd, read the command, exec it
	# shellcheck disable=SC2086 # DROP is a word list
	$BB env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$HOME_DIR" USER="$NAME" LOGNAME="$NAME" TERM="$VM_TERM" LANG=C.UTF-8 \
		${XDG_RUNTIME_DIR:+XDG_RUNTIME_DIR="$XDG_RUNTIME_DIR"} \
		$BB sh -c 'echo $$ >"$1/cgroup.procs" || exit 125; shift; exec "$@"' join "$CGROUP" \
		$DROP /bin/sh -c 'cd "$1" || exit 125; . /run/vm/ctl/cmd || exit 125; exec "$@"' command "$VM_CWD" \
		</dev/null >"$OUT" 2>"$ERR"
	echo $? >$CTL/status
	mark "command exited with status $($BB cat $CTL/status)"
	$BB sync
	$BB poweroff -f
}

case $1 in
stage2) stage2 ;;
command) command_stage ;;
*) stage1 ;;
esac
die "init fell through"
