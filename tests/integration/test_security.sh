#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Confinement as the container sees it, root and rootless:
# /proc/self/status (CapEff/CapPrm/CapInh/CapBnd/CapAmb, NoNewPrivs,
# Seccomp) as the config says; a denied syscall returns the configured
# errno (defaultErrnoRet and a rule's errnoRet); SCMP_ACT_NOTIFY hands the
# notify fd and the process state (with listenerMetadata) to a listener the
# test runs, which answers the container's syscall; maskedPaths unreadable,
# readonlyPaths unwritable. The escape classes are in test_escapes.sh.
. "$(dirname "$0")/../lib.sh"

# sysprobe_into ROOTFS: tests/helpers/sysprobe.c, static, in ROOTFS/bin
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

# The raw syscall numbers below are x86_64's.
require_x86_64()
{
	[ "$(uname -m)" = x86_64 ] ||
		skip "syscall numbers of this test are x86_64's, this is $(uname -m)"
}

# --- /proc/self/status -----------------------------------------------------------

# What the kernel makes of the configured sets at execve (as with runc and
# crun): uid 0 gets effective = permitted; with no_new_privs it gains
# nothing over the configured permitted set, without it permitted becomes
# bounding | inheritable; a non-root user keeps only the ambient set.
status_fields()
{
	local u=$1 b=$TEST_TMP/st$1 id
	bundle_for "$u" "$b"
	# CAP_CHOWN 0, CAP_KILL 5, CAP_NET_RAW 13
	config_set "$b" '.process.capabilities = {
		"bounding": ["CAP_CHOWN","CAP_KILL","CAP_NET_RAW"],
		"permitted": ["CAP_CHOWN","CAP_KILL"],
		"effective": ["CAP_KILL"],
		"inheritable": [], "ambient": []}
		| .process.noNewPrivileges = true
		| .process.args = ["grep","-E","^(Cap|NoNewPrivs|Seccomp:)","/proc/self/status"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	echo "$OUT"
	assert_match "$OUT" "CapInh:[[:space:]]+0000000000000000"
	assert_match "$OUT" "CapPrm:[[:space:]]+0000000000000021"
	assert_match "$OUT" "CapEff:[[:space:]]+0000000000000021"
	assert_match "$OUT" "CapBnd:[[:space:]]+0000000000002021"
	assert_match "$OUT" "CapAmb:[[:space:]]+0000000000000000"
	assert_match "$OUT" "NoNewPrivs:[[:space:]]+1"
	assert_match "$OUT" "Seccomp:[[:space:]]+2"
	# no seccomp, no no_new_privs, an inheritable and ambient cap
	config_set "$b" 'del(.linux.seccomp) | .process.noNewPrivileges = false
		| .process.capabilities.inheritable = ["CAP_KILL"]
		| .process.capabilities.ambient = ["CAP_KILL"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	echo "$OUT"
	assert_match "$OUT" "CapInh:[[:space:]]+0000000000000020"
	assert_match "$OUT" "CapPrm:[[:space:]]+0000000000002021"
	assert_match "$OUT" "CapAmb:[[:space:]]+0000000000000020"
	assert_match "$OUT" "NoNewPrivs:[[:space:]]+0"
	assert_match "$OUT" "Seccomp:[[:space:]]+0"
	[ "$u" = 1 ] && return 0
	# a non-root agent: only the ambient set survives execve
	config_set "$b" '.process.user = {"uid": 1000, "gid": 1000}
		| .process.capabilities.permitted = ["CAP_KILL"]
		| .process.capabilities.effective = ["CAP_KILL"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	echo "$OUT"
	assert_match "$OUT" "CapInh:[[:space:]]+0000000000000020"
	assert_match "$OUT" "CapPrm:[[:space:]]+0000000000000020"
	assert_match "$OUT" "CapEff:[[:space:]]+0000000000000020"
	assert_match "$OUT" "CapBnd:[[:space:]]+0000000000002021"
	assert_match "$OUT" "CapAmb:[[:space:]]+0000000000000020"
}

t_status_fields() { status_fields 0; }
t_status_fields_rootless() { status_fields 1; }

# --- errno of a denied syscall ---------------------------------------------------

denied_errno()
{
	local u=$1 b=$TEST_TMP/er$1 id
	require_x86_64
	bundle_for "$u" "$b"
	sysprobe_into "$b/rootfs"
	# the default agent profile, with defaultErrnoRet 77; kexec_load (246)
	# is in no rule; kexec_file_load (320) gets a rule with errnoRet 42;
	# getpid (39) stays allowed
	config_set "$b" '.linux.seccomp.defaultErrnoRet = 77
		| .linux.seccomp.syscalls += [{"names":["kexec_file_load"],
			"action":"SCMP_ACT_ERRNO","errnoRet":42}]
		| .process.args = ["sh","-c","sysprobe syscall 246; sysprobe syscall 320; sysprobe syscall 39"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_eq "$OUT" "errno=77
errno=42
errno=0"
}

t_denied_errno() { denied_errno 0; }
t_denied_errno_rootless() { denied_errno 1; }

# --- SCMP_ACT_NOTIFY with listenerPath ---------------------------------------------

# listener.py SOCKET OUT ERRNO: accept one connection, take the notify fd
# and the process state, answer the container's getpriority (140) with
# -ERRNO (other notified calls continue), write what it saw to OUT.
write_listener()
{
	cat >"$TEST_TMP/listener.py" <<'EOF'
import array, fcntl, json, os, socket, struct, sys

path, out, errno_ret = sys.argv[1], sys.argv[2], int(sys.argv[3])
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
os.chmod(path, 0o777)
srv.listen(1)
srv.settimeout(60)
open(path + ".ready", "w").close()
conn, _ = srv.accept()
conn.settimeout(30)
fds = array.array("i")
msg, anc, _, _ = conn.recvmsg(1 << 16, socket.CMSG_SPACE(16))
for level, kind, data in anc:
    if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - len(data) % 4])
while True:
    try:
        state = json.loads(msg)
        break
    except ValueError:
        more = conn.recv(1 << 16)
        if not more:
            raise
        msg += more
fd = fds[0]
seen = {"state": state, "nfds": len(fds), "fdkind": os.readlink("/proc/self/fd/%d" % fd)}
RECV, SEND, CONTINUE = 0xC0502100, 0xC0182101, 1
while True:
    buf = bytearray(80)
    fcntl.ioctl(fd, RECV, buf, True)
    nid, pid, _, nr, _ = struct.unpack_from("=QIIiI", buf, 0)
    if nr == 140:
        fcntl.ioctl(fd, SEND, bytearray(struct.pack("=QqiI", nid, 0, -errno_ret, 0)), True)
        seen["nr"] = nr
        break
    fcntl.ioctl(fd, SEND, bytearray(struct.pack("=QqiI", nid, 0, 0, CONTINUE)), True)
with open(out, "w") as f:
    json.dump(seen, f)
EOF
}

notify_listener()
{
	local u=$1 b=$TEST_TMP/nt$1 id sock=$TEST_TMP/notify$1.sock lpid
	require_x86_64
	require_cmd python3
	bundle_for "$u" "$b"
	sysprobe_into "$b/rootfs"
	write_listener
	python3 "$TEST_TMP/listener.py" "$sock" "$TEST_TMP/seen$1.json" 61 \
		>"$TEST_TMP/listener$1.log" 2>&1 &
	lpid=$!
	defer kill "$lpid"
	wait_until 10 test -e "$sock.ready"
	config_set "$b" '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW",
		"listenerPath": $s, "listenerMetadata": "agent=test-42",
		"syscalls": [{"names":["getpriority"],"action":"SCMP_ACT_NOTIFY"}]}
		| .process.args = ["sysprobe","syscall","140","0","0"]' \
		--arg s "$sock"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	# a time limit: a lost notification would block the container
	if [ "$u" = 1 ]; then
		ar_user list >/dev/null # creates AR_USER_ROOT
		assert_status 0 as_test_user timeout 60 "$AGENTRUN" \
			--root "$AR_USER_ROOT" run --bundle "$b" "$id"
	else
		assert_status 0 timeout 60 "$AGENTRUN" --root "$AR_ROOT" run \
			--bundle "$b" "$id"
	fi
	wait "$lpid" || fail "listener failed: $(cat "$TEST_TMP/listener$1.log")"
	local seen
	seen=$(cat "$TEST_TMP/seen$1.json")
	echo "$seen"
	# the listener answered the container's syscall
	assert_eq "$OUT" "errno=61"
	assert_eq "$(jq -r .nfds <<<"$seen")" 1
	assert_contains "$(jq -r .fdkind <<<"$seen")" "seccomp"
	assert_eq "$(jq -r '.state.fds | join(",")' <<<"$seen")" seccompFd
	assert_eq "$(jq -r .state.metadata <<<"$seen")" "agent=test-42"
	assert_eq "$(jq -r .state.state.id <<<"$seen")" "$id"
	assert_match "$(jq -r .state.pid <<<"$seen")" "^[1-9][0-9]*$"
	assert_eq "$(jq -r .state.ociVersion <<<"$seen" | cut -c1-2)" "1."
}

t_notify_listener() { notify_listener 0; }
t_notify_listener_rootless() { notify_listener 1; }
t_listener_without_notify() { listener_without_notify 0; }
t_listener_without_notify_rootless() { listener_without_notify 1; }

# listenerPath without any SCMP_ACT_NOTIFY rule: the listener still gets
# the connection, the fd and the state, as from crun (crun's
# test_seccomp.py seccomp-listener; the filter is loaded with
# SECCOMP_FILTER_FLAG_NEW_LISTENER whenever listenerPath is set). The
# listener accepts only after `run --detach` returned, as crun's test does.
listener_without_notify()
{
	local u=$1 b=$TEST_TMP/ln$1 id sock=$TEST_TMP/ln$1.sock lpid
	require_cmd python3
	bundle_for "$u" "$b"
	python3 -c 'import array, json, os, socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.bind(path)
os.chmod(path, 0o777); s.listen(1); open(path + ".ready", "w").close()
for _ in range(300):
    if os.path.exists(path + ".go"): break
    time.sleep(0.1)
s.settimeout(5)
try:
    c, _ = s.accept()
except socket.timeout:
    print("no connection"); sys.exit(1)
fds = array.array("i")
msg, anc, _, _ = c.recvmsg(1 << 16, socket.CMSG_SPACE(16))
for level, kind, data in anc:
    fds.frombytes(data[: len(data) - len(data) % 4])
m = json.loads(msg)
print(len(fds), m["metadata"], m["state"]["status"], os.readlink("/proc/self/fd/%d" % fds[0]))' \
		"$sock" >"$TEST_TMP/ln$1.out" 2>&1 &
	lpid=$! # it ends by itself (35 s at most)
	wait_until 10 test -e "$sock.ready" || fail "listener: $(cat "$TEST_TMP/ln$1.out")"
	config_set "$b" '.linux.seccomp = {"defaultAction":"SCMP_ACT_ALLOW",
		"listenerPath": $s, "listenerMetadata": "m-1"}
		| .process.args = ["true"]' --arg s "$sock"
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	if [ "$u" = 1 ]; then
		ar_user list >/dev/null
		assert_status 0 as_test_user timeout 30 "$AGENTRUN" \
			--root "$AR_USER_ROOT" run --detach --bundle "$b" "$id"
	else
		assert_status 0 timeout 30 "$AGENTRUN" --root "$AR_ROOT" run \
			--detach --bundle "$b" "$id"
	fi
	touch "$sock.go"
	wait "$lpid" || fail "listener: $(cat "$TEST_TMP/ln$1.out")"
	assert_eq "$(cat "$TEST_TMP/ln$1.out")" "1 m-1 creating anon_inode:seccomp notify" \
		"what the listener got"
}

# --- maskedPaths, readonlyPaths ------------------------------------------------

masked_readonly()
{
	local u=$1 b=$TEST_TMP/mr$1 id
	bundle_for "$u" "$b"
	mkdir -p "$b/rootfs/secret-dir" "$b/rootfs/data"
	echo s3cret >"$b/rootfs/secret-file"
	echo s3cret >"$b/rootfs/secret-dir/inner"
	echo old >"$b/rootfs/data/f"
	if [ "$u" = 1 ]; then
		chown -R "$TEST_UID:$TEST_GID" "$b/rootfs/secret-dir" \
			"$b/rootfs/data" "$b/rootfs/secret-file"
	fi
	config_set "$b" '.root.readonly = false
		| .linux.maskedPaths += ["/secret-file","/secret-dir"]
		| .linux.readonlyPaths += ["/data"]
		| .process.args = ["sh","-c",$s]' --arg s '
		echo "file=[$(cat /secret-file 2>&1)]"
		echo "dir=[$(ls -A /secret-dir 2>&1)]"
		(echo new >/secret-file) 2>/dev/null && echo masked-file-writable || echo masked-file-denied
		(echo new >/data/f) 2>/dev/null && echo data-writable || echo data-denied
		touch /data/new 2>/dev/null && echo data-create || echo data-create-denied
		echo "data=$(cat /data/f)"'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	echo "$OUT"
	assert_contains "$OUT" "file=[]"
	assert_contains "$OUT" "dir=[]"
	assert_not_contains "$OUT" s3cret
	assert_contains "$OUT" data-denied
	assert_contains "$OUT" data-create-denied
	assert_contains "$OUT" "data=old"
	assert_eq "$(cat "$b/rootfs/secret-file")" s3cret
	assert_eq "$(cat "$b/rootfs/data/f")" old
}

t_masked_readonly() { masked_readonly 0; }
t_masked_readonly_rootless() { masked_readonly 1; }

# --- SELinux labels ---------------------------------------------------------------

selinux_enabled_here()
{
	[ "$(stat -f -c %t /sys/fs/selinux 2>/dev/null)" = f97cff8c ] &&
		[ -e /sys/fs/selinux/policyvers ]
}

selinux_labels()
{
	local u=$1 b=$TEST_TMP/se$1 id
	selinux_enabled_here &&
		skip "SELinux is enabled here: the error path for hosts without it cannot be tested"
	bundle_for "$u" "$b"
	config_set "$b" '.process.args=["true"]'
	# empty labels: nothing to do
	config_set "$b" '.process.selinuxLabel = "" | .linux.mountLabel = ""'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	# labels are ignored without SELinux, as crun and runc do
	# (runtime-tools and podman specs carry them)
	config_set "$b" '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2" | .linux.mountLabel = "system_u:object_r:container_file_t:s0:c1,c2" | .process.args = ["sh","-c","cat /proc/self/attr/current 2>/dev/null; echo ran"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --bundle "$b" "$id"
	assert_contains "$OUT" "ran"
	assert_not_contains "$OUT" "container_t"
	# exec --process with a label: the same
	config_set "$b" '.process.args = ["sleep","1000"]'
	id=$(unique_id)
	defer arr "$u" delete --force "$id"
	assert_status 0 arr "$u" run --detach --bundle "$b" "$id"
	jq '.process | .selinuxLabel = "system_u:system_r:container_t:s0" | .args = ["true"]' \
		"$b/config.json" >"$TEST_TMP/proc$u.json"
	chmod 0644 "$TEST_TMP/proc$u.json"
	assert_status 0 arr "$u" exec --process "$TEST_TMP/proc$u.json" "$id"
	# features says what the host has
	assert_eq "$(arr "$u" features | jq -r .linux.selinux.enabled)" false
}

t_selinux_labels() { selinux_labels 0; }
t_selinux_labels_rootless() { selinux_labels 1; }

run_test "/proc/self/status: caps, NoNewPrivs, Seccomp as configured" t_status_fields
run_test "rootless: /proc/self/status as configured" t_status_fields_rootless
run_test "seccomp: defaultErrnoRet and a rule's errnoRet" t_denied_errno
run_test "rootless: seccomp errno values" t_denied_errno_rootless
run_test "seccomp notify: fd and state reach the listener" t_notify_listener
run_test "rootless: seccomp notify reaches the listener" t_notify_listener_rootless
run_test "seccomp listenerPath without a NOTIFY rule still gets the fd (crun)" \
	t_listener_without_notify
run_test "rootless: seccomp listenerPath without a NOTIFY rule gets the fd" \
	t_listener_without_notify_rootless
run_test "maskedPaths unreadable, readonlyPaths unwritable" t_masked_readonly
run_test "rootless: maskedPaths, readonlyPaths" t_masked_readonly_rootless
run_test "SELinux labels: ignored on a host without SELinux (crun, runc)" t_selinux_labels
run_test "rootless: SELinux labels" t_selinux_labels_rootless
finish
