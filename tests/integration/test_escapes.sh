#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Container-escape classes that broke runc and crun in the past: each test
# attempts the attack from inside a container and asserts that it fails,
# as root and rootless (the unprivileged agentrun-test user, tests/lib.sh).
#
#   (a) CVE-2019-5736: overwrite the runtime binary through /proc/PID/exe
#   (b) CVE-2021-30465 class: mount targets that are symlinks out of the
#       rootfs
#   (c) CVE-2024-21626: a leaked host fd, as a fd or as process.cwd
#   (d) /proc write-back and the default agent profile (`agentrun spec`):
#       sysrq-trigger, /proc/sys, kcore, CAP_SYS_ADMIN, no_new_privs,
#       TIOCSTI
#   (e) the container versus the runtime process: no ptrace/proc access to
#       a runtime process it can see, no signal to the runtime, and the
#       container dies when `agentrun run` is killed
#
# Each protection was disabled once in a scratch build to see the test fail
# (the closing note of issue 4 records how).
. "$(dirname "$0")/../lib.sh"

# --- helpers -----------------------------------------------------------------

# as_user 0|1 CMD...: CMD as root (0) or as the test user (1)
as_user()
{
	local u=$1
	shift
	if [ "$u" = 1 ]; then
		as_test_user "$@"
	else
		"$@"
	fi
}

# libs_into ROOTFS BINARY: copy the shared libraries and the ELF
# interpreter of BINARY (a host binary) into ROOTFS, as in any glibc image:
# without them the kernel cannot start it there (ENOENT).
libs_into()
{
	local lib
	for lib in $(ldd "$2" | grep -oE '/[^ ]+'); do
		mkdir -p "$1$(dirname "$lib")"
		cp -L "$lib" "$1$lib"
	done
}

# sysprobe_into ROOTFS: build tests/helpers/sysprobe.c statically (once per
# script) and copy it to ROOTFS/bin/sysprobe; skips if no static libc.
sysprobe_into()
{
	local bin=$TEST_TMP/sysprobe
	if [ ! -x "$bin" ]; then
		require_cmd cc
		cc -static -O2 -o "$bin" "$TOP_SRCDIR/tests/helpers/sysprobe.c" \
			2>"$TEST_TMP/sysprobe.err" ||
			skip "cannot build a static helper (libc6-dev static libc?): $(head -c 300 "$TEST_TMP/sysprobe.err")"
	fi
	cp "$bin" "$1/bin/sysprobe"
	chown --reference="$1/bin" "$1/bin/sysprobe"
}

# --- (a) CVE-2019-5736 ---------------------------------------------------------

# The container's init is a watcher. The host then runs
# `agentrun exec ID /proc/self/exe --log /fifo help`: the exec'd process
# resolves /proc/self/exe to the runtime's own image, which then blocks
# opening its log fifo. The watcher finds that process, opens its
# /proc/PID/exe, lets it finish, and reopens the file for writing through
# /proc/self/fd/3 (the exploit of CVE-2019-5736), retrying while the file
# is busy (executed by the host's runtime). The attacked binary is a
# copy of the one under test; it must be unchanged and the write refused.
WATCHER='
found=
while [ -z "$found" ]; do
	for d in /proc/[0-9]*; do
		p=${d#/proc/}
		[ "$p" = 1 ] && continue
		l=$(readlink "$d/exe" 2>/dev/null) || continue
		case "$l" in */busybox | "") continue ;; esac
		found=$p
		break
	done
	[ -n "$found" ] || sleep 0.05
done
echo "FOUND $found $l" >/result
if exec 3</proc/$found/exe; then echo OPEN-RO ok >>/result; else echo OPEN-RO failed >>/result; fi
cat /fifo >/dev/null
while [ -d /proc/$found ]; do sleep 0.05; done
n=0
while :; do
	# ETXTBSY while any process (the host runtime too) still runs it
	if msg=$( (echo PWNED >>/proc/self/fd/3) 2>&1); then
		echo WROTE >>/result
		break
	fi
	case "$msg" in *busy*) n=$((n + 1)); if [ $n -lt 150 ]; then sleep 0.1; continue; fi ;; esac
	echo "DENIED: $msg" >>/result
	break
done
echo DONE >>/result
exec sleep 1000
'

exe_overwrite()
{
	local u=$1 b=$TEST_TMP/exe$1 id bindir=$TEST_TMP/exebin$1 bin
	bundle_for "$u" "$b"
	mkdir -p "$bindir"
	bin=$bindir/agentrun
	cp "$AGENTRUN" "$bin"
	if [ "$u" = 1 ]; then
		# a rootless user's own build: writable by that user, so by the
		# container's root
		chown "$TEST_UID:$TEST_GID" "$bin"
	fi
	libs_into "$b/rootfs" "$bin"
	mkfifo "$b/rootfs/fifo"
	[ "$u" = 1 ] && chown "$TEST_UID:$TEST_GID" "$b/rootfs/fifo"
	config_set "$b" '.process.args=["sh","-c",$w] | .root.readonly=false' \
		--arg w "$WATCHER"
	id=$(unique_id)
	local root=$AR_ROOT
	if [ "$u" = 1 ]; then
		root=$AR_USER_ROOT
		ar_user list >/dev/null # creates AR_USER_ROOT for the test user
	fi
	defer arr "$u" delete --force "$id"
	assert_status 0 as_user "$u" "$bin" --root "$root" run --detach \
		--bundle "$b" "$id"
	# the attack: the runtime's image runs inside the container
	assert_status 0 as_user "$u" timeout 30 "$bin" --root "$root" exec \
		"$id" /proc/self/exe --log /fifo help
	wait_until 10 grep -q DONE "$b/rootfs/result"
	cat "$b/rootfs/result"
	assert_match "$(cat "$b/rootfs/result")" "FOUND [0-9]+ " \
		"the runtime's image never ran in the container: the test proves nothing"
	cmp -s "$AGENTRUN" "$bin" ||
		fail "the runtime binary was modified from inside the container"
	assert_contains "$(cat "$b/rootfs/result")" DENIED
	# and the protected runtime still works normally
	assert_status 0 as_user "$u" "$bin" --root "$root" exec "$id" true
}

t_exe_overwrite() { exe_overwrite 0; }
t_exe_overwrite_rootless() { exe_overwrite 1; }

# The re-exec must not change what the container sees of the runtime:
# /proc/self/exe as the container's program still runs (and is harmless).
t_exe_as_program()
{
	require_root
	local b=$TEST_TMP/exeprog id
	make_bundle "$b"
	libs_into "$b/rootfs" "$AGENTRUN"
	config_set "$b" '.process.args=["/proc/self/exe","--version"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar run --bundle "$b" "$id"
	assert_contains "$OUT" "agentrun version"
}

# --- (b) symlinked mount targets ----------------------------------------------

symlink_targets()
{
	local u=$1 b=$TEST_TMP/sym$1 host=$TEST_TMP/symhost$1 id
	bundle_for "$u" "$b"
	mkdir -p "$host"
	[ "$u" = 1 ] && chown "$TEST_UID:$TEST_GID" "$host"
	# absolute and relative symlinks out of the rootfs; the runtime runs
	# with the privileges to create and mount on the host paths
	ln -s "$host" "$b/rootfs/abs"
	ln -s "../../../../../../../../../..$host" "$b/rootfs/rel"
	echo data >"$TEST_TMP/symsrc$1"
	chmod 0644 "$TEST_TMP/symsrc$1"
	config_set "$b" '.process.args=["sh","-c","cat /rel/file; grep -E \" /(abs|rel)|/(dir|file) \" /proc/self/mountinfo"]
		| .mounts += [
		{"destination":"/abs/dir","type":"tmpfs","source":"tmpfs"},
		{"destination":"/rel/file","type":"bind","source":$src,
		 "options":["bind","ro"]}]' --arg src "$TEST_TMP/symsrc$1"
	[ "$u" = 1 ] && chown -h "$TEST_UID:$TEST_GID" "$b/rootfs/abs" "$b/rootfs/rel"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_contains "$OUT" data
	[ -z "$(ls -A "$host")" ] ||
		fail "mount targets were created on the host: $(ls -A "$host")"
	[ -d "$b/rootfs$host/dir" ] && [ -f "$b/rootfs$host/file" ] ||
		fail "the mount targets are not inside the rootfs"
	assert_not_contains "$(cut -d' ' -f5 /proc/self/mountinfo)" "$host" \
		"something is mounted on the host path"
}

t_symlink_targets() { symlink_targets 0; }
t_symlink_targets_rootless() { symlink_targets 1; }

# --- (c) leaked host fds, cwd through a host fd ---------------------------------

leaked_fds()
{
	local u=$1 b=$TEST_TMP/fd$1 id n
	bundle_for "$u" "$b"
	# ls forks (sh holds no pipe meanwhile); "; true" keeps sh around
	config_set "$b" '.process.args=["sh","-c","ls -l /proc/$$/fd/; true"]'

	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	# fd 7: the host's / , inherited without O_CLOEXEC by the runtime
	assert_status 0 arr "$u" run --bundle "$b" "$id" 7</
	echo "$OUT"
	assert_eq "$(echo "$OUT" | awk '$(NF-1) == "->" {print $(NF-2)}' | tr '\n' ' ')" \
		"0 1 2 " "fds other than 0-2 reached the container"
	# process.cwd through that fd: refused, nothing runs
	config_set "$b" '.process.cwd="/proc/self/fd/7" | .process.args=["sh","-c","echo ESCAPED; pwd; ls .."]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status '!0' arr "$u" run --bundle "$b" "$id" 7</
	assert_not_contains "$OUT" ESCAPED
	assert_contains "$ERR" "outside the container"
	# the runtime's own fds (3..15): each is either refused or a cwd that
	# is inside the container
	for n in $(seq 3 15); do
		config_set "$b" '.process.cwd=$c | .process.args=["pwd"]' \
			--arg c "/proc/self/fd/$n"
		id=$(unique_id)
		defer arr "$u" delete --force "$id"
		STATUS=0
		arr "$u" run --bundle "$b" "$id" >"$TEST_TMP/cwd.out" 2>&1 ||
			STATUS=$?
		if [ "$STATUS" = 0 ]; then
			assert_match "$(cat "$TEST_TMP/cwd.out")" "^/" \
				"cwd /proc/self/fd/$n escaped the container"
		fi
	done
}

t_leaked_fds() { leaked_fds 0; }
t_leaked_fds_rootless() { leaked_fds 1; }

# --- (d) /proc write-back and the default agent profile -------------------------

PROC_PROBE='
(exec 3>>/proc/sysrq-trigger) 2>/dev/null && echo sysrq-writable || echo sysrq-denied
(exec 3>>/proc/sys/kernel/core_pattern) 2>/dev/null && echo sys-writable || echo sys-denied
for f in $MASKED; do echo "masked $f $(wc -c <$f 2>&1)"; done
grep -E "^(CapEff|CapBnd|NoNewPrivs|Seccomp):" /proc/self/status
echo tiocsti-$(sysprobe tiocsti </dev/null)
'

proc_writeback()
{
	local u=$1 b=$TEST_TMP/proc$1 id
	bundle_for "$u" "$b"
	sysprobe_into "$b/rootfs"
	# the masked /proc files this kernel has (kcore needs CONFIG_PROC_KCORE)
	local f masked=
	for f in $(config_get "$b" '.linux.maskedPaths[]'); do
		case "$f" in /proc/*) [ -f "$f" ] && masked="$masked $f" ;; esac
	done
	[ -n "$masked" ] || fail "none of the masked /proc files exists here"
	config_set "$b" '.process.args=["sh","-c",$p] | .process.env += ["MASKED=" + $m]' \
		--arg p "$PROC_PROBE" --arg m "$masked"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	echo "$OUT"
	assert_contains "$OUT" sysrq-denied
	assert_contains "$OUT" sys-denied
	for f in $masked; do
		assert_contains "$OUT" "masked $f 0" "$f is readable"
	done
	assert_match "$OUT" "NoNewPrivs:[[:space:]]+1"
	assert_match "$OUT" "Seccomp:[[:space:]]+2"
	local eff bnd
	eff=$(echo "$OUT" | awk '/^CapEff:/ {print $2}')
	bnd=$(echo "$OUT" | awk '/^CapBnd:/ {print $2}')
	# CAP_SYS_ADMIN is capability 21
	(((0x$eff >> 21) & 1)) && fail "CAP_SYS_ADMIN effective: $eff"
	(((0x$bnd >> 21) & 1)) && fail "CAP_SYS_ADMIN in the bounding set: $bnd"
	# TIOCSTI: refused by seccomp (EPERM), not merely "not a tty" (25)
	assert_contains "$OUT" "tiocsti-errno=1"
	# the profile itself says so
	jq -e '.linux.seccomp.syscalls | map(.names) | add | index("ioctl")' \
		"$b/config.json" >/dev/null || fail "no ioctl rule in the profile"
}

t_proc_writeback() { proc_writeback 0; }
t_proc_writeback_rootless() { proc_writeback 1; }

# --- (e) the container versus the runtime process ------------------------------

# Container A is created: its init waits for `start`, still the runtime's
# image, holding the runtime's fds, with the config's capabilities and
# user already applied. Container B joins A's pid namespace (a pod; B
# enters through a process that A's createContainer hook leaves behind,
# since A's init itself is not reachable) and attacks A's init, which it
# sees as pid 1, with the same user and capabilities: no /proc/1/exe, no
# fd links, no environ, no ptrace, and signals do not stop it.
runtime_not_reachable()
{
	local u=$1 a=$TEST_TMP/pa$1 b=$TEST_TMP/pb$1 ida idb pid n
	bundle_for "$u" "$a"
	bundle_for "$u" "$b"
	sysprobe_into "$b/rootfs"
	n=$((100000 + RANDOM))
	# The hook's sleep is the host's dynamic /bin/sleep and the hook runs
	# before pivot_root: it returns once the sleep is past execve and
	# its loader (asleep), or the loader would look for libc in the
	# container's rootfs (seen in CI: "sleep: ... libc.so.6"). Its /proc
	# is still the host's: the container's is at rootfs/proc.
	config_set "$a" '.process.args=["sleep","1000"]
		| .hooks.createContainer=[{"path":"/bin/sh","args":["sh","-c",$h],"timeout":20}]' \
		--arg h "sleep $n </dev/null >/dev/null 2>&1 &"'
			p=$!
			q='"$a"'/rootfs/proc/$p
			until [ "$(tr "\0" " " <"$q/cmdline")" = "sleep '"$n"' " ] &&
				grep -q "^State:.S" "$q/status"; do
				[ -d "$q" ] || exit 1
			done'
	ida=$(unique_id)
	defer arr "$u" delete --force "$ida"
	assert_status 0 arr "$u" create --bundle "$a" "$ida"
	wait_until 15 pgrep -x -f "sleep $n"
	pid=$(pgrep -x -f "sleep $n")
	if [ "$u" = 1 ]; then
		config_set "$b" '.linux.namespaces |= map(select(.type != "pid" and .type != "user"))
			| .linux.namespaces += [{"type":"pid","path":$p},{"type":"user","path":$q}]
			| del(.linux.uidMappings, .linux.gidMappings)' \
			--arg p "/proc/$pid/ns/pid" --arg q "/proc/$pid/ns/user"
	else
		config_set "$b" '.linux.namespaces |= map(select(.type != "pid"))
			| .linux.namespaces += [{"type":"pid","path":$p}]' \
			--arg p "/proc/$pid/ns/pid"
	fi
	config_set "$b" '.process.args=["sh","-c",$s]' --arg s '
		echo init=$(tr "\0" " " </proc/1/cmdline)
		echo exe=$(readlink /proc/1/exe 2>/dev/null || echo denied)
		n=0
		for f in /proc/1/fd/*; do readlink "$f" >/dev/null 2>&1 && n=$((n+1)); done
		echo fdlinks=$n
		head -c1 /proc/1/environ >/dev/null 2>&1 && echo environ=readable || echo environ=denied
		echo ptrace-$(sysprobe ptrace 1)
		kill -KILL 1; kill -TERM 1; sleep 0.2
		echo sent'
	idb=$(unique_id)
	defer arr "$u" delete --force "$idb"
	assert_status 0 arr "$u" run --bundle "$b" "$idb"
	echo "$OUT"
	assert_contains "$OUT" " create " "pid 1 is not A's init: the test proves nothing"
	assert_contains "$OUT" "exe=denied"
	assert_contains "$OUT" "fdlinks=0"
	assert_contains "$OUT" "environ=denied"
	assert_match "$OUT" "ptrace-errno=[1-9]"
	assert_contains "$OUT" sent
	# A's init survived and still starts
	assert_eq "$(arr "$u" state "$ida" | jq -r .status)" created
	assert_status 0 arr "$u" start "$ida"
}

t_runtime_not_reachable() { runtime_not_reachable 0; }
t_runtime_not_reachable_rootless() { runtime_not_reachable 1; }

# proc_gone PID: the process has exited
proc_gone()
{
	! [ -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"
}

# is_running 0|1 ID
is_running()
{
	[ "$(arr "$1" state "$2" 2>/dev/null | jq -r .status)" = running ]
}

# `agentrun run` in the foreground is killed with SIGKILL: the container
# must not live on unsupervised. And the container's `kill -KILL -1` does
# not reach the runtime.
dies_with_runtime()
{
	local u=$1 b=$TEST_TMP/pd$1 id rpid cpid root=$AR_ROOT
	[ "$u" = 1 ] && root=$AR_USER_ROOT
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["sh","-c","kill -KILL -1; echo survived"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$OUT" survived

	config_set "$b" '.process.args=["sleep","1000"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	as_user "$u" "$AGENTRUN" --root "$root" run --bundle "$b" "$id" \
		</dev/null >/dev/null 2>&1 &
	wait_until 10 is_running "$u" "$id"
	cpid=$(arr "$u" state "$id" | jq -r .pid)
	defer kill -KILL "$cpid"
	# the container's parent is the foreground runtime
	rpid=$(awk '/^PPid:/ {print $2}' "/proc/$cpid/status")
	assert_contains "$(tr '\0' ' ' <"/proc/$rpid/cmdline")" " run --bundle $b $id"
	kill -KILL "$rpid"
	# gone, or a zombie (the host's pid 1 may not reap it)
	wait_until 5 proc_gone "$cpid"
}

t_dies_with_runtime() { dies_with_runtime 0; }
t_dies_with_runtime_rootless() { dies_with_runtime 1; }

run_test "(a) /proc/self/exe cannot overwrite the runtime (CVE-2019-5736)" t_exe_overwrite
run_test "(a) rootless: /proc/self/exe cannot overwrite the runtime" t_exe_overwrite_rootless
run_test "(a) /proc/self/exe as the program still runs" t_exe_as_program
run_test "(b) symlinked mount targets stay in the rootfs (CVE-2021-30465)" t_symlink_targets
run_test "(b) rootless: symlinked mount targets stay in the rootfs" t_symlink_targets_rootless
run_test "(c) no leaked host fd, no cwd through one (CVE-2024-21626)" t_leaked_fds
run_test "(c) rootless: no leaked host fd, no cwd through one" t_leaked_fds_rootless
run_test "(d) /proc write-back, caps, nnp, TIOCSTI (spec defaults)" t_proc_writeback
run_test "(d) rootless: /proc write-back, caps, nnp, TIOCSTI" t_proc_writeback_rootless
run_test "(e) a runtime process in the container is not reachable" t_runtime_not_reachable
run_test "(e) rootless: a runtime process is not reachable" t_runtime_not_reachable_rootless
run_test "(e) the container dies with \`agentrun run\`" t_dies_with_runtime
run_test "(e) rootless: the container dies with \`agentrun run\`" t_dies_with_runtime_rootless
finish
