#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/conformance/run.sh — third-party conformance suites, test by test,
# against agentrun and against crun on the same machine (not part of
# `make check`: it needs the suites' sources, Go, and minutes).
#
#   tests/conformance/run.sh [-s SUITES] [-o OUTDIR] [-r RUNTIMES] [-t TESTS] [-T]
#
# -T prints the table of the results already in OUTDIR without running.
#
# Suites (-s; all = rt and crun; all-rootless = all and crun-rootless):
#   rt    opencontainers/runtime-tools' validation tests (validation/*/*.t,
#         TAP, one executable per directory, RUNTIME=PATH), built with Go
#         from the vendored sources (GOFLAGS=-mod=vendor GOPROXY=off);
#   crun  crun's own python tests (tests/test_*.py, TAP, OCI_RUNTIME=PATH,
#         INIT=the static tests/init.c), one file at a time;
#   crun-rootless  the same files as the test user of tests/lib.sh
#         (agentrun-test): crun's tests pick their rootless variants.
# Every file runs once per runtime, as root, inside tests/bench/in-cgroup-ns.sh
# (a private mount + cgroup namespace on a fresh cgroup2 mount of an empty
# child of the v2 tree: crun 1.8 refuses a hybrid host's cgroups otherwise;
# agentrun runs there too, for a fair comparison). The two runtimes run side
# by side (parallelism 2; PARALLEL=1 runs them one after the other). A
# runtime-tools file that outlives FILE_TIMEOUT seconds (300) is killed, its
# missing points show as "-"; crun's tests run one at a time (RUN_TESTS=NAME,
# the suite's own selection), each under TEST_TIMEOUT (120): one that hangs
# is "not ok ... no result".
#
# Output: OUTDIR (default /var/tmp/agentrun-conformance/out) holds each
# file's TAP and stderr per runtime, results.tsv (point, result per runtime)
# and table.txt; stdout gets the table — point name, crun's result,
# agentrun's result (PASS, FAIL, SKIP, - for a point that never reported) —
# then the totals and the points crun passes that agentrun does not.
#
# Sources (set up once in WORK, default /var/tmp/agentrun-conformance):
#   RT_SRC / CRUN_SRC   an existing tree of each, or
#   RT_GIT / CRUN_GIT   a git directory to `git archive` it from (defaults:
#                       the mirrors under /work/.mirror), at RT_REF / CRUN_REF.
# RT_REF defaults to 260e151 (2025-03-03), runtime-tools' last commit that
# builds with Go 1.19 (Debian 12's golang-go): later ones need Go 1.21
# (sync.OnceValues, package slices in the vendored moby/sys/capability);
# their validation tests differ only in `any` for `interface{}`, the
# cgroup-relative-cpus test's values and runtimetest's capability library.
# CRUN_REF defaults to HEAD (the newest tests; crun 1.8.1 fails the ones
# for later features, which costs agentrun nothing in the comparison).
#
# Environment: AGENTRUN (default build/agentrun of this tree), CRUN
# (default `command -v crun`), RUNTIMES ("crun agentrun"), TESTS (a space
# separated list of file names to run, e.g. "test_start.py default"),
# FILE_TIMEOUT.
#
# Needs root; Go (apt-get install golang-go), gcc with a static libc and
# libseccomp.a (libseccomp-dev), python3.

set -u

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
WORK=${WORK:-/var/tmp/agentrun-conformance}
OUT=$WORK/out
SUITES=all
AGENTRUN=${AGENTRUN:-$TOP/build/agentrun}
CRUN=${CRUN:-$(command -v crun || true)}
RUNTIMES=${RUNTIMES:-crun agentrun}
TESTS=${TESTS:-}
FILE_TIMEOUT=${FILE_TIMEOUT:-300}
TEST_TIMEOUT=${TEST_TIMEOUT:-120}
# The interpreter itself (a pyenv shim costs 2 s per start).
PYTHON=${PYTHON:-$(python3 -c 'import sys; print(sys.executable)')}
PYTHON_USER=${PYTHON_USER:-/usr/bin/python3} # one the test user can run
PARALLEL=${PARALLEL:-2}
RT_GIT=${RT_GIT:-/work/.mirror/opencontainers+runtime-tools/repo}
CRUN_GIT=${CRUN_GIT:-/work/.mirror/containers+crun/repo}
RT_REF=${RT_REF:-260e151}
CRUN_REF=${CRUN_REF:-HEAD}

NORUN=
while getopts "s:o:r:t:Th" o; do
	case $o in
	T) NORUN=1 ;;
	s) SUITES=$OPTARG ;;
	o) OUT=$OPTARG ;;
	r) RUNTIMES=$OPTARG ;;
	t) TESTS=$OPTARG ;;
	*)
		sed -n '3,50p' "$0" | sed 's/^# \{0,1\}//'
		exit 2
		;;
	esac
done

die()
{
	echo "conformance: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "needs root (the runtimes run in a cgroup namespace of their own)"
[ -x "$AGENTRUN" ] || die "no agentrun at $AGENTRUN (build it, or set AGENTRUN)"
case " $RUNTIMES " in *" crun "*) [ -x "$CRUN" ] || die "no crun (set CRUN)" ;; esac
AGENTRUN=$(realpath "$AGENTRUN")

runtime_path()
{
	case $1 in
	crun) echo "$CRUN" ;;
	agentrun) echo "$AGENTRUN" ;;
	*) command -v "$1" ;;
	esac
}

# ---- sources and builds ----------------------------------------------------

tree()
{ # tree NAME SRC GIT REF -> prints the tree's path
	local name=$1 src=$2 git=$3 ref=$4 dir=$WORK/$1
	if [ -n "$src" ]; then
		echo "$src"
		return
	fi
	if [ ! -f "$dir/.ref" ] || [ "$(cat "$dir/.ref")" != "$ref" ]; then
		[ -d "$git" ] || die "no $name sources: set ${name^^}_SRC or ${name^^}_GIT"
		rm -rf "$dir" && mkdir -p "$dir" || die "cannot make $dir"
		git --git-dir="$git" archive "$ref" | tar -x -C "$dir" || die "git archive $ref of $git failed"
		echo "$ref" >"$dir/.ref"
	fi
	echo "$dir"
}

build_rt()
{
	local d n
	command -v go >/dev/null || die "no Go (apt-get install golang-go)"
	export GOFLAGS=-mod=vendor GOPROXY=off GOTOOLCHAIN=local GOCACHE=$WORK/gocache
	(
		cd "$RT" || exit 1
		[ -x runtimetest ] ||
			go build -tags "netgo osusergo" -ldflags "-extldflags -static" \
				-o runtimetest ./cmd/runtimetest || exit 1
		for d in validation/*/; do
			n=$(basename "$d")
			[ "$n" = util ] && continue
			[ -x "$d/$n.t" ] || go build -p 2 -o "$d/$n.t" "./$d" || exit 1
		done
	) || die "building runtime-tools failed"
}

build_crun_init()
{
	[ -x "$WORK/init" ] && return
	mkdir -p "$WORK/inc"
	printf '#define HAVE_LINUX_IOPRIO_H 1\n#define HAVE_ERROR_H 1\n#define HAVE_SECCOMP 1\n' >"$WORK/inc/config.h"
	gcc -static -O2 -I"$WORK/inc" -o "$WORK/init" "$CRUN_T/tests/init.c" -lseccomp ||
		die "building crun's tests/init.c failed (needs a static libc and libseccomp.a)"
}

mkdir -p "$WORK" "$OUT" || die "cannot make $WORK"
case $SUITES in
rt | crun | all) ;;
crun-rootless | all-rootless)
	# The test user of tests/lib.sh (agentrun-test, with subordinate ids).
	TEST_USER=${TEST_USER:-agentrun-test}
	TEST_UID=$(id -u "$TEST_USER") && TEST_GID=$(id -g "$TEST_USER") ||
		die "no user $TEST_USER (run the rootless integration tests once: they create it)"
	TEST_HOME=$(getent passwd "$TEST_USER" | cut -d: -f6)
	mkdir -p "/run/user/$TEST_UID" && chown "$TEST_UID:$TEST_GID" "/run/user/$TEST_UID" &&
		chmod 700 "/run/user/$TEST_UID" || die "cannot make /run/user/$TEST_UID"
	chmod 755 "$WORK"
	;;
*) die "unknown suite $SUITES (rt, crun, all, crun-rootless, all-rootless)" ;;
esac

# crun 1.8 raises RLIMIT_MEMLOCK to infinity before it loads its device
# program and fails the creation when it cannot ("setrlimit (RLIM_MEMLOCK):
# Operation not permitted"): every root container with a cgroup fails where
# the runtime lacks CAP_SYS_RESOURCE (this lab's root has not got it), which
# no kernel since 5.11 needs (BPF memory is charged to the memory cgroup).
# There crun runs through a wrapper whose LD_PRELOAD turns that one failing
# setrlimit into a no-op, so the comparison measures crun, not the host.
capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
if [ -n "$CRUN" ] && [ $((0x$capeff & (1 << 24))) = 0 ]; then
	if [ ! -x "$WORK/crun-memlock" ]; then
		gcc -shared -fPIC -O2 -o "$WORK/memlock.so" "$HERE/memlock-shim.c" -ldl || die "cannot build the memlock shim"
		printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$WORK/memlock.so" "$CRUN" >"$WORK/crun-memlock"
		chmod 755 "$WORK/crun-memlock"
	fi
	echo "conformance: no CAP_SYS_RESOURCE: crun runs as $WORK/crun-memlock (RLIMIT_MEMLOCK shim)" >&2
	CRUN=$WORK/crun-memlock
fi
case $SUITES in rt | all | all-rootless) RT=$(tree rt "${RT_SRC:-}" "$RT_GIT" "$RT_REF") && build_rt ;; esac
case $SUITES in crun | all | crun-rootless | all-rootless) CRUN_T=$(tree crun "${CRUN_SRC:-}" "$CRUN_GIT" "$CRUN_REF") && build_crun_init ;; esac

# ---- running -----------------------------------------------------------------

selected()
{ # selected NAME: in TESTS (or TESTS empty)
	[ -z "$TESTS" ] && return 0
	case " $TESTS " in *" $1 "*) return 0 ;; esac
	return 1
}

run_rt()
{ # run_rt RUNTIME
	local rt=$1 path d n
	path=$(runtime_path "$rt")
	mkdir -p "$OUT/$rt/rt"
	for d in "$RT"/validation/*/; do
		n=$(basename "$d")
		[ -x "$d/$n.t" ] || continue
		selected "$n" || continue
		(cd "$RT" && RUNTIME=$path timeout -k 5 "$FILE_TIMEOUT" \
			"$TOP/tests/bench/in-cgroup-ns.sh" "$d/$n.t") \
			>"$OUT/$rt/rt/$n.tap" 2>"$OUT/$rt/rt/$n.err" </dev/null
		echo "$?" >"$OUT/$rt/rt/$n.rc"
	done
}

# crun_tests FILE: the names of FILE's tests (its all_tests dictionary).
crun_tests()
{
	"$PYTHON" -c 'import importlib, sys
sys.path.insert(0, ".")
print("\n".join(importlib.import_module(sys.argv[1][:-3]).all_tests))' "$1" 2>/dev/null
}

# run_one_by_one FILE OUTBASE CMD...: every test of FILE on its own
# (RUN_TESTS=NAME, the suite's own selection) under TEST_TIMEOUT, so a test
# that hangs costs itself only; the TAP of all of them into OUTBASE.tap.
run_one_by_one()
{
	local f=$1 base=$2 t rc=0 a args names
	shift 2
	: >"$base.tap"
	: >"$base.err"
	names=$(crun_tests "$f")
	# RUN_TESTS is split on blanks: a file with a name that has one
	# (test_domainname.py) runs whole, under FILE_TIMEOUT; so does one that
	# skips itself on import ("1..0": test_mounts.py without python's
	# libmount, which Debian 12 does not package).
	if grep -q -e ' ' -e '^1\.\.' <<<"$names"; then
		args=()
		for a in "$@"; do
			[ "$a" = @RUN_TESTS@ ] && a=RUN_TESTS_UNUSED=
			args+=("$a")
		done
		timeout -k 5 "$FILE_TIMEOUT" "${args[@]}" >"$base.tap" 2>"$base.err" </dev/null
		echo "$?" >"$base.rc"
		return
	fi
	while IFS= read -r t; do
		[ -n "$t" ] || continue
		# @RUN_TESTS@ in CMD: where an `env -i` needs it as an argument
		args=()
		for a in "$@"; do
			[ "$a" = @RUN_TESTS@ ] && a=RUN_TESTS=$t
			args+=("$a")
		done
		RUN_TESTS=$t timeout -k 5 "$TEST_TIMEOUT" "${args[@]}" \
			>>"$base.tap" 2>>"$base.err" </dev/null || rc=$?
		grep -q -- "- $t\( #\|\$\)" "$base.tap" || echo "not ok - $t # no result (exit $rc)" >>"$base.tap"
	done <<<"$names"
	echo "$rc" >"$base.rc"
}

run_crun()
{ # run_crun RUNTIME
	local rt=$1 path f n dir=$WORK/crun-tests.$1
	path=$(runtime_path "$rt")
	mkdir -p "$OUT/$rt/crun"
	# A copy per runtime: each file makes its state under its working directory.
	rm -rf "$dir" && cp -a "$CRUN_T/tests" "$dir" || die "cannot copy crun's tests"
	for f in "$dir"/test_*.py; do
		n=$(basename "$f")
		selected "$n" || continue
		(cd "$dir" && OCI_RUNTIME=$path INIT=$WORK/init run_one_by_one "$n" "$OUT/$rt/crun/$n" \
			"$TOP/tests/bench/in-cgroup-ns.sh" "$PYTHON" "$n")
	done
	rm -rf "$dir"
}

run_crun_rootless()
{ # run_crun_rootless RUNTIME: crun's tests as the test user (its own checks
  # of is_rootless() pick the rootless variants), in the same namespace.
	local rt=$1 path f n dir=$WORK/crun-tests-rootless.$1
	path=$(runtime_path "$rt")
	mkdir -p "$OUT/$rt/crun-rootless"
	rm -rf "$dir" && cp -a "$CRUN_T/tests" "$dir" && cp "$WORK/init" "$dir/init" &&
		chown -R "$TEST_UID:$TEST_GID" "$dir" || die "cannot copy crun's tests"
	for f in "$dir"/test_*.py; do
		n=$(basename "$f")
		selected "$n" || continue
		(cd "$dir" && run_one_by_one "$n" "$OUT/$rt/crun-rootless/$n" "$TOP/tests/bench/in-cgroup-ns.sh" \
			setpriv --reuid="$TEST_UID" --regid="$TEST_GID" --init-groups env -i \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			HOME="$TEST_HOME" USER="$TEST_USER" LOGNAME="$TEST_USER" LANG=C.UTF-8 \
			XDG_RUNTIME_DIR="/run/user/$TEST_UID" OCI_RUNTIME="$path" INIT="$dir/init" \
			@RUN_TESTS@ "$PYTHON_USER" "$n")
	done
	rm -rf "$dir"
}

run_runtime()
{
	case $SUITES in rt | all | all-rootless) run_rt "$1" ;; esac
	case $SUITES in crun | all | all-rootless) run_crun "$1" ;; esac
	case $SUITES in crun-rootless | all-rootless) run_crun_rootless "$1" ;; esac
}

start=$(date +%s)
pids=()
[ -n "$NORUN" ] && RUNLIST= || RUNLIST=$RUNTIMES
for r in $RUNLIST; do
	rm -rf "${OUT:?}/$r"
	if [ "$PARALLEL" -gt 1 ]; then
		run_runtime "$r" &
		pids+=($!)
	else
		run_runtime "$r"
	fi
done
for p in "${pids[@]}"; do wait "$p"; done
elapsed=$(($(date +%s) - start))

# ---- the table ---------------------------------------------------------------

# Every TAP line of every file becomes "SUITE/FILE POINT<TAB>RESULT".
# runtime-tools names a point by its file and number (descriptions repeat),
# crun's by its file and test name.
tap_results()
{ # tap_results RUNTIME
	local rt=$1 f suite
	for f in "$OUT/$rt"/*/*.tap; do
		[ -e "$f" ] || continue
		suite=$(basename "$(dirname "$f")")
		# runtime-tools: the file's exit status is a point of its own
		# (process_capabilities_fail wants create to fail: a runtime that
		# refuses prints no points and exits 0; one that runs it prints the
		# container's points, then fails).
		if [ "$suite" = rt ]; then
			local rc
			rc=$(cat "${f%.tap}.rc" 2>/dev/null)
			printf 'rt/%s#00 exit status\t%s\n' "$(basename "$f" .tap)" \
				"$([ "$rc" = 0 ] && echo PASS || echo FAIL)"
		fi
		awk -v suite="$suite" -v file="$(basename "$f" .tap)" '
			/^(not )?ok [0-9]+/ {
				res = /^not ok/ ? "FAIL" : "PASS"
				if ($0 ~ /# *[Ss][Kk][Ii][Pp]/) res = "SKIP"
				line = $0
				sub(/^(not )?ok /, "", line)
				num = line; sub(/[^0-9].*/, "", num)
				desc = line; sub(/^[0-9]+ *-? */, "", desc)
				if (suite ~ /^crun/) {
					name = desc; sub(/ *#.*/, "", name)
					key = suite "/" file ":" name
				} else {
					d = desc; sub(/ *#.*/, "", d)
					key = sprintf("rt/%s#%02d %s", file, num, substr(d, 1, 60))
				}
				print key "\t" res
			}' "$f"
	done
}

TMPR=$(mktemp -d)
trap 'rm -rf "$TMPR"' EXIT
for r in $RUNTIMES; do
	tap_results "$r" | sort -t "$(printf '\t')" -k1,1 -u >"$TMPR/$r"
done
# rt keys carry the description: join on "file#NN" only.
keyed()
{
	awk -F'\t' '{ k = $1; if (k ~ /^rt\//) { split(k, a, " "); k = a[1] } print k "\t" $1 "\t" $2 }' "$1" | sort -t "$(printf '\t')" -k1,1
}
set -- $RUNTIMES
R1=$1
R2=${2:-$1}
keyed "$TMPR/$R1" >"$TMPR/k1"
keyed "$TMPR/$R2" >"$TMPR/k2"
join -t "$(printf '\t')" -a1 -a2 -e - -o 0,1.2,2.2,1.3,2.3 "$TMPR/k1" "$TMPR/k2" |
	awk -F'\t' '{ name = ($2 != "-") ? $2 : $3; print name "\t" $4 "\t" $5 }' |
	sort -t "$(printf '\t')" -k1,1 >"$OUT/results.tsv"

{
	printf '%-78s %-8s %-8s\n' "test point" "$R1" "$R2"
	awk -F'\t' '{ printf "%-78s %-8s %-8s\n", substr($1, 1, 78), $2, $3 }' "$OUT/results.tsv"
	echo
	for s in rt crun crun-rootless; do
		awk -F'\t' -v s="$s/" -v r1="$R1" -v r2="$R2" '
			index($1, s) == 1 {
				n++; p1 += ($2 == "PASS"); p2 += ($3 == "PASS")
				f1 += ($2 == "FAIL"); f2 += ($3 == "FAIL")
				k1 += ($2 == "SKIP"); k2 += ($3 == "SKIP")
			}
			END {
				if (!n) exit
				printf "%-5s %d points: %s pass %d fail %d skip %d | %s pass %d fail %d skip %d\n",
					s, n, r1, p1, f1, k1, r2, p2, f2, k2
			}' "$OUT/results.tsv"
	done
	awk -F'\t' -v r1="$R1" -v r2="$R2" '
		{ n++; p1 += ($2 == "PASS"); p2 += ($3 == "PASS") }
		END { printf "total %d points: %s passes %d, %s passes %d\n", n, r1, p1, r2, p2 }' "$OUT/results.tsv"
	echo
	echo "$R1 passes, $R2 does not (a file of which $R2 reported no point: one line):"
	awk -F'\t' '
		{ f = $1; sub(/[#:].*/, "", f); n[f]++; if ($3 != "-") seen[f] = 1 }
		$2 == "PASS" && $3 != "PASS" {
			if ($3 == "-") { miss[f]++; if (!(f in order)) { order[f] = ++k; name[k] = f } }
			else print "  " $1 "  (" $3 ")"
		}
		END {
			for (i = 1; i <= k; i++) {
				f = name[i]
				if (seen[f]) printf "  %s: %d points not reported\n", f, miss[f]
				else printf "  %s: no point reported (%d)\n", f, miss[f]
			}
		}' "$OUT/results.tsv"
	echo "$R2 passes, $R1 does not: $(awk -F'\t' '$3 == "PASS" && $2 != "PASS"' "$OUT/results.tsv" | wc -l) points"
	echo "($(date -u +%Y-%m-%d), ${elapsed}s; logs in $OUT)"
} | tee "$OUT/table.txt"
