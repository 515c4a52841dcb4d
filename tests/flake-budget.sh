#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/flake-budget.sh -- run the test suite (or a subset) N times with a
# parallel CPU load beside it, and print each test file's failure rate.
# The flake budget is zero: every file that fails even once is a bug to
# fix (in the product or the test), never a run to retry (docs/reliability.md).
#
# Usage: tests/flake-budget.sh [-n RUNS] [-k PATTERN] [-x PATTERN]
#                              [-l LOADERS] [-m] [-o DIR]
#   -n RUNS     how many runs (default 3)
#   -k PATTERN  only the files matching (tests/run-tests.sh -k); without
#               it the whole `make check` set (long: an hour per run on a
#               2-core machine)
#   -x PATTERN  leave out the files matching (tests/run-tests.sh -x)
#   -l LOADERS  busy-loop processes beside the tests (default: the number
#               of CPUs; 0: no load). Each spins at nice 0 for the whole
#               run, as a parallel `make -j$(nproc)` keeps every core busy.
#   -m          a real `make -j$(nproc)` beside as well: the tree is built
#               over and over (make clean, make) in a private build
#               directory for the whole run, compiler, linker and disk
#               included (issue #31's load; with -l 0 the only load)
#   -o DIR      keep each run's full output in DIR/run-N.log (default: a
#               temporary directory, named at the end)
# Run from the build tree (TOP_BUILDDIR, the agentrun binary) like `make
# check`; as root for the root and rootless cases. It builds what the tests
# run first (`make check-programs`: the unit tests, test_cgroup_live). Prints one line per run
# (its failures, the load average before and after) and a table:
#   FILE  RUNS  FAILED  RATE
# of every file that failed at least once (and "no failure" otherwise).
# Exit status: 0 when nothing failed, 1 otherwise.
set -u -o pipefail

runs=3 pattern='' exclude='' loaders=$(nproc) outdir='' make_load=0
while getopts 'n:k:x:l:mo:h' opt; do
	case $opt in
	n) runs=$OPTARG ;;
	k) pattern=$OPTARG ;;
	x) exclude=$OPTARG ;;
	l) loaders=$OPTARG ;;
	m) make_load=1 ;;
	o) outdir=$OPTARG ;;
	h) sed -n '3,30p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) exit 2 ;;
	esac
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "flake-budget.sh: -n needs a positive number" >&2; exit 2; }
[[ $loaders =~ ^[0-9]+$ ]] || { echo "flake-budget.sh: -l needs a number" >&2; exit 2; }

TOP_SRCDIR=$(cd "${TOP_SRCDIR:-$(dirname "$0")/..}" && pwd)
TOP_BUILDDIR=$(pwd)
export TOP_SRCDIR TOP_BUILDDIR
export AGENTRUN=${AGENTRUN:-$TOP_BUILDDIR/agentrun}
[ -x "$AGENTRUN" ] || { echo "flake-budget.sh: $AGENTRUN not found: run it from the build tree after make" >&2; exit 2; }
if [ -z "$outdir" ]; then
	outdir=$(mktemp -d /tmp/flake-budget.XXXXXX)
else
	mkdir -p "$outdir"
fi
# the runs use a copy: a rebuild of the tree meanwhile (make writes the
# binary in place) would fail a test with "Permission denied" or
# "Text file busy" that is no flake of the product
chmod 0755 "$outdir"
cp "$AGENTRUN" "$outdir/agentrun"
chmod 0755 "$outdir/agentrun"
export AGENTRUN=$outdir/agentrun

load_pids=()
stop_load()
{
	local p
	for p in "${load_pids[@]}"; do
		# the make loop leads a process group of its own (setsid):
		# its compilers go with it
		kill -- "-$p" 2>/dev/null || kill "$p" 2>/dev/null
	done
	for p in "${load_pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	load_pids=()
}
trap stop_load EXIT
trap 'stop_load; exit 130' INT TERM

args=(--integration-only)
[ -z "$pattern" ] || args+=(-k "$pattern")
[ -z "$exclude" ] || args+=(-x "$exclude")
# the binaries the tests run (the unit tests; test_cgroup_vm*.sh and
# test_spec.sh skip without test_cgroup_live and test_parse_corpus)
make -s -C "$TOP_BUILDDIR" check-programs >/dev/null ||
	{ echo "flake-budget.sh: make check-programs failed in $TOP_BUILDDIR" >&2; exit 2; }
# without -k: `make check` (unit files too, as check-local runs them)
if [ -z "$pattern" ]; then
	args=()
	[ -z "$exclude" ] || args+=(-x "$exclude")
	UNIT_TESTS=$(make -s -C "$TOP_BUILDDIR" print-unit-tests) ||
		{ echo "flake-budget.sh: make print-unit-tests failed" >&2; exit 2; }
	export UNIT_TESTS
fi

# -m: a private build directory of the same sources (a VPATH build:
# the source tree itself is never configured in place)
make_dir=$outdir/make-load
if [ "$make_load" = 1 ]; then
	mkdir -p "$make_dir"
	(cd "$make_dir" && "$TOP_SRCDIR/configure" >"$outdir/make-load.log" 2>&1) ||
		{ echo "flake-budget.sh: configure of the make load failed (see $outdir/make-load.log)" >&2; exit 2; }
fi

declare -A seen failed
started=$(date -u +%Y-%m-%dT%H:%MZ)
total_fail=0
for ((i = 1; i <= runs; i++)); do
	for ((j = 0; j < loaders; j++)); do
		(exec sh -c 'while :; do :; done') &
		load_pids+=($!)
	done
	if [ "$make_load" = 1 ]; then
		rm -f "$make_dir/builds"
		setsid sh -c 'cd "$1" || exit 1
			n=0
			while :; do
				make -s clean >/dev/null 2>&1
				make -s -j"$2" >/dev/null 2>&1 || echo "make load: build $n failed" >&2
				n=$((n + 1))
				echo "$n" >builds
			done' make-load "$make_dir" "$(nproc)" 2>>"$outdir/make-load.log" &
		load_pids+=($!)
	fi
	sleep 2 # let the load average see them
	before=$(cut -d' ' -f1 /proc/loadavg)
	t0=$SECONDS
	bash "$TOP_SRCDIR/tests/run-tests.sh" "${args[@]}" >"$outdir/run-$i.log" 2>&1
	rc=$?
	after=$(cut -d' ' -f1 /proc/loadavg)
	stop_load
	builds=''
	[ "$make_load" = 1 ] && builds=", make -j$(nproc) beside (builds: $(cat "$make_dir/builds" 2>/dev/null || echo 0))"
	# the files run (=== NAME) and those with a failure (NAME: not ok)
	mapfile -t names < <(sed -n 's/^=== \(test_[^ ]*\)$/\1/p' "$outdir/run-$i.log" | sort -u)
	mapfile -t bad < <(sed -n 's/^\(test_[^:]*\|host-settings\): not ok .*/\1/p' "$outdir/run-$i.log" | sort -u)
	for n in "${names[@]}"; do
		seen[$n]=$((${seen[$n]:-0} + 1))
	done
	for n in "${bad[@]}"; do
		failed[$n]=$((${failed[$n]:-0} + 1))
		seen[$n]=${seen[$n]:-1}
	done
	total_fail=$((total_fail + ${#bad[@]}))
	echo "run $i/$runs: exit $rc, ${#names[@]} files, ${#bad[@]} with failures${bad[*]:+ (${bad[*]})}, $((SECONDS - t0)) s, loadavg $before -> $after, $loaders loaders$builds; $(tail -n1 "$outdir/run-$i.log")"
done

echo
echo "flake budget: $started, $runs run(s), $loaders loader(s)$([ "$make_load" = 1 ] && echo " and make -j$(nproc)") beside, pattern '${pattern:-make check}'"
printf '%-40s %5s %7s %6s\n' FILE RUNS FAILED RATE
any=0
for n in $(printf '%s\n' "${!seen[@]}" | sort); do
	f=${failed[$n]:-0}
	[ "$f" -gt 0 ] || continue
	any=1
	printf '%-40s %5d %7d %5d%%\n' "$n" "${seen[$n]}" "$f" $((100 * f / seen[$n]))
done
[ "$any" = 1 ] || echo "no failure in ${#seen[@]} files"
echo "logs: $outdir"
[ "$total_fail" -eq 0 ]
