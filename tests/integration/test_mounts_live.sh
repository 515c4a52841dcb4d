#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun mounts add|remove ID FILE` (crun's `mounts`): mounts made in
# and taken out of a running container, root and rootless; the attacks a
# container can make on the paths: a symlink on the destination of an
# add (the mount must stay inside the container's root: a runtime that
# mounts on /proc/PID/root/DEST by path would follow it to the host) and
# on the destination of a remove (it must not unmount another mount, such
# as the mask of /proc/timer_list); and the errors.
. "$(dirname "$0")/../lib.sh"

# sleeper U DIR ID: a detached container of user U (0 root, 1 the test
# user, rootless) running sleep, its root writable
sleeper()
{
	bundle_for "$1" "$2"
	config_set "$2" '.process.args = ["sleep", "1000"] | .root.readonly = false'
	defer arr "$1" delete --force "$3"
	assert_status 0 arr "$1" run --detach --bundle "$2" "$3"
}

# in_ctr U ID CMD: sh -c CMD in the container, its output in OUT
in_ctr()
{
	assert_status 0 arr "$1" exec "$2" sh -c "$3"
}

add_remove()
{
	local u=$1 b=$TEST_TMP/b$1 id src=$TEST_TMP/src$1 m=$TEST_TMP/m$1.json
	[ "$u" = 0 ] || { require_subids; require_agentrun_as_test_user; }
	id=$(unique_id)
	sleeper "$u" "$b" "$id"
	mkdir -p "$src"
	echo "from the host $u" >"$src/f"
	[ "$u" = 0 ] || chown -R "$TEST_UID:$TEST_GID" "$src"
	cat >"$m" <<EOF
[{"destination": "/data/in", "type": "bind", "source": "$src", "options": ["rbind", "ro", "nosuid"]},
 {"destination": "/scratch", "type": "tmpfs", "source": "tmpfs", "options": ["size=1m", "mode=700", "nodev"]},
 {"destination": "/etc/extra-file", "type": "bind", "source": "$src/f", "options": ["bind"]}]
EOF
	chmod 0644 "$m"
	assert_status 0 arr "$u" mounts add "$id" "$m"
	in_ctr "$u" "$id" 'cat /data/in/f; cat /etc/extra-file; touch /data/in/g 2>/dev/null && echo writable; echo x >/scratch/y && cat /scratch/y; stat -c %a /scratch'
	assert_eq "$OUT" "from the host $u
from the host $u
x
700"
	in_ctr "$u" "$id" 'grep -E " /(data/in|scratch) " /proc/self/mountinfo'
	assert_match "$OUT" ' /data/in ro,nosuid[, ]'
	assert_match "$OUT" ' /scratch rw,nodev[, ]'
	[ ! -e "$src/g" ] || fail "the ro bind was writable"
	# nothing of it on the host
	grep -qE " /data/in | /scratch " /proc/self/mountinfo && fail "a mount reached the host's namespace"
	assert_status 0 arr "$u" mounts remove "$id" "$m"
	in_ctr "$u" "$id" 'ls /data/in; ls /scratch; cat /etc/extra-file; grep -cE " /(data/in|scratch|etc/extra-file) " /proc/self/mountinfo || true'
	assert_eq "$OUT" "0"
	# removed twice: not a mount point any more
	assert_status 1 arr "$u" mounts remove "$id" "$m"
	assert_contains "$ERR" "[0] (destination /data/in): not a mount point"
}

t_root() { require_root; add_remove 0; }
t_rootless() { require_root; add_remove 1; }

# The container turns the destination of an add into a symlink to a
# host-looking path: the mount lands inside its root.
t_add_symlink()
{
	require_root
	local b=$TEST_TMP/bs id host=$TEST_TMP/hostdir src=$TEST_TMP/src-s m=$TEST_TMP/s.json
	id=$(unique_id)
	sleeper 0 "$b" "$id"
	mkdir -p "$host" "$src"
	echo secret-of-host >"$host/keep"
	echo mounted >"$src/f"
	in_ctr 0 "$id" "ln -s $host /evil; ln -s ../../../../../../.. /up"
	cat >"$m" <<EOF
[{"destination": "/evil/x", "type": "bind", "source": "$src", "options": ["rbind"]},
 {"destination": "/up$host/y", "type": "bind", "source": "$src", "options": ["rbind"]}]
EOF
	assert_status 0 ar mounts add "$id" "$m"
	[ ! -e "$host/x" ] && [ ! -e "$host/y" ] ||
		fail "the add followed the container's symlink out of its root: $(ls "$host")"
	assert_eq "$(ls "$host")" keep
	in_ctr 0 "$id" "cat $host/x/f $host/y/f; test -e /evil/keep || echo no-host-file"
	assert_eq "$OUT" "mounted
mounted
no-host-file"
	# its mount point was made inside the container's root
	[ -d "$b/rootfs$host/x" ] && [ -d "$b/rootfs$host/y" ] ||
		fail "no mount point in the container's root: $b/rootfs$host/x, y"
}

# The container puts a symlink on the destination of a remove: the mask
# of /proc/timer_list (a bind of /dev/null; /proc/kcore is not on every
# kernel) must stay.
t_remove_symlink()
{
	require_root
	local b=$TEST_TMP/br id m=$TEST_TMP/r.json
	id=$(unique_id)
	sleeper 0 "$b" "$id"
	in_ctr 0 "$id" 'grep -c " /proc/timer_list " /proc/self/mountinfo'
	assert_eq "$OUT" 1 "the test needs /proc/timer_list masked"
	in_ctr 0 "$id" 'mkdir -p /data; ln -s /proc/timer_list /data/link; ln -s /proc /p'
	echo '[{"destination": "/data/link"}, {"destination": "/p/timer_list"}]' >"$m"
	assert_status 1 ar mounts remove "$id" "$m"
	assert_contains "$ERR" "[0] (destination /data/link)"
	echo '[{"destination": "/p/timer_list"}]' >"$m"
	assert_status 1 ar mounts remove "$id" "$m"
	assert_contains "$ERR" "[0] (destination /p/timer_list)"
	in_ctr 0 "$id" 'grep -c " /proc/timer_list " /proc/self/mountinfo'
	assert_eq "$OUT" 1 "the mask of /proc/timer_list was removed"
	# by its real path, a mount point: it goes (the caller's right)
	echo '[{"destination": "/proc/timer_list"}]' >"$m"
	assert_status 0 ar mounts remove "$id" "$m"
}

t_errors()
{
	require_root
	local b=$TEST_TMP/be id m=$TEST_TMP/e.json
	id=$(unique_id)
	echo '[{"destination": "/x", "type": "tmpfs"}]' >"$m"
	assert_status 1 ar mounts add "nosuch-$id" "$m"
	assert_contains "$ERR" "does not exist"
	sleeper 0 "$b" "$id"
	echo '{"destination": "/x"}' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "$m: expected an array"
	echo '[{"destination": "/x", "type": "tmpfs"}, {"type": "tmpfs"}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "$m: [1].destination"
	echo '[{"destination": "x", "type": "tmpfs"}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "[0].destination: must be an absolute path"
	echo '[{"destination": "/x", "type": "tmpfs", "options": ["tmpcopyup"]}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "tmpcopyup"
	echo '[{"destination": "/x", "type": "bind", "source": "/no/such/dir", "options": ["bind"]}, {"destination": "/y", "type": "tmpfs"}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "[0] (destination /x): bind \`/no/such/dir\`: No such file or directory"
	# nothing was attached: every mount is made before the first is
	in_ctr 0 "$id" 'test -e /y && echo y-exists; grep -c " /y " /proc/self/mountinfo || true'
	assert_eq "$OUT" 0
	echo '[{"destination": "/x", "type": "nosuchfs"}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "fsopen \`nosuchfs\`"
	echo '[]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "no mount in the list"
	assert_status 1 ar mounts frob "$id" "$m"
	assert_contains "$ERR" "unknown action \`frob\`"
	assert_status 1 ar mounts add "$id"
	# a stopped container
	assert_status 0 ar kill "$id" KILL
	wait_until 120 status_is 0 "$id" stopped
	echo '[{"destination": "/x", "type": "tmpfs"}]' >"$m"
	assert_status 1 ar mounts add "$id" "$m"
	assert_contains "$ERR" "is not running (status: stopped)"
}

run_test "mounts add/remove (root): bind ro, tmpfs, a file" t_root
run_test "mounts add/remove (rootless)" t_rootless
run_test "mounts add: a symlink of the container's stays inside its root" t_add_symlink
run_test "mounts remove: a symlink does not unmount another mount" t_remove_symlink
run_test "mounts: errors" t_errors
finish
