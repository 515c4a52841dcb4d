#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Hostile bundles (issue 9, "bad input"): a table of configs and bundle
# layouts a careless or malicious caller may hand to `agentrun run`. Each
# must end in a clear error and a non-zero exit status -- or, for the
# cases marked CONTAINED (e.g. a mount destination with "..", which the
# runtime resolves inside the rootfs as runc does), may succeed as long as
# nothing escapes -- and the host must be unchanged afterwards:
#
#   - no crash (signal), no hang (timeout), no sanitizer report;
#   - stderr names the problem (an ERE per case) in an "agentrun:" line
#     of at most 3 lines in all;
#   - no state directory left in the --root;
#   - no process left whose root, cwd or command line is in the test dir;
#   - no new mount in the host's /proc/self/mountinfo;
#   - nothing new outside the bundle: neither in the test dir nor in the
#     host's "/" (a rootfs that is the host's "/" would make the runtime
#     create mount targets there).
#
# Root cases run as root with a plain bundle; rootless ("user") cases run
# as the test user with a --rootless bundle.
. "$(dirname "$0")/../lib.sh"

require_cmd jq

# ---- the table ------------------------------------------------------------
# hostile NAME MODES EXPECT SETUP FILTER
#   MODES   "root", "user" or "root user"
#   EXPECT  ERE the error must match (grep -E -i), or CONTAINED
#   SETUP   a function run on the bundle after FILTER, or "-"
#   FILTER  jq filter applied to config.json, "." for none; it sees
#           $tag (unique per case), $tmp (TEST_TMP), $bundle,
#           $beyond (a host id above the test user's subordinate ids)
H_NAME=()
H_MODES=()
H_EXPECT=()
H_SETUP=()
H_FILTER=()
hostile()
{
	H_NAME+=("$1")
	H_MODES+=("$2")
	H_EXPECT+=("$3")
	H_SETUP+=("$4")
	H_FILTER+=("$5")
}

# -- root filesystem
hostile "rootfs symlinked to /" "root user" "host's root directory" \
	setup_rootfs_slash \
	'.mounts=[{destination:("/agentrun-hostile-"+$tag),type:"tmpfs",source:"tmpfs"}]+.mounts'
hostile "root.path is /" "root" "host's root directory" - '.root.path="/"'
hostile "root.path missing" "root user" "rootfs.*No such file" - \
	'.root.path="no-such-rootfs"'
hostile "root.path is a file" "root" "Not a directory|not a directory" \
	setup_rootfs_file .

# -- mount destinations
hostile "mount destination with .. " "root user" CONTAINED - \
	'.mounts+=[{destination:("/../../../../.."+$tmp+"/escape-"+$tag),type:"tmpfs",source:"tmpfs"}]'
hostile "mount destination through an absolute symlink" "root user" \
	CONTAINED setup_symlink_abs \
	'.mounts+=[{destination:"/evil-abs/x",type:"tmpfs",source:"tmpfs"}]'
hostile "mount destination through a ../ symlink" "root user" CONTAINED \
	setup_symlink_rel \
	'.mounts+=[{destination:"/evil-rel/x",type:"tmpfs",source:"tmpfs"}]'
hostile "mount destination is a symlink to the host" "root" CONTAINED \
	setup_symlink_abs \
	'.mounts+=[{destination:"/evil-abs",type:"tmpfs",source:"tmpfs"}]'
hostile "mount destination relative" "root" CONTAINED - \
	'.mounts+=[{destination:"rel/x",type:"tmpfs",source:"tmpfs"}]'
hostile "10,000 mounts" "root" CONTAINED - \
	'.mounts+=[range(10000)|{destination:"/tmp/m\(.)",type:"tmpfs",source:"tmpfs"}]'
hostile "bind source missing" "root user" "No such file or directory" - \
	'.mounts+=[{destination:"/mnt",type:"bind",source:"/no/such/dir",options:["rbind"]}]'
hostile "unknown filesystem type" "root" "No such device|nosuchfs" - \
	'.mounts+=[{destination:"/mnt",type:"nosuchfs",source:"x"}]'
hostile "device path with .." "root" CONTAINED - \
	'.linux.devices=[{path:("/dev/../../../.."+$tmp+"/devesc-"+$tag),type:"c",major:1,minor:3}]'
hostile "maskedPaths with .." "root user" CONTAINED - \
	'.linux.maskedPaths+=["/../../../../etc/passwd"]'
hostile "sysctl key with .." "root" "invalid sysctl key" - \
	'.linux.sysctl={"kernel/../../../../tmp/x":"1"}'

# -- process
hostile "args empty" "root user" "no process to run|args" - '.process.args=[]'
hostile "missing executable" "root user" "No such file or directory" - \
	'.process.args=["/no/such/binary"]'
hostile "executable is a directory" "root" "Permission denied|directory" - \
	'.process.args=["/tmp"]'
hostile "cwd relative" "root user" "cwd.*absolute" - \
	'.process.cwd="relative/dir"'
hostile "100,000 env vars" "root" CONTAINED - \
	'.process.env+=[range(100000)|"V\(.)=x"]'
hostile "10 MB of env (1000 x 10 KB)" "root" "Argument list too long" - \
	'.process.env+=[range(1000)|"V\(.)="+("x"*10000)]'
hostile "one 10 MB env string" "root" "longer than the limit" - \
	'.process.env+=["BIG="+("x"*10485760)]'
hostile "70,000 additional gids" "root" "setgroups|additionalGids" - \
	'.process.user.additionalGids=[range(70000)]'
hostile "hostname of 1000 chars" "root" "hostname" - \
	'.hostname=("h"*1000)'

# -- numbers
hostile "uid -1" "root user" "expected an unsigned integer" - \
	'.process.user.uid=-1'
hostile "uid 2^32" "root" "out of range" - '.process.user.uid=4294967296'
hostile "oomScoreAdj 100000" "root" "out of range" - \
	'.process.oomScoreAdj=100000'
hostile "rlimit hard -1" "root" "expected an unsigned integer" - \
	'.process.rlimits=[{type:"RLIMIT_NOFILE",hard:-1,soft:1}]'
hostile "rlimit 2^64" "root" "out of range|too large|overflow" - \
	'.process.rlimits=[{type:"RLIMIT_NOFILE",hard:18446744073709551616,soft:1}]'
hostile "pids.limit 1e300" "root" "expected|range|integer" - \
	'.linux.resources.pids.limit=1e300'
hostile "console size -5" "root" "expected an unsigned integer" - \
	'.process.consoleSize={height:-5,width:80}'

# -- id mappings
hostile "overlapping uid maps" "root" "uid_?map|uidMappings" - \
	'.linux.namespaces+=[{type:"user"}]
	 | .linux.uidMappings=[{containerID:0,hostID:100000,size:65536},{containerID:1,hostID:100000,size:1}]
	 | .linux.gidMappings=[{containerID:0,hostID:100000,size:65536}]'
hostile "overlapping uid maps (rootless)" "user" "uid_?map|uidMappings|newuidmap" - \
	'.linux.uidMappings=[{containerID:0,hostID:$uid,size:1},{containerID:1,hostID:$uid,size:1}]'
hostile "uid map beyond the subordinate range" "user" \
	"uid_?map|uidMappings|newuidmap" - \
	'.linux.uidMappings=[{containerID:0,hostID:$uid,size:1},{containerID:1,hostID:$beyond,size:10}]'
hostile "uid map of size 0" "root" "size|uid_?map|uidMappings" - \
	'.linux.namespaces+=[{type:"user"}]
	 | .linux.uidMappings=[{containerID:0,hostID:100000,size:0}]
	 | .linux.gidMappings=[{containerID:0,hostID:100000,size:1}]'

# -- hooks, namespaces
hostile "hook with a relative path" "root" "absolute" - \
	'.hooks.createRuntime=[{path:"relative/hook"}]'
hostile "namespace path is not a namespace" "root" "namespace" - \
	'.linux.namespaces|=map(if .type=="network" then .path="/etc/passwd" else . end)'

# -- the file itself
hostile "invalid UTF-8 in hostname" "root user" "UTF-?8|invalid JSON" \
	setup_utf8_hostname .
hostile "invalid UTF-8 in args" "root" "UTF-?8|invalid JSON" \
	setup_utf8_args .
hostile "JSON nested 100,000 deep" "root" "nesting deeper" setup_deep .
hostile "config.json is /dev/zero" "root user" "not a regular file" \
	setup_devzero .
hostile "config.json is a FIFO" "root" "not a regular file" setup_fifo .
hostile "config.json empty" "root" "invalid JSON|empty|expected" \
	setup_empty .
hostile "container id ../../etc" "root user" "invalid container id" \
	setup_id_dotdot .
hostile "container id of 5000 chars" "root" "invalid container id" \
	setup_id_long .

# ---- setups (run with the bundle dir; may set H_ID) -----------------------
# A rootfs of the bundle's own (root.path "rootfs"), for setups that
# change it.
private_rootfs()
{
	cp -a "$TEST_TMP/base-$H_MODE/rootfs" "$1/rootfs"
	config_set "$1" '.root.path="rootfs"'
}

setup_rootfs_slash()
{
	ln -s / "$1/rootfs"
	config_set "$1" '.root.path="rootfs"'
}

setup_rootfs_file()
{
	echo x >"$1/rootfs"
	config_set "$1" '.root.path="rootfs"'
}

# $TEST_TMP/outside-<case>: a host directory that must stay empty.
setup_symlink_abs()
{
	private_rootfs "$1"
	mkdir -p "$H_OUTSIDE"
	ln -s "$H_OUTSIDE" "$1/rootfs/evil-abs"
}

setup_symlink_rel()
{
	private_rootfs "$1"
	mkdir -p "$H_OUTSIDE"
	ln -s "../../../../../../../../..$H_OUTSIDE" "$1/rootfs/evil-rel"
}

# Replace the value of "hostname" by bytes that are not UTF-8.
setup_utf8_hostname()
{
	local c=$1/config.json
	jq -c '.hostname="HOSTNAMEMARK"' "$c" |
		sed 's/HOSTNAMEMARK/a\xff\xfeb/' >"$c.new"
	cat "$c.new" >"$c"
	rm -f "$c.new"
}

setup_utf8_args()
{
	local c=$1/config.json
	jq -c '.process.args=["/bin/echo","ARGMARK"]' "$c" |
		sed 's/ARGMARK/\xc3\x28\xa0\xa1/' >"$c.new"
	cat "$c.new" >"$c"
	rm -f "$c.new"
}

setup_deep()
{
	awk 'BEGIN { for (i = 0; i < 100000; i++) printf "["
		for (i = 0; i < 100000; i++) printf "]"; print "" }' \
		>"$1/config.json"
}

setup_devzero()
{
	rm -f "$1/config.json"
	ln -s /dev/zero "$1/config.json"
}

setup_fifo()
{
	rm -f "$1/config.json"
	mkfifo "$1/config.json"
}

setup_empty()
{
	: >"$1/config.json"
}

setup_id_dotdot()
{
	H_ID=../../etc
}

setup_id_long()
{
	H_ID=$(printf 'x%.0s' $(seq 5000))
}

# ---- host snapshots -------------------------------------------------------

subid_beyond()
{
	awk -F: -v u="$TEST_USER" '$1 == u { print $2 + $3 + 1000; exit }' \
		/etc/subuid
}

# ---- one case -------------------------------------------------------------
t_hostile()
{
	local i=$1 mode=$2 b tag expect setup filter rc lines out
	local mounts_before mounts_after root_before root_after new_files
	local runner=()
	expect=${H_EXPECT[$i]}
	setup=${H_SETUP[$i]}
	filter=${H_FILTER[$i]}
	tag=$i-$mode-$$
	b=$TEST_TMP/bundle-$tag
	H_OUTSIDE=$TEST_TMP/outside-$tag
	H_MODE=$mode
	H_ID=$(unique_id)
	H_TAG=$tag-$RANDOM

	# One bundle per mode, made once and copied for each case.
	if [ "$mode" = root ]; then
		require_root
		H_ROOT=$AR_ROOT
		if [ ! -d "$TEST_TMP/base-root" ]; then
			make_bundle "$TEST_TMP/base-root.tmp"
			mv "$TEST_TMP/base-root.tmp" "$TEST_TMP/base-root"
		fi
	else
		[ "$(id -u)" = 0 ] || skip "rootless cases run as root via the test user"
		require_subids
		require_agentrun_as_test_user
		H_ROOT=$AR_USER_ROOT
		mkdir -p "$H_ROOT"
		chown "$TEST_UID:$TEST_GID" "$H_ROOT"
		chmod 0700 "$H_ROOT"
		if [ ! -d "$TEST_TMP/base-user" ]; then
			make_bundle_as_test_user "$TEST_TMP/base-user.tmp" --rootless
			mv "$TEST_TMP/base-user.tmp" "$TEST_TMP/base-user"
		fi
		runner=(as_test_user)
	fi
	# The bundle holds config.json; the rootfs is the base bundle's,
	# shared by absolute path, unless the setup asks for a private copy.
	mkdir -p "$b"
	cp -a "$TEST_TMP/base-$mode/config.json" "$b/"
	config_set "$b" ".root.path=\$shared | .process.args=[\"/bin/true\"] |
		.process.env+=[\"AR_HOSTILE_TAG=\" + \$htag] | $filter" \
		--arg shared "$TEST_TMP/base-$mode/rootfs" --arg htag "$H_TAG" \
		--arg tag "$tag" --arg tmp "$TEST_TMP" --arg bundle "$b" \
		--argjson uid "${TEST_UID:-0}" \
		--argjson beyond "$(subid_beyond 2>/dev/null || echo 0)"
	[ "$mode" = user ] && chown -h "$TEST_UID:$TEST_GID" "$b"
	[ "$setup" = - ] || "$setup" "$b"
	[ "$mode" = user ] && chown -h "$TEST_UID:$TEST_GID" "$b/config.json" 2>/dev/null

	mounts_before=$(host_mounts)
	root_before=$(ls -A /)
	touch "$TEST_TMP/.stamp-$tag"
	sleep 0.01

	rc=0
	"${runner[@]}" env AR_HOSTILE_TAG="$H_TAG" \
		timeout -k 5 120 "$AGENTRUN" --root "$H_ROOT" \
		run --bundle "$b" "$H_ID" </dev/null \
		>"$TEST_TMP/.out-$tag" 2>"$TEST_TMP/.err-$tag" || rc=$?
	out=$(head -c 2000 "$TEST_TMP/.err-$tag")
	echo "exit $rc; stderr: $out"

	# The outcome.
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] ||
		fail "agentrun hung (killed after 120 s)"
	[ "$rc" -le 128 ] || fail "agentrun crashed (signal $((rc - 128)))"
	if grep -qE 'Sanitizer|runtime error:|Segmentation|core dumped' \
		"$TEST_TMP/.err-$tag"; then
		fail "sanitizer or crash report on stderr"
	fi
	if [ "$expect" = CONTAINED ]; then
		if [ "$rc" -ne 0 ]; then
			grep -q '^agentrun: ' "$TEST_TMP/.err-$tag" ||
				fail "no \"agentrun: \" error line: $out"
		fi
	else
		[ "$rc" -ne 0 ] || fail "expected an error, got exit status 0"
		# (a helper such as newuidmap may print its own line first)
		grep -q '^agentrun: ' "$TEST_TMP/.err-$tag" ||
			fail "no \"agentrun: \" error line: $out"
		grep -qiE -- "$expect" "$TEST_TMP/.err-$tag" ||
			fail "the error does not match /$expect/: $out"
		lines=$(wc -l <"$TEST_TMP/.err-$tag")
		[ "$lines" -le 3 ] ||
			fail "the error takes $lines lines (expected one clear line)"
	fi

	# The host is unchanged.
	if [ -d "$H_ROOT" ] && [ -n "$(ls -A "$H_ROOT" | grep -vx .seccomp-cache)" ]; then
		fail "state left in --root: $(ls -A "$H_ROOT" | head -c 300)"
	fi
	wait_no_leftover_procs "$H_ROOT" "AR_HOSTILE_TAG=$H_TAG"
	mounts_after=$(host_mounts)
	if [ "$mounts_before" != "$mounts_after" ]; then
		out=$(diff <(echo "$mounts_before") <(echo "$mounts_after") | grep '^>' || true)
		[ -z "$out" ] || fail "new host mounts: $out"
	fi
	root_after=$(ls -A /)
	[ "$root_before" = "$root_after" ] ||
		fail "the host's / changed: $(diff <(echo "$root_before") <(echo "$root_after") | grep '^[<>]')"
	# (the shared base rootfs may get mount targets: it is the rootfs)
	new_files=$(find "$TEST_TMP" -xdev \( -path "$b" -o -path "$H_ROOT" \
		-o -path "$TEST_TMP/.*" -o -path "$TEST_TMP/base-*" \
		-o -path "$TEST_TMP/xdg-run*" \) -prune -o \
		-newer "$TEST_TMP/.stamp-$tag" -not -path "$TEST_TMP" -print \
		2>/dev/null || true)
	[ -z "$new_files" ] || fail "created outside the bundle: $new_files"
	if [ -d "$H_OUTSIDE" ] && [ -n "$(ls -A "$H_OUTSIDE")" ]; then
		fail "a mount or file escaped to $H_OUTSIDE: $(ls -A "$H_OUTSIDE")"
	fi
	rm -rf --one-file-system "$b" 2>/dev/null || true
}

for i in "${!H_NAME[@]}"; do
	for mode in ${H_MODES[$i]}; do
		run_test "hostile ($mode): ${H_NAME[$i]}" t_hostile "$i" "$mode"
	done
done
finish
