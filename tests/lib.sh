# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash
#
# tests/lib.sh — helpers for agentrun's integration tests (bash, TAP output).
#
# A test script tests/integration/test_<area>.sh looks like:
#
#   #!/bin/bash
#   . "$(dirname "$0")/../lib.sh"
#
#   t_echo() {
#       require_root
#       local b=$TEST_TMP/b id
#       id=$(unique_id)
#       make_bundle "$b"
#       config_set "$b" '.process.args=["echo","hi"]'
#       defer ar delete --force "$id"
#       assert_status 0 ar run --bundle "$b" "$id"
#       assert_eq "$OUT" "hi"
#   }
#   run_test "run prints hi" t_echo
#   finish
#
# Run one script alone:  AGENTRUN=$PWD/agentrun bash tests/integration/test_x.sh
# Run all of them:       make check   (or tests/run-tests.sh -k x)
#
# ---- Running tests --------------------------------------------------------
# run_test NAME FUNC [ARGS...]
#     Run FUNC ARGS in a subshell with `set -eu -o pipefail`, stdin
#     /dev/null, stdout+stderr captured. Exit 0 prints "ok N - NAME";
#     exit 77 (see `skip`) prints "ok N - NAME # SKIP reason"; anything
#     else prints "not ok N - NAME" and the captured output as "# " lines.
#     Variables set inside FUNC are lost afterwards (subshell).
#     With AR_TEST_VERBOSE=1 the output of passing tests is printed too.
# finish
#     Print the plan "1..N" and exit 0. Call it once, at the end.
# defer CMD [ARGS...]
#     Inside a test: run CMD when the test's subshell exits (pass, fail or
#     skip), last registered first; its errors are ignored. Use it to delete
#     containers the test made.
#
# ---- Outcomes and assertions (inside a test function) ---------------------
# skip REASON...            end the test as skipped (exit 77). Called at the
#                           top level of a script (outside run_test), it
#                           skips the whole file ("1..0 # SKIP REASON").
# fail MSG...               end the test as failed with MSG.
# assert_eq GOT EXPECTED [MSG]
# assert_ne GOT UNEXPECTED [MSG]
# assert_contains HAYSTACK NEEDLE [MSG]
# assert_not_contains HAYSTACK NEEDLE [MSG]
# assert_match STRING ERE [MSG]      bash =~ regular expression match
# assert_status EXPECTED CMD [ARGS...]
#     Run CMD (stdin /dev/null) and fail unless its exit status is EXPECTED
#     (a number, or "!0" for any non-zero status). Afterwards OUT and ERR
#     hold its stdout and stderr (trailing newlines stripped), STATUS its
#     exit status, and OUT_FILE / ERR_FILE name files with the raw output.
# assert_file_owner PATH UID:GID     (stat -c %u:%g, does not follow symlinks)
# wait_until TIMEOUT_SECS CMD [ARGS...]
#     Retry CMD every 0.1 s until it succeeds; fail after TIMEOUT_SECS.
#
# ---- Environment ----------------------------------------------------------
# AGENTRUN      absolute path of the binary under test
# TOP_SRCDIR    source tree;  TOP_BUILDDIR  build tree
# TEST_TMP      per-script temp dir under /tmp (mode 0755), removed at exit
#               after a lazy unmount of anything still mounted below it and
#               a `delete --force` of containers left in AR_ROOT/AR_USER_ROOT.
# AR_ROOT       state dir for `ar` ($TEST_TMP/state), private to this script
# AR_USER_ROOT  state dir for `ar_user` ($TEST_TMP/state-user)
# ar ARGS...       = "$AGENTRUN" --root "$AR_ROOT" ARGS...
# ar_user ARGS...  = as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" ARGS...
# unique_id        print a fresh container id (unique per call)
#
# ---- Requirements (skip the test when unmet) ------------------------------
# require_root              the test needs euid 0
# require_cmd NAME...       the test needs these commands in PATH
#
# ---- Bundles and root filesystems -----------------------------------------
# make_rootfs DIR
#     DIR becomes a busybox-static rootfs: bin/busybox plus a symlink per
#     applet (sbin, usr/bin, usr/sbin link to bin), dirs proc sys dev tmp
#     etc root home/testuser run, /etc/passwd (root 0, testuser 1000,
#     nobody 65534) and /etc/group. Built once into a cache
#     ($TOP_BUILDDIR/tests/work/rootfs-cache, or one under TEST_TMP if that
#     is not writable) and copied with `cp -a`.
# make_bundle DIR [--rootless]
#     make_rootfs DIR/rootfs, then `$AGENTRUN spec [--rootless] --bundle DIR`
#     (if that fails the test fails; with AR_TEST_SPEC_FALLBACK=1 a minimal
#     runc-style config.json is written instead, with a warning).
#     process.terminal is set to false.
# config_set DIR JQ_FILTER [JQ_ARGS...]
#     Edit DIR/config.json in place with jq (owner and mode kept), e.g.
#     config_set "$b" '.process.args=["true"]'
#     config_set "$b" '.hostname=$h' --arg h box
# config_get DIR JQ_FILTER  print jq -r FILTER of DIR/config.json
#
# ---- Rootless (an unprivileged test user) ---------------------------------
# ensure_test_user
#     As root: create user agentrun-test (useradd -m) with 65536
#     subordinate uids and gids in /etc/subuid and /etc/subgid if missing,
#     and /run/user/$TEST_UID (0700, owned by the user).
#     Not root: the invoking user is the test user (nothing is created).
#     Sets TEST_USER, TEST_UID, TEST_GID, TEST_HOME, TEST_XDG_RUNTIME_DIR.
# require_subids
#     Skip unless the test user has /etc/subuid and /etc/subgid ranges and
#     newuidmap is installed.
# as_test_user CMD [ARGS...]
#     Run CMD as the test user (as root via setpriv --reuid --regid
#     --init-groups) with a clean environment: PATH, HOME, USER, LOGNAME,
#     XDG_RUNTIME_DIR, AGENTRUN, TOP_SRCDIR, TOP_BUILDDIR, TEST_TMP,
#     AR_USER_ROOT, LANG (and ASAN_OPTIONS, UBSAN_OPTIONS when set: the
#     sanitizer run of .ci/run). The working directory is unchanged. Calls
#     ensure_test_user.
# require_agentrun_as_test_user
#     Skip unless the test user can execute $AGENTRUN. As root, a binary
#     out of its reach (a checkout in a mode-700 directory) is copied into
#     TEST_TMP when lib.sh loads, and AGENTRUN names the copy; so are the
#     helpers (AR_TEST_HELPERS: tests/helpers or the copy).
#     AR_BUILT_AGENTRUN is the binary as built (for the VM tests).
# make_bundle_as_test_user DIR [--rootless]
#     Like make_bundle, but DIR (and the rootfs) is owned by the test user
#     and `agentrun spec` runs as the test user (so a --rootless config maps
#     container root to TEST_UID).

_AR_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$_AR_LIB_DIR/.." && pwd)}
TOP_BUILDDIR=${TOP_BUILDDIR:-$TOP_SRCDIR}
AGENTRUN=${AGENTRUN:-$TOP_BUILDDIR/agentrun}
export TOP_SRCDIR TOP_BUILDDIR AGENTRUN

TEST_USER=agentrun-test
_AR_N=0
_AR_IN_TEST=0
_AR_ROOTFS_VERSION=1

TEST_TMP=$(mktemp -d /tmp/agentrun-test.XXXXXX) || {
	echo "Bail out! cannot create a temp dir under /tmp"
	exit 1
}
chmod 0755 "$TEST_TMP"
AR_ROOT=$TEST_TMP/state
AR_USER_ROOT=$TEST_TMP/state-user
export TEST_TMP AR_ROOT AR_USER_ROOT

# The test user runs $AGENTRUN and the helpers (tests/helpers). A checkout
# in a directory others cannot search (a mode-700 home) is out of its
# reach: then, as root, both are copied into TEST_TMP (mode 755, removed
# with it) and AGENTRUN and AR_TEST_HELPERS name the copies.
AR_TEST_HELPERS=$TOP_SRCDIR/tests/helpers
# _ar_others_reach PATH...: every parent directory of each PATH is
# searchable by others
_ar_others_reach()
{
	local p dirs=() m
	for p in "$@"; do
		# relative (TOP_SRCDIR=..): "${p%/*}" of ".." is ".." forever
		p=$(readlink -m -- "$p")
		while [ -n "${p%/*}" ]; do
			p=${p%/*}
			dirs+=("$p")
		done
	done
	[ ${#dirs[@]} -gt 0 ] || return 0
	for m in $(stat -L -c %A "${dirs[@]}" 2>/dev/null || echo unreadable); do
		case $m in ?????????[xt]) ;; *) return 1 ;; esac
	done
}
if [ "$(id -u)" = 0 ] && [ -x "$AGENTRUN" ] &&
	! _ar_others_reach "$AGENTRUN" "$AR_TEST_HELPERS/."; then
	mkdir -p "$TEST_TMP/reach"
	AR_BUILT_AGENTRUN=$AGENTRUN
	cp "$AGENTRUN" "$TEST_TMP/reach/agentrun"
	if [ -d "$AR_TEST_HELPERS" ]; then
		cp -R "$AR_TEST_HELPERS" "$TEST_TMP/reach/helpers"
	fi
	chmod -R a+rX "$TEST_TMP/reach"
	AGENTRUN=$TEST_TMP/reach/agentrun
	AR_TEST_HELPERS=$TEST_TMP/reach/helpers
fi
# the binary as built: the VM tests run it in a VM that shares the tree
AR_BUILT_AGENTRUN=${AR_BUILT_AGENTRUN:-$AGENTRUN}
export AGENTRUN AR_TEST_HELPERS AR_BUILT_AGENTRUN

# --- cleanup ---------------------------------------------------------------

# _ar_delete_leftovers ROOT RUNNER...: force-delete every container found in
# the state dir ROOT (best effort, errors ignored).
_ar_delete_leftovers()
{
	local root=$1 d
	shift
	[ -d "$root" ] || return 0
	[ -x "$AGENTRUN" ] || return 0
	for d in "$root"/*/; do
		[ -d "$d" ] || continue
		d=$(basename "$d")
		timeout 20 "$@" "$AGENTRUN" --root "$root" delete --force "$d" \
			</dev/null >/dev/null 2>&1 || true
	done
}

_ar_cleanup()
{
	local rc=$? mp
	trap - EXIT
	set +e
	if [ -n "${TEST_TMP:-}" ] && [ -d "$TEST_TMP" ]; then
		_ar_delete_leftovers "$AR_ROOT"
		if [ -d "$AR_USER_ROOT" ]; then
			if [ "$(id -u)" != 0 ]; then
				_ar_delete_leftovers "$AR_USER_ROOT"
			elif TEST_UID=$(id -u "$TEST_USER" 2>/dev/null) &&
				TEST_GID=$(id -g "$TEST_USER" 2>/dev/null); then
				_ar_delete_leftovers "$AR_USER_ROOT" setpriv \
					--reuid="$TEST_UID" --regid="$TEST_GID" \
					--init-groups env \
					XDG_RUNTIME_DIR="/run/user/$TEST_UID"
			fi
		fi
		# Unmount anything left below TEST_TMP, deepest first.
		if [ "$(id -u)" = 0 ]; then
			awk -v p="$TEST_TMP/" 'substr($5, 1, length(p)) == p {
				print length($5) " " $5 }' /proc/self/mountinfo |
				sort -rn | cut -d' ' -f2- |
				while IFS= read -r mp; do
					umount -l "$mp" 2>/dev/null
				done
		fi
		rm -rf --one-file-system "$TEST_TMP" 2>/dev/null
		if [ -d "$TEST_TMP" ]; then
			echo "# warning: could not fully remove $TEST_TMP" >&2
		fi
	fi
	exit "$rc"
}
trap _ar_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- running tests ---------------------------------------------------------

_AR_DEFERS=()

defer()
{
	local q
	q=$(printf '%q ' "$@")
	_AR_DEFERS+=("$q")
}

_ar_run_defers()
{
	local rc=$? i
	set +e
	for ((i = ${#_AR_DEFERS[@]} - 1; i >= 0; i--)); do
		eval "${_AR_DEFERS[$i]}" </dev/null
	done
	_AR_DEFERS=()
	exit "$rc"
}

run_test()
{
	local name=$1 fn=$2 log skipf rc reason oldopts
	shift 2
	_AR_N=$((_AR_N + 1))
	log=$TEST_TMP/.log.$_AR_N
	skipf=$TEST_TMP/.skip.$_AR_N
	oldopts=$(set +o)
	set +e
	(
		_AR_IN_TEST=1
		_AR_SKIP_FILE=$skipf
		_AR_DEFERS=()
		trap _ar_run_defers EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
		set -eu -o pipefail
		"$fn" "$@"
	) </dev/null >"$log" 2>&1
	rc=$?
	eval "$oldopts"
	if [ "$rc" -eq 0 ]; then
		echo "ok $_AR_N - $name"
		if [ "${AR_TEST_VERBOSE:-0}" = 1 ]; then
			sed 's/^/# /' "$log"
		fi
	elif [ "$rc" -eq 77 ]; then
		reason="exit status 77"
		[ -s "$skipf" ] && reason=$(head -n1 "$skipf")
		echo "ok $_AR_N - $name # SKIP $reason"
	else
		echo "not ok $_AR_N - $name"
		echo "# exit status $rc; output:"
		sed 's/^/#   /' "$log"
	fi
	rm -f "$log" "$skipf"
	return 0
}

finish()
{
	echo "1..$_AR_N"
	exit 0
}

# --- outcomes and assertions ----------------------------------------------

skip()
{
	local reason="$*"
	[ -n "$reason" ] || reason="no reason given"
	if [ "$_AR_IN_TEST" = 1 ]; then
		echo "$reason" >"$_AR_SKIP_FILE"
		echo "SKIP: $reason"
		exit 77
	fi
	# Top level: skip the whole file.
	if [ "$_AR_N" -eq 0 ]; then
		echo "1..0 # SKIP $reason"
	else
		echo "# skipping the rest: $reason"
		echo "1..$_AR_N"
	fi
	exit 0
}

fail()
{
	if [ "$_AR_IN_TEST" = 1 ]; then
		echo "FAIL: $*"
		exit 1
	fi
	echo "Bail out! $*"
	exit 1
}

assert_eq()
{
	[ "$1" == "$2" ] && return 0
	fail "${3:-assert_eq}: got '$1', expected '$2'"
}

assert_ne()
{
	[ "$1" != "$2" ] && return 0
	fail "${3:-assert_ne}: got '$1', which it must not be"
}

assert_contains()
{
	[[ $1 == *"$2"* ]] && return 0
	fail "${3:-assert_contains}: '$2' not found in:
$1"
}

assert_not_contains()
{
	[[ $1 != *"$2"* ]] && return 0
	fail "${3:-assert_not_contains}: '$2' unexpectedly found in:
$1"
}

assert_match()
{
	[[ $1 =~ $2 ]] && return 0
	fail "${3:-assert_match}: '$1' does not match /$2/"
}

assert_status()
{
	local expected=$1 ok=0
	shift
	OUT_FILE=$TEST_TMP/.out.$BASHPID
	ERR_FILE=$TEST_TMP/.err.$BASHPID
	STATUS=0
	"$@" </dev/null >"$OUT_FILE" 2>"$ERR_FILE" || STATUS=$?
	OUT=$(cat "$OUT_FILE")
	ERR=$(cat "$ERR_FILE")
	case "$expected" in
	'!0') [ "$STATUS" -ne 0 ] && ok=1 ;;
	*) [ "$STATUS" -eq "$expected" ] && ok=1 ;;
	esac
	[ "$ok" = 1 ] && return 0
	fail "assert_status: expected exit status $expected, got $STATUS
command: $*
--- stdout:
$OUT
--- stderr:
$ERR"
}

assert_file_owner()
{
	local got
	got=$(stat -c %u:%g -- "$1") || fail "assert_file_owner: cannot stat $1"
	[ "$got" = "$2" ] && return 0
	fail "assert_file_owner: $1 is owned by $got, expected $2"
}

wait_until()
{
	local timeout=$1 deadline
	shift
	deadline=$(($(date +%s%N) / 1000000 + timeout * 1000))
	until "$@" >/dev/null 2>&1; do
		if [ "$(($(date +%s%N) / 1000000))" -ge "$deadline" ]; then
			fail "wait_until: '$*' did not succeed within ${timeout}s"
		fi
		sleep 0.1
	done
}

# --- environment helpers ---------------------------------------------------

ar()
{
	"$AGENTRUN" --root "$AR_ROOT" "$@"
}

ar_user()
{
	ensure_test_user
	if [ ! -d "$AR_USER_ROOT" ]; then
		mkdir -p "$AR_USER_ROOT"
		chown "$TEST_UID:$TEST_GID" "$AR_USER_ROOT"
		chmod 0700 "$AR_USER_ROOT"
	fi
	as_test_user "$AGENTRUN" --root "$AR_USER_ROOT" "$@"
}

_AR_ID_SEQ=0
unique_id()
{
	_AR_ID_SEQ=$((_AR_ID_SEQ + 1))
	echo "ar-t$$-${BASHPID}-${_AR_N}-${_AR_ID_SEQ}-${RANDOM}"
}

require_root()
{
	[ "$(id -u)" = 0 ] || skip "needs root"
}

require_cmd()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 || skip "needs command '$c'"
	done
}

# --- root filesystems and bundles ------------------------------------------

_ar_busybox()
{
	local bb
	bb=$(command -v busybox 2>/dev/null) ||
		skip "needs busybox (install busybox-static)"
	if ldd "$bb" >/dev/null 2>&1; then
		skip "$bb is dynamically linked (install busybox-static)"
	fi
	echo "$bb"
}

# _ar_build_rootfs BUSYBOX DIR: populate DIR from scratch.
_ar_build_rootfs()
{
	local bb=$1 dir=$2 a
	mkdir -p "$dir"/{bin,proc,sys,dev,tmp,etc,root,run,home/testuser,usr}
	chmod 1777 "$dir/tmp"
	chmod 0700 "$dir/root"
	cp "$bb" "$dir/bin/busybox"
	chmod 0755 "$dir/bin/busybox"
	for a in $("$bb" --list); do
		case "$a" in
		busybox | */*) continue ;;
		esac
		ln -s busybox "$dir/bin/$a"
	done
	ln -s bin "$dir/sbin"
	ln -s ../bin "$dir/usr/bin"
	ln -s ../bin "$dir/usr/sbin"
	cat >"$dir/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
testuser:x:1000:1000:testuser:/home/testuser:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
	cat >"$dir/etc/group" <<'EOF'
root:x:0:
testuser:x:1000:
nogroup:x:65534:
EOF
	chown 1000:1000 "$dir/home/testuser"
	echo agentrun-test >"$dir/etc/hostname"
}

make_rootfs()
{
	local dir=$1 bb workdir cache stamp want tmp
	[ -n "$dir" ] || fail "make_rootfs: no DIR"
	bb=$(_ar_busybox) || exit $?
	workdir=${AR_TEST_WORKDIR:-$TOP_BUILDDIR/tests/work}
	mkdir -p "$workdir" 2>/dev/null
	if [ ! -w "$workdir" ] || { [ -e "$workdir/rootfs-cache.lock" ] &&
		[ ! -w "$workdir/rootfs-cache.lock" ]; }; then
		# E.g. a root run made it: use a private cache.
		workdir=$TEST_TMP/.work
		mkdir -p "$workdir"
	fi
	cache=$workdir/rootfs-cache
	stamp=$workdir/rootfs-cache.stamp
	want="v$_AR_ROOTFS_VERSION $bb $(stat -L -c %Y:%s "$bb")"
	(
		flock -x 9
		if [ ! -d "$cache" ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
			tmp=$(mktemp -d "$workdir/rootfs-cache.tmp.XXXXXX")
			chmod 0755 "$tmp"
			_ar_build_rootfs "$bb" "$tmp"
			# set -e does not apply here (we are left of ||).
			if [ ! -x "$tmp/bin/busybox" ] || [ ! -L "$tmp/bin/sh" ] ||
				[ ! -s "$tmp/etc/group" ]; then
				rm -rf "$tmp"
				exit 1
			fi
			rm -rf "$cache"
			mv -T "$tmp" "$cache"
			echo "$want" >"$stamp"
		fi
	) 9>"$workdir/rootfs-cache.lock" || fail "make_rootfs: building the cache failed"
	mkdir -p "$dir"
	cp -a "$cache/." "$dir/" || fail "make_rootfs: copying into $dir failed"
}

# _ar_fallback_config DIR ROOTLESS HOSTUID HOSTGID
_ar_fallback_config()
{
	local dir=$1 rootless=$2 uid=$3 gid=$4 ns mounts userns=
	if [ "$rootless" = 1 ]; then
		ns='{"type":"pid"},{"type":"ipc"},{"type":"uts"},{"type":"mount"},{"type":"cgroup"},{"type":"user"}'
		userns=',"uidMappings":[{"containerID":0,"hostID":'$uid',"size":1}],"gidMappings":[{"containerID":0,"hostID":'$gid',"size":1}]'
		mounts='{"destination":"/sys","type":"none","source":"/sys","options":["rbind","nosuid","noexec","nodev","ro"]}'
	else
		ns='{"type":"pid"},{"type":"network"},{"type":"ipc"},{"type":"uts"},{"type":"mount"},{"type":"cgroup"}'
		mounts='{"destination":"/sys","type":"sysfs","source":"sysfs","options":["nosuid","noexec","nodev","ro"]}'
	fi
	cat >"$dir/config.json" <<EOF
{
  "ociVersion": "1.2.0",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": ["sh"],
    "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "TERM=xterm"],
    "cwd": "/",
    "capabilities": {
      "bounding": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "effective": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
      "permitted": ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    },
    "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "agentrun",
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs", "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/dev/pts", "type": "devpts", "source": "devpts", "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
    {"destination": "/dev/shm", "type": "tmpfs", "source": "shm", "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
    {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue", "options": ["nosuid", "noexec", "nodev"]},
    $mounts
  ],
  "linux": {
    "namespaces": [$ns]$userns,
    "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
    "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"]
  }
}
EOF
}

# _ar_spec DIR ROOTLESS UID GID RUNNER...: agentrun spec, or the fallback.
_ar_spec()
{
	local dir=$1 rootless=$2 uid=$3 gid=$4 out
	shift 4
	local args=(spec)
	[ "$rootless" = 1 ] && args+=(--rootless)
	args+=(--bundle "$dir")
	rm -f "$dir/config.json"
	if ! out=$("$@" "$AGENTRUN" "${args[@]}" 2>&1) ||
		! jq -e . "$dir/config.json" >/dev/null 2>&1; then
		if [ "${AR_TEST_SPEC_FALLBACK:-0}" != 1 ]; then
			fail "'$AGENTRUN ${args[*]}' failed (set AR_TEST_SPEC_FALLBACK=1 to use a built-in config instead): $out"
		fi
		echo "# warning: '$AGENTRUN ${args[*]}' failed, using the fallback config: $out" >&2
		_ar_fallback_config "$dir" "$rootless" "$uid" "$gid"
		if [ "$uid" != 0 ]; then
			chown "$uid:$gid" "$dir/config.json"
		fi
	fi
	config_set "$dir" '.process.terminal=false'
}

# _ar_parse_rootless [OPT]: set _AR_ROOTLESS to 1 for --rootless, else 0.
_ar_parse_rootless()
{
	case "${1:-}" in
	'') _AR_ROOTLESS=0 ;;
	--rootless) _AR_ROOTLESS=1 ;;
	*) fail "unknown option '$1' (expected --rootless)" ;;
	esac
}

make_bundle()
{
	local dir=$1
	_ar_parse_rootless "${2:-}"
	require_cmd jq
	mkdir -p "$dir"
	make_rootfs "$dir/rootfs"
	_ar_spec "$dir" "$_AR_ROOTLESS" "$(id -u)" "$(id -g)"
}

make_bundle_as_test_user()
{
	local dir=$1
	_ar_parse_rootless "${2:-}"
	require_cmd jq
	ensure_test_user
	require_agentrun_as_test_user
	mkdir -p "$dir"
	make_rootfs "$dir/rootfs"
	chown -hR "$TEST_UID:$TEST_GID" "$dir"
	_ar_spec "$dir" "$_AR_ROOTLESS" "$TEST_UID" "$TEST_GID" as_test_user
}

config_set()
{
	local dir=$1 filter=$2 tmp
	shift 2
	tmp=$(mktemp "$TEST_TMP/.config.XXXXXX")
	jq "$@" "$filter" "$dir/config.json" >"$tmp" ||
		fail "config_set: jq '$filter' failed on $dir/config.json"
	# Write through the existing file so owner and mode stay.
	cat "$tmp" >"$dir/config.json"
	rm -f "$tmp"
}

config_get()
{
	jq -r "$2" "$1/config.json"
}

# --- rootless --------------------------------------------------------------

# _ar_next_subid: first id above every range in /etc/subuid and /etc/subgid,
# at least 165536, rounded up to a multiple of 65536.
_ar_next_subid()
{
	cat /etc/subuid /etc/subgid 2>/dev/null | awk -F: '
		BEGIN { max = 165536 }
		NF >= 3 && $2 ~ /^[0-9]+$/ && $3 ~ /^[0-9]+$/ {
			end = $2 + $3; if (end > max) max = end }
		END { printf "%d\n", int((max + 65535) / 65536) * 65536 }'
}

ensure_test_user()
{
	if [ "$(id -u)" != 0 ]; then
		# Not root: the invoking user is the test user.
		TEST_USER=$(id -un)
		TEST_UID=$(id -u)
		TEST_GID=$(id -g)
		TEST_HOME=${HOME:-$(getent passwd "$TEST_UID" | cut -d: -f6)}
		if [ -d "/run/user/$TEST_UID" ] && [ -O "/run/user/$TEST_UID" ]; then
			TEST_XDG_RUNTIME_DIR=/run/user/$TEST_UID
		elif [ -n "${XDG_RUNTIME_DIR:-}" ] && [ -O "$XDG_RUNTIME_DIR" ]; then
			TEST_XDG_RUNTIME_DIR=$XDG_RUNTIME_DIR
		else
			TEST_XDG_RUNTIME_DIR=$TEST_TMP/xdg-run
			mkdir -p "$TEST_XDG_RUNTIME_DIR"
			chmod 0700 "$TEST_XDG_RUNTIME_DIR"
		fi
		export TEST_USER TEST_UID TEST_GID TEST_HOME TEST_XDG_RUNTIME_DIR
		return 0
	fi
	if ! id -u "$TEST_USER" >/dev/null 2>&1 ||
		! grep -q "^$TEST_USER:" /etc/subuid 2>/dev/null ||
		! grep -q "^$TEST_USER:" /etc/subgid 2>/dev/null; then
		(
			flock -x 9
			if ! id -u "$TEST_USER" >/dev/null 2>&1; then
				useradd -m -s /bin/bash "$TEST_USER" >&2 ||
					exit 1
			fi
			local start
			if ! grep -q "^$TEST_USER:" /etc/subuid 2>/dev/null; then
				start=$(_ar_next_subid)
				echo "$TEST_USER:$start:65536" >>/etc/subuid
			fi
			if ! grep -q "^$TEST_USER:" /etc/subgid 2>/dev/null; then
				start=$(_ar_next_subid)
				echo "$TEST_USER:$start:65536" >>/etc/subgid
			fi
		) 9>/run/lock/agentrun-test-user.lock ||
			fail "ensure_test_user: could not create $TEST_USER"
	fi
	TEST_UID=$(id -u "$TEST_USER")
	TEST_GID=$(id -g "$TEST_USER")
	TEST_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
	TEST_XDG_RUNTIME_DIR=/run/user/$TEST_UID
	if [ ! -d "$TEST_XDG_RUNTIME_DIR" ]; then
		mkdir -p "$TEST_XDG_RUNTIME_DIR"
		chown "$TEST_UID:$TEST_GID" "$TEST_XDG_RUNTIME_DIR"
		chmod 0700 "$TEST_XDG_RUNTIME_DIR"
	fi
	export TEST_USER TEST_UID TEST_GID TEST_HOME TEST_XDG_RUNTIME_DIR
}

# require_subids: skip unless the test user has subordinate uid and gid
# ranges (always true for the agentrun-test user created as root).
require_subids()
{
	ensure_test_user
	grep -q "^$TEST_USER:" /etc/subuid 2>/dev/null &&
		grep -q "^$TEST_USER:" /etc/subgid 2>/dev/null ||
		skip "$TEST_USER has no range in /etc/subuid or /etc/subgid"
	command -v newuidmap >/dev/null 2>&1 ||
		skip "needs newuidmap/newgidmap (install uidmap)"
}

as_test_user()
{
	local drop=()
	ensure_test_user
	if [ "$(id -u)" = 0 ]; then
		require_cmd setpriv
		drop=(setpriv --reuid="$TEST_UID" --regid="$TEST_GID"
			--init-groups)
	fi
	"${drop[@]}" env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER" \
		XDG_RUNTIME_DIR="$TEST_XDG_RUNTIME_DIR" \
		LANG="${LANG:-C.UTF-8}" \
		AGENTRUN="$AGENTRUN" TOP_SRCDIR="$TOP_SRCDIR" \
		TOP_BUILDDIR="$TOP_BUILDDIR" TEST_TMP="$TEST_TMP" \
		AR_USER_ROOT="$AR_USER_ROOT" \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} \
		${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		"$@"
}

require_agentrun_as_test_user()
{
	ensure_test_user
	[ -x "$AGENTRUN" ] || skip "$AGENTRUN does not exist (build it first)"
	as_test_user test -x "$AGENTRUN" ||
		skip "$AGENTRUN is not executable by $TEST_USER (a parent directory is not searchable by others?)"
}

# bundle_for 0|1 DIR: a default (`agentrun spec`) bundle at DIR, rootless
# (owned by the test user) for 1. Needs root either way.
bundle_for()
{
	require_root
	if [ "$1" = 1 ]; then
		require_subids
		make_bundle_as_test_user "$2" --rootless
	else
		make_bundle "$2"
	fi
}

# arr 0|1 ARGS...: agentrun as root (ar) or as the test user (ar_user)
arr()
{
	local u=$1
	shift
	if [ "$u" = 1 ]; then
		ar_user "$@"
	else
		ar "$@"
	fi
}

# status_is 0|1 ID STATUS: the container's status is STATUS (for
# wait_until)
status_is()
{
	[ "$(arr "$1" state "$2" | jq -r .status)" = "$3" ]
}

# ---- leftovers: what a test may leave on the host ----------------------

# Mount points of the host ("MOUNTPOINT FSTYPE", sorted), without those
# that concurrent work on a shared build machine makes and removes (other
# test runs' /tmp dirs, per-user runtime dirs, podman's storage and network
# namespaces, other build trees): a mount a test leaks would be in
# TEST_TMP, in the host's "/" or on a path of the host such as /etc.
host_mounts()
{
	awk '{ print $5 " " $9 }' /proc/self/mountinfo |
		awk -v own="$TEST_TMP" '
			index($1, "/tmp/") == 1 && index($1, own) != 1 { next }
			$1 ~ "^/(run/user|run/netns|run/containers|var/lib/containers|work|var/tmp)/" { next }
			{ print }' | LC_ALL=C sort
}

# leftover_procs STATE_ROOT TAG: processes a test may have left, one
# "PID CMDLINE" per line: TAG (NAME=VALUE) in the environment (the runtime,
# its clones and the containers' processes after execve carry it: it is in
# process.env), the state root on the command line, or root or cwd in
# TEST_TMP (cheap under load: two greps, one find). Not this shell.
leftover_procs()
{
	local root=$1 tag=$2 pid
	{
		grep -lsaF -- "$root" /proc/[0-9]*/cmdline |
			sed 's|^/proc/\([0-9]*\)/.*|\1|'
		grep -lsFz -- "$tag" /proc/[0-9]*/environ |
			sed 's|^/proc/\([0-9]*\)/.*|\1|'
		find /proc -mindepth 2 -maxdepth 2 \( -name root -o -name cwd \) \
			-lname "$TEST_TMP*" 2>/dev/null |
			sed 's|^/proc/\([0-9]*\)/.*|\1|'
	} | sort -u | while read -r pid; do
		[ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ] && continue
		[ -d "/proc/$pid" ] || continue
		echo "$pid $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null)"
	done
}

# wait_no_leftover_procs STATE_ROOT TAG: up to 5 s for them to go; fails
# the test with their list otherwise.
wait_no_leftover_procs()
{
	local left
	for _ in $(seq 50); do
		left=$(leftover_procs "$1" "$2" || true)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	fail "processes left: $(echo "$left" | head)"
}

