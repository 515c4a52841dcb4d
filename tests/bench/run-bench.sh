#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/bench/run-bench.sh — `make bench`: agentrun's start path side by side
# with crun, runc and bubblewrap. A benchmark, not a test: it asserts no
# timing; it prints a table and one machine-readable line per figure:
#
#   BENCH name=FIGURE where=WHERE agentrun_ms=.. crun_ms=.. ratio=..
#
# ratio is always agentrun's cost divided by the reference's cost (crun for
# runtime figures, bwrap for the sandbox): below 1.0 agentrun is better.
# See README.md, "Benchmarks: how to read `make bench`".
#
# Usage: AGENTRUN=/abs/path/agentrun tests/bench/run-bench.sh
#
# Environment:
#   AGENTRUN          the binary under test (required; `make bench` sets it)
#   BENCH_REPS        repetitions per figure on the host (default 50)
#   BENCH_SEQ         runs in the sequential / parallel throughput figures
#                     on the host (default 100)
#   BENCH_RSS_REPS    repetitions of the peak-RSS figure (default 5)
#   BENCH_VM          auto (default: when run-in-vm exists), 0 or 1: run the
#                     crun/runc comparisons inside tests/vm/run-in-vm
#   BENCH_VM_REPS     repetitions inside the VM (default 10; the VM is
#                     emulated (TCG) on hosts without KVM: slow, same ratios)
#   BENCH_VM_SEQ      throughput runs inside the VM (default 20)
#   BENCH_VM_TIMEOUT  seconds a VM pass may take (default 3600)
#   BENCH_VM_USER     uid for the rootless VM pass (default 1000; "" = skip)
#   BENCH_HOST_USER=0 skip the host pass as the unprivileged test user (run
#                     as root, every figure is measured again rootless, as
#                     the agentrun-test user of tests/lib.sh)
#   RUN_IN_VM         path of run-in-vm (default: tests/vm/run-in-vm of
#                     the source tree)
#   BENCH_RUNC_V1=1   also run runc as root on a host whose cgroups are v1
#                     or hybrid (off by default: runc cannot disable cgroups
#                     and would create cgroups in the v1 hierarchies)
#   BENCH_ONLY        regular expression: only figures whose name matches
#   BENCH_VM_SANDBOX_REPS  repetitions of sandbox_vm (`sandbox --vm -- true`,
#                     KVM or TCG; default 3, 0 skips)
#   BENCH_VM_GIT_REPS  git status/diff runs inside one `sandbox --vm` and one
#                     plain sandbox in a 10,000-file repository
#                     (sandbox_vm_git; default 5, 0 skips)
#   BENCH_WS_N        workspace sizes (directories) of sandbox_ws (default
#                     "0 10000 100000"); BENCH_WS_REPS its repetitions (5)
#   CRUN=/path        a second crun (e.g. a newer build) measured beside the
#                     installed one, as runtime "crun2"
#   BENCH_CGNS        auto (default), 0 or 1: as root on a host whose cgroups
#                     are hybrid, run the host runtime figures inside
#                     tests/bench/in-cgroup-ns.sh (a private mount + cgroup
#                     namespace on a fresh cgroup2 mount of an empty child of
#                     the v2 tree), where crun and runc run
#   BENCH_IR=0        skip the instruction counts. By default they are
#                     taken by tests/bench/icount.c (every process single-
#                     stepped with ptrace: the real code on the real kernel,
#                     no valgrind needed; ~30 µs an instruction in a VM)
#   VALGRIND          take the instruction counts with this valgrind's
#                     callgrind instead (faster; it must know open_tree,
#                     move_mount, mount_setattr and openat2 and follow an
#                     exec of an fd: docs/performance.md, no packaged
#                     valgrind does; otherwise the rows say why they are
#                     missing)
#   BENCH_SCALE_IR    1: instruction counts of the scaling figures with
#                     icount too (slow: crun's 1000 seccomp rules are ~400 M
#                     instructions); the default is 1 with VALGRIND, else 0
#   BENCH_SCALE_REPS  repetitions per scaling figure (default 10; 0 skips)
#   BENCH_SCALE_N     sizes of the scaling figures (default "10 100 1000")
#   CC                compiler for the timer helper (default cc)
#
# Internal: `run-bench.sh --inner vm` is what runs inside the VM,
# `--inner host-user` the pass as the test user, `--inner host-ns` the host
# pass inside in-cgroup-ns.sh.

set -u -o pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
INNER=
if [ "${1:-}" = --inner ]; then
	INNER=${2:?--inner needs a mode}
fi

if [ -z "${AGENTRUN:-}" ] || [ ! -x "$AGENTRUN" ]; then
	echo "run-bench.sh: set AGENTRUN to the agentrun binary (make bench does)" >&2
	exit 2
fi
case $AGENTRUN in
/*) ;;
*) AGENTRUN=$(cd "$(dirname "$AGENTRUN")" && pwd)/$(basename "$AGENTRUN") ;;
esac
export TOP_BUILDDIR=${TOP_BUILDDIR:-$(dirname "$AGENTRUN")}
# make_rootfs, ensure_test_user, as_test_user; TEST_TMP (removed at exit).
# shellcheck source=../lib.sh
. "$BENCH_DIR/../lib.sh"

REPS=${BENCH_REPS:-50}
SEQ=${BENCH_SEQ:-100}
RSS_REPS=${BENCH_RSS_REPS:-5}
VM_REPS=${BENCH_VM_REPS:-10}
VM_SEQ=${BENCH_VM_SEQ:-20}
ONLY=${BENCH_ONLY:-}
EUID_NOW=$(id -u)

W=$TEST_TMP/bench
RES=$W/results
STATE=$W/state
mkdir -p "$RES" "$STATE"
SUMMARY=$W/summary
BENCHLINES=$W/bench-lines
: >"$SUMMARY"
: >"$BENCHLINES"

# --- helpers -----------------------------------------------------------------

note()
{
	echo "# $*"
}

want()
{
	[ -z "$ONLY" ] || [[ $1 =~ $ONLY ]]
}

# median / min of the numbers on stdin (empty input: "nan")
median()
{
	sort -g | awk '{ a[NR] = $1 } END {
		if (NR == 0) { print "nan"; exit }
		if (NR % 2) print a[(NR + 1) / 2]
		else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

minimum()
{
	sort -g | head -n1 | awk 'NF { print; f = 1 } END { if (!f) print "nan" }'
}

# fmt NUMBER [DECIMALS]: fixed point, "nan" kept
fmt()
{
	awk -v x="$1" -v d="${2:-1}" 'BEGIN {
		if (x == "nan" || x == "") print "nan"; else printf "%.*f\n", d, x }'
}

# ratio A B: A / B with 2 decimals, "nan" when either is missing
ratio()
{
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "nan" || b == "nan" || a == "" || b == "" || b + 0 == 0)
			print "nan"
		else printf "%.2f\n", a / b }'
}

# The test user runs run-bench.sh (the host-user pass) and egress-bench.sh
# from USER_BENCH_DIR: the tree itself, or, when the tree is out of its
# reach (a checkout in a mode-700 home), a copy in TEST_TMP made by
# user_bench_dir (lib.sh copies $AGENTRUN the same way).
USER_BENCH_DIR=$BENCH_DIR
USER_SRCDIR=$TOP_SRCDIR
user_bench_dir()
{
	local c=$TEST_TMP/reach-src
	[ "$USER_BENCH_DIR" = "$BENCH_DIR" ] || return 0
	[ "$(id -u)" = 0 ] && ! _ar_others_reach "$BENCH_DIR/run-bench.sh" ||
		return 0
	mkdir -p "$c/tests" &&
		cp -R "$BENCH_DIR" "$c/tests/bench" &&
		cp "$BENCH_DIR/../lib.sh" "$c/tests/lib.sh" &&
		chmod -R a+rX "$c" || fail "cannot copy the bench scripts into $c"
	USER_BENCH_DIR=$c/tests/bench
	USER_SRCDIR=$c
}

# build_helper NAME: tests/bench/NAME.c built once per build tree; prints
# the binary's path.
build_helper()
{
	local name=$1 dir=$TOP_BUILDDIR/tests/work/bench bin
	bin=$dir/$name
	if [ -x "$bin" ] && [ "$bin" -nt "$BENCH_DIR/$name.c" ]; then
		reachable_copy "$bin"
		return 0
	fi
	if ! mkdir -p "$dir" 2>/dev/null || [ ! -w "$dir" ]; then
		# E.g. a root build tree and an unprivileged run.
		dir=$TEST_TMP/bin
		bin=$dir/$name
		mkdir -p "$dir"
	fi
	"${CC:-cc}" -std=gnu11 -O2 -Wall -Wextra -o "$bin.tmp" \
		"$BENCH_DIR/$name.c" && mv "$bin.tmp" "$bin" ||
		fail "cannot build $bin (set CC to a C compiler)"
	reachable_copy "$bin"
}

# reachable_copy BIN: prints BIN, or as root a copy in TEST_TMP when the
# test user cannot reach BIN (a build tree in a mode-700 home; lib.sh does
# the same for $AGENTRUN).
reachable_copy()
{
	if [ "$(id -u)" = 0 ] && ! _ar_others_reach "$1"; then
		mkdir -p "$TEST_TMP/reach-bench"
		cp "$1" "$TEST_TMP/reach-bench/" &&
			chmod -R a+rX "$TEST_TMP/reach-bench" ||
			fail "cannot copy $1 into $TEST_TMP"
		echo "$TEST_TMP/reach-bench/${1##*/}"
		return 0
	fi
	echo "$1"
}

# The timer helper (tests/bench/benchtime.c) and the instruction counter
# (tests/bench/icount.c).
build_benchtime()
{
	BENCHTIME=$(build_helper benchtime) || exit 1
	ICOUNT=$(build_helper icount) || exit 1
}

# rt_argv RUNTIME: set RT to the command line prefix of RUNTIME, with its own
# state directory. Cgroups are disabled where the runtime can disable them.
rt_argv()
{
	case $1 in
	agentrun)
		RT=("$AGENTRUN" --root "$STATE/agentrun" --cgroup-manager=disabled) ;;
	crun)
		RT=(crun --root "$STATE/crun" --cgroup-manager=disabled) ;;
	crun2)
		RT=("$CRUN" --root "$STATE/crun2" --cgroup-manager=disabled) ;;
	runc)
		RT=(runc --root "$STATE/runc") ;;
	*) fail "unknown runtime $1" ;;
	esac
}

# delete_leftovers: force-delete whatever the runtimes left behind.
delete_leftovers()
{
	local rt d
	for rt in agentrun crun crun2 runc; do
		[ -d "$STATE/$rt" ] || continue
		rt_argv "$rt"
		for d in "$STATE/$rt"/*/; do
			[ -d "$d" ] || continue
			timeout 20 "${RT[@]}" delete --force "$(basename "$d")" \
				</dev/null >/dev/null 2>&1
		done
	done
}

bench_cleanup()
{
	local rc=$?
	delete_leftovers
	(exit "$rc")
	_ar_cleanup
}
trap bench_cleanup EXIT

# emit_row FIGURE WHERE RUNTIME VALUE MIN CPU VS OK UNIT: one table row.
ROW_FMT='%-22s %-13s %-9s %10s %9s %9s %8s %7s  %s\n'
emit_header()
{
	# shellcheck disable=SC2059
	printf "$ROW_FMT" figure where runtime median min cpu "agr/x" ok unit
}
emit_row()
{
	# shellcheck disable=SC2059
	printf "$ROW_FMT" "$@" | tee -a "$SUMMARY"
}
emit_bench()
{
	echo "BENCH $*" | tee -a "$BENCHLINES"
}

# first_error FILE: the first non-empty line of a runtime's stderr
first_error()
{
	grep -m1 -v '^[[:space:]]*$' "$1" 2>/dev/null | cut -c1-160
}

# --- bundles -------------------------------------------------------------------

# make_bundles ROOTLESS: $W/rootfs plus bundles $W/b-noseccomp, $W/b-seccomp
# and $W/b-sleep (a long-running process, for exec), all from `agentrun spec`
# with the same namespaces and mounts for every runtime.
make_bundles()
{
	local rootless=$1 v spec=(spec)
	make_rootfs "$W/rootfs"
	[ "$rootless" = 1 ] && spec+=(--rootless)
	mkdir -p "$W/spec"
	rm -f "$W/spec/config.json"
	"$AGENTRUN" "${spec[@]}" --bundle "$W/spec" >/dev/null ||
		fail "agentrun ${spec[*]} failed"
	for v in noseccomp seccomp sleep; do
		mkdir -p "$W/b-$v"
		# crun 1.8 (Debian 12) rejects ociVersion 1.2.0 ("unknown
		# version specified"); the config uses nothing newer than 1.0.
		jq --arg root "$W/rootfs" --arg v "$v" '
			.ociVersion = "1.0.2"
			| .root.path = $root
			| .process.args = (if $v == "sleep" then ["sleep", "3600"]
					   else ["true"] end)
			| if $v == "seccomp" then . else del(.linux.seccomp) end
			' "$W/spec/config.json" >"$W/b-$v/config.json" ||
			fail "jq on the generated config failed"
	done
	jq -e '.linux.seccomp.syscalls | length > 0' "$W/b-seccomp/config.json" \
		>/dev/null || fail "agentrun spec wrote no seccomp profile"
}

# --- which runtimes run here ---------------------------------------------------

RUNTIMES=()
declare -A SKIPPED=()

cgroup_v2_only()
{
	[ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]
}

# probe RUNTIME: one `run` of the no-seccomp bundle; on failure the runtime
# is skipped with the reason.
probe()
{
	local rt=$1 err=$W/probe.$1.err
	if [ "$rt" = crun2 ]; then
		if [ -z "${CRUN:-}" ]; then
			SKIPPED[$rt]="CRUN not set"
			return 1
		elif [ ! -x "$CRUN" ]; then
			SKIPPED[$rt]="CRUN=$CRUN is not executable"
			return 1
		fi
	elif [ "$rt" != agentrun ] && ! command -v "$rt" >/dev/null 2>&1; then
		SKIPPED[$rt]="not installed"
		return 1
	fi
	if [ "$rt" = runc ] && [ "$EUID_NOW" = 0 ] && ! cgroup_v2_only &&
		[ "${BENCH_RUNC_V1:-0}" != 1 ]; then
		SKIPPED[$rt]="cgroups here are v1/hybrid; runc cannot disable cgroups and would create cgroups in the v1 hierarchies (BENCH_RUNC_V1=1 allows it); see the VM rows"
		return 1
	fi
	rt_argv "$rt"
	if ! timeout 60 "${RT[@]}" run --bundle "$W/b-noseccomp" "probe-$rt" \
		</dev/null >/dev/null 2>"$err"; then
		SKIPPED[$rt]="does not run here: $(first_error "$err")"
		return 1
	fi
	return 0
}

select_runtimes()
{
	local rt
	RUNTIMES=()
	for rt in agentrun crun crun2 runc; do
		if probe "$rt"; then
			RUNTIMES+=("$rt")
		fi
	done
	[ "${RUNTIMES[0]:-}" = agentrun ] ||
		fail "agentrun itself does not run here: $(first_error "$W/probe.agentrun.err")"
	for rt in crun crun2 runc; do
		[ "$rt" = crun2 ] && [ -z "${CRUN:-}" ] && continue
		[ -n "${SKIPPED[$rt]:-}" ] && note "$WHERE: $rt skipped: ${SKIPPED[$rt]}"
	done
	if [[ " ${RUNTIMES[*]} " == *" crun2 "* ]]; then
		note "$WHERE: crun2 = $CRUN ($("$CRUN" --version | head -n1))"
	fi
	if [[ " ${RUNTIMES[*]} " == *" runc "* ]]; then
		note "$WHERE: runc runs with cgroups (it cannot disable them); agentrun and crun run with --cgroup-manager=disabled"
	fi
	return 0
}

# --- figures -------------------------------------------------------------------

# report_times FIGURE LABEL [STEP]: rows + BENCH line from $RES/FIGURE.RT
# (lines "wall_us cpu_us tree_maxrss_kb hwm_kb status").
report_times()
{
	local fig=$1 label=$2 rt f med mn cpu ok n line ref=
	local -A MED=()
	line="name=$fig where=$WHERE_ID${BENCH_EXTRA:-}"
	for rt in "${RUNTIMES[@]}"; do
		f=$RES/$fig.$rt
		[ -s "$f" ] || continue
		n=$(wc -l <"$f")
		ok=$(awk '$5 == 0' "$f" | wc -l)
		med=$(awk '$5 == 0 { print $1 / 1000 }' "$f" | median)
		mn=$(awk '$5 == 0 { print $1 / 1000 }' "$f" | minimum)
		cpu=$(awk '$5 == 0 { print $2 / 1000 }' "$f" | median)
		MED[$rt]=$med
		if [ "$ok" != "$n" ]; then
			note "$fig: $rt failed $((n - ok)) of $n runs: $(first_error "$f.err")"
		fi
		emit_row "$label" "$WHERE" "$rt" "$(fmt "$med" 2)" "$(fmt "$mn" 2)" \
			"$(fmt "$cpu" 2)" \
			"$(ratio "${MED[agentrun]:-nan}" "$med")" "$ok/$n" ms
		line+=" ${rt}_ms=$(fmt "$med" 2) ${rt}_cpu_ms=$(fmt "$cpu" 2)"
	done
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = agentrun ] && continue
		[ -n "${MED[$rt]:-}" ] && [ -n "${MED[agentrun]:-}" ] || continue
		line+=" ratio_$rt=$(ratio "${MED[agentrun]}" "${MED[$rt]}")"
		[ -z "$ref" ] && ref=$rt
	done
	if [ -n "$ref" ]; then
		line+=" ratio=$(ratio "${MED[agentrun]:-nan}" "${MED[$ref]}") ref=$ref"
	fi
	emit_bench "$line"
}

# fig_run FIGURE LABEL BUNDLE: `RT run` of a container that exits at once,
# REPS times, interleaved (A B C A B C ...).
fig_run()
{
	local fig=$1 label=$2 bundle=$3 i rt
	want "$fig" || return 0
	for ((i = 0; i < REPS; i++)); do
		for rt in "${RUNTIMES[@]}"; do
			rt_argv "$rt"
			"$BENCHTIME" -e "$RES/$fig.$rt.err" -- "${RT[@]}" run \
				--bundle "$bundle" "r$i" >>"$RES/$fig.$rt"
		done
	done
	report_times "$fig" "$label"
}

# fig_csd WHERE: create, start, delete --force as three timed steps.
fig_csd()
{
	local fig=csd_$WHERE_ID i rt step id
	want "$fig" || return 0
	for ((i = 0; i < REPS; i++)); do
		for rt in "${RUNTIMES[@]}"; do
			rt_argv "$rt"
			id=c$i
			"$BENCHTIME" -e "$RES/${fig}_create.$rt.err" -- "${RT[@]}" \
				create --bundle "$W/b-noseccomp" "$id" \
				>>"$RES/${fig}_create.$rt"
			"$BENCHTIME" -e "$RES/${fig}_start.$rt.err" -- "${RT[@]}" \
				start "$id" >>"$RES/${fig}_start.$rt"
			"$BENCHTIME" -e "$RES/${fig}_delete.$rt.err" -- "${RT[@]}" \
				delete --force "$id" >>"$RES/${fig}_delete.$rt"
		done
	done
	for step in create start delete; do
		report_times "${fig}_$step" "$step"
	done
	# The three steps of one round added up.
	for rt in "${RUNTIMES[@]}"; do
		paste -d' ' "$RES/${fig}_create.$rt" "$RES/${fig}_start.$rt" \
			"$RES/${fig}_delete.$rt" | awk '{
			s = ($5 == 0 && $10 == 0 && $15 == 0) ? 0 : 1
			print $1 + $6 + $11, $2 + $7 + $12, 0, "-", s }' \
			>"$RES/$fig.$rt"
	done
	report_times "$fig" "create+start+delete"
}

# fig_exec: `RT exec ID true` into a running container.
fig_exec()
{
	local fig=exec_$WHERE_ID i rt id
	local -a ex=()
	want "$fig" || return 0
	if ! "$AGENTRUN" exec --help >/dev/null 2>&1; then
		note "$fig: agentrun has no exec command yet: agentrun skipped"
		BENCH_EXTRA=" agentrun=skipped"
	else
		ex+=(agentrun)
	fi
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = agentrun ] || ex+=("$rt")
	done
	for rt in "${ex[@]}"; do
		rt_argv "$rt"
		if ! "${RT[@]}" run -d --bundle "$W/b-sleep" "x-$rt" \
			</dev/null >/dev/null 2>"$RES/$fig.$rt.err"; then
			note "$fig: $rt: could not start the container: $(first_error "$RES/$fig.$rt.err")"
			continue
		fi
	done
	for ((i = 0; i < REPS; i++)); do
		for rt in "${ex[@]}"; do
			rt_argv "$rt"
			"$BENCHTIME" -e "$RES/$fig.$rt.err" -- "${RT[@]}" exec \
				"x-$rt" true >>"$RES/$fig.$rt"
		done
	done
	for rt in "${ex[@]}"; do
		rt_argv "$rt"
		"${RT[@]}" delete --force "x-$rt" >/dev/null 2>&1
	done
	report_times "$fig" "exec true"
	BENCH_EXTRA=
}

# fig_throughput N PAR: N runs in PAR parallel streams, per runtime.
fig_throughput()
{
	local n=$1 par=$2 fig rt out us ok failed rate line label ref=
	local -A T=()
	if [ "$par" = 1 ]; then
		fig=seq_$WHERE_ID
		label="$n runs, 1 stream"
	else
		fig=par${par}_$WHERE_ID
		label="$n runs, $par streams"
	fi
	want "$fig" || return 0
	line="name=$fig where=$WHERE_ID n=$n streams=$par"
	for rt in "${RUNTIMES[@]}"; do
		rt_argv "$rt"
		out=$("$BENCHTIME" -n "$n" -j "$par" -e "$RES/$fig.$rt.err" -- \
			"${RT[@]}" run --bundle "$W/b-noseccomp" "t@ID@")
		if [ -z "$out" ]; then
			note "$fig: $rt: benchtime failed"
			continue
		fi
		read -r us ok failed <<<"$out"
		rate=$(awk -v us="$us" -v n="$((ok - failed))" \
			'BEGIN { printf "%.1f\n", n / (us / 1e6) }')
		T[$rt]=$us
		[ "$failed" = 0 ] ||
			note "$fig: $rt: $failed of $ok runs failed: $(first_error "$RES/$fig.$rt.err")"
		emit_row "$label" "$WHERE" "$rt" "$rate" "" "" \
			"$(ratio "${T[agentrun]}" "$us")" "$((ok - failed))/$ok" \
			"containers/s (total $(fmt "$(awk -v u="$us" 'BEGIN{print u/1e6}')" 2) s)"
		line+=" ${rt}_per_s=$rate"
	done
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = agentrun ] && continue
		line+=" ratio_$rt=$(ratio "${T[agentrun]}" "${T[$rt]}")"
		[ -z "$ref" ] && ref=$rt
	done
	[ -n "$ref" ] && line+=" ratio=$(ratio "${T[agentrun]}" "${T[$ref]}") ref=$ref"
	emit_bench "$line"
}

# fig_rss: peak RSS (VmHWM) of the runtime's own process during `run`.
fig_rss()
{
	local fig=rss_$WHERE_ID i rt hwm tree line ref=
	local -A H=()
	want "$fig" || return 0
	for ((i = 0; i < RSS_REPS; i++)); do
		for rt in "${RUNTIMES[@]}"; do
			rt_argv "$rt"
			"$BENCHTIME" -H -e "$RES/$fig.$rt.err" -- "${RT[@]}" run \
				--bundle "$W/b-noseccomp" "m$i" >>"$RES/$fig.$rt"
		done
	done
	line="name=$fig where=$WHERE_ID"
	for rt in "${RUNTIMES[@]}"; do
		hwm=$(awk '$5 == 0 && $4 != "-" { print $4 }' "$RES/$fig.$rt" | median)
		tree=$(awk '$5 == 0 { print $3 }' "$RES/$fig.$rt" | median)
		H[$rt]=$hwm
		emit_row "peak RSS (runtime)" "$WHERE" "$rt" "$(fmt "$hwm" 0)" "" "" \
			"$(ratio "${H[agentrun]}" "$hwm")" \
			"$(awk '$5 == 0' "$RES/$fig.$rt" | wc -l)/$RSS_REPS" \
			"kB VmHWM (process tree incl. children: $(fmt "$tree" 0) kB)"
		line+=" ${rt}_kb=$(fmt "$hwm" 0) ${rt}_tree_kb=$(fmt "$tree" 0)"
	done
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = agentrun ] && continue
		line+=" ratio_$rt=$(ratio "${H[agentrun]}" "${H[$rt]}")"
		[ -z "$ref" ] && ref=$rt
	done
	[ -n "$ref" ] && line+=" ratio=$(ratio "${H[agentrun]}" "${H[$ref]}") ref=$ref"
	emit_bench "$line"
}

# fig_sandbox: `agentrun sandbox -- true` against bubblewrap, as root and as
# the unprivileged test user.
fig_sandbox()
{
	local fig=sandbox_$WHERE_ID
	want "$fig" || want sandbox_host_user || return 0
	if ! "$AGENTRUN" sandbox --help >/dev/null 2>&1; then
		note "$fig: agentrun has no sandbox command yet: skipped"
		return 0
	fi
	if ! command -v bwrap >/dev/null 2>&1; then
		note "$fig: bwrap is not installed (apt-get install bubblewrap): skipped"
		return 0
	fi
	want "$fig" && sandbox_pass "$fig" root
	if want sandbox_host_user && [ "$EUID_NOW" = 0 ]; then
		ensure_test_user
		if as_test_user test -x "$AGENTRUN"; then
			sandbox_pass sandbox_host_user user
		else
			note "sandbox_host_user: $TEST_USER cannot execute $AGENTRUN: skipped"
		fi
	fi
}

# fig_sandbox_ws: `agentrun sandbox -- true` against the size of the
# workspace: a git repository with no directory, 10,000 and 100,000
# (100 x 10 x 10 / 100 x 10 x 100, four levels: the depth the nested-
# repository search of the start reads), as root (figures
# sandbox_ws_N_WHERE) and, as root, again as the unprivileged test user
# (sandbox_ws_N_host_user). The start's search reads up to 20,000
# directories; the end-of-run check reads every directory rootless, the
# changed ones only as root (change_watch.c): these rows show what that
# costs. BENCH_WS_REPS repetitions (default 5), BENCH_WS_N sizes.
fig_sandbox_ws()
{
	local n ws fig saved=("${RUNTIMES[@]}") i who wid err
	local where_saved=$WHERE wid_saved=$WHERE_ID
	local -a run
	want sandbox_ws || return 0
	RUNTIMES=(agentrun)
	for n in ${BENCH_WS_N:-0 10000 100000}; do
		ws=$W/ws-dirs-$n
		mkdir -p "$ws"
		git -C "$ws" init -q . 2>/dev/null
		python3 - "$ws" "$n" <<'PYEOF'
import os, sys
ws, n = sys.argv[1], int(sys.argv[2])
c = n // 1000 if n >= 1000 else 0
made = 0
for a in range(100):
    for b in range(10):
        for k in range(c):
            if made >= n:
                break
            os.makedirs(os.path.join(ws, "d%d/e%d/f%d" % (a, b, k)), exist_ok=True)
            made += 1
PYEOF
		for who in root user; do
			run=()
			WHERE=$where_saved
			WHERE_ID=$wid_saved
			wid=$WHERE_ID
			err=$W/ws-err-$who
			mkdir -p "$err"
			if [ "$who" = user ]; then
				[ "$EUID_NOW" = 0 ] || continue
				ensure_test_user
				as_test_user test -x "$AGENTRUN" || continue
				chown -R "$TEST_UID:$TEST_GID" "$ws" "$err"
				chmod 0755 "$TEST_TMP" "$W"
				run=(as_test_user)
				wid=host_user
				WHERE="host user"
				WHERE_ID=host_user
			fi
			fig=sandbox_ws_${n}_$wid
			want "$fig" || continue
			note "$fig: $(find "$ws" -type d -not -path '*/.git*' | wc -l) directories"
			for ((i = 0; i < ${BENCH_WS_REPS:-5}; i++)); do
				(cd "$ws" && "${run[@]}" "$BENCHTIME" -T -e "$err/$fig.err" -- \
					"$AGENTRUN" sandbox --workspace "$ws" -- true \
					>>"$RES/$fig.agentrun")
			done
			cp "$err/$fig.err" "$RES/$fig.agentrun.err" 2>/dev/null
			report_times "$fig" "sandbox -- true, $n dirs ($who)"
		done
		rm -rf "$ws"
	done
	WHERE=$where_saved
	WHERE_ID=$wid_saved
	RUNTIMES=("${saved[@]}")
}
# vm_figure NAME REPS: whether the VM figure NAME runs: wanted, REPS > 0,
# and a VM that runs here; VM_MODE is then kvm or tcg, as agentrun doctor
# says (a note where the VM cannot run)
vm_figure()
{
	want "$1" || return 1
	[ "$2" -gt 0 ] || return 1
	VM_MODE=$("$AGENTRUN" doctor 2>/dev/null | sed -n 's/^ok  *vm .*vm(\(kvm\|tcg\).*/\1/p')
	[ -n "$VM_MODE" ] && return 0
	note "$1: agentrun doctor has no usable vm: skipped"
	return 1
}

# fig_sandbox_vm: `agentrun sandbox --vm -- true`, start to exit (docs/vm.md):
# KVM where agentrun doctor says vm(kvm), else TCG (seconds a run). One run
# not counted first (it fills the kernel cache), then BENCH_VM_SANDBOX_REPS
# (default 3; 0 skips). Skipped where --vm cannot run.
fig_sandbox_vm()
{
	local fig ws saved=("${RUNTIMES[@]}") i mode
	vm_figure sandbox_vm "${BENCH_VM_SANDBOX_REPS:-3}" || return 0
	mode=$VM_MODE
	fig=sandbox_vm_${mode}_$WHERE_ID
	ws=$W/ws-vm
	mkdir -p "$ws"
	RUNTIMES=(agentrun)
	(cd "$ws" && "$AGENTRUN" sandbox --no-tty --vm -- true >/dev/null 2>&1) ||
		note "$fig: the first run failed"
	for ((i = 0; i < ${BENCH_VM_SANDBOX_REPS:-3}; i++)); do
		(cd "$ws" && "$BENCHTIME" -T -e "$RES/$fig.agentrun.err" -- \
			"$AGENTRUN" sandbox --no-tty --vm -- true >>"$RES/$fig.agentrun")
	done
	report_times "$fig" "sandbox --vm -- true ($mode)"
	RUNTIMES=("${saved[@]}")
	rm -rf "$ws"
}

# fig_bundle_vm: `agentrun run` of a bundle whose annotation
# run.agentrun.handler=vm runs `true` in a guest kernel (docs/vm.md "Plain
# bundles"), start to exit, as fig_sandbox_vm: one run not counted first
# (the kernel cache), then BENCH_VM_SANDBOX_REPS.
fig_bundle_vm()
{
	local fig b=$W/b-vm saved=("${RUNTIMES[@]}") i mode spec=(spec)
	vm_figure bundle_vm "${BENCH_VM_SANDBOX_REPS:-3}" || return 0
	mode=$VM_MODE
	fig=bundle_vm_${mode}_$WHERE_ID
	[ -d "$W/rootfs" ] || make_rootfs "$W/rootfs"
	[ "$EUID_NOW" = 0 ] || spec+=(--rootless)
	mkdir -p "$b"
	rm -f "$b/config.json"
	"$AGENTRUN" "${spec[@]}" --bundle "$b" >/dev/null &&
		jq --arg root "$W/rootfs" '.root.path = $root | .process.args = ["true"]
			| .process.terminal = false
			| .annotations["run.agentrun.handler"] = "vm"' \
			"$b/config.json" >"$b/config.json.new" &&
		mv "$b/config.json.new" "$b/config.json" || {
		note "$fig: cannot make the bundle"
		return 0
	}
	RUNTIMES=(agentrun)
	"$AGENTRUN" --root "$W/vm-state" run -b "$b" "bvm-$$-first" </dev/null >/dev/null 2>&1 ||
		note "$fig: the first run failed"
	for ((i = 0; i < ${BENCH_VM_SANDBOX_REPS:-3}; i++)); do
		"$BENCHTIME" -T -e "$RES/$fig.agentrun.err" -- \
			"$AGENTRUN" --root "$W/vm-state" run -b "$b" "bvm-$$-$i" \
			</dev/null >>"$RES/$fig.agentrun"
	done
	report_times "$fig" "run, handler=vm, true ($mode)"
	RUNTIMES=("${saved[@]}")
}

# fig_sandbox_vm_git: `git status` and `git diff` of a 10,000-file
# repository (100 directories of 100 files) inside `sandbox --vm`, whose
# workspace is a 9p export (the only file sharing the guest has: the
# virtiofsd of Debian 12's QEMU cannot run unprivileged, docs/vm.md "The
# file sharing"), and inside the plain sandbox for comparison. One run of
# each, the commands BENCH_VM_GIT_REPS times inside it (default 5; the
# first is cold: the guest's 9p cache is empty), timed there.
fig_sandbox_vm_git()
{
	local ws mode out sb c vals med mn n line reps=${BENCH_VM_GIT_REPS:-5} d
	local -a opts
	vm_figure sandbox_vm_git "$reps" || return 0
	mode=$VM_MODE
	ws=$W/ws-vm-git
	rm -rf "$ws"
	mkdir -p "$ws"
	for ((d = 0; d < 100; d++)); do
		mkdir "$ws/d$d"
		(cd "$ws/d$d" && for ((i = 0; i < 100; i++)); do echo "$d $i" >"f$i"; done)
	done
	git -C "$ws" init -q &&
		git -C "$ws" add -A &&
		git -C "$ws" -c user.name=b -c user.email=b@b.invalid commit -qm files ||
		{
			note "sandbox_vm_git: cannot make the repository"
			return 0
		}
	echo changed >>"$ws/d7/f7"
	line="name=sandbox_vm_git_$mode where=$WHERE_ID files=10000"
	for sb in vm9p plain; do
		opts=()
		[ "$sb" = vm9p ] && opts=(--vm)
		# shellcheck disable=SC2016 # expanded by the sandbox's shell
		out=$(cd "$ws" && "$AGENTRUN" sandbox --no-tty "${opts[@]}" -- sh -c '
			for i in $(seq "$1"); do
				for c in status diff; do
					t0=$(date +%s%N); git "$c" >/dev/null 2>&1; r=$?; t1=$(date +%s%N)
					echo "T $c $(((t1 - t0) / 1000)) $r"
				done
			done' _ "$reps" 2>"$RES/sandbox_vm_git.$sb.err")
		for c in status diff; do
			vals=$(awk -v c="$c" '$1 == "T" && $2 == c && ($4 == 0 || $4 == 1) { print $3 / 1000 }' <<<"$out")
			n=$(grep -c . <<<"$vals" || true)
			med=$(median <<<"$vals")
			mn=$(minimum <<<"$vals")
			[ "$n" = "$reps" ] ||
				note "sandbox_vm_git: $sb git $c: $n of $reps runs: $(first_error "$RES/sandbox_vm_git.$sb.err")"
			emit_row "git $c 10k files" "$WHERE" "$sb" "$(fmt "$med" 2)" "$(fmt "$mn" 2)" \
				- - "$n/$reps" ms
			line+=" ${sb}_${c}_ms=$(fmt "$med" 2) ${sb}_${c}_min_ms=$(fmt "$mn" 2)"
		done
	done
	line+=" mode=$mode"
	emit_bench "$line"
	rm -rf "$ws"
}

# fig_egress: the egress allowlist proxy of `agentrun sandbox --net allow`
# (throughput and CPU through it vs direct, added connection setup), measured by
# tests/bench/egress-bench.sh; its ROW lines join the table. As root, also
# as the test user (rootless: how agents run).
fig_egress()
{
	want egress_tput || want egress_setup || return 0
	egress_pass env
	if [ "$EUID_NOW" = 0 ] && [ "${BENCH_HOST_USER:-1}" != 0 ]; then
		ensure_test_user
		if as_test_user test -x "$AGENTRUN"; then
			egress_pass as_test_user env
		else
			note "egress: $TEST_USER cannot execute $AGENTRUN: the rootless figures skipped"
		fi
	fi
}
# fig_control: the control plane (tests/bench/control-bench.sh): the
# decision round trip of --net ask, what a sandbox nobody watches pays
# (a summary row: its goal, 0.2 ms, met or not), the events per second
# its stream carries without loss, the web dashboard's RSS.
fig_control()
{
	want control || return 0
	local line med mn met
	while IFS= read -r line; do
		case $line in
		BENCH\ name=control_unwatched_cost\ *)
			emit_bench "${line#BENCH }"
			med=$(sed -n 's/.* total_ms_median=\([^ ]*\).*/\1/p' <<<"$line")
			mn=$(sed -n 's/.* total_ms_min=\([^ ]*\).*/\1/p' <<<"$line")
			met=$(sed -n 's/.* goal_met=\([^ ]*\).*/\1/p' <<<"$line")
			emit_row "control, unwatched" "${WHERE:-host}" agentrun "$med" "$mn" "" "" \
				"goal:$met" "ms on the runtime's thread (goal <= 0.2)"
			[ "$met" = yes ] ||
				note "control: a sandbox nobody watches costs $med ms of the runtime's thread (median), over the 0.2 ms goal"
			;;
		BENCH\ *) emit_bench "${line#BENCH }" ;;
		*) echo "$line" ;;
		esac
	done < <(AGENTRUN="$AGENTRUN" bash "$BENCH_DIR/control-bench.sh" ||
		note "control: the control plane figures failed")
}
# egress_pass CMD...: egress-bench.sh through CMD (env or as_test_user env)
egress_pass()
{
	local line
	while IFS= read -r line; do
		case $line in
		ROW\ *) # shellcheck disable=SC2086
			emit_row ${line#ROW } ;;
		BENCH\ *) emit_bench "${line#BENCH }" ;;
		*) echo "$line" ;;
		esac
	done < <("$@" AGENTRUN="$AGENTRUN" ${EGRESS_REPS:+EGRESS_REPS="$EGRESS_REPS"} \
		bash "$USER_BENCH_DIR/egress-bench.sh" ||
		note "egress: the proxy figures failed")
}

# bwrap_min: the command line people write by hand for a throwaway sandbox.
bwrap_min_argv()
{
	local p
	BW=(bwrap)
	for p in /usr /bin /sbin /lib /lib32 /lib64; do
		if [ -L "$p" ]; then
			BW+=(--symlink "$(readlink "$p")" "$p")
		elif [ -d "$p" ]; then
			BW+=(--ro-bind "$p" "$p")
		fi
	done
	BW+=(--tmpfs /tmp --proc /proc --dev /dev --unshare-all
		--die-with-parent true)
}

# bwrap_eq_argv BUNDLE WS: bwrap with the mounts of agentrun sandbox's own
# bundle (printed with --print-bundle), so both build the same tree.
bwrap_eq_argv()
{
	local bundle=$1 ws=$2 f
	BW=(bwrap)
	for f in "$bundle"/rootfs/*; do
		[ -L "$f" ] && BW+=(--symlink "$(readlink "$f")" "/${f##*/}")
	done
	for f in "$bundle"/rootfs/etc/*; do
		[ -f "$f" ] && BW+=(--ro-bind "$f" "/etc/${f##*/}")
	done
	mapfile -t -O "${#BW[@]}" BW < <(jq -r '.mounts[] |
		if .type == "proc" then "--proc", .destination
		elif .type == "tmpfs" and .destination == "/dev" then "--dev", "/dev"
		elif .destination == "/dev/pts" or .destination == "/dev/shm"
			or .type == "mqueue" then empty
		elif .type == "sysfs" then "--ro-bind", "/sys", .destination
		elif .type == "bind" then
			(if ((.options // []) | index(["rw"])) then "--bind"
			 else "--ro-bind" end), .source, .destination
		elif .type == "tmpfs" then "--tmpfs", .destination
		else empty end' "$bundle/config.json")
	BW+=(--unshare-all --die-with-parent --cap-drop ALL
		--hostname agentrun-sandbox --chdir "$ws" true)
}

# sandbox_pass FIGURE root|user
sandbox_pass()
{
	local fig=$1 who=$2 ws=$W/ws-$2 out=$W/sbx-out-$2 i
	local pb=$W/sbx-out-$2/bundle where_saved=$WHERE wid_saved=$WHERE_ID
	local -a run=() ar bmin beq saved
	mkdir -p "$ws" "$out"
	if [ "$who" = user ]; then
		chown "$TEST_UID:$TEST_GID" "$ws" "$out"
		chmod 0755 "$TEST_TMP" "$W"
		run=(as_test_user)
		WHERE="host user"
		WHERE_ID=host_user
	fi
	if ! (cd "$ws" && "${run[@]}" "$AGENTRUN" sandbox --workspace "$ws" \
		--print-bundle "$pb" -- true) >/dev/null 2>"$out/print.err"; then
		note "$fig: agentrun sandbox --print-bundle failed: $(first_error "$out/print.err")"
		WHERE=$where_saved
		WHERE_ID=$wid_saved
		return 0
	fi
	ar=("$AGENTRUN" sandbox --workspace "$ws" -- true)
	bwrap_min_argv
	bmin=("${BW[@]}")
	bwrap_eq_argv "$pb" "$ws"
	beq=("${BW[@]}")
	saved=("${RUNTIMES[@]}")
	RUNTIMES=(agentrun bwrap bwrap_eq)
	# -T: the CPU time of every process of the run (bwrap returns on its
	# sandbox pid 1's report of the exit code, without waiting for it).
	for ((i = 0; i < REPS; i++)); do
		(cd "$ws" &&
			"${run[@]}" "$BENCHTIME" -T -e "$out/agentrun.err" -- \
				"${ar[@]}" >>"$RES/$fig.agentrun" &&
			"${run[@]}" "$BENCHTIME" -T -e "$out/bwrap.err" -- \
				"${bmin[@]}" >>"$RES/$fig.bwrap" &&
			"${run[@]}" "$BENCHTIME" -T -e "$out/bwrap_eq.err" -- \
				"${beq[@]}" >>"$RES/$fig.bwrap_eq")
	done
	for i in agentrun bwrap bwrap_eq; do
		cp "$out/$i.err" "$RES/$fig.$i.err" 2>/dev/null
	done
	note "$fig: bwrap = the hand-written line: ${bmin[*]}"
	note "$fig: bwrap_eq = bwrap with the $(jq '.mounts | length' "$pb/config.json") mounts of agentrun's sandbox bundle (no seccomp, no Landlock: agentrun does both)"
	report_times "$fig" "sandbox -- true"
	WHERE=$where_saved
	WHERE_ID=$wid_saved
	RUNTIMES=("${saved[@]}")
}


# --- instruction counts ---------------------------------------------------------

# valgrind_cmd: VG=(valgrind ...) when VALGRIND is set, else return 1.
# Debian's valgrind cannot run either runtime (docs/performance.md), so
# it is used only when asked for.
valgrind_cmd()
{
	local vg=${VALGRIND:-}
	[ -n "$vg" ] && [ -x "$vg" ] || return 1
	VG=("$vg" --tool=callgrind --trace-children=yes
		--trace-children-skip='*true' --dump-before='execve*'
		--dump-before=fexecve --dump-before=syscall)
	return 0
}

# ir_counter: IR_BY=callgrind (VALGRIND set) or icount; IR_WHAT names it in
# the rows. Return 1 when neither can count.
ir_counter()
{
	if valgrind_cmd; then
		IR_BY=callgrind
		IR_WHAT="callgrind Ir, all processes, user space"
		return 0
	fi
	IR_BY=icount
	IR_WHAT="single-stepped by icount, all processes, user space"
	[ -x "${ICOUNT:-}" ]
}

# ir_of DIR: the total Ir of every callgrind output file in DIR (one per
# process: the runtime, its re-exec, the container process before its
# execve, helpers it forks).
ir_of()
{
	awk '/^summary:/ { s += $2; n++ } END { if (n) print s; else print "nan" }' \
		"$1"/cg.* 2>/dev/null || echo nan
}

# ir_run RUNTIME BUNDLE TAG: one `run` of BUNDLE by RUNTIME under callgrind;
# prints the total Ir, or "nan" (the reason in $RES/ir.TAG.RUNTIME/log).
#
# Every process is counted: --trace-children=yes follows the runtime's
# re-exec (both runtimes re-execute themselves as root to protect their
# binary, CVE-2019-5736); callgrind writes a process's counts only when it
# exits, so --dump-before=execve* (and syscall, which agentrun's re-exec
# goes through) writes them before each exec too; the container process
# writes its files after pivot_root, so the bundle gets one more bind
# mount: the output directory onto the same path inside. The config's
# rlimits are dropped (valgrind emulates RLIMIT_NOFILE with a lower hard
# limit). Both runtimes run the same bundle. Three tries: under valgrind a
# rootless start sometimes loses the race for the child's uid_map.
ir_run()
{
	local rt=$1 tag=$3 d=$RES/ir.$3.$1 try out
	rm -rf "$d"
	if [ "$IR_BY" = icount ]; then
		# The same bundle as the timed figures; the container's `true`
		# (busybox) is let go untraced at its exec.
		mkdir -p "$d"
		rt_argv "$rt"
		for try in 1 2 3; do
			if out=$("$ICOUNT" -v -s true -s busybox -- "${RT[@]}" run \
				--bundle "$2" "ir-$tag-$try" </dev/null 2>"$d/log") &&
				[ "$(echo "$out" | awk '{ print $3 }')" = 0 ]; then
				echo "$out" | awk '{ print $1 }'
				return 0
			fi
		done
		echo nan
		return 1
	fi
	mkdir -p "$d/cg" "$d/b"
	chmod 0777 "$d/cg"
	jq --arg d "$d/cg" 'del(.process.rlimits)
		| .mounts += [{destination: $d, type: "bind", source: $d,
			options: ["rbind", "rw"]}]' \
		"$2/config.json" >"$d/b/config.json" || fail "jq: $d"
	rt_argv "$rt"
	for try in 1 2 3; do
		rm -f "$d/cg"/* "$d"/vg.*
		if "${VG[@]}" --callgrind-out-file="$d/cg/cg.%p.%u" \
			--log-file="$d/vg.%p" "${RT[@]}" run --bundle "$d/b" \
			"ir-$tag-$try" </dev/null >"$d/out" 2>"$d/log"; then
			ir_of "$d/cg"
			return 0
		fi
	done
	echo nan
	return 1
}

# ir_why TAG RUNTIME: why valgrind could not run it
ir_why()
{
	local log=$RES/ir.$1.$2/log n
	if [ "$IR_BY" = icount ]; then
		first_error "$log"
		return 0
	fi
	n=$(grep -ho 'unhandled amd64-linux syscall: [0-9]*' "$RES/ir.$1.$2"/vg* 2>/dev/null |
		awk '{ print $NF }' | sort -un | tr '\n' ' ')
	if [ -n "$n" ]; then
		echo "$(basename "${VG[0]}") does not know syscalls $n(set VALGRIND to one that does: docs/performance.md)"
	elif grep -q "%u" "$RES/ir.$1.$2"/vg* "$log" 2>/dev/null; then
		echo "$(basename "${VG[0]}") has no %u in --callgrind-out-file (set VALGRIND to one that does: docs/performance.md)"
	else
		first_error "$log"
	fi
}

# ir_runtimes: IRT=(the runtimes whose instructions are counted): not runc
# (a multi-threaded Go program: slow to count and not the reference).
ir_runtimes()
{
	local rt
	IRT=()
	for rt in "${RUNTIMES[@]}"; do
		[ "$rt" = runc ] || IRT+=("$rt")
	done
}

# fig_ir: instructions (user space, every process of the runtime: icount
# or callgrind) of one `run` of /bin/true; exact and repeatable on a noisy
# host.
fig_ir()
{
	local fig=ir_$WHERE_ID rt ir line ref="" why=""
	local -A I=()
	want "$fig" || return 0
	[ "${BENCH_IR:-1}" != 0 ] || return 0
	if ! ir_counter; then
		note "$fig: no instruction counter (icount was not built): skipped"
		return 0
	fi
	line="name=$fig where=$WHERE_ID by=$IR_BY"
	ir_runtimes
	for rt in "${IRT[@]}"; do
		# One run first, so caches and mount points are as in steady state.
		rt_argv "$rt"
		"${RT[@]}" run --bundle "$W/b-noseccomp" "ir-warm" </dev/null \
			>/dev/null 2>&1
		ir=$(ir_run "$rt" "$W/b-noseccomp" run)
		if [ "$ir" = nan ]; then
			why=$(ir_why run "$rt")
			note "$fig: $rt under $IR_BY failed: $why"
			continue
		fi
		I[$rt]=$ir
		# helpers icount could not count (set-user-ID: newuidmap)
		if [ "$IR_BY" = icount ]; then
			grep -h '^icount: set-user-ID' "$RES/ir.run.$rt/log" 2>/dev/null |
				sort -u | while IFS= read -r why; do
				note "$fig: $rt: ${why#icount: } (traced, it would run unprivileged)"
			done
		fi
		emit_row "instructions, run" "$WHERE" "$rt" \
			"$(awk -v x="$ir" 'BEGIN { printf "%.3f\n", x / 1e6 }')" "" "" \
			"$(ratio "${I[agentrun]:-nan}" "$ir")" "1/1" \
			"M instr ($IR_WHAT)"
		line+=" ${rt}_ir=$ir"
	done
	for rt in "${IRT[@]}"; do
		[ "$rt" = agentrun ] && continue
		[ -n "${I[$rt]:-}" ] && [ -n "${I[agentrun]:-}" ] || continue
		line+=" ratio_$rt=$(ratio "${I[agentrun]}" "${I[$rt]}")"
		[ -z "$ref" ] && ref=$rt
	done
	[ -n "$ref" ] && line+=" ratio=$(ratio "${I[agentrun]}" "${I[$ref]}") ref=$ref"
	emit_bench "$line"
}

# --- scaling -------------------------------------------------------------------

SCALE_N=${BENCH_SCALE_N:-10 100 1000}
SCALE_REPS=${BENCH_SCALE_REPS:-10}

# make_scale_bundles: $W/s-mounts-N (N read-only bind mounts of one host
# directory onto /mnt/mI, mount points made in the rootfs beforehand) and
# $W/s-seccomp-N (N seccomp rules: default allow, ERRNO for one of ten
# syscalls when its first argument equals 100000+I: nothing the runtime or
# `true` does) for N in $SCALE_N, from the no-seccomp bundle.
make_scale_bundles()
{
	local n i max=0 arches
	mkdir -p "$W/scale-src"
	echo x >"$W/scale-src/file"
	for n in $SCALE_N; do
		[ "$n" -gt "$max" ] && max=$n
	done
	for ((i = 0; i < max; i++)); do
		mkdir -p "$W/rootfs/mnt/m$i"
	done
	arches=$(jq -c '.linux.seccomp.architectures // ["SCMP_ARCH_X86_64"]' \
		"$W/b-seccomp/config.json")
	for n in $SCALE_N; do
		mkdir -p "$W/s-mounts-$n" "$W/s-seccomp-$n"
		jq --arg src "$W/scale-src" --argjson n "$n" '
			.mounts += [range(0; $n) | {destination: "/mnt/m\(.)",
				type: "bind", source: $src,
				options: ["rbind", "ro", "nosuid", "nodev"]}]
			' "$W/b-noseccomp/config.json" >"$W/s-mounts-$n/config.json" ||
			fail "jq: scaling bundle"
		jq --argjson n "$n" --argjson arches "$arches" '
			.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
				architectures: $arches,
				syscalls: [range(0; $n) as $i | {
					names: [["personality", "ioctl", "fcntl",
						"prctl", "kill", "tkill", "getpriority",
						"setpriority", "flock", "fchmod"][$i % 10]],
					action: "SCMP_ACT_ERRNO", errnoRet: 1,
					args: [{index: 0, value: (100000 + $i),
						op: "SCMP_CMP_EQ"}]}]}
			' "$W/b-noseccomp/config.json" >"$W/s-seccomp-$n/config.json" ||
			fail "jq: scaling bundle"
	done
}

# growth A B C: per-item cost from the 2nd to the 3rd size divided by that
# from the 1st to the 2nd (sizes n1 n2 n3): ~1 linear, > 1 worse.
growth()
{
	awk -v a="$1" -v b="$2" -v c="$3" -v n1="$4" -v n2="$5" -v n3="$6" 'BEGIN {
		if (a == "nan" || b == "nan" || c == "nan") { print "nan"; exit }
		s1 = (b - a) / (n2 - n1); s2 = (c - b) / (n3 - n2)
		if (s1 <= 0) { print "nan"; exit }
		printf "%.2f\n", s2 / s1 }'
}

# scale_cpu_growth FIG KIND N1 N2 N3: from the median CPU time per size,
# each runtime's CPU per added item in both steps and its growth (1 =
# linear): the scaling figure without instruction counts.
scale_cpu_growth()
{
	local fig=$1 kind=$2 rt n line per
	shift 2
	[ "$#" = 3 ] || return 0
	line="name=${fig}_cpu where=$WHERE_ID sizes=$1,$2,$3"
	for rt in "${RUNTIMES[@]}"; do
		per=()
		for n in "$@"; do
			per+=("$(awk '$5 == 0 { print $2 }' "$RES/${fig}_$n.$rt" 2>/dev/null | median)")
		done
		note "$fig: $rt: CPU per added item $(awk -v a="${per[0]}" -v b="${per[1]}" -v c="${per[2]}" -v n1="$1" -v n2="$2" -v n3="$3" 'BEGIN {
			if (a == "nan" || b == "nan" || c == "nan") { print "n/a"; exit }
			printf "%.1f µs (%s->%s), %.1f µs (%s->%s)\n", (b - a) / (n2 - n1), n1, n2, (c - b) / (n3 - n2), n2, n3 }'); growth $(growth "${per[@]}" "$@") (1 = linear)"
		line+=" ${rt}_cpu_us=$(echo "${per[@]}" | tr ' ' ,) ${rt}_cpu_growth=$(growth "${per[@]}" "$@")"
	done
	emit_bench "$line"
}

# fig_scale KIND: `run` of the KIND bundles (mounts, seccomp) for every
# size, interleaved; wall/CPU rows per size, then the instructions per size
# and the per-item growth of each runtime.
fig_scale()
{
	local kind=$1 fig n i rt line ir sizes=() per
	local -A IR=()
	fig=scale_${kind}_$WHERE_ID
	want "$fig" || return 0
	[ "$SCALE_REPS" -gt 0 ] || return 0
	read -r -a sizes <<<"$SCALE_N"
	for n in "${sizes[@]}"; do
		for rt in "${RUNTIMES[@]}"; do
			# Untimed first run: mount points, agentrun's compiled-filter
			# cache (steady state, as for every run after the first).
			rt_argv "$rt"
			"${RT[@]}" run --bundle "$W/s-$kind-$n" "warm-$n" </dev/null \
				>/dev/null 2>"$RES/${fig}_$n.$rt.err" ||
				note "$fig: $rt: $n $kind: $(first_error "$RES/${fig}_$n.$rt.err")"
		done
		for ((i = 0; i < SCALE_REPS; i++)); do
			for rt in "${RUNTIMES[@]}"; do
				rt_argv "$rt"
				"$BENCHTIME" -e "$RES/${fig}_$n.$rt.err" -- "${RT[@]}" \
					run --bundle "$W/s-$kind-$n" "s$i" \
					>>"$RES/${fig}_$n.$rt"
			done
		done
		report_times "${fig}_$n" "run, $n $kind"
	done
	scale_cpu_growth "$fig" "$kind" "${sizes[@]}"
	[ "${BENCH_IR:-1}" != 0 ] && ir_counter || return 0
	if [ "${BENCH_SCALE_IR:-$([ "$IR_BY" = callgrind ] && echo 1 || echo 0)}" != 1 ]; then
		note "$fig: instruction counts of the scaling figures skipped (icount would take ~30 µs an instruction; BENCH_SCALE_IR=1 or VALGRIND: see docs/performance.md)"
		return 0
	fi
	line="name=${fig}_ir where=$WHERE_ID by=$IR_BY sizes=$(echo "${sizes[@]}" | tr ' ' ,)"
	ir_runtimes
	for rt in "${IRT[@]}"; do
		per=()
		for n in "${sizes[@]}"; do
			ir=$(ir_run "$rt" "$W/s-$kind-$n" "$kind$n")
			if [ "$ir" = nan ]; then
				note "$fig: $rt under $IR_BY failed: $(ir_why "$kind$n" "$rt")"
				continue 2
			fi
			IR[$rt.$n]=$ir
			per+=("$ir")
			emit_row "instr, $n $kind" "$WHERE" "$rt" \
				"$(awk -v x="$ir" 'BEGIN { if (x == "nan") print x; else printf "%.3f\n", x / 1e6 }')" \
				"" "" "$(ratio "${IR[agentrun.$n]:-nan}" "$ir")" "" \
				"M instr ($IR_BY)"
		done
		line+=" ${rt}_ir=$(echo "${per[@]}" | tr ' ' ,)"
		if [ "${#sizes[@]}" = 3 ]; then
			line+=" ${rt}_growth=$(growth "${per[@]}" "${sizes[@]}")"
			note "$fig: $rt: instructions per added item $(awk -v a="${per[0]}" -v b="${per[1]}" -v c="${per[2]}" -v n1="${sizes[0]}" -v n2="${sizes[1]}" -v n3="${sizes[2]}" 'BEGIN {
				if (a == "nan" || b == "nan" || c == "nan") { print "n/a"; exit }
				printf "%d (%s->%s), %d (%s->%s)\n", (b - a) / (n2 - n1), n1, n2, (c - b) / (n3 - n2), n2, n3 }'); growth $(growth "${per[@]}" "${sizes[@]}") (1 = linear)"
		fi
	done
	emit_bench "$line"
}

# --- passes ----------------------------------------------------------------------

# run_pass: every figure, for the runtimes that run here.
run_pass()
{
	select_runtimes
	fig_run "run_${WHERE_ID}_noseccomp" "run, no seccomp" "$W/b-noseccomp"
	fig_run "run_${WHERE_ID}_seccomp" "run, agent seccomp" "$W/b-seccomp"
	fig_csd
	fig_exec
	fig_throughput "$SEQ" 1
	fig_throughput "$SEQ" 2
	fig_rss
	fig_ir
	if [ "${SCALE_HERE:-0}" = 1 ]; then
		make_scale_bundles
		fig_scale mounts
		fig_scale seccomp
	fi
}

print_header()
{
	note "agentrun bench: $WHERE, $(nproc) CPUs, kernel $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
	note "agentrun: $AGENTRUN ($("$AGENTRUN" --version 2>/dev/null | head -n1))"
	command -v crun >/dev/null && note "crun: $(crun --version | head -n1)"
	[ -n "${CRUN:-}" ] && [ -x "$CRUN" ] && note "crun2: $CRUN: $("$CRUN" --version | head -n1)"
	command -v runc >/dev/null && note "runc: $(runc --version | head -n1)"
	if [ "${BENCH_IR:-1}" != 0 ] && ir_counter; then
		if [ "$IR_BY" = callgrind ]; then
			note "instructions: callgrind of ${VG[0]} ($("${VG[0]}" --version 2>/dev/null))"
		else
			note "instructions: $ICOUNT (ptrace single-step; VALGRIND=path for callgrind)"
		fi
	fi
	command -v bwrap >/dev/null && note "bwrap: $(bwrap --version | head -n1)"
	note "repetitions: $REPS (interleaved; median and min of wall time, median CPU time user+sys)"
	emit_header
}

inner_vm()
{
	local rootless=0
	[ "$EUID_NOW" != 0 ] && rootless=1
	if [ "$rootless" = 1 ]; then
		WHERE="vm rootless"
		WHERE_ID=vm_rootless
	else
		WHERE="vm root"
		WHERE_ID=vm_root
	fi
	make_bundles "$rootless"
	# Run every runtime from the guest's tmpfs: binaries on the 9p shares
	# of run-in-vm page in differently (RSS, start time).
	mkdir -p "$W/bin"
	cp "$AGENTRUN" "$W/bin/agentrun" && AGENTRUN=$W/bin/agentrun
	for rt in crun runc; do
		command -v "$rt" >/dev/null 2>&1 &&
			cp "$(command -v "$rt")" "$W/bin/$rt"
	done
	PATH=$W/bin:$PATH
	print_header
	run_pass
}

# sub_pass NAME CMD...: run an inner pass of this script through CMD; its
# output is shown as it comes and its rows and BENCH lines are kept.
sub_pass()
{
	local name=$1 out=$W/sub-out.$1 rc
	shift
	"$@" 2>"$out.err" | tee "$out"
	rc=${PIPESTATUS[0]}
	grep -v '^BENCH ' "$out" | grep -v '^#' >>"$SUMMARY"
	grep '^BENCH ' "$out" >>"$BENCHLINES"
	if [ "$rc" != 0 ]; then
		note "the $name pass failed with status $rc:"
		tail -n 20 "$out.err" | sed 's/^/#   /'
	fi
	return "$rc"
}

# vm_pass RUN-IN-VM NAME [--user UID]: this script inside the VM.
vm_pass()
{
	local vm=$1 name=$2
	shift 2
	note "starting the VM ($*): $vm"
	sub_pass "$name" "$vm" --timeout "${BENCH_VM_TIMEOUT:-3600}" \
		--cpus 2 --mem 1G "$@" \
		--env AGENTRUN="$AGENTRUN" --env TOP_BUILDDIR="$TOP_BUILDDIR" \
		--env BENCHTIME="$BENCHTIME" --env ICOUNT="$ICOUNT" \
		--env BENCH_REPS="$VM_REPS" --env BENCH_SEQ="$VM_SEQ" \
		--env BENCH_RSS_REPS="$RSS_REPS" --env BENCH_ONLY="$ONLY" \
		--env BENCH_IR=0 \
		-- bash "$BENCH_DIR/run-bench.sh" --inner vm
}

# host_user_pass: as root, every runtime figure again as the unprivileged
# test user (rootless bundle), for the runtimes that run rootless here.
host_user_pass()
{
	[ "$EUID_NOW" = 0 ] || return 0
	[ "${BENCH_HOST_USER:-1}" != 0 ] || return 0
	local f any=
	for f in run_host_user_noseccomp run_host_user_seccomp csd_host_user \
		exec_host_user seq_host_user par2_host_user rss_host_user \
		ir_host_user; do
		want "$f" && any=1
	done
	[ -n "$any" ] || return 0
	ensure_test_user
	if ! as_test_user test -x "$AGENTRUN" ||
		! as_test_user test -x "$BENCHTIME" ||
		! as_test_user test -x "$ICOUNT"; then
		note "host user pass: $TEST_USER cannot execute $AGENTRUN or $BENCHTIME: skipped"
		return 0
	fi
	note "host user pass as $TEST_USER"
	sub_pass host-user as_test_user env BENCH_REPS="$REPS" \
		BENCH_SEQ="$SEQ" BENCH_RSS_REPS="$RSS_REPS" BENCH_ONLY="$ONLY" \
		BENCHTIME="$BENCHTIME" ICOUNT="$ICOUNT" CC="${CC:-cc}" \
		CRUN="${CRUN:-}" VALGRIND="${VALGRIND:-}" \
		BENCH_IR="${BENCH_IR:-1}" BENCH_SCALE_IR="${BENCH_SCALE_IR:-}" \
		TOP_SRCDIR="$USER_SRCDIR" \
		bash "$USER_BENCH_DIR/run-bench.sh" --inner host-user
}

# use_cgns: as root on a host whose cgroups are hybrid, the host runtime
# figures run inside in-cgroup-ns.sh (crun refuses hybrid cgroups; runc
# would create cgroups in the v1 hierarchies).
use_cgns()
{
	[ "$EUID_NOW" = 0 ] || return 1
	case ${BENCH_CGNS:-auto} in
	0) return 1 ;;
	1) return 0 ;;
	esac
	! cgroup_v2_only &&
		[ "$(stat -f -c %T /sys/fs/cgroup/unified 2>/dev/null)" = cgroup2fs ]
}

# The host figures as root (and, from here, as the test user), inside the
# namespace of in-cgroup-ns.sh.
inner_host_ns()
{
	WHERE="host root"
	WHERE_ID=host_root
	make_bundles 0
	print_header
	note "in a private mount + cgroup namespace on a fresh cgroup2 mount of an empty child of the host's v2 tree (tests/bench/in-cgroup-ns.sh): $(grep '^0::' /proc/self/cgroup)"
	SCALE_HERE=1 run_pass
	host_user_pass
}

inner_host_user()
{
	WHERE="host user"
	WHERE_ID=host_user
	make_bundles 1
	print_header
	run_pass
}

find_run_in_vm()
{
	local c
	for c in "${RUN_IN_VM:-}" "$TOP_SRCDIR/tests/vm/run-in-vm"; do
		[ -n "$c" ] && [ -x "$c" ] && { echo "$c"; return 0; }
	done
	return 1
}

main()
{
	local vm
	if [ -n "$INNER" ]; then
		if [ ! -x "${BENCHTIME:-}" ] || [ ! -x "${ICOUNT:-}" ]; then
			build_benchtime
		fi
		user_bench_dir
		case $INNER in
		vm) inner_vm ;;
		host-user) inner_host_user ;;
		host-ns) inner_host_ns ;;
		*) fail "unknown inner pass $INNER" ;;
		esac
		return 0
	fi
	command -v jq >/dev/null || fail "needs jq"
	build_benchtime
	user_bench_dir
	if [ "$EUID_NOW" = 0 ]; then
		WHERE="host root"
		WHERE_ID=host_root
	else
		WHERE="host user"
		WHERE_ID=host_user
	fi
	if use_cgns; then
		note "host: cgroups are hybrid: the runtime figures run inside tests/bench/in-cgroup-ns.sh (BENCH_CGNS=0: not)"
		export BENCHTIME ICOUNT
		sub_pass host-ns bash "$BENCH_DIR/in-cgroup-ns.sh" \
			bash "$BENCH_DIR/run-bench.sh" --inner host-ns
		if [ $? = 125 ]; then
			note "host: the cgroup namespace could not be set up: the runtime figures run without it (crun and runc are then skipped)"
			make_bundles 0
			print_header
			SCALE_HERE=1 run_pass
			host_user_pass
		fi
		WHERE="host root"
		WHERE_ID=host_root
	else
		make_bundles "$([ "$EUID_NOW" = 0 ] && echo 0 || echo 1)"
		print_header
		SCALE_HERE=1 run_pass
		host_user_pass
	fi
	fig_sandbox
	fig_sandbox_ws
	fig_sandbox_vm
	fig_bundle_vm
	fig_sandbox_vm_git
	fig_egress
	fig_control

	case ${BENCH_VM:-auto} in
	0) note "VM passes skipped (BENCH_VM=0)" ;;
	*)
		if vm=$(find_run_in_vm); then
			vm_pass "$vm" vm-root
			if [ -n "${BENCH_VM_USER-1000}" ]; then
				vm_pass "$vm" vm-user --user "${BENCH_VM_USER:-1000}"
			fi
		elif [ "${BENCH_VM:-auto}" = 1 ]; then
			fail "BENCH_VM=1 but run-in-vm was not found (set RUN_IN_VM)"
		else
			note "run-in-vm not found: the crun/runc comparisons in a cgroup v2 VM are skipped"
		fi
		;;
	esac

	echo
	echo "=== summary (median wall ms unless noted; agr/x = agentrun / x, below 1 is better) ==="
	emit_header
	grep -v '^figure ' "$SUMMARY"
	echo
	cat "$BENCHLINES"
}

main
