#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/conformance/podman-system.sh — podman's own system tests (the bats
# files of podman's test/system/) with podman driving crun, then agentrun,
# on the same machine, file by file (not part of `make check`: it needs
# podman's sources and takes minutes per file).
#
#   tests/conformance/podman-system.sh [-f FILES] [-t REGEX] [-m MODES] [-r RUNTIMES] [-o OUTDIR] [-T]
#
# -f  the bats files, by name or number ("030-run 055" or "030 055");
#     default: a quick set (see QUICK below)
# -t  only the tests whose name matches REGEX (bats --filter)
# -m  root, rootless or "root rootless" (default)
# -r  runtimes (default "crun agentrun"); "agentrun-as-crun" is agentrun
#     under the name crun (see below)
# -T  print the table of the results already in OUTDIR without running
#
# What runs: the installed podman (Debian 12's 4.3.1) and bats, the tests
# of the matching podman version (PODMAN_SRC, a tree holding test/system;
# default /work/conform-src/podman, made with `git archive` of PODMAN_REF
# (v4.3.1) from PODMAN_GIT (the mirror /work/.mirror/containers+podman/repo)
# when missing). The tests want quay.io/libpod/testimage:20220615 (an
# Alpine with busybox-extras; test/system/build-testimage): with no network
# here, a stand-in of the same name is built from Debian's busybox-static
# with what the tests read of it (Alpine's /etc/passwd, /etc/group,
# /etc/os-release, /etc/alpine-release; /home/podman/testimage-id holding
# the tag with mtime 1600000000; /home/podman/pause; WORKDIR /home/podman;
# its CMD and labels). Tests that pull other images or need the network
# fail for both runtimes alike, and so do not count against either.
#
# Isolation: each runtime and mode has storage, configuration and state of
# its own under WORK (default /var/tmp/agentrun-podman-system):
# CONTAINERS_CONF (cgroupfs manager, file events, the runtime by name:
# `crun` or `agentrun`, registered in [engine.runtimes]),
# CONTAINERS_STORAGE_CONF, CONTAINERS_REGISTRIES_CONF (podman's
# test/registries.conf). Every file runs as root inside
# tests/bench/in-cgroup-ns.sh (a private mount + cgroup namespace on a fresh
# cgroup2 mount of an empty child of the v2 tree: crun 1.8 refuses a hybrid
# host's cgroups otherwise) and in a network namespace of its own (lo up;
# podman's CNI bridge and its iptables rules stay in it), with tmpfs on
# /var/lib/cni and /run/netns there, a /dev/shm of its own (podman's lock
# segment is one per user: two runs side by side shared it, and rootless
# containers vanished, "no such container", for both runtimes), a fresh
# runroot and tmp_dir. Rootless,
# bats runs as the test user of tests/lib.sh (agentrun-test, its subuid
# ranges) with HOME and XDG_RUNTIME_DIR of its own under WORK (so its pause
# process is podman's of this run, never another rootless podman's).
# crun runs through the RLIMIT_MEMLOCK shim of tests/conformance/run.sh when
# root lacks CAP_SYS_RESOURCE (a wrapper named crun: podman keys features
# on the name). default_ulimits are the host's hard limits (raising them
# needs CAP_SYS_RESOURCE too), and pids_limit is 0: podman's default of
# 2048 needs a pids controller, which the v2 tree of a hybrid host lacks
# (crun and agentrun both refuse the limit there; so do both for the tests'
# own --memory, --cpus..., which then count for neither). cgroups is
# "no-conmon": podman's cgroup for conmon fails there too (enabling its
# controllers), and its warning in every command's output failed half the
# tests for both runtimes. Root pods: podman's pod cgroup
# (/libpod_parent/POD) writes "+" (no controllers) into cgroup.subtree_control
# and fails; /dev/null is bound over the two files it writes (see inside.sh).
#
# agentrun-as-crun: agentrun registered as `crun` (runtime = "crun", the
# path a symlink named crun to the copy of agentrun under test), for the
# tests podman's helpers gate on the runtime's name (170-run-userns's
# `_require_crun`: the --group-add keep-groups tests); its results go under
# the name agentrun-as-crun (-r "crun agentrun-as-crun" compares them).
#
# Output: OUTDIR (default WORK/out) has MODE/RUNTIME/FILE.tap (bats --tap)
# and .err; results.tsv (mode, test, result per runtime); stdout gets, per
# mode and file, passed/failed/skipped per runtime, then the tests crun
# passes and agentrun fails.
#
# Environment: AGENTRUN (default build/agentrun), CRUN, WORK, PODMAN_SRC,
# FILE_TIMEOUT (seconds per file and runtime, default 1800), PARALLEL (1: the
# runtimes one after the other, the default: the tests measure time).

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
WORK=${WORK:-/var/tmp/agentrun-podman-system}
OUT=
AGENTRUN=${AGENTRUN:-$TOP/build/agentrun}
CRUN=${CRUN:-$(command -v crun || true)}
RUNTIMES=${RUNTIMES:-crun agentrun}
MODES=${MODES:-root rootless}
PODMAN_SRC=${PODMAN_SRC:-/work/conform-src/podman}
PODMAN_GIT=${PODMAN_GIT:-/work/.mirror/containers+podman/repo}
PODMAN_REF=${PODMAN_REF:-v4.3.1}
FILE_TIMEOUT=${FILE_TIMEOUT:-1800}
PARALLEL=${PARALLEL:-1}
TEST_USER=${TEST_USER:-agentrun-test}
IMAGE_TAG=20220615
IMAGE=quay.io/libpod/testimage:$IMAGE_TAG
NONLOCAL_IMAGE=quay.io/libpod/testimage:00000004
REGISTRY=127.0.0.1:5099
QUICK="001-basic 010-images 030-run 055-rm 075-exec 130-kill 160-volumes"
FILES=$QUICK

NORUN=
FILTER=
while getopts "f:t:m:r:o:Th" o; do
	case $o in
	f) FILES=$OPTARG ;;
	t) FILTER=$OPTARG ;;
	m) MODES=$OPTARG ;;
	r) RUNTIMES=$OPTARG ;;
	o) OUT=$OPTARG ;;
	T) NORUN=1 ;;
	*)
		sed -n '3,60p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done
OUT=${OUT:-$WORK/out}

die()
{
	echo "podman-system: $*" >&2
	exit 1
}

# ---- results -----------------------------------------------------------------

# tap_results TAPFILE: "NAME<TAB>PASS|FAIL|SKIP" per test of a bats TAP file
tap_results()
{
	awk '/^(not )?ok [0-9]+/ {
		res = /^not ok/ ? "FAIL" : "PASS"
		if ($0 ~ / # [Ss][Kk][Ii][Pp]/) res = "SKIP"
		line = $0
		sub(/^(not )?ok [0-9]+ /, "", line)
		sub(/ # [Ss][Kk][Ii][Pp].*$/, "", line)
		print line "\t" res
	}' "$1"
}

table()
{
	local mode f n r1 r2 T
	set -- $RUNTIMES
	r1=$1
	r2=${2:-$1}
	T=$(mktemp -d)
	: >"$OUT/results.tsv"
	for mode in $MODES; do
		[ -d "$OUT/$mode/$r1" ] || [ -d "$OUT/$mode/$r2" ] || continue
		echo "== $mode: per file, passed/failed/skipped (a file that did not finish: its missing tests as -)"
		printf '%-28s %-16s %-16s\n' file "$r1" "$r2"
		for f in $(ls "$OUT/$mode/$r1" "$OUT/$mode/$r2" 2>/dev/null | grep '\.tap$' | sort -u); do
			n=${f%.tap}
			local r
			for r in "$r1" "$r2"; do
				if [ -f "$OUT/$mode/$r/$f" ]; then
					tap_results "$OUT/$mode/$r/$f" | sort -t "$(printf '\t')" -k1,1 >"$T/$r"
				else
					: >"$T/$r"
				fi
			done
			join -t "$(printf '\t')" -a1 -a2 -e - -o 0,1.2,2.2 "$T/$r1" "$T/$r2" |
				awk -v m="$mode" -v f="$n" -F'\t' '{ print m "\t" f ": " $1 "\t" $2 "\t" $3 }' >>"$OUT/results.tsv"
			printf '%-28s %-16s %-16s\n' "$n" \
				"$(awk -F'\t' '{ c[$2]++ } END { printf "%d/%d/%d", c["PASS"], c["FAIL"], c["SKIP"] }' "$T/$r1")" \
				"$(awk -F'\t' '{ c[$2]++ } END { printf "%d/%d/%d", c["PASS"], c["FAIL"], c["SKIP"] }' "$T/$r2")"
		done
		awk -F'\t' -v m="$mode" '$1 == m { for (i = 3; i <= 4; i++) c[i, $i]++ }
			END { printf "%-28s %-16s %-16s\n", "total",
				sprintf("%d/%d/%d", c[3, "PASS"], c[3, "FAIL"], c[3, "SKIP"]),
				sprintf("%d/%d/%d", c[4, "PASS"], c[4, "FAIL"], c[4, "SKIP"]) }' "$OUT/results.tsv"
		echo
		echo "-- $mode: $r1 passes, $r2 does not:"
		awk -F'\t' -v m="$mode" '$1 == m && $3 == "PASS" && $4 != "PASS" { print "   " $2 " (" $4 ")"; n++ }
			END { if (!n) print "   (none)" }' "$OUT/results.tsv"
		echo "-- $mode: $r2 passes, $r1 does not:"
		awk -F'\t' -v m="$mode" '$1 == m && $4 == "PASS" && $3 != "PASS" { print "   " $2 " (" $3 ")"; n++ }
			END { if (!n) print "   (none)" }' "$OUT/results.tsv"
		echo
	done
	rm -rf "$T"
}

if [ -n "$NORUN" ]; then
	table
	exit 0
fi

# ---- set-up ------------------------------------------------------------------

[ "$(id -u)" = 0 ] || die "needs root (the runtimes run in a cgroup namespace of their own)"
[ -x "$AGENTRUN" ] || die "no agentrun at $AGENTRUN (build it, or set AGENTRUN)"
mkdir -p "$WORK/bin" && chmod 755 "$WORK" "$WORK/bin" || die "cannot make $WORK/bin"
# A copy: a rebuild during the run does not change the binary under test.
cp "$AGENTRUN" "$WORK/bin/agentrun.$$" && chmod 755 "$WORK/bin/agentrun.$$" ||
	die "cannot copy $AGENTRUN"
AGENTRUN=$WORK/bin/agentrun.$$
# agentrun-as-crun: a symlink named crun to that copy (see the header)
mkdir -p "$WORK/bin/as-crun.$$" && ln -sf "$AGENTRUN" "$WORK/bin/as-crun.$$/crun" &&
	chmod 755 "$WORK/bin/as-crun.$$" || die "cannot make $WORK/bin/as-crun.$$"
trap 'rm -rf "$WORK/bin/agentrun.$$" "$WORK/bin/as-crun.$$"' EXIT
for c in podman conmon bats unshare setpriv ip; do
	command -v "$c" >/dev/null || die "no $c"
done
case " $RUNTIMES " in *" crun "*) [ -x "$CRUN" ] || die "no crun (set CRUN)" ;; esac
for rt in $RUNTIMES; do
	case $rt in crun | agentrun | agentrun-as-crun) ;; *) command -v "$rt" >/dev/null || die "no runtime $rt" ;; esac
done

if [ ! -f "$PODMAN_SRC/test/system/helpers.bash" ]; then
	[ -d "$PODMAN_GIT" ] || die "no podman sources: set PODMAN_SRC or PODMAN_GIT"
	mkdir -p "$PODMAN_SRC" &&
		git --git-dir="$PODMAN_GIT" archive "$PODMAN_REF" test/system test/registries.conf |
		tar -x -C "$PODMAN_SRC" || die "git archive $PODMAN_REF of $PODMAN_GIT failed"
fi
mkdir -p "$OUT" || die "cannot make $OUT"
# The sources where the test user can read them (once: a run in progress
# has its working directory there).
SYS=$WORK/src/test/system
if [ ! -f "$SYS/helpers.bash" ]; then
	rm -rf "$WORK/src" && mkdir -p "$WORK/src" && cp -a "$PODMAN_SRC/test" "$WORK/src/" &&
		chmod -R a+rX "$WORK/src" || die "cannot copy the sources"
fi

# Expand file names: "030" -> "030-run.bats".
BATS_FILES=
for f in $FILES; do
	m=$(cd "$SYS" && ls -- "${f%.bats}"*.bats 2>/dev/null | head -1)
	[ -n "$m" ] || die "no bats file $f in $SYS"
	BATS_FILES="$BATS_FILES $m"
done

# crun through the RLIMIT_MEMLOCK shim of run.sh (see there) without
# CAP_SYS_RESOURCE; the wrapper is named crun (podman keys on the name).
capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
CRUN_PATH=$CRUN
if [ -n "$CRUN" ] && [ $((0x$capeff & (1 << 24))) = 0 ]; then
	mkdir -p "$WORK/crun-shim"
	if [ ! -x "$WORK/crun-shim/crun" ]; then
		gcc -shared -fPIC -O2 -o "$WORK/crun-shim/memlock.so" "$HERE/memlock-shim.c" -ldl ||
			die "cannot build the memlock shim"
		printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$WORK/crun-shim/memlock.so" "$CRUN" \
			>"$WORK/crun-shim/crun"
		chmod 755 "$WORK/crun-shim" "$WORK/crun-shim/crun" "$WORK/crun-shim/memlock.so"
	fi
	echo "podman-system: no CAP_SYS_RESOURCE: crun runs as $WORK/crun-shim/crun (RLIMIT_MEMLOCK shim)" >&2
	CRUN_PATH=$WORK/crun-shim/crun
fi

runtime_path()
{
	case $1 in
	crun) echo "$CRUN_PATH" ;;
	agentrun) echo "$AGENTRUN" ;;
	agentrun-as-crun) echo "$WORK/bin/as-crun.$$/crun" ;;
	*) command -v "$1" ;;
	esac
}

case " $MODES " in
*" rootless "*)
	TEST_UID=$(id -u "$TEST_USER") && TEST_GID=$(id -g "$TEST_USER") ||
		die "no user $TEST_USER (run the rootless integration tests once: they create it)"
	grep -q "^$TEST_USER:" /etc/subuid && grep -q "^$TEST_USER:" /etc/subgid ||
		die "$TEST_USER has no subordinate ids"
	setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups test -x "$AGENTRUN" ||
		die "$AGENTRUN is not executable by $TEST_USER"
	;;
esac

# The stand-in for quay.io/libpod/testimage:20220615, as a tar.
build_image_tar()
{
	local r=$WORK/testimage.rootfs bb a
	[ -s "$WORK/testimage.tar" ] && return
	bb=$(command -v busybox) || bb=/bin/busybox
	[ -x "$bb" ] && file -L "$bb" 2>/dev/null | grep -q static ||
		die "needs Debian's busybox-static"
	rm -rf "$r" && mkdir -p "$r"/{bin,sbin,usr/bin,usr/sbin,etc,root,tmp,var/tmp,home/podman,proc,sys,dev,run,mnt}
	chmod 1777 "$r/tmp" "$r/var/tmp"
	chmod 700 "$r/root"
	cp "$bb" "$r/bin/busybox"
	# Alpine's busybox has printenv, Debian's has not: a static one.
	printf '%s\n' '#include <stdio.h>' '#include <stdlib.h>' '#include <string.h>' \
		'extern char **environ;' \
		'int main(int argc, char **argv) {' \
		'	int rc = 0;' \
		'	if (argc < 2) { for (char **e = environ; *e; e++) puts(*e); return 0; }' \
		'	for (int i = 1; i < argc; i++) { const char *v = getenv(argv[i]); if (v) puts(v); else rc = 1; }' \
		'	return rc;' '}' >"$WORK/printenv.c"
	gcc -static -O2 -o "$r/bin/printenv" "$WORK/printenv.c" || die "cannot build printenv (needs a static libc)"
	for a in $("$bb" --list-full); do
		[ -e "$r/$a" ] || ln -s /bin/busybox "$r/$a"
	done
	cat >"$r/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/ash
bin:x:1:1:bin:/bin:/sbin/nologin
daemon:x:2:2:daemon:/sbin:/sbin/nologin
adm:x:3:4:adm:/var/adm:/sbin/nologin
lp:x:4:7:lp:/var/spool/lpd:/sbin/nologin
sync:x:5:0:sync:/sbin:/bin/sync
shutdown:x:6:0:shutdown:/sbin:/sbin/shutdown
halt:x:7:0:halt:/sbin:/sbin/halt
mail:x:8:12:mail:/var/mail:/sbin/nologin
news:x:9:13:news:/usr/lib/news:/sbin/nologin
uucp:x:10:14:uucp:/var/spool/uucppublic:/sbin/nologin
operator:x:11:0:operator:/root:/sbin/nologin
man:x:13:15:man:/usr/man:/sbin/nologin
postmaster:x:14:12:postmaster:/var/mail:/sbin/nologin
cron:x:16:16:cron:/var/spool/cron:/sbin/nologin
ftp:x:21:21::/var/lib/ftp:/sbin/nologin
sshd:x:22:22:sshd:/dev/null:/sbin/nologin
at:x:25:25:at:/var/spool/cron/atjobs:/sbin/nologin
squid:x:31:31:Squid:/var/cache/squid:/sbin/nologin
xfs:x:33:33:X Font Server:/etc/X11/fs:/sbin/nologin
games:x:35:35:games:/usr/games:/sbin/nologin
cyrus:x:85:12::/usr/cyrus:/sbin/nologin
vpopmail:x:89:89::/var/vpopmail:/sbin/nologin
ntp:x:123:123:NTP:/var/empty:/sbin/nologin
smmsp:x:209:209:smmsp:/var/spool/mqueue:/sbin/nologin
guest:x:405:100:guest:/dev/null:/sbin/nologin
nobody:x:65534:65534:nobody:/:/sbin/nologin
EOF
	cat >"$r/etc/group" <<'EOF'
root:x:0:root
bin:x:1:root,bin,daemon
daemon:x:2:root,bin,daemon
sys:x:3:root,bin,adm
adm:x:4:root,adm,daemon
tty:x:5:
disk:x:6:root,adm
lp:x:7:lp
mem:x:8:
kmem:x:9:
wheel:x:10:root
floppy:x:11:root
mail:x:12:mail
news:x:13:news
uucp:x:14:uucp
man:x:15:man
cron:x:16:cron
console:x:17:
audio:x:18:
cdrom:x:19:
dialout:x:20:root
ftp:x:21:
sshd:x:22:
input:x:23:
at:x:25:at
tape:x:26:root
video:x:27:root
netdev:x:28:
readproc:x:30:
squid:x:31:squid
xfs:x:33:xfs
kvm:x:34:kvm
games:x:35:
shadow:x:42:
cdrw:x:80:
www-data:x:82:
usb:x:85:
vpopmail:x:89:
users:x:100:games
ntp:x:123:
nofiles:x:200:
smmsp:x:209:smmsp
locate:x:245:
abuild:x:300:
utmp:x:406:
ping:x:999:
nogroup:x:65533:
nobody:x:65534:
EOF
	sed 's/:.*//; s/$/:!::0:::::/' "$r/etc/passwd" >"$r/etc/shadow"
	chmod 640 "$r/etc/shadow"
	cat >"$r/etc/os-release" <<'EOF'
NAME="Alpine Linux"
ID=alpine
VERSION_ID=3.16.0
PRETTY_NAME="Alpine Linux v3.16"
HOME_URL="https://alpinelinux.org/"
BUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"
EOF
	echo 3.16.0 >"$r/etc/alpine-release"
	ln -s ../proc/mounts "$r/etc/mtab" # as Alpine's (030-run "no /etc/mtab" removes it)
	echo "$IMAGE_TAG" >"$r/home/podman/testimage-id"
	touch --date=@1600000000 "$r/home/podman/testimage-id"
	cat >"$r/home/podman/pause" <<'EOF'
#!/bin/sh
#
# Trivial little pause script, used in one of the pod tests
#
echo Confirmed: testimage pause invoked as $0
while :; do
    sleep 0.1
done
EOF
	chmod 755 "$r/home/podman/pause"
	tar -C "$r" --numeric-owner --owner=0 --group=0 -cf "$WORK/testimage.tar.tmp" . &&
		mv "$WORK/testimage.tar.tmp" "$WORK/testimage.tar" || die "cannot make the image tar"
	rm -rf "$r"
	chmod 644 "$WORK/testimage.tar"
}
build_image_tar

# The images the registry serves (OCI layouts), made once with a podman of
# their own storage: the test image and the "non-local" image of the tests
# (PODMAN_NONLOCAL_IMAGE_TAG, upstream a busybox; here the same files with
# another label, so another image id).
build_registry()
{
	local b=$WORK/build pm
	[ -f "$WORK/registry/nonlocal/index.json" ] && [ -f "$WORK/registry/testimage/index.json" ] && return
	rm -rf "$b" "$WORK/registry" && mkdir -p "$b" "$WORK/registry"
	printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$b" "$b" >"$b/storage.conf"
	pm=(env CONTAINERS_STORAGE_CONF="$b/storage.conf" CONTAINERS_CONF=/dev/null podman --events-backend none)
	"${pm[@]}" import \
		--change 'WORKDIR /home/podman' \
		--change 'CMD ["/bin/echo", "This container is intended for podman CI testing"]' \
		--change 'LABEL created_by=test/system/build-testimage' \
		--change "LABEL created_at=$(date -u +%Y-%m-%dT%H:%M:%SZ)" \
		-q "$WORK/testimage.tar" "$IMAGE" >/dev/null &&
		"${pm[@]}" import -q --change 'CMD ["sh"]' --change 'LABEL stand_in_for=busybox:1.34.1' \
			"$WORK/testimage.tar" "$NONLOCAL_IMAGE" >/dev/null &&
		"${pm[@]}" save -q --format oci-dir -o "$WORK/registry/testimage" "$IMAGE" >/dev/null &&
		"${pm[@]}" save -q --format oci-dir -o "$WORK/registry/nonlocal" "$NONLOCAL_IMAGE" >/dev/null ||
		die "cannot build the registry's images"
	"${pm[@]}" rmi -a -f >/dev/null 2>&1
	rm -rf "$b"
	chmod -R a+rX "$WORK/registry"
}
build_registry
cp "$HERE/oci-registry.py" "$WORK/oci-registry.py" && chmod 755 "$WORK/oci-registry.py" ||
	die "cannot copy oci-registry.py"

# setup_conf MODE RUNTIME DIR: the configuration of one runtime and mode
setup_conf()
{
	local mode=$1 rt=$2 d=$3 path nofile nproc
	path=$(runtime_path "$rt")
	# the name podman knows the runtime by
	[ "$rt" = agentrun-as-crun ] && rt=crun
	rm -rf "$d/conf"
	mkdir -p "$d/conf" "$d/storage" "$d/net"
	nofile=$(ulimit -Hn)
	nproc=$(ulimit -Hu)
	[ "$nproc" = unlimited ] && nproc=1048576
	[ "$nofile" = unlimited ] && nofile=1048576
	# The runtime under conmon has a hard RLIMIT_NPROC of at most
	# kernel.pid_max (measured: 32768 where the shell has 96367).
	[ "$nproc" -gt "$(cat /proc/sys/kernel/pid_max)" ] && nproc=$(cat /proc/sys/kernel/pid_max)
	cat >"$d/conf/containers.conf" <<EOF
# podman-system.sh: $mode, $rt
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
pids_limit = 0
cgroups = "no-conmon"

[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$d/events.log"
runtime = "$rt"
runtime_supports_json = ["crun", "runc", "kata", "runsc", "youki", "krun", "agentrun"]
runtime_supports_nocgroup = ["crun", "krun", "agentrun"]
tmp_dir = "$d/tmp"

[engine.runtimes]
$rt = ["$path"]

[network]
network_config_dir = "$d/net"
EOF
	cat >"$d/conf/storage.conf" <<EOF
[storage]
driver = "overlay"
graphroot = "$d/storage"
runroot = "$d/run"
EOF
	cp "$WORK/src/test/registries.conf" "$d/conf/registries.conf"
	cat >>"$d/conf/registries.conf" <<EOF

# podman-system.sh: the test images from the registry on loopback
[[registry]]
prefix = "quay.io/libpod/testimage"
location = "$REGISTRY/libpod/testimage"
insecure = true
EOF
	if [ "$mode" = rootless ]; then
		mkdir -p "$d/home" "$d/xdg"
		chmod 700 "$d/xdg"
		chown -R "$TEST_UID:$TEST_GID" "$d"
	fi
	chmod 755 "$d" "$d/conf"
	chmod 644 "$d/conf"/*
}

# The script that runs inside the namespaces (as root): network namespace
# set-up, a fresh runroot and tmp_dir, the image when missing, then bats
# (as the test user when rootless).
# (written aside and renamed: a run in progress keeps reading its own)
cat >"$WORK/inside.sh.$$" <<'EOS'
#!/bin/bash
# inside.sh MODE DIR FILE (environment: TEST_UID TEST_GID IMAGE NONLOCAL_IMAGE
# REGISTRY WORK SYS FILTER)
set -u
mode=$1 d=$2 file=$3
ip link set lo up || exit 125
# podman's lock segment (/dev/shm/libpod_lock, libpod_rootless_lock_UID) is
# one per user: shared by the runtimes' runs side by side (PARALLEL), two
# databases handed out the same lock numbers. A /dev/shm of this run's own.
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm || exit 125
if [ "$mode" = root ]; then
	mkdir -p /var/lib/cni /run/netns
	mount -t tmpfs -o mode=755 tmpfs /var/lib/cni && mount -t tmpfs -o mode=755 tmpfs /run/netns || exit 125
	# Root pods: podman makes /libpod_parent/POD writing "+" plus the
	# controllers of cgroup.controllers into the subtree_control of / and
	# /libpod_parent; with none (the hybrid host's v2 tree) that is "+",
	# EINVAL, and no pod starts for either runtime. /dev/null over those
	# two files (in this mount namespace only) takes the write of nothing.
	mkdir -p /sys/fs/cgroup/libpod_parent &&
		mount --bind /dev/null /sys/fs/cgroup/cgroup.subtree_control &&
		mount --bind /dev/null /sys/fs/cgroup/libpod_parent/cgroup.subtree_control || exit 125
fi
rm -rf "$d/run" "$d/tmp" "$d/xdg"
mkdir -p "$d/run" "$d/tmp"
env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=xterm
	CONTAINERS_CONF="$d/conf/containers.conf" CONTAINERS_STORAGE_CONF="$d/conf/storage.conf"
	CONTAINERS_REGISTRIES_CONF="$d/conf/registries.conf" PODMAN=podman)
drop=()
if [ "$mode" = rootless ]; then
	mkdir -p "$d/xdg" && chmod 700 "$d/xdg"
	chown "$TEST_UID:$TEST_GID" "$d/run" "$d/tmp" "$d/xdg"
	env+=(HOME="$d/home" USER=agentrun-test LOGNAME=agentrun-test XDG_RUNTIME_DIR="$d/xdg")
	drop=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups)
else
	env+=(HOME=/root USER=root LOGNAME=root)
fi
cd "$SYS" || exit 125
# The registry (as root, in this network namespace).
exec 8< <(exec /usr/bin/python3 "$WORK/oci-registry.py" "$REGISTRY" \
	"libpod/testimage:${IMAGE##*:}=$WORK/registry/testimage" \
	"libpod/testimage:${NONLOCAL_IMAGE##*:}=$WORK/registry/nonlocal" 2>>"$d/registry.log")
read -r -t 30 ready <&8 && [ "$ready" = ready ] || {
	echo "inside.sh: the registry did not start (see $d/registry.log)" >&2
	exit 125
}
if ! "${drop[@]}" env -i "${env[@]}" podman image exists "$IMAGE" 2>/dev/null; then
	"${drop[@]}" env -i "${env[@]}" podman pull -q "$IMAGE" >/dev/null || {
		echo "inside.sh: podman pull of the test image failed" >&2
		exit 125
	}
fi
"${drop[@]}" env -i "${env[@]}" bats --tap ${FILTER:+--filter "$FILTER"} "$file" 8<&-
EOS
chmod 755 "$WORK/inside.sh.$$" && mv "$WORK/inside.sh.$$" "$WORK/inside.sh" || die "cannot write $WORK/inside.sh"

# run_file MODE RUNTIME FILE
run_file()
{
	local mode=$1 rt=$2 f=$3 d=$WORK/$1-$2 o=$OUT/$1/$2 n=${3%.bats} t0 rc
	mkdir -p "$o"
	t0=$(date +%s)
	TEST_UID=${TEST_UID:-} TEST_GID=${TEST_GID:-} IMAGE=$IMAGE WORK=$WORK SYS=$SYS \
		NONLOCAL_IMAGE=$NONLOCAL_IMAGE REGISTRY=$REGISTRY FILTER=$FILTER \
		timeout --foreground -k 10 "$FILE_TIMEOUT" "$TOP/tests/bench/in-cgroup-ns.sh" \
		unshare -n -- "$WORK/inside.sh" "$mode" "$d" "$f" \
		>"$o/$n.tap" 2>"$o/$n.err" </dev/null
	rc=$?
	echo "$rc $(($(date +%s) - t0))" >"$o/$n.rc"
	echo "podman-system: $mode $rt $n: exit $rc in $(($(date +%s) - t0)) s" >&2
}

run_runtime()
{
	local mode=$1 rt=$2 f
	setup_conf "$mode" "$rt" "$WORK/$mode-$rt"
	for f in $BATS_FILES; do
		run_file "$mode" "$rt" "$f"
	done
}

start=$(date +%s)
for mode in $MODES; do
	pids=()
	for rt in $RUNTIMES; do
		if [ "$PARALLEL" -gt 1 ]; then
			run_runtime "$mode" "$rt" &
			pids+=($!)
		else
			run_runtime "$mode" "$rt"
		fi
	done
	for p in "${pids[@]}"; do wait "$p"; done
done
echo "podman-system: ran$BATS_FILES ($MODES; $RUNTIMES) in $(($(date +%s) - start)) s" >&2
table
