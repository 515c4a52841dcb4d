#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/fuzz/build-and-run.sh — build agentrun's libFuzzer targets with
# clang (whatever compiler the build tree was configured with), generate
# their seed corpora and run each target for a bounded time.
#
# Usage: tests/fuzz/build-and-run.sh [--build-only] [TARGET...]
#   TARGET   fuzz_config fuzz_process fuzz_state fuzz_mount_options
#            fuzz_seccomp fuzz_signal fuzz_profile fuzz_vm_frames
#            fuzz_mounts
#            (default: all)
#
# Environment (set by `make fuzz`):
#   TOP_SRCDIR    source tree (default: two directories above this script)
#   TOP_BUILDDIR  a configured and built tree: config.h,
#                 spec/seccomp_default.h and the agentrun binary (for the
#                 seed configs) are taken from it (default: .)
#   FUZZ_SECONDS  seconds each target runs (default 30)
#   FUZZ_JOBS     parallel compiler jobs (default 4)
#   FUZZ_CC       the compiler (default clang)
#   FUZZ_OUT      work directory (default $TOP_BUILDDIR/tests/fuzz-work):
#                 bin/ the fuzzers, corpus/<target>/ the corpus (kept
#                 between runs: it grows), artifacts/<target>/ crashes
#
# A crash, leak, timeout or sanitizer report stops that target; the input
# is saved under artifacts/<target>/ and the script exits 1 after running
# the rest. To keep a found input as a regression test, fix the bug, then
# copy the file to tests/fuzz/regressions/<target>/ (test_fuzz_replay in
# `make check` replays it). The last line is "fuzz: N targets, N
# executions, N crashes".
set -u -o pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=$(cd "${TOP_SRCDIR:-$script_dir/../..}" && pwd)
TOP_BUILDDIR=$(cd "${TOP_BUILDDIR:-.}" && pwd)
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
FUZZ_JOBS=${FUZZ_JOBS:-4}
FUZZ_CC=${FUZZ_CC:-clang}
FUZZ_OUT=${FUZZ_OUT:-$TOP_BUILDDIR/tests/fuzz-work}

ALL_TARGETS="fuzz_config fuzz_process fuzz_state fuzz_mount_options fuzz_seccomp fuzz_signal fuzz_profile fuzz_vm_frames fuzz_mounts"

build_only=0
targets=()
for a in "$@"; do
	case "$a" in
	--build-only) build_only=1 ;;
	-h|--help) sed -n '4,31p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	fuzz_*) targets+=("$a") ;;
	*) echo "build-and-run.sh: unknown argument: $a" >&2; exit 2 ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || read -r -a targets <<<"$ALL_TARGETS"

die() { echo "build-and-run.sh: $*" >&2; exit 2; }

command -v "$FUZZ_CC" >/dev/null || die "$FUZZ_CC not found (Debian: apt-get install clang libclang-rt-14-dev)"
[ -f "$TOP_BUILDDIR/config.h" ] || die "no config.h in $TOP_BUILDDIR: configure (and make) first"
[ -f "$TOP_BUILDDIR/spec/seccomp_default.h" ] || die "no spec/seccomp_default.h in $TOP_BUILDDIR: run make first"

# The library code the targets exercise. Only parsers and pure helpers:
# nothing here mounts, forks or loads a filter.
LIB_SOURCES="
	spec/arena.c spec/json_tree.c spec/parse_common.c spec/parse.c spec/parse_process.c
	spec/parse_linux.c spec/parse_resources.c spec/parse_seccomp.c
	spec/generate.c spec/parse_resources_doc.c spec/config_write.c
	spec/profile.c spec/state_json.c spec/json_gen.c
	runtime/lib/error.c runtime/lib/utils.c runtime/lib/log.c
	runtime/lib/signals.c runtime/lib/mount_options.c
	runtime/lib/seccomp.c runtime/lib/seccomp_cache.c runtime/lib/seccomp_bpf.c runtime/lib/fd_passing.c
	runtime/lib/userns.c runtime/lib/net_loopback.c
	runtime/sandbox/vm/vm_proto.c
"
PKGS="yajl libseccomp libcap"
# shellcheck disable=SC2086
PKG_CFLAGS=$(pkg-config --cflags $PKGS) || die "pkg-config $PKGS failed"
# shellcheck disable=SC2086
PKG_LIBS=$(pkg-config --libs $PKGS) || die "pkg-config $PKGS failed"

SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
CFLAGS="-std=gnu11 -g -O1 -Wall -Wextra -Wno-unused-parameter -Werror $SAN
	-DHAVE_CONFIG_H -I$TOP_BUILDDIR
	-I$TOP_SRCDIR/runtime/lib -I$TOP_SRCDIR/runtime/sandbox -I$TOP_SRCDIR/spec -I$TOP_SRCDIR/tests/fuzz
	$PKG_CFLAGS"

mkdir -p "$FUZZ_OUT/obj" "$FUZZ_OUT/bin" || die "cannot create $FUZZ_OUT"

# ---- build ----------------------------------------------------------------
echo "fuzz: building with $FUZZ_CC into $FUZZ_OUT"
objs=()
pids=()
build_failed=0
for src in $LIB_SOURCES; do
	obj=$FUZZ_OUT/obj/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')
	objs+=("$obj")
	if [ "$obj" -nt "$TOP_SRCDIR/$src" ] && [ "$obj" -nt "$0" ] &&
		[ "$obj" -nt "$TOP_BUILDDIR/config.h" ]; then
		continue
	fi
	# shellcheck disable=SC2086
	"$FUZZ_CC" $CFLAGS -fsanitize=fuzzer-no-link -c "$TOP_SRCDIR/$src" \
		-o "$obj" &
	pids+=($!)
	if [ ${#pids[@]} -ge "$FUZZ_JOBS" ]; then
		wait "${pids[0]}" || build_failed=1
		pids=("${pids[@]:1}")
	fi
done
for p in "${pids[@]}"; do
	wait "$p" || build_failed=1
done
[ "$build_failed" = 0 ] || die "compiling the library sources failed"
rm -f "$FUZZ_OUT/obj/libfuzz.a"
ar rcs "$FUZZ_OUT/obj/libfuzz.a" "${objs[@]}" || die "ar failed"

for t in "${targets[@]}"; do
	[ -f "$TOP_SRCDIR/tests/fuzz/$t.c" ] || die "unknown target $t"
	# shellcheck disable=SC2086
	"$FUZZ_CC" $CFLAGS -fsanitize=fuzzer "$TOP_SRCDIR/tests/fuzz/$t.c" \
		"$FUZZ_OUT/obj/libfuzz.a" $PKG_LIBS -o "$FUZZ_OUT/bin/$t" ||
		die "building $t failed"
done
echo "fuzz: built ${targets[*]}"
[ "$build_only" = 1 ] && exit 0

# ---- seed corpora ---------------------------------------------------------
# Generated configs and the repository's own data; nothing third-party is
# stored in the repository. Small hand-written seeds live in
# tests/fuzz/seeds/<target>/, found crashes in regressions/<target>/.
SEEDS=$FUZZ_OUT/seeds
rm -rf "$SEEDS"
mkdir -p "$SEEDS"
agentrun=${AGENTRUN:-$TOP_BUILDDIR/agentrun}
gen=$SEEDS/generated
mkdir -p "$gen"
if [ -x "$agentrun" ]; then
	for mode in "" --rootless; do
		d=$gen/spec${mode:+-rootless}
		mkdir -p "$d"
		# shellcheck disable=SC2086
		"$agentrun" spec $mode --bundle "$d" >/dev/null 2>&1 ||
			echo "fuzz: warning: agentrun spec $mode failed" >&2
	done
else
	echo "fuzz: warning: $agentrun not built, no generated seed configs" >&2
fi
configs=()
for f in "$gen"/*/config.json "$TOP_SRCDIR"/tests/unit/data/*.json; do
	[ -f "$f" ] && configs+=("$f")
done

seed_target()
{
	local t=$1 d=$SEEDS/$1 f i=0
	mkdir -p "$d"
	for f in "$TOP_SRCDIR/tests/fuzz/seeds/$t"/* \
		"$TOP_SRCDIR/tests/fuzz/regressions/$t"/*; do
		[ -f "$f" ] && cp "$f" "$d/"
	done
	case "$t" in
	fuzz_config)
		for f in "${configs[@]}"; do
			i=$((i + 1))
			cp "$f" "$d/config-$i.json"
		done
		;;
	fuzz_process)
		for f in "${configs[@]}"; do
			i=$((i + 1))
			jq '.process // empty' "$f" >"$d/process-$i.json" 2>/dev/null
		done
		;;
	fuzz_seccomp)
		cp "$TOP_SRCDIR/contrib/seccomp/agent-default.json" "$d/agent-default.json"
		for f in "${configs[@]}"; do
			i=$((i + 1))
			jq -c '.linux.seccomp // empty' "$f" >"$d/seccomp-$i.json" 2>/dev/null
		done
		;;
	fuzz_mounts)
		for f in "${configs[@]}"; do
			i=$((i + 1))
			jq -c '.mounts // empty' "$f" >"$d/mounts-$i.json" 2>/dev/null
		done
		;;
	fuzz_mount_options)
		for f in "${configs[@]}"; do
			jq -r '.mounts[]?.options // [] | join(",")' "$f" 2>/dev/null
		done | sort -u | while IFS= read -r line; do
			i=$((i + 1))
			printf '%s' "$line" >"$d/mount-$i"
		done
		;;
	fuzz_profile)
		for f in "$TOP_SRCDIR"/contrib/profiles/*.json; do
			[ -f "$f" ] && cp "$f" "$d/"
		done
		;;
	esac
	find "$d" -type f -empty -delete
}

# ---- run ------------------------------------------------------------------
total_execs=0
crashes=0
summary=()
for t in "${targets[@]}"; do
	seed_target "$t"
	corpus=$FUZZ_OUT/corpus/$t
	artifacts=$FUZZ_OUT/artifacts/$t
	mkdir -p "$corpus" "$artifacts"
	log=$FUZZ_OUT/$t.log
	# A dictionary of the quoted words of the parser's sources: the JSON
	# keys and enum names the fuzzer would otherwise have to guess.
	case "$t" in
	fuzz_config|fuzz_process|fuzz_seccomp|fuzz_mounts) dsrc=("$TOP_SRCDIR"/spec/parse*.c) ;;
	fuzz_state) dsrc=("$TOP_SRCDIR/spec/state_json.c") ;;
	fuzz_profile) dsrc=("$TOP_SRCDIR/spec/profile.c") ;;
	fuzz_mount_options) dsrc=("$TOP_SRCDIR/runtime/lib/mount_options.c") ;;
	fuzz_signal) dsrc=("$TOP_SRCDIR/runtime/lib/signals.c") ;;
	fuzz_vm_frames) dsrc=("$TOP_SRCDIR/runtime/sandbox/vm/vm_proto.c") ;;
	esac
	grep -ohE '"[A-Za-z_][A-Za-z0-9_.+-]{1,40}"' "${dsrc[@]}" | sort -u \
		>"$FUZZ_OUT/$t.dict"
	dict=(-dict="$FUZZ_OUT/$t.dict")
	echo "fuzz: running $t for ${FUZZ_SECONDS}s (seeds: $(find "$SEEDS/$t" -type f | wc -l), log $log)"
	# -rss_limit_mb: hostile configs may ask for much memory; 64 MB inputs
	# are the parser's own limit, far above -max_len.
	ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} \
	UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
		"$FUZZ_OUT/bin/$t" "${dict[@]}" -max_total_time="$FUZZ_SECONDS" \
		-timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$artifacts/" \
		"$corpus" "$SEEDS/$t" >"$log" 2>&1
	rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n1)
	execs=${execs:-0}
	total_execs=$((total_execs + execs))
	if [ "$rc" -ne 0 ]; then
		crashes=$((crashes + 1))
		echo "fuzz: $t FAILED (exit $rc) after $execs executions; input(s):"
		ls -1 "$artifacts" | sed "s|^|  $artifacts/|"
		grep -E 'ERROR|SUMMARY|property violated|runtime error' "$log" | head -n 10
		summary+=("$t: $execs executions, CRASH")
	else
		summary+=("$t: $execs executions, ok (corpus $(find "$corpus" -type f | wc -l) files)")
	fi
done
echo
printf 'fuzz: %s\n' "${summary[@]}"
echo "fuzz: ${#targets[@]} targets, $total_execs executions, $crashes crashes"
[ "$crashes" -eq 0 ]
