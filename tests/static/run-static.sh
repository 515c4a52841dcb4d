#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/static/run-static.sh — static analysis of runtime/, spec/, hooks/
# (`make static`, a CI step). Every finding fails the run; false positives
# are suppressed where they occur, each with its reason:
#
#   clang-format  every .c/.h of runtime/, spec/, hooks/ and tests/ is as
#               the repository's .clang-format formats it
#   cppcheck    --enable=warning,portability,performance (not style:
#               mostly variableScope and kernel ABI struct members, noise);
#               leak findings on _cleanup_* variables are dropped (below,
#               is_cleanup_leak); other suppressions:
#               inline `// cppcheck-suppress id` (with a reason) or a line
#               in tests/static/cppcheck-suppressions.txt
#   clang-tidy  the checks of the repository's .clang-tidy (each choice
#               explained there), every warning an error; suppressions:
#               `/* NOLINTNEXTLINE(check) */` with the reason next to it
#   scan-build  the clang static analyzer over a full clang build,
#               --status-bugs, the same analyzer checkers as .clang-tidy;
#               unix.Malloc leaks of _cleanup_* variables are dropped too
#               (clang-tidy itself runs without clang-analyzer-* here: the
#               analyzer is the slow part and scan-build already runs it
#               over the same files)
#   layering    no circle between files (tests/static/check-layering.py:
#               the include graph, and the call graph from the objects of
#               the scan-build build); the circles that
#               tests/static/layering-baseline.txt lists are tolerated
#               until they are removed, a new one fails; and the folder
#               order of runtime/sandbox/ (FOLDER_RANK: arrows point down
#               only, top -> control/ -> audit/ -> egress/, overlay/ ->
#               protect/ -> runtime/lib)
#   errno       the errno text of an error message by one rule
#               (tests/static/check-errno-rule.py: ar_error_set gets the
#               errno of a failed call, ar_error_set_plain a plain code;
#               its --self-test first, over errno-rule-sample.c)
#
# Files are found by globbing runtime/, spec/ and hooks/ (*.c), so new
# files are analysed without editing this script; the compiler flags are
# the build's own ($(COMPILE) of a `CC=clang ./configure` build).
#
# Usage: tests/static/run-static.sh [clang-format] [cppcheck] [clang-tidy]
#        [scan-build] [layering] [errno] (default: all six)
# Environment:
#   TOP_SRCDIR    source tree (default: two directories above this script)
#   STATIC_OUT    work dir (default: $TOP_SRCDIR/build-static); the build
#                 lives in STATIC_OUT/build, logs in STATIC_OUT/*.log
#   STATIC_JOBS   parallel jobs (default 2)
#   STATIC_TIDY_ANALYZER=1   also run clang-analyzer-* inside clang-tidy
#   STATIC_SCAN_MODE  the analyzer's mode for scan-build: deep (default,
#                 inlines callees: finds more) or shallow (about 5x faster)
#
# The last line is "static: N tools, N failed".
set -u -o pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=$(cd "${TOP_SRCDIR:-$script_dir/../..}" && pwd)
STATIC_OUT=${STATIC_OUT:-$TOP_SRCDIR/build-static}
STATIC_JOBS=${STATIC_JOBS:-2}
SRC_DIRS=(runtime spec hooks)

tools=()
for a in "$@"; do
	case "$a" in
	clang-format | cppcheck | clang-tidy | scan-build | layering | errno) tools+=("$a") ;;
	-h | --help)
		sed -n '4,45p' "$0" | sed 's/^# \{0,1\}//'
		exit 0
		;;
	*)
		echo "run-static.sh: unknown argument: $a" >&2
		exit 2
		;;
	esac
done
[ ${#tools[@]} -gt 0 ] || tools=(clang-format cppcheck clang-tidy scan-build layering errno)

first_cmd()
{
	local c
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && {
			echo "$c"
			return 0
		}
	done
	return 1
}

mkdir -p "$STATIC_OUT"
STATIC_OUT=$(cd "$STATIC_OUT" && pwd)
B=$STATIC_OUT/build
failed=0
ran=0

# Strip the build and source prefixes from tool output.
relpath()
{
	sed -e "s|$B/\.\./||g" -e "s|$TOP_SRCDIR/||g" -e "s|^\.\./||"
}

# The C files to analyse, relative to TOP_SRCDIR.
sources()
{
	local d dirs=()
	for d in "${SRC_DIRS[@]}"; do
		[ -d "$TOP_SRCDIR/$d" ] && dirs+=("$d")
	done
	(cd "$TOP_SRCDIR" && find "${dirs[@]}" -name '*.c' -type f | LC_ALL=C sort)
}

# A configured clang build in $B, its generated headers, and a
# compile_commands.json listing every globbed file with the build's flags.
prepared=0
prepare()
{
	[ "$prepared" = 1 ] && return 0
	if [ ! -x "$TOP_SRCDIR/configure" ]; then
		(cd "$TOP_SRCDIR" && ./autogen.sh) >"$STATIC_OUT/autogen.log" 2>&1 ||
			{ echo "static: autogen failed (see $STATIC_OUT/autogen.log)"; return 1; }
	fi
	if [ -f "$TOP_SRCDIR/config.status" ]; then
		echo "static: $TOP_SRCDIR is configured in-tree; its own clang build needs a clean source tree (make distclean there; build in a subdirectory)"
		return 1
	fi
	if [ ! -f "$B/Makefile" ] || [ "$TOP_SRCDIR/configure" -nt "$B/Makefile" ]; then
		rm -rf "$B" && mkdir -p "$B" &&
			(cd "$B" && CC=clang "$TOP_SRCDIR/configure") >"$STATIC_OUT/configure.log" 2>&1 ||
			{ echo "static: configure failed (see $STATIC_OUT/configure.log)"; return 1; }
	fi
	local compile
	# Regenerates the Makefile if Makefile.am changed, then prints the
	# compile command automake uses for every C file of the project.
	compile=$(cd "$B" && make -s spec/seccomp_default.h config.h >/dev/null &&
		printf 'ar-print-compile:\n\t@:$(info $(COMPILE))\n' |
		make -s -f Makefile -f - ar-print-compile) ||
		{ echo "static: cannot read the compile flags from $B/Makefile"; return 1; }
	# Split as the shell that make runs would (-DX='"quoted"'), then
	# quote back with backslashes: cppcheck 2.10 loses the quotes of
	# "arguments" entries but reads those of a "command" string.
	local -a argv
	eval "argv=($compile)" ||
		{ echo "static: cannot split the compile command: $compile"; return 1; }
	compile=$(printf '%q ' "${argv[@]}")
	sources | jq -R . | jq -s --arg dir "$B" --arg top "$TOP_SRCDIR" \
		--arg cmd "$compile" \
		'map({directory: $dir, file: ($top + "/" + .),
		      command: ($cmd + "-c " + $top + "/" + .)})' \
		>"$B/compile_commands.json" ||
		{ echo "static: cannot write $B/compile_commands.json"; return 1; }
	echo "static: $(jq length "$B/compile_commands.json") files in ${SRC_DIRS[*]}"
	prepared=1
}

# cppcheck and the clang 14 analyzer do not model __attribute__((cleanup)):
# a variable declared _cleanup_free_/_cleanup_close_/... is "leaked" on
# every early return. is_cleanup_leak "path:line:col: ... message" VAR
# succeeds when VAR is declared with a _cleanup_* attribute in the function
# around that line (from the function's opening "{" in column 0): that
# finding is a known false positive, printed as such and not counted.
is_cleanup_leak()
{
	local f=$1 var=$2 path line
	path=${f%%:*}
	line=$(echo "$f" | cut -d: -f2)
	[ -n "$var" ] && [ -f "$TOP_SRCDIR/$path" ] || return 1
	awk -v n="$line" -v var="$var" '
		NR > n { exit }
		/^\{/ { found = 0 }
		/_cleanup_[a-z_]*/ && match($0, "[ *]" var "( *=|;|,|\\[)") { found = 1 }
		END { exit !found }' "$TOP_SRCDIR/$path"
}

# count_findings TOOL: reads findings (one a line) and prints them, except
# the leaks of cleanup variables, which go to $STATIC_OUT/TOOL.cleanup-fp.
# Fails when any other finding is left.
count_findings()
{
	local f var real=0 fp=0 fpfile=$STATIC_OUT/$1.cleanup-fp
	: >"$fpfile"
	while IFS= read -r f; do
		var=$(echo "$f" | sed -nE \
			-e "s/.*(Resource|Memory) leak: ([A-Za-z_][A-Za-z0-9_]*) \[(resourceLeak|memleak)\]$/\2/p" \
			-e "s/.*Potential leak of memory pointed to by '([A-Za-z_][A-Za-z0-9_]*)' \[unix\.Malloc\]$/\1/p")
		if is_cleanup_leak "$f" "$var"; then
			echo "$f" >>"$fpfile"
			fp=$((fp + 1))
		else
			echo "  $f"
			real=$((real + 1))
		fi
	done
	echo "static: $1: $real finding(s); $fp leak(s) of _cleanup_ variables ignored (list: ${fpfile#"$TOP_SRCDIR"/})"
	[ "$real" -eq 0 ]
}

# The repository's .clang-format applied to every C file and header of
# SRC_DIRS and tests/ (no changes made: the files that differ are listed;
# fix with `clang-format -i --style=file FILE`).
run_clang_format()
{
	local cf f bad=0
	cf=$(first_cmd clang-format-14 clang-format) || { echo "static: clang-format not found (apt-get install clang-format)"; return 1; }
	echo "static: $($cf --version | head -n1)"
	while IFS= read -r f; do
		"$cf" --style="file:$TOP_SRCDIR/.clang-format" "$TOP_SRCDIR/$f" |
			cmp -s - "$TOP_SRCDIR/$f" && continue
		echo "static: clang-format: $f is not formatted"
		bad=$((bad + 1))
	done < <(cd "$TOP_SRCDIR" && find "${SRC_DIRS[@]}" tests -name '*.[ch]' -type f 2>/dev/null | LC_ALL=C sort)
	[ "$bad" -eq 0 ]
}

run_cppcheck()
{
	local log=$STATIC_OUT/cppcheck.log rc
	command -v cppcheck >/dev/null || { echo "static: cppcheck not found (apt-get install cppcheck)"; return 1; }
	prepare || return 1
	echo "static: cppcheck $(cppcheck --version | awk '{print $2}')"
	cppcheck --project="$B/compile_commands.json" \
		--enable=warning,portability,performance --inline-suppr \
		--suppressions-list="$script_dir/cppcheck-suppressions.txt" \
		--library=posix --std=c11 \
		-q -j"$STATIC_JOBS" \
		--template='{file}:{line}:{column}: {severity}: {message} [{id}]' \
		>"$log" 2>&1 || { echo "static: cppcheck failed:"; relpath <"$log"; return 1; }
	grep -E '^[^ ]+:[0-9]+:[0-9]+: ' "$log" | relpath | LC_ALL=C sort -u |
		count_findings cppcheck
}

run_clang_tidy()
{
	local tidy log=$STATIC_OUT/clang-tidy.log n extra=()
	tidy=$(first_cmd clang-tidy-14 clang-tidy) || { echo "static: clang-tidy not found (apt-get install clang-tidy)"; return 1; }
	prepare || return 1
	[ "${STATIC_TIDY_ANALYZER:-0}" = 1 ] || extra=(--checks=-clang-analyzer-*)
	echo "static: $tidy ($($tidy --version | grep -o 'version [0-9.]*'))${extra:+ without clang-analyzer-* (scan-build runs it)}"
	jq -r '.[].file' "$B/compile_commands.json" |
		xargs -P"$STATIC_JOBS" -n4 "$tidy" -p "$B" --quiet "${extra[@]}" \
			>"$log" 2>&1
	# One line per finding: "path:line:col: error: message [check]".
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' "$log" | relpath |
		sed -E 's/,-warnings-as-errors\]$/]/' | LC_ALL=C sort -u \
		>"$STATIC_OUT/clang-tidy.findings"
	n=$(wc -l <"$STATIC_OUT/clang-tidy.findings")
	sed 's/^/  /' "$STATIC_OUT/clang-tidy.findings"
	echo "static: clang-tidy: $n finding(s)"
	if grep -qE 'Error while processing|error: unable to' "$log"; then
		grep -E 'Error while processing|error: unable to' "$log" | relpath | head
		return 1
	fi
	[ "$n" -eq 0 ]
}

# The analyzer checkers clang-tidy's clang-analyzer-* would run (clang
# 14's non-alpha checkers), minus the exclusions in .clang-tidy.
SCAN_ENABLE=(optin.portability.UnixAPI security.FloatLoopCounter
	security.insecureAPI.bcmp security.insecureAPI.bcopy
	security.insecureAPI.bzero security.insecureAPI.getpw
	security.insecureAPI.gets security.insecureAPI.mkstemp
	security.insecureAPI.mktemp security.insecureAPI.rand
	security.insecureAPI.vfork)
SCAN_DISABLE=(deadcode.DeadStores valist.Uninitialized
	security.insecureAPI.DeprecatedOrUnsafeBufferHandling
	security.insecureAPI.strcpy)

run_scan_build()
{
	local sb log=$STATIC_OUT/scan-build.log args=() c rc
	sb=$(first_cmd scan-build-14 scan-build) || { echo "static: scan-build not found (apt-get install clang-tools)"; return 1; }
	prepare || return 1
	echo "static: $sb (clang $(clang --version | grep -o 'version [0-9.]*' | head -1))"
	for c in "${SCAN_ENABLE[@]}"; do args+=(-enable-checker "$c"); done
	for c in "${SCAN_DISABLE[@]}"; do args+=(-disable-checker "$c"); done
	rm -rf "$STATIC_OUT/scan-report"
	(
		cd "$B" && make -s clean >/dev/null 2>&1
		"$sb" --use-cc=clang --status-bugs -o "$STATIC_OUT/scan-report" \
			-analyzer-config "mode=${STATIC_SCAN_MODE:-deep}" \
			"${args[@]}" make -j"$STATIC_JOBS"
	) >"$log" 2>&1
	rc=$?
	grep -E '^scan-build: ' "$log" | relpath
	# Findings: "path:line:col: warning: message [checker]" (the
	# analyzer's text output, next to the HTML report).
	grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' "$log" | relpath |
		LC_ALL=C sort -u >"$STATIC_OUT/scan-build.findings"
	count_findings scan-build <"$STATIC_OUT/scan-build.findings" || rc=-1
	# --status-bugs: non-zero for a failed build or any bug found.
	if grep -qE '^make(\[[0-9]+\])?: \*\*\*' "$log"; then
		echo "static: scan-build: the build failed (see $log)"
		grep -E 'error:|\*\*\*' "$log" | relpath | head -n 20
		return 1
	fi
	[ $rc -ge 0 ] || return 1
	# Bugs found, all of them cleanup-attribute false positives: fine.
	[ $rc -eq 0 ] || [ -s "$STATIC_OUT/scan-build.findings" ]
}

# Circles between files (includes, and calls read from the objects of the
# scan-build build when it ran): tests/static/check-layering.py; circles
# listed in tests/static/layering-baseline.txt are known and allowed, any
# other fails.
run_layering()
{
	local objs=()
	[ -f "$B/agentrun" ] && objs=(--builddir "$B")
	python3 "$TOP_SRCDIR/tests/static/check-layering.py" --srcdir "$TOP_SRCDIR" \
		"${objs[@]}" --baseline "$TOP_SRCDIR/tests/static/layering-baseline.txt"
}

# The errno rule (tests/static/check-errno-rule.py): the checker's own
# sample first, so that a checker that finds nothing fails.
run_errno()
{
	python3 "$TOP_SRCDIR/tests/static/check-errno-rule.py" --self-test &&
		python3 "$TOP_SRCDIR/tests/static/check-errno-rule.py" \
			--srcdir "$TOP_SRCDIR"
}

for t in "${tools[@]}"; do
	ran=$((ran + 1))
	echo "==== static: $t ($(date -u +%H:%M:%S))"
	start=$SECONDS
	case "$t" in
	clang-format) run_clang_format ;;
	cppcheck) run_cppcheck ;;
	clang-tidy) run_clang_tidy ;;
	scan-build) run_scan_build ;;
	layering) run_layering ;;
	errno) run_errno ;;
	esac
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "static: $t: ok ($((SECONDS - start)) s)"
	else
		echo "static: $t: FAILED ($((SECONDS - start)) s)"
		failed=$((failed + 1))
	fi
done
echo "static: $ran tools, $failed failed"
[ "$failed" -eq 0 ]
