#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Docker and containerd driving agentrun. Runs INSIDE tests/vm/run-in-vm
# as root (pure cgroup v2, loopback only); tests/integration/test_docker_vm.sh
# starts it. The daemons are started here, in the VM, never on a host.
#
# One dockerd + containerd for all tests (under emulation every Go process
# costs seconds): containerd runs with contrib/kubernetes/containerd-agentrun.toml
# and dockerd with contrib/docker/daemon.json (the runtime path replaced by
# a wrapper), so both shipped snippets are proven to load. The wrapper
# `agentrun` logs its argv, then execs $AGENTRUN: each test asserts that
# agentrun itself was called.
. "$(dirname "$0")/../lib.sh"

[ "$(stat -fc %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ] ||
	skip "/sys/fs/cgroup is not a pure cgroup v2 mount (run tests/integration/test_docker_vm.sh)"
[ "$(id -u)" = 0 ] || skip "dockerd needs root"
[ -n "${ENGINES_ROOTFS_TAR:-}" ] && [ -r "$ENGINES_ROOTFS_TAR" ] ||
	skip "ENGINES_ROOTFS_TAR (a busybox rootfs tarball) is not set"
# Debian's docker client, not another one earlier in PATH.
DOCKER=/usr/bin/docker
for c in "$DOCKER" dockerd containerd ctr containerd-shim-runc-v2; do
	command -v "$c" >/dev/null ||
		skip "$c not installed (contrib/install-deps.sh installs docker.io and containerd)"
done

W=$TEST_TMP/engines
CALLS=$W/calls.log
WRAP=$W/bin/agentrun
IMAGE=agentrun-test-busybox:latest
CTR_NS=agentrun-test
mkdir -p "$W/bin" "$W/hostdir"
cat >"$WRAP" <<EOF
#!/bin/sh
echo "\$*" >>"$CALLS"
exec "$AGENTRUN" "\$@"
EOF
chmod 0755 "$WRAP"
: >"$CALLS"

# The shipped snippets, pointing at the wrapper.
sed "s|/usr/local/bin/agentrun|$WRAP|" "$TOP_SRCDIR/contrib/docker/daemon.json" \
	>"$W/daemon.json"
sed "s|/usr/local/bin/agentrun|$WRAP|" \
	"$TOP_SRCDIR/contrib/kubernetes/containerd-agentrun.toml" >"$W/containerd.toml"

dk()
{
	"$DOCKER" "$@"
}

# VM_TESTS=REGEX runs only the matching test functions (the host side
# splits the tests over two VMs with it: each file must end within the
# per-file timeout on a busy, emulated host).
selected()
{
	[ -z "${VM_TESTS:-}" ] || [[ $1 =~ $VM_TESTS ]]
}

vm_test()
{
	selected "$2" || return 0
	run_test "$@"
	echo "# $2 finished after $(elapsed)"
}

# assert_called REGEX: the wrapper logged a call matching REGEX (ERE)
assert_called()
{
	grep -Eq -- "$1" "$CALLS" ||
		fail "agentrun was not called as /$1/; calls: $(cut -c1-200 "$CALLS")"
}

# ctr gets its own wrapper and log: it runs in the background, beside
# the docker tests.
mkdir -p "$W/bin-ctr"
sed "s|$CALLS|$W/ctr-calls.log|" "$WRAP" >"$W/bin-ctr/agentrun"
chmod 0755 "$W/bin-ctr/agentrun"
: >"$W/ctr-calls.log"

# A docker-archive of the busybox rootfs for `ctr images import`, made
# here (sha256sum), so containerd needs nothing from dockerd.
make_image_archive()
{
	local d=$W/image diff
	mkdir -p "$d"
	cp "$ENGINES_ROOTFS_TAR" "$d/layer.tar"
	diff=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
	cat >"$d/config.json" <<-EOF
	{"architecture":"amd64","os":"linux","config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"Cmd":["sh"]},"rootfs":{"type":"layers","diff_ids":["sha256:$diff"]}}
	EOF
	cat >"$d/manifest.json" <<-EOF
	[{"Config":"config.json","RepoTags":["$IMAGE"],"Layers":["layer.tar"]}]
	EOF
	tar -C "$d" -cf "$W/image.tar" manifest.json config.json layer.tar
}

# wait_for_socket SECONDS PATH
wait_for_socket()
{
	local _
	for _ in $(seq $(($1 * 5))); do
		[ -S "$2" ] && return 0
		sleep 0.2
	done
	return 1
}

T0=$(date +%s)
echo "guest uptime at the start: $(cut -d' ' -f1 /proc/uptime) s"
elapsed()
{
	echo "$(($(date +%s) - T0)) s"
}
containerd --config "$W/containerd.toml" >"$W/containerd.log" 2>&1 &
make_image_archive
# the shipped CRI snippet as containerd reads it (in the background too)
selected t_daemons &&
	containerd --config "$W/containerd.toml" config dump >"$W/config-dump" 2>&1 &
CTR_OK=0
wait_for_socket 120 /run/containerd/containerd.sock && CTR_OK=1
echo "containerd up after $(elapsed)"
dockerd --config-file "$W/daemon.json" --bridge=none --iptables=false \
	--ip6tables=false --storage-driver=vfs \
	--containerd=/run/containerd/containerd.sock >"$W/dockerd.log" 2>&1 &
# containerd, meanwhile: import the image and run it through the runc
# shim with agentrun as the runc binary
if [ "$CTR_OK" = 1 ] && selected t_ctr; then
	(
		ctr -n "$CTR_NS" images import --snapshotter native "$W/image.tar" &&
			echo "ctr: imported after $(elapsed)" &&
			ctr -n "$CTR_NS" run --rm --snapshotter native \
				--runtime io.containerd.runc.v2 --runc-binary "$W/bin-ctr/agentrun" \
				"docker.io/library/$IMAGE" ctr-test \
				sh -c 'echo from ctr; cat /proc/self/cgroup; exit 5'
		echo $? >"$W/ctr.rc"
		echo "ctr: done after $(elapsed)"
	) >"$W/ctr.out" 2>&1 &
fi
UP=0
if wait_for_socket 200 /var/run/docker.sock && dk info >"$W/info" 2>&1; then
	UP=1
	dk import "$ENGINES_ROOTFS_TAR" "$IMAGE" >"$W/import.log" 2>&1 || UP=0
fi
echo "dockerd up and image imported after $(elapsed)"

need_docker()
{
	[ "$UP" = 1 ] || fail "dockerd did not start or import failed: $(tail -n 20 "$W/dockerd.log" "$W/import.log" 2>&1)"
}

t_daemons()
{
	need_docker
	assert_match "$(cat "$W/info")" "Cgroup Version: 2" "docker info"
	assert_match "$(grep -A1 '^ *Runtimes:' "$W/info")" "agentrun" "daemon.json registered agentrun"
	wait_until 60 grep -q 'io.containerd.grpc.v1.cri' "$W/config-dump"
	OUT=$(cat "$W/config-dump")
	assert_contains "$OUT" "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.agentrun]"
	assert_contains "$OUT" "BinaryName = \"$WRAP\""
	assert_contains "$OUT" 'runtime_type = "io.containerd.runc.v2"'
}
vm_test "docker: dockerd (daemon.json) and containerd (CRI snippet) load agentrun" t_daemons

# The cgroup of the container with agentrun state ID under the state root
# docker passed to agentrun.
cgroup_of()
{
	local root pid
	root=$(sed -n 's/^--root \([^ ]*\) .* create .*/\1/p' "$CALLS" | tail -n1)
	[ -n "$root" ] || fail "no --root in the calls"
	pid=$("$AGENTRUN" --root "$root" state "$1" | sed -n 's/.*"pid": *\([0-9]*\).*/\1/p')
	[ -n "$pid" ] || fail "agentrun state $1 under $root has no pid"
	echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$pid/cgroup")"
}

t_detached()
{
	need_docker
	local c cg
	: >"$CALLS"
	assert_status 0 dk run -d --network none --runtime agentrun \
		--memory 32m --pids-limit 10 "$IMAGE" \
		sh -c 'echo started; trap "exit 0" TERM; sleep 1000 & wait'
	c=$OUT
	cg=$(cgroup_of "$c")
	[ -d "$cg" ] && [ "$cg" != /sys/fs/cgroup/ ] || fail "no cgroup for the container ($cg)"
	assert_eq "$(cat "$cg/memory.max")" 33554432 "memory.max of $cg"
	assert_eq "$(cat "$cg/pids.max")" 10 "pids.max of $cg"
	# 64 MiB in a 32 MiB cgroup: the OOM killer takes dd; then a fork
	# bomb hits pids.max (its sleeps must not hold the exec's output open);
	# the exec's exit status comes back
	assert_status 4 dk exec "$c" sh -c '
		echo in-exec
		(echo 1000 >/proc/self/oom_score_adj; exec dd if=/dev/zero of=/dev/null bs=64M count=1 2>/dev/null)
		echo dd=$?
		(i=0; while [ $i -lt 30 ]; do sleep 100 </dev/null >/dev/null 2>&1 & i=$((i+1)); done) 2>/dev/null
		echo bomb-done
		exit 4'
	assert_eq "$OUT" "in-exec
dd=137
bomb-done"
	assert_called " exec --process [^ ]+ --detach --pid-file "
	assert_match "$(cat "$cg/memory.events")" "oom_kill [1-9]"
	assert_match "$(cat "$cg/pids.events")" "max [1-9]"
	local cur
	cur=$(cat "$cg/pids.current")
	[ "$cur" -le 10 ] || fail "pids.current $cur > 10"
	assert_status 0 dk logs "$c"
	assert_eq "$OUT" started
	assert_status 0 dk stop -t 60 "$c"
	assert_called " kill $c 15$"
	# the trap ended it: no SIGKILL was needed
	! grep -Eq " kill $c (9|KILL)$" "$CALLS" || fail "docker stop had to SIGKILL"
	assert_status 0 dk rm "$c"
	assert_called " delete $c$"
	[ ! -d "$cg" ] || fail "cgroup $cg left behind"
}
vm_test "docker: run -d, --memory/--pids-limit in the cgroup and enforced, exec, logs, stop, rm" t_detached

# One container for run --rm, -it, -v, --read-only and --cap-drop ALL:
# under emulation each docker container costs a minute on a busy host.
t_run_it()
{
	need_docker
	require_cmd script
	local d=$W/hostdir
	echo from-host >"$d/in"
	: >"$CALLS"
	# script gives docker a pty; -e passes the exit status through
	assert_status 3 script -qec "$DOCKER run --rm -it --network none --runtime agentrun --read-only --cap-drop ALL -v $d:/work $IMAGE sh -c '
		echo hello from agentrun
		tty; test -t 0 && echo stdin-is-tty
		cat /work/in
		touch /etc/x 2>&1
		grep -E \"^Cap(Eff|Bnd)\" /proc/self/status
		echo made-inside >/work/out
		exit 3'" /dev/null
	OUT=$(tr -d '\r' <<<"$OUT")
	assert_contains "$OUT" "hello from agentrun"
	assert_match "$OUT" "/dev/pts/[0-9]+"
	assert_contains "$OUT" "stdin-is-tty"
	assert_contains "$OUT" "from-host"
	assert_contains "$OUT" "touch: /etc/x: Read-only file system"
	assert_contains "$OUT" "CapEff:	0000000000000000
CapBnd:	0000000000000000"
	assert_eq "$(cat "$d/out")" made-inside
	assert_file_owner "$d/out" 0:0
	assert_called "--log-format json create --bundle [^ ]+ --pid-file [^ ]+ --console-socket [^ ]+ [0-9a-f]{64}$"
	assert_called " start [0-9a-f]{64}$"
	assert_called " delete "
}
vm_test "docker: run --rm -it (pty, output, exit code), -v, --read-only, --cap-drop ALL" t_run_it

t_ctr()
{
	[ "$CTR_OK" = 1 ] || fail "containerd did not start: $(tail -n 20 "$W/containerd.log")"
	wait_until 200 test -s "$W/ctr.rc"
	echo "ctr output: $(cat "$W/ctr.out")"
	assert_eq "$(cat "$W/ctr.rc")" 5 "ctr run's exit status"
	assert_contains "$(cat "$W/ctr.out")" "from ctr"
	CALLS=$W/ctr-calls.log
	assert_called "^--root /run/containerd/runc/$CTR_NS .* create --bundle [^ ]+ --pid-file [^ ]+ ctr-test$"
	assert_called " start ctr-test$"
	assert_called " delete ctr-test$"
}
vm_test "containerd: ctr run --runc-binary agentrun (io.containerd.runc.v2, native snapshotter)" t_ctr

echo "all engine tests done after $(($(date +%s) - T0)) s"
echo "guest uptime at the end: $(cut -d' ' -f1 /proc/uptime) s"
finish
