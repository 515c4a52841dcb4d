#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The container root filesystem through `agentrun run`: mounts and their
# flags, devices, masked and read-only paths, sysctl, --no-pivot, rootless,
# and rootfs symlinks that try to make a mount land on the host.
. "$(dirname "$0")/../lib.sh"

# mnt_opts MOUNTINFO MOUNTPOINT: per-mount options of the topmost mount there
mnt_opts()
{
	awk -v mp="$2" '$5 == mp { o = $6 } END { print o }' <<<"$1"
}

# mnt_type MOUNTINFO MOUNTPOINT: fs type of the topmost mount there
mnt_type()
{
	awk -v mp="$2" '$5 == mp { for (i = 7; i <= NF; i++) if ($i == "-") {
		t = $(i + 1); break } } END { print t }' <<<"$1"
}

assert_opt()
{
	local info=$1 mp=$2 opt=$3 opts
	opts=$(mnt_opts "$info" "$mp")
	[ -n "$opts" ] || fail "nothing mounted at $mp"
	[[ ",$opts," == *",$opt,"* ]] || fail "$mp: '$opt' not in '$opts'"
}

# run_sh BUNDLE SCRIPT: run `sh -c SCRIPT` in a new container as root
run_sh()
{
	local b=$1 id
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c",$s]' --arg s "$2"
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
}

t_default_mounts()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/default info
	make_bundle "$b"
	run_sh "$b" 'cat /proc/self/mountinfo'
	info=$OUT
	assert_opt "$info" / ro
	assert_opt "$info" /proc nosuid
	assert_opt "$info" /proc noexec
	assert_opt "$info" /proc nodev
	assert_eq "$(mnt_type "$info" /proc)" proc
	assert_eq "$(mnt_type "$info" /dev)" tmpfs
	assert_opt "$info" /dev nosuid
	assert_eq "$(mnt_type "$info" /dev/pts)" devpts
	assert_opt "$info" /dev/pts noexec
	assert_eq "$(mnt_type "$info" /dev/shm)" tmpfs
	assert_eq "$(mnt_type "$info" /sys)" sysfs
	assert_opt "$info" /sys ro
	assert_opt "$info" /proc/sys ro
	# nothing of the host's mount table came along
	assert_not_contains "$(awk '{ print $5 }' <<<"$info")" /mnt/
	assert_not_contains "$(awk '{ print $5 }' <<<"$info")" "$TEST_TMP"
}

t_devices()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/devices
	make_bundle "$b"
	config_set "$b" '.linux.devices=[{"path":"/dev/fuse","type":"c",
		"major":10,"minor":229,"fileMode":416,"uid":0,"gid":0}]'
	run_sh "$b" 'for d in null zero full random urandom tty fuse; do
			stat -c "%n %F %t:%T %a" /dev/$d; done
		for l in ptmx fd stdin stdout stderr; do readlink /dev/$l; done
		echo x >/dev/null && echo null-ok
		head -c 4 /dev/zero | wc -c'
	assert_contains "$OUT" "/dev/null character special file 1:3 666"
	assert_contains "$OUT" "/dev/zero character special file 1:5 666"
	assert_contains "$OUT" "/dev/full character special file 1:7 666"
	assert_contains "$OUT" "/dev/random character special file 1:8 666"
	assert_contains "$OUT" "/dev/urandom character special file 1:9 666"
	assert_contains "$OUT" "/dev/tty character special file 5:0 666"
	assert_contains "$OUT" "/dev/fuse character special file a:e5 640"
	assert_contains "$OUT" "pts/ptmx"
	assert_contains "$OUT" "/proc/self/fd"
	assert_contains "$OUT" "/proc/self/fd/2"
	assert_contains "$OUT" null-ok
}

t_masked_readonly_sysctl()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/masked
	make_bundle "$b"
	config_set "$b" '.linux.maskedPaths=["/proc/keys","/proc/acpi",
		"/proc/no-such-file"] |
		.linux.readonlyPaths=["/proc/sys","/proc/irq"] |
		.linux.sysctl={"kernel.msgmax":"4242"}'
	run_sh "$b" 'echo keys=$(wc -c </proc/keys)
		echo acpi=$(ls -A /proc/acpi | wc -l)
		touch /proc/acpi/x 2>/dev/null || echo acpi-ro
		echo msgmax=$(cat /proc/sys/kernel/msgmax)
		echo 1 >/proc/sys/kernel/msgmax 2>/dev/null || echo sys-ro
		grep -E " /proc/(keys|acpi|sys|irq) " /proc/self/mountinfo'
	assert_contains "$OUT" "keys=0"
	assert_contains "$OUT" "acpi=0"
	assert_contains "$OUT" acpi-ro
	assert_contains "$OUT" msgmax=4242
	assert_contains "$OUT" sys-ro
	assert_match "$OUT" "/proc/irq ro,"
	# the host's value is untouched (the container has its own ipc ns)
	assert_ne "$(cat /proc/sys/kernel/msgmax)" 4242
}

t_bind_mounts()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/binds d=$TEST_TMP/hostdata info
	make_bundle "$b"
	mkdir -p "$d/sub"
	echo hello >"$d/file"
	mount -t tmpfs sub "$d/sub"
	defer umount -l "$d/sub"
	config_set "$b" '.mounts += [
		{"destination":"/data","type":"bind","source":$d,
		 "options":["rbind","ro","nosuid"]},
		{"destination":"/rdata","type":"bind","source":$d,
		 "options":["rbind","rro"]},
		{"destination":"/etc/hostfile","type":"none","source":($d+"/file"),
		 "options":["bind","ro"]},
		{"destination":"/copy","type":"tmpfs","source":"tmpfs",
		 "options":["tmpcopyup"]}]' --arg d "$d"
	mkdir -p "$b/rootfs/copy" && echo seed >"$b/rootfs/copy/seed"
	run_sh "$b" 'cat /etc/hostfile /copy/seed
		touch /data/x 2>/dev/null || echo data-ro
		touch /data/sub/x && echo sub-rw
		touch /rdata/sub/y 2>/dev/null || echo rsub-ro
		cat /proc/self/mountinfo'
	info=$OUT
	assert_contains "$OUT" hello
	assert_contains "$OUT" seed
	assert_contains "$OUT" data-ro
	assert_contains "$OUT" sub-rw
	assert_contains "$OUT" rsub-ro
	assert_opt "$info" /data nosuid
	assert_opt "$info" /rdata/sub ro
	assert_opt "$info" /etc/hostfile ro
	[ -e "$d/sub/x" ] || fail "write to the rw submount did not reach the host"
}

t_no_pivot()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/nopivot id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c","ls /bin/busybox; grep -c . /proc/self/mountinfo"]'
	defer ar delete --force "$id"
	assert_status 0 ar run --no-pivot --bundle "$b" "$id"
	assert_contains "$OUT" /bin/busybox
}

# A mount target that is a symlink to a host directory: the mount is made
# at the symlink's target *inside* the rootfs, the host dir stays empty.
t_symlink_target_stays_inside()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/escape host=$TEST_TMP/hostside
	make_bundle "$b"
	mkdir -p "$host"
	ln -s "$host" "$b/rootfs/escape"
	ln -s ../../../../../../../../../.. "$b/rootfs/up"
	config_set "$b" '.mounts += [
		{"destination":"/escape/inner","type":"tmpfs","source":"tmpfs"},
		{"destination":"/up/etc/agentrun-escape","type":"tmpfs",
		 "source":"tmpfs"}]'
	run_sh "$b" 'grep -E "(inner|agentrun-escape) " /proc/self/mountinfo'
	assert_contains "$OUT" "$host/inner"
	assert_contains "$OUT" " /etc/agentrun-escape "
	[ ! -e "$host/inner" ] || fail "mount target created on the host"
	[ ! -e /etc/agentrun-escape ] || fail "/etc/agentrun-escape created on the host"
	[ -d "$b/rootfs$host/inner" ] || fail "target not created inside the rootfs"
	[ -d "$b/rootfs/etc/agentrun-escape" ] || fail "target not inside the rootfs"
}

# The rootfs's /proc is a symlink to "/": proc must not be mounted over the
# host's root (nor over the whole rootfs): the container fails cleanly.
t_proc_symlink_to_root()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/procslash id before after
	make_bundle "$b"
	rmdir "$b/rootfs/proc"
	ln -s / "$b/rootfs/proc"
	id=$(unique_id)
	config_set "$b" '.process.args=["true"]'
	defer ar delete --force "$id"
	before=$(grep -c . /proc/self/mountinfo)
	assert_status '!0' ar run --bundle "$b" "$id"
	assert_contains "$ERR" 'mount on "/proc" (mounts[0]): resolves to the root'
	after=$(grep -c . /proc/self/mountinfo)
	assert_eq "$after" "$before" "host mount table changed"
	assert_eq "$(stat -f -c %T /)" "$(stat -f -c %T /etc)"
	[ -d /etc ] && [ -r /etc/passwd ] || fail "host / damaged"
}

t_idmapped_bind()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/idmap d=$TEST_TMP/idmapdata v
	# tmpfs supports idmapped mounts since Linux 6.3
	v=$(uname -r | awk -F. '{ print $1 * 1000 + $2 }')
	if [ "$(stat -f -c %T "$TEST_TMP")" = tmpfs ] && [ "$v" -lt 6003 ]; then
		skip "no idmapped mounts on tmpfs before Linux 6.3"
	fi
	make_bundle "$b"
	mkdir -p "$d"
	echo x >"$d/file"
	chown 0:0 "$d/file"
	config_set "$b" '.mounts += [{"destination":"/idm","type":"bind",
		"source":$d,"options":["bind","idmap"],
		"uidMappings":[{"containerID":0,"hostID":4321,"size":1}],
		"gidMappings":[{"containerID":0,"hostID":4321,"size":1}]}]' \
		--arg d "$d"
	run_sh "$b" 'stat -c "%u:%g" /idm/file'
	assert_eq "$OUT" 4321:4321
	assert_eq "$(stat -c %u:%g "$d/file")" 0:0 "host file changed owner"
}

t_mount_error_names_entry()
{
	require_root
	require_cmd jq
	local b=$TEST_TMP/err id
	make_bundle "$b"
	id=$(unique_id)
	config_set "$b" '.process.args=["true"] | .mounts += [
		{"destination":"/x","type":"nosuchfs","source":"src"}]'
	defer ar delete --force "$id"
	assert_status '!0' ar run --bundle "$b" "$id"
	assert_contains "$ERR" 'mount "src" on "/x" (mounts['
	assert_contains "$ERR" "No such device"
}

t_rootless()
{
	require_cmd jq
	ensure_test_user
	require_agentrun_as_test_user
	local b=$TEST_TMP/rootless id info
	make_bundle_as_test_user "$b" --rootless
	id=$(unique_id)
	config_set "$b" '.process.args=["sh","-c",
		"cat /proc/self/mountinfo; stat -c \"%n %t:%T\" /dev/null /dev/zero; echo x >/dev/null && echo null-ok"]'
	defer ar_user delete --force "$id"
	assert_status 0 ar_user run --bundle "$b" "$id"
	info=$OUT
	assert_contains "$OUT" "/dev/null 1:3"
	assert_contains "$OUT" "/dev/zero 1:5"
	assert_contains "$OUT" null-ok
	# devices are bind mounts of the host's nodes
	assert_match "$info" " /dev/null "
	assert_opt "$info" / ro
	assert_opt "$info" /proc nosuid
	[ -n "$(mnt_opts "$info" /sys)" ] || fail "no /sys"
	assert_opt "$info" /sys ro
}

run_test "default mounts and flags" t_default_mounts
run_test "default and configured devices" t_devices
run_test "maskedPaths, readonlyPaths, sysctl" t_masked_readonly_sysctl
run_test "bind, rbind, rro, file bind, tmpcopyup" t_bind_mounts
run_test "--no-pivot" t_no_pivot
run_test "symlinked mount targets stay in the rootfs" t_symlink_target_stays_inside
run_test "rootfs /proc -> / fails cleanly, host untouched" t_proc_symlink_to_root
run_test "idmapped bind mount" t_idmapped_bind
run_test "mount errors name the entry" t_mount_error_names_entry
run_test "rootless: device binds, /sys, flags" t_rootless
finish
