#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/static/run-static.sh — static analysis of runtime/ and spec/:
#
#   cppcheck    --enable=warning,portability,performance, with the build's
#               flags (compile_commands.json made by bear), inline
#               suppressions (// cppcheck-suppress id  with a reason)
#   clang-tidy  the checks of the repository's .clang-tidy (each choice
#               explained there), every warning an error
#   scan-build  the clang static analyzer over a full build, --status-bugs
#
# Usage: tests/static/run-static.sh [cppcheck] [clang-tidy] [scan-build]
#        (default: all three)
# Environment:
#   TOP_SRCDIR    source tree (default: two directories above this script)
#   STATIC_OUT    work dir (default: $TOP_SRCDIR/build-static); builds
#                 live in STATIC_OUT/build (bear) and STATIC_OUT/scan
#   STATIC_JOBS   parallel jobs (default 2)
#
# Known findings in code still being written by others are listed, each
# with its reason, in tests/static/tidy-baseline.txt ("path check"); they
# are reported but do not fail the run. Everything else fails it.
# The last line is "static: N tools, N failed".
set -u -o pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=$(cd "${TOP_SRCDIR:-$script_dir/../..}" && pwd)
STATIC_OUT=${STATIC_OUT:-$TOP_SRCDIR/build-static}
STATIC_JOBS=${STATIC_JOBS:-2}
BASELINE=$TOP_SRCDIR/tests/static/tidy-baseline.txt

tools=()
for a in "$@"; do
	case "$a" in
	cppcheck|clang-tidy|scan-build) tools+=("$a") ;;
	-h|--help) sed -n '4,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-static.sh: unknown argument: $a" >&2; exit 2 ;;
	esac
done
[ ${#tools[@]} -gt 0 ] || tools=(cppcheck clang-tidy scan-build)

first_cmd()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && { echo "$c"; return 0; }
	done
	return 1
}

mkdir -p "$STATIC_OUT"
failed=0
ran=0
fail_tool()
{
	echo "static: $1: FAILED${2:+ ($2)}"
	failed=$((failed + 1))
}

# The configure tree in $TOP_SRCDIR (autogen) must exist.
if [ ! -x "$TOP_SRCDIR/configure" ]; then
	(cd "$TOP_SRCDIR" && ./autogen.sh) || { echo "static: autogen failed"; exit 2; }
fi

# compile_commands.json of a clang build (the flags the analyzers see).
compdb()
{
	local b=$STATIC_OUT/build
	if [ -f "$b/compile_commands.json" ] &&
		[ "$b/compile_commands.json" -nt "$TOP_SRCDIR/Makefile.am" ] &&
		[ -z "$(find "$TOP_SRCDIR/runtime" "$TOP_SRCDIR/spec" -name '*.[ch]' -newer "$b/compile_commands.json" -print -quit)" ]; then
		return 0
	fi
	command -v bear >/dev/null || { echo "static: bear not found (apt-get install bear)"; return 1; }
	rm -rf "$b" && mkdir -p "$b" && (
		cd "$b" && CC=clang "$TOP_SRCDIR/configure" >configure.log 2>&1 &&
			bear --output compile_commands.json -- make -j"$STATIC_JOBS" >make.log 2>&1
	) || { echo "static: build for compile_commands.json failed (see $b)"; return 1; }
}

run_cppcheck()
{
	local log=$STATIC_OUT/cppcheck.log
	command -v cppcheck >/dev/null || { echo "static: cppcheck not found"; return 1; }
	compdb || return 1
	echo "static: cppcheck $(cppcheck --version | awk '{print $2}')"
	cppcheck --project="$STATIC_OUT/build/compile_commands.json" \
		--file-filter='*/runtime/*' --file-filter='*/spec/*' \
		--enable=warning,portability,performance --inline-suppr \
		--error-exitcode=1 -q -j"$STATIC_JOBS" \
		--template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
		>"$log" 2>&1
	local rc=$?
	sed "s|^$STATIC_OUT/build/\.\./||" "$log"
	return $rc
}

run_clang_tidy()
{
	local tidy log=$STATIC_OUT/clang-tidy.log rc=0 new known
	tidy=$(first_cmd clang-tidy-14 clang-tidy) || { echo "static: clang-tidy not found"; return 1; }
	compdb || return 1
	echo "static: $tidy ($($tidy --version | grep -o 'version [0-9.]*'))"
	jq -r '.[].file' "$STATIC_OUT/build/compile_commands.json" |
		grep -E '/(runtime|spec)/[^/]+(/[^/]+)?\.c$' | sort -u |
		xargs -P"$STATIC_JOBS" -n4 "$tidy" -p "$STATIC_OUT/build" \
			--quiet >"$log" 2>&1
	# One line per finding: "path:line:col: error: message [check,...]".
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' "$log" |
		sed -e "s|^$STATIC_OUT/build/\.\./||" -e "s|^\.\./||" \
			-e "s|^$TOP_SRCDIR/||" |
		sed -E 's/,-warnings-as-errors\]$/]/' | sort -u \
		>"$STATIC_OUT/clang-tidy.findings"
	new=0
	known=0
	while IFS= read -r f; do
		local path check
		path=${f%%:*}
		check=$(echo "$f" | sed -nE 's/.*\[([^],]+)[],].*/\1/p')
		if [ -f "$BASELINE" ] &&
			grep -qE "^$path[[:space:]]+$check([[:space:]]|$)" "$BASELINE"; then
			echo "  known (tidy-baseline.txt): $f"
			known=$((known + 1))
		else
			echo "  $f"
			new=$((new + 1))
		fi
	done <"$STATIC_OUT/clang-tidy.findings"
	echo "static: clang-tidy: $new new finding(s), $known known"
	if grep -qE 'clang-diagnostic-error|error: unable to|Error while processing' "$log"; then
		grep -E 'clang-diagnostic-error|error: unable to|Error while processing' "$log" | head
		rc=1
	fi
	[ "$new" -eq 0 ] && return $rc
	return 1
}

run_scan_build()
{
	local sb b=$STATIC_OUT/scan
	sb=$(first_cmd scan-build-14 scan-build) || { echo "static: scan-build not found (apt-get install clang-tools)"; return 1; }
	echo "static: $sb"
	rm -rf "$b" && mkdir -p "$b"
	# The same analyzer choices as .clang-tidy (see the reasons there).
	(
		cd "$b" &&
			"$sb" -o "$b/report" "$TOP_SRCDIR/configure" >configure.log 2>&1 &&
			"$sb" -o "$b/report" \
				-disable-checker deadcode.DeadStores \
				-disable-checker valist.Uninitialized \
				make -j"$STATIC_JOBS" >make.log 2>&1
	) || { echo "static: scan-build: the build failed (see $b/make.log)"; return 1; }
	# Findings: "path:line:col: warning: message [checker]"; the baseline
	# names checkers as clang-tidy does (clang-analyzer-<checker>).
	local new=0 known=0 f path check
	while IFS= read -r f; do
		path=${f%%:*}
		check=clang-analyzer-$(echo "$f" | sed -nE 's/.*\[([^]]+)\]$/\1/p')
		if [ -f "$BASELINE" ] &&
			grep -qE "^$path[[:space:]]+$check([[:space:]]|$)" "$BASELINE"; then
			echo "  known (tidy-baseline.txt): $f"
			known=$((known + 1))
		else
			echo "  $f"
			new=$((new + 1))
		fi
	done < <(grep -E '^[^ ]+:[0-9]+:[0-9]+: warning: .*\[[a-zA-Z.]+\]$' "$b/make.log" |
		sed -e "s|^$b/\.\./||" -e "s|^\.\./||" -e "s|^$TOP_SRCDIR/||" | sort -u)
	echo "static: scan-build: $new new finding(s), $known known (report: $b/report)"
	[ "$new" -eq 0 ]
}

for t in "${tools[@]}"; do
	ran=$((ran + 1))
	echo "==== static: $t"
	case "$t" in
	cppcheck) run_cppcheck || fail_tool cppcheck ;;
	clang-tidy) run_clang_tidy || fail_tool clang-tidy ;;
	scan-build) run_scan_build || fail_tool scan-build ;;
	esac
done
echo "static: $ran tools, $failed failed"
[ "$failed" -eq 0 ]
