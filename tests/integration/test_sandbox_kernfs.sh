#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The host's kernel settings stay out of the agent's reach, whoever
# starts the sandbox and with whatever option: /proc/sys (and
# /proc/sysrq-trigger, /proc/irq, /proc/bus, /proc/fs) are never open for
# writing inside, not with --nested as root either (the sandbox's root is
# the host's root there, and /proc/sys obeys that id, not capabilities:
# kernel.core_pattern = |payload would run a program as the host's root),
# nor through a fresh procfs mounted from a nested namespace; and no
# option binds the host's /proc, /sys or cgroup hierarchies.
#
# Nothing here changes a sysctl: every probe opens files with
# O_WRONLY|O_APPEND (the shell's `3>>FILE`) and writes nothing.
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

# The hostile agent: how many kernel-wide /proc files open for writing,
# whether core_pattern does; under --nested also a fresh procfs and sysfs
# mounted from a new user+pid+mount+net namespace (python3: the mount(2)
# must come from the process that unshared, before any exec).
write_probe()
{
	cat >"$WS/kprobe.sh" <<'EOF'
n=0 ns=0
for f in $(find /proc/sys /proc/irq /proc/bus /proc/fs -type f 2>/dev/null) /proc/sysrq-trigger; do
	[ -e "$f" ] || continue
	{ true 3>>"$f"; } 2>/dev/null || continue
	case "${f#/proc/sys/}" in
	net/* | user/* | fs/mqueue/* | kernel/ns_last_pid | kernel/pid_max | \
	kernel/hostname | kernel/domainname | kernel/shm* | kernel/msg* | \
	kernel/sem | kernel/sem_next_id | kernel/auto_msgmni)
		ns=$((ns + 1)) ;; # the sandbox's own namespaces
	*)
		n=$((n + 1))
		[ $n -le 5 ] && echo "writable: $f" ;;
	esac
done
echo "kernel-writable=$n namespaced-writable=$ns"
if { true 3>>/proc/sys/kernel/core_pattern; } 2>/dev/null; then
	echo CORE-PATTERN-OPEN
else
	echo core-pattern-refused
fi
if [ "${1:-}" = nested ] && command -v python3 >/dev/null; then
	python3 ./kprobe.py
fi
echo probe-done
EOF
	cat >"$WS/kprobe.py" <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
def mount(fs, target, flags):
    os.makedirs(target, exist_ok=True)
    r = libc.mount(fs.encode(), target.encode(), fs.encode(),
                   ctypes.c_ulong(flags), None)
    return "ok" if r == 0 else os.strerror(ctypes.get_errno())
# the namespaces this process owns: its net, user and pid namespaces
# (the ipc and uts ones are the sandbox's, not writable)
OWN = ("net/", "user/", "kernel/ns_last_pid", "kernel/pid_max")
def writable(top):
    n = 0
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            if os.path.relpath(p, top).startswith(OWN):
                continue
            try:
                os.close(os.open(p, os.O_WRONLY | os.O_APPEND))
                n += 1
                if n <= 5:
                    print("inner-writable:", p)
            except OSError:
                pass
    return n
# The cgroup hierarchies from a new user+mount+cgroup namespace: the v1
# ones are rooted where the sandbox sits in them, the host's root
# cgroups when no runtime placed it (their files belong to the host's
# root). Only opened, never written.
def cgroups():
    sys.stdout.flush()
    if os.fork():
        os.wait()
        return
    # CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWCGROUP
    if libc.unshare(0x10000000 | 0x20000 | 0x02000000) != 0:
        print("inner-cgroupns", os.strerror(ctypes.get_errno()))
        sys.stdout.flush()
        os._exit(0)
    v1 = [l.split(":")[1] for l in open("/proc/self/cgroup").read().split("\n")
          if l and not l.startswith("0:")]
    n = 0
    for opts in v1:
        t = "/tmp/kc-" + opts.replace(",", "_").replace("=", "_")
        os.makedirs(t, exist_ok=True)
        o = ("none," + opts) if opts.startswith("name=") else opts
        if libc.mount(b"cgroup", t.encode(), b"cgroup", ctypes.c_ulong(14),
                      o.encode()) != 0:
            print("inner-cgroup-v1-mount", opts, os.strerror(ctypes.get_errno()))
            continue
        n += writable(t)
    print("inner-cgroup-v1 hierarchies=%d writable=%d" % (len(v1), n))
    sys.stdout.flush()
    os._exit(0)
cgroups()
# CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET
if libc.unshare(0x10000000 | 0x20000 | 0x20000000 | 0x40000000) != 0:
    print("inner-unshare-failed", os.strerror(ctypes.get_errno()))
    sys.exit(0)
pid = os.fork()
if pid:
    os.waitpid(pid, 0)
    sys.exit(0)
NOSUID_NODEV_NOEXEC = 2 | 4 | 8
r = mount("proc", "/tmp/kp", NOSUID_NODEV_NOEXEC)
print("inner-proc-mount", r)
if r == "ok":
    print("inner-proc-writable=%d" % writable("/tmp/kp/sys"))
r = mount("sysfs", "/tmp/ks", NOSUID_NODEV_NOEXEC)
print("inner-sysfs-mount", r)
if r == "ok":
    print("inner-sysfs-writable=%d" % writable("/tmp/ks/kernel"))
EOF
	[ "$MODE" = root ] || chown "$TEST_UID:$TEST_GID" "$WS/kprobe.sh" "$WS/kprobe.py"
}

# check_probe OPTIONS...: run the probe under OPTIONS, assert nothing of
# the host's kernel settings opened for writing
check_probe()
{
	local nested=
	case " $* " in *" --nested "* | *nested.json*) nested=nested ;; esac
	assert_status 0 sb_run "$@" -- sh ./kprobe.sh $nested
	assert_contains "$OUT" probe-done "($*)"
	assert_contains "$OUT" "kernel-writable=0 " "($*): host-wide /proc files open for writing"
	# the sandbox's root: /proc/sys read-only, its own namespaces' too
	[ "$MODE" != root ] || assert_contains "$OUT" "namespaced-writable=0" "($*)"
	assert_contains "$OUT" core-pattern-refused "($*)"
	assert_not_contains "$OUT" CORE-PATTERN-OPEN "($*)"
	assert_not_contains "$OUT" "inner-writable:" "($*): a fresh procfs/sysfs inside"
	# root: the kernel refuses a fresh procfs (the masks make /proc not
	# fully visible); rootless: bwrap needs it and gets it
	# no host cgroup v1 file writable: root cannot make a cgroup
	# namespace of its own (no cgroup mount then), a user owns none
	if [ -n "$nested" ] && [[ $OUT == *"inner-cgroup-v1 hierarchies="* ]]; then
		assert_match "$OUT" "inner-cgroup-v1 hierarchies=[0-9]+ writable=0" "($*)"
	fi
	command -v python3 >/dev/null || return 0 # the inner probes need it
	if [ -n "$nested" ] && [ "$MODE" = root ]; then
		assert_contains "$OUT" "inner-proc-mount Operation not permitted" "($*)"
		assert_contains "$OUT" "inner-cgroupns Operation not permitted" "($*)"
	elif [ -n "$nested" ]; then
		assert_contains "$OUT" "inner-proc-writable=0" "($*)"
	fi
	echo "# $MODE $*: $(echo "$OUT" | grep -E 'kernel-writable|inner-' | tr '\n' ' ')"
}

kernfs_setup()
{
	sb_home "$1"
	printf '{"nested": true}\n' >"$H/nested.json"
	cp "$TOP_SRCDIR/contrib/profiles/claude.json" "$H/claude.json"
	sb_home_own
	write_probe
}

# The attack of issue 26: started by root with --nested, the agent opened
# 765 files of /proc/sys for writing, kernel.core_pattern among them.
t_root_nested()
{
	kernfs_setup root
	check_probe --nested
	assert_contains "$ERR" "/proc masked: host root"
	assert_contains "$ERR" "--nested started by root: /proc stays masked"
	# nesting itself stays allowed, a cgroup namespace does not
	assert_status 0 sb_run --nested -- sh -c '
		unshare -U true && echo userns-ok
		unshare -U -C true 2>/dev/null || echo cgroupns-refused'
	assert_contains "$OUT" userns-ok
	assert_contains "$OUT" cgroupns-refused
	check_probe --profile "$H/nested.json"
	check_probe --nested --net host
	check_probe --nested --net allow=example.com
	check_probe --nested --landlock off
	check_probe --nested --profile "$H/claude.json"
	check_probe --nested --audit "$TEST_TMP/audit.jsonl"
	check_probe --nested --learn "$TEST_TMP/learned.json"
	check_probe --nested --overlay --name "kernfs-$$"
	"$AGENTRUN" --root "$AR_ROOT" discard "kernfs-$$" >/dev/null 2>&1 || true
	check_probe --nested --name "kernfs-s-$$"
}

t_root_plain()
{
	kernfs_setup root
	check_probe
	check_probe --net host
	check_probe --net allow=example.com
	check_probe --landlock off
	check_probe --profile "$H/claude.json"
	check_probe --audit "$TEST_TMP/audit.jsonl"
	check_probe --learn "$TEST_TMP/learned.json"
	check_probe --overlay --name "kernfs-o-$$"
	"$AGENTRUN" --root "$AR_ROOT" discard "kernfs-o-$$" >/dev/null 2>&1 || true
}

# Rootless: /proc stays unmasked under --nested (bubblewrap needs it), and
# nothing of the host's is writable: the sandbox's ids are not root's.
t_user()
{
	kernfs_setup user
	check_probe
	check_probe --nested
	assert_contains "$ERR" "/proc unmasked)"
	assert_not_contains "$ERR" "started by root"
	check_probe --nested --net host
	check_probe --profile "$H/nested.json"
}

# No option binds the host's kernel interfaces: a clear error, nothing run.
refused()
{
	local needle=$1
	shift
	assert_status 1 sb_run "$@" -- echo RAN
	assert_not_contains "$OUT" RAN "($*)"
	assert_contains "$ERR" "$needle" "($*)"
}

check_refusals()
{
	local k="is a kernel interface of the host"
	refused "--rw \`/proc/sys\`: \`/proc/sys\` $k" --rw /proc/sys
	refused "$k" --rw /proc/sys/kernel
	refused "$k" --rw /proc
	refused "$k" --ro /proc/sys
	refused "$k" --rw /sys
	refused "$k" --rw /sys/kernel
	refused "$k" --ro /sys/kernel
	[ ! -d /sys/fs/cgroup ] || refused "$k" --rw /sys/fs/cgroup
	refused "$k" --rw /proc/self/root/proc/sys
	refused "$k" --rw "$H/sysctl-link"
	refused "--workspace \`/proc/sys\`" --workspace /proc/sys
	refused "--hide \`/proc/sys\`: /proc is the sandbox's own" --hide /proc/sys
	refused "rw \`/proc/sys\`: \`/proc/sys\` $k" --profile "$H/rwproc.json"
	# --etc is a name below /etc, not a way out of it
	refused "--etc \`../proc/sys\`: a name below /etc" --etc ../proc/sys
	refused "--etc \`ssl/../../proc\`: a name below /etc" --etc ssl/../../proc
	refused "--etc \`/proc/sys\`: a name below /etc" --etc /proc/sys
	# (before: it showed a secret store that --ro refuses)
	refused "--etc \`..$H/.ssh\`: a name below /etc" --etc "..$H/.ssh"
	refused "expected a name relative to /etc" --profile "$H/etcproc.json"
}

t_refused_options()
{
	local m
	for m in root user; do
		(
			sb_home $m
			ln -s /proc/sys "$H/sysctl-link"
			printf '{"rw": ["/proc/sys"]}\n' >"$H/rwproc.json"
			printf '{"etc": ["../proc"]}\n' >"$H/etcproc.json"
			mkdir -p "$H/.ssh"
			echo PRIVATE-KEY >"$H/.ssh/id_ed25519"
			sb_home_own
			check_refusals
		)
	done
}

# A directory holding a procfs mount (a chroot, a container's rootfs):
# a recursive bind would bring the host's /proc along.
t_refused_tree_with_proc()
{
	local d
	kernfs_setup root
	d=$TEST_TMP/chroot-$RANDOM
	mkdir -p "$d/proc"
	mount -t proc proc "$d/proc" || skip "cannot mount a procfs here"
	defer umount -l "$d/proc"
	refused "it holds \`$d/proc\`, a proc mount" --rw "$d"
	refused "it holds \`$d/proc\`, a proc mount" --ro "$d"
	refused "it holds \`$d/proc\`, a proc mount" --workspace "$d"
	umount "$d/proc"
	assert_status 0 sb_run --ro "$d" -- true
}

run_test "root --nested (and every option with it): no host kernel setting writable" t_root_nested
run_test "root without --nested, every option: no host kernel setting writable" t_root_plain
run_test "rootless, with and without --nested: no host kernel setting writable" t_user
run_test "--rw/--ro/--hide/--workspace/--etc/profile on /proc or /sys: refused" t_refused_options
run_test "a bind holding a procfs mount: refused" t_refused_tree_with_proc
finish
