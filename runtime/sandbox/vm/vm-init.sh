#!/bin/busybox sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# vm-init.sh — PID 1 of an `agentrun sandbox --vm` guest (busybox sh);
# agentrun-vm puts it into the initramfs as /init.  Two stages:
#   1 (initramfs): load the modules of /modules/order; mount the sandbox's
#     root (9p tag "root", read-only) as the lower layer of an overlay on
#     tmpfs (writes outside the workspace stay in the guest's memory);
#     fresh tmpfs on /run; /tmp stays the sandbox's (through the overlay:
#     what the sandbox binds there, the home when it is under /tmp, the
#     filtered git config, --secret's CA), but the helper's own
#     directory (VM_HIDE) is covered; the control share (tag "ctl") on
#     /run/vm/ctl; the workspace (tag "share", read-write) at its path,
#     the other writable directories (tags rw0.., read-write) at theirs;
#     switch_root into the overlay.
#   2 (the new root): /dev/pts, /dev/shm, loopback, the hostname, then the
#     guest agent (`agentrun vm-guest`, VM_AGENT in the sandbox's root) on
#     the virtio port named "agent": it runs the command as VM_USER
#     (UID:GID) in VM_CWD and each `sandbox exec`; the command's exit
#     status goes to ctl/status and the VM powers off.
# ctl/config sets VM_CWD, VM_SHARE, VM_HIDE, VM_USER, VM_AGENT, VM_NET, VM_DNS, VM_RW_N and
# VM_RW_0.. (the other writable directories, 9p tags rw0..), VM_ROOT,
# VM_ROOT_RO, VM_BINDS, VM_HOSTNAME; ctl/cmd exports the environment and
# sets the command's arguments.
# A plain bundle (VM_ROOT set, docs/vm.md "Plain bundles"): its root (9p
# tag "groot") is mounted at VM_ROOT, then its mounts of ctl/mounts in
# order (binds from the tag "binds", the others the guest's own), its
# masked (ctl/masked) and read-only (ctl/readonly) paths; its linux.sysctl
# (ctl/sysctl, "KEY VALUE" lines) is set in this kernel in stage 2; the
# guest agent runs every session with VM_ROOT as its root.
# shellcheck shell=dash disable=SC1091,SC2015,SC2016

BB=/bin/busybox
[ "$1" = stage2 ] && BB=/run/vm/busybox
CTL=/run/vm/ctl
NINEP=trans=virtio,version=9p2000.L,msize=524288

die()
{
	echo "agentrun vm guest: $*" >/dev/console
	[ -d "$CTL" ] && echo "agentrun vm guest: $*" >>"$CTL/error"
	$BB sync
	$BB poweroff -f
}

stage1()
{
	export PATH=/bin
	$BB mount -t proc proc /proc
	$BB mount -t sysfs sysfs /sys
	$BB mount -t devtmpfs devtmpfs /dev
	while read -r m; do
		$BB insmod "/modules/$m" || die "insmod $m failed"
	done </modules/order
	$BB mount -t 9p -o "$NINEP" ctl /ctl || die "cannot mount the control share"
	CTL=/ctl
	. /ctl/config
	$BB mount -t 9p -o "$NINEP,ro,cache=loose" root /lower || die "cannot mount the sandbox's root (9p)"
	$BB mount -t tmpfs -o mode=0755 tmpfs /rw || die "cannot mount the overlay's tmpfs"
	$BB mkdir /rw/upper /rw/work
	$BB mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot ||
		die "cannot mount the overlay on the sandbox's root"
	$BB mkdir -p /newroot/run
	$BB mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || die "cannot mount /run"
	# /tmp is the sandbox's, as the command sees it without --vm (a
	# fresh tmpfs there hid the binds agentrun makes under it: the
	# filtered git config, --secret's CA, a home under /tmp); its
	# writes go to the overlay's upper layer, the guest's memory. The
	# helper's own directory there (the kernel, the initramfs, the
	# control files) is covered by an empty read-only tmpfs.
	if [ -n "$VM_HIDE" ] && [ -d "/newroot$VM_HIDE" ]; then
		$BB mount -t tmpfs -o ro,mode=0700,size=4k,nosuid,nodev,noexec tmpfs "/newroot$VM_HIDE" ||
			die "cannot cover $VM_HIDE"
	fi
	$BB mkdir -p /newroot/run/vm/ctl /newroot/run/vm/root
	$BB mount -o move /ctl /newroot/run/vm/ctl
	# the overlay's lower layer stays reachable (read-only) at
	# /run/vm/root: a guest root that remounts it read-write and writes
	# meets QEMU's readonly export (test_sandbox_vm.sh attacks it)
	$BB mount -o move /lower /newroot/run/vm/root
	$BB cp $BB /init /newroot/run/vm/
	if [ -n "$VM_SHARE" ]; then
		$BB mkdir -p "/newroot$VM_SHARE" &&
			$BB mount -t 9p -o "$NINEP,cache=mmap" share "/newroot$VM_SHARE" ||
			die "cannot mount the workspace at $VM_SHARE"
	fi
	[ -z "$VM_ROOT" ] || bundle_root
	i=0
	while [ "$i" -lt "${VM_RW_N:-0}" ]; do
		eval "p=\$VM_RW_$i"
		$BB mkdir -p "/newroot$p" &&
			$BB mount -t 9p -o "$NINEP,cache=mmap" "rw$i" "/newroot$p" ||
			die "cannot mount the writable directory $p"
		i=$((i + 1))
	done
	for d in dev proc sys; do $BB mount -o move /$d /newroot/$d; done
	exec $BB switch_root /newroot /run/vm/busybox sh /run/vm/init stage2
}

# guest_mount KIND OPTIONS SOURCE DEST: one mount of a plain bundle, DEST
# in its root R (the image's mount points are made as runc makes them)
guest_mount()
{
	kind=$1 opts=$2 src=$3 dest=$4 o=''
	[ "$opts" = - ] || o=$opts
	case $kind in
	bind)
		if [ -d "$BINDS/$src" ]; then
			$BB mkdir -p "$R$dest"
		else
			$BB mkdir -p "$R${dest%/*}" && { [ -e "$R$dest" ] || $BB touch "$R$dest"; }
		fi || die "cannot make the mount point $dest"
		$BB mount -o bind "$BINDS/$src" "$R$dest" || die "cannot bind $dest"
		case ,$o, in
		*,ro,*) $BB mount -o remount,bind,ro "$R$dest" || die "cannot make $dest read-only" ;;
		esac
		;;
	proc | sysfs | tmpfs | devpts | mqueue | cgroup2)
		$BB mkdir -p "$R$dest" || die "cannot make the mount point $dest"
		$BB mount -t "$kind" ${o:+-o "$o"} "$kind" "$R$dest" || die "cannot mount $kind on $dest"
		[ "$kind:$dest" != tmpfs:/dev ] || dev_nodes "$R/dev"
		;;
	*) die "a mount of type $kind cannot be made in the guest ($dest)" ;;
	esac
}

# dev_nodes DIR: the devices a container's /dev has (runtime-spec
# "Default Devices") and its links
dev_nodes()
{
	$BB mknod -m 666 "$1/null" c 1 3
	$BB mknod -m 666 "$1/zero" c 1 5
	$BB mknod -m 666 "$1/full" c 1 7
	$BB mknod -m 666 "$1/random" c 1 8
	$BB mknod -m 666 "$1/urandom" c 1 9
	$BB mknod -m 666 "$1/tty" c 5 0
	$BB ln -s pts/ptmx "$1/ptmx"
	$BB ln -s /proc/self/fd "$1/fd"
	$BB ln -s /proc/self/fd/0 "$1/stdin"
	$BB ln -s /proc/self/fd/1 "$1/stdout"
	$BB ln -s /proc/self/fd/2 "$1/stderr"
}

# bundle_root: a plain bundle's root at VM_ROOT with its mounts
bundle_root()
{
	R=/newroot$VM_ROOT
	o="$NINEP,cache=mmap"
	[ "$VM_ROOT_RO" != 1 ] || o="$o,ro"
	$BB mkdir -p "$R" && $BB mount -t 9p -o "$o" groot "$R" ||
		die "cannot mount the bundle's root"
	BINDS=/newroot/run/vm/binds
	if [ "$VM_BINDS" = 1 ]; then
		$BB mkdir -p "$BINDS" && $BB mount -t 9p -o "$NINEP,cache=mmap" binds "$BINDS" ||
			die "cannot mount the bundle's bind sources"
	fi
	while read -r kind opts src dest; do
		guest_mount "$kind" "$opts" "$src" "$dest"
	done </newroot/run/vm/ctl/mounts
	while read -r p; do
		[ -e "$R$p" ] || continue
		if [ -d "$R$p" ]; then
			$BB mount -t tmpfs -o ro tmpfs "$R$p"
		else
			$BB mount -o bind "$R/dev/null" "$R$p" 2>/dev/null ||
				$BB mount -o bind /dev/null "$R$p"
		fi || die "cannot mask $p"
	done </newroot/run/vm/ctl/masked
	while read -r p; do
		[ -e "$R$p" ] || continue
		$BB mount -o bind "$R$p" "$R$p" &&
			$BB mount -o remount,bind,ro "$R$p" || die "cannot make $p read-only"
	done </newroot/run/vm/ctl/readonly
}

# net_up: the NIC of QEMU's user-mode network (agentrun-vm), the only way
# out of the guest: 10.0.2.15, through the gateway 10.0.2.2 (QEMU, in the
# sandbox's network namespace); DNS at VM_DNS: the gateway with --net
# allow (the sandbox's 127.0.0.1:53, agentrun's DNS answering from the
# policy), slirp's forwarder 10.0.2.3 with --net host, none with
# VM_NET=publish (--publish alone: restricted, only the forwarded ports
# come in)
net_up()
{
	for n in /sys/class/net/*; do
		n=${n##*/}
		[ "$n" = lo ] && continue
		$BB ip link set "$n" up &&
			$BB ip addr add 10.0.2.15/24 dev "$n" &&
			$BB ip route add default via 10.0.2.2 dev "$n" ||
			die "cannot set up the network device $n"
		# the sandbox's resolv.conf may be /dev/null bound over it
		if [ -n "$VM_DNS" ]; then
			$BB rm -f /etc/resolv.conf
			echo "nameserver $VM_DNS" >/etc/resolv.conf
		fi
		return
	done
	die "no network device"
}

# find_port: PORT, the virtio port the host named "agent"
find_port()
{
	PORT=''
	for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		for p in /sys/class/virtio-ports/*; do
			[ "$($BB cat "$p/name" 2>/dev/null)" = agent ] && PORT=/dev/${p##*/}
		done
		[ -c "$PORT" ] && break
		$BB usleep 50000
	done
	[ -c "$PORT" ] || die "no virtio port named agent"
}

stage2()
{
	. $CTL/config
	$BB mkdir -p /dev/pts /dev/shm
	$BB mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts /dev/pts
	$BB ln -sf pts/ptmx /dev/ptmx
	$BB mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
	$BB ln -sf /proc/self/fd /dev/fd
	$BB ln -sf /proc/self/fd/0 /dev/stdin
	$BB ln -sf /proc/self/fd/1 /dev/stdout
	$BB ln -sf /proc/self/fd/2 /dev/stderr
	$BB hostname "${VM_HOSTNAME:-agentrun-sandbox}"
	$BB ip link set lo up 2>/dev/null
	[ -z "$VM_NET" ] || net_up
	# a plain bundle's linux.sysctl: this kernel's, through the proc of
	# this stage (the bundle's own /proc/sys may be read-only)
	while read -r key value; do
		[ -n "$key" ] || continue
		{ printf '%s\n' "$value" >"/proc/sys/$(echo "$key" | $BB tr . /)"; } 2>/dev/null ||
			die "linux.sysctl: cannot set $key to '$value'"
	done <$CTL/sysctl
	find_port
	$BB cut -d' ' -f1 /proc/uptime >$CTL/started
	# the guest agent (agentrun itself, from the sandbox's root): it
	# runs the command and each `sandbox exec` as VM_USER (no
	# capability, no-new-privs; 0:0 with --vm-guest-root: the guest's
	# full root, what a guest kernel exploit would give) and ends with
	# the command's exit status
	$BB env -i "/run/vm/root$VM_AGENT" vm-guest --port "$PORT" --user "$VM_USER" ${VM_ROOT:+--root "$VM_ROOT"} \
		</dev/null >/dev/console 2>&1
	echo $? >$CTL/status
	$BB sync
	$BB poweroff -f
}

case $1 in
stage2) stage2 ;;
*) stage1 ;;
esac
die "init fell through"
