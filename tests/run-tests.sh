#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# run-tests.sh — run agentrun's unit-test binaries and integration scripts,
# read their TAP output and print one summary.
#
# Usage: tests/run-tests.sh [--unit-only | --integration-only] [-k PATTERN]
#                           [-x PATTERN] [-h|--help]
#   -k PATTERN  only files whose name (test_x, test_y.sh) matches the bash
#               regular expression PATTERN (default: $TEST_FILTER)
#   -x PATTERN  leave out files whose name matches (default: $TEST_EXCLUDE)
#
# Environment (set by `make check`; sensible defaults otherwise):
#   TOP_SRCDIR    source tree (default: the directory above this script)
#   TOP_BUILDDIR  build tree (default: the current directory)
#   UNIT_TESTS    unit-test binaries, relative to TOP_BUILDDIR
#                 (e.g. "tests/unit/test_parse tests/unit/test_state")
#   AGENTRUN      the binary under test (default: $TOP_BUILDDIR/agentrun)
#   TEST_TIMEOUT  seconds each file may run before it is killed (default
#                 300; a file's header line "# test-timeout: N" sets its own;
#                 times the load average per CPU at the file's start, 1 to
#                 4, on a machine loaded beyond its cores)
#   TEST_TIMEOUT_VM  the same for the VM files (default 900)
#   TEST_VM_PARALLEL  1 (default): the VM files (test_*_vm*.sh, each boots
#                 a throwaway VM, tests/vm/run-in-vm) run one after the
#                 other in a second lane beside the host files; 0: in turn
#                 with the others
#   TEST_FILTER, TEST_EXCLUDE  defaults for -k and -x (handy through make)
#   TEST_ALLOWED_SKIPS  a file of extended regular expressions, one a line
#                 (.ci/run: tests/allowed-skips.txt): every skip's
#                 "FILE: REASON" must match one, else it counts as a failure
#
# Every file's output is printed with the file name as a prefix. TAP lines
# are counted: "ok N - name" passes, "not ok N - name" fails,
# "ok N - name # SKIP reason" is skipped. A file that exits non-zero without
# printing a "not ok", crashes, times out, or prints no plan/results, counts
# as one more failure named after the file. The last line of the output is
# always "N passed, N failed, N skipped"; the exit status is 0 iff nothing
# failed. Around the integration files, the hostname, domainname, the
# sysctls a container could reach (kernel.core_pattern, ping_group_range,
# fs.mqueue.queues_max, ...) and this namespace's mount table are compared:
# each change is one more failure named "host-settings". The output of a
# VM file running in the second lane is printed when it ends, between two
# host files.

set -u -o pipefail

usage()
{
	sed -n '4,12p' "$0" | sed 's/^# \{0,1\}//'
}

mode=all
pattern=${TEST_FILTER:-}
exclude=${TEST_EXCLUDE:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--unit-only) mode=unit ;;
	--integration-only) mode=integration ;;
	-k)
		[ $# -ge 2 ] || { echo "run-tests.sh: -k needs a PATTERN" >&2; exit 2; }
		pattern=$2
		shift
		;;
	-k*) pattern=${1#-k} ;;
	-x)
		[ $# -ge 2 ] || { echo "run-tests.sh: -x needs a PATTERN" >&2; exit 2; }
		exclude=$2
		shift
		;;
	-x*) exclude=${1#-x} ;;
	-h|--help) usage; exit 0 ;;
	*) echo "run-tests.sh: unknown argument: $1" >&2; usage >&2; exit 2 ;;
	esac
	shift
done

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP_SRCDIR=${TOP_SRCDIR:-$(cd "$script_dir/.." && pwd)}
TOP_BUILDDIR=${TOP_BUILDDIR:-$(pwd)}
TOP_SRCDIR=$(cd "$TOP_SRCDIR" && pwd)
TOP_BUILDDIR=$(cd "$TOP_BUILDDIR" && pwd)
AGENTRUN=${AGENTRUN:-$TOP_BUILDDIR/agentrun}
case "$AGENTRUN" in
/*) ;;
*) AGENTRUN=$(pwd)/$AGENTRUN ;;
esac
TEST_TIMEOUT=${TEST_TIMEOUT:-300}
TEST_TIMEOUT_VM=${TEST_TIMEOUT_VM:-900}
# for this runner, not for the files it runs (test_harness runs runners)
allowed=${TEST_ALLOWED_SKIPS:-}
unset TEST_ALLOWED_SKIPS
export TOP_SRCDIR TOP_BUILDDIR AGENTRUN TEST_TIMEOUT

total_pass=0
total_fail=0
total_skip=0
skipped_list=()
skip_reasons=()
failed_list=()
durations=()
work=$(mktemp -d "${TMPDIR:-/tmp}/agentrun-run-tests.XXXXXX") || exit 2
vm_lane=''
# stop_vm_lane: the lane, then the file it runs (timeout(1) leads that
# file's own process group)
stop_vm_lane()
{
	[ -n "$vm_lane" ] || return 0
	kill -- "-$vm_lane" 2>/dev/null
	wait "$vm_lane" 2>/dev/null
	[ ! -s "$work/vm.running" ] || kill -- "-$(cat "$work/vm.running")" 2>/dev/null
	vm_lane=''
}
trap 'stop_vm_lane; rm -rf "$work"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# exec_file LOG TIMEOUT CMD...: run one test file into LOG; prints
# "STATUS SECONDS".
exec_file()
{
	local log=$1 limit=$2 t0=$SECONDS rc
	shift 2
	# The file runs in its own process group under timeout(1), which kills
	# the whole group on expiry. Output goes to a file (not a pipe) so a
	# leaked background process holding stdout cannot hang us.
	# The extra subshell keeps bash's own "Segmentation fault" notice out
	# of our output; we report crashes ourselves.
	(TEST_TIMEOUT=$limit timeout -k 10 "$limit" "$@" </dev/null >"$log" 2>&1; exit $?) 2>/dev/null
	rc=$?
	echo "$rc $((SECONDS - t0))"
}

# file_limit FILE DEFAULT: the file's own limit, a header line
# "# test-timeout: SECONDS" (the real agent CLIs: minutes of node start
# on a loaded machine), else DEFAULT
file_limit()
{
	local n
	n=$(sed -n '1,30s/^# test-timeout: \([0-9][0-9]*\)$/\1/p' "$1" 2>/dev/null | head -n 1)
	echo "${n:-$2}"
}

# load_scaled SECONDS: the limit for a file starting now. The limits
# are there to end a file that hangs; a machine loaded beyond its cores
# runs every file slower in proportion (test_protect_late: 57 s in CI,
# 294 s at load 14 on 2 cores, beside the flake budget's loaders and other
# jobs), so the limit grows with the 1-minute load average per CPU, up
# to 4 times. TEST_TIMEOUT_SCALE=N sets the factor instead (1: the
# limits as given, whatever the load; test_harness.sh).
load_scaled()
{
	local load ncpu f
	if [[ ${TEST_TIMEOUT_SCALE:-} =~ ^[1-9][0-9]*$ ]]; then
		echo $(($1 * TEST_TIMEOUT_SCALE))
		return
	fi
	read -r load _ </proc/loadavg
	ncpu=$(nproc 2>/dev/null || echo 1)
	f=$(((${load%.*} + ncpu - 1) / ncpu))
	[ "$f" -ge 1 ] || f=1
	[ "$f" -le 4 ] || f=4
	echo $(($1 * f))
}

# run_file NAME CMD...: run one test file, then report it.
run_file()
{
	local name=$1 log=$work/log res limit=$TEST_TIMEOUT
	shift
	[ "$1" != bash ] || limit=$(file_limit "$2" "$TEST_TIMEOUT")
	limit=$(load_scaled "$limit")
	echo "=== $name"
	res=$(exec_file "$log" "$limit" "$@")
	report_file "$name" "$log" "${res% *}" "${res#* }" "$limit"
}

# run_file_vm NAME CMD...: a VM file in turn with the others
run_file_vm()
{
	local name=$1 log=$work/log res limit
	shift
	limit=$(load_scaled "$TEST_TIMEOUT_VM")
	echo "=== $name"
	res=$(exec_file "$log" "$limit" "$@")
	report_file "$name" "$log" "${res% *}" "${res#* }" "$limit"
}

# add_why: report_file's reason of the failure last seen, added to its
# entry of failed_list (at most 400 characters).
add_why()
{
	local why=${why_fail:-$why_last}
	if [ "$fail_idx" -ge 0 ] && [ -n "$why" ]; then
		[ ${#why} -le 400 ] || why="${why:0:400} [...]"
		failed_list[fail_idx]+=$'\n'"       why: $why"
	fi
	fail_idx=-1 why_fail='' why_last=''
}

# report_file NAME LOG STATUS SECONDS TIMEOUT: print LOG prefixed by NAME,
# count its TAP results.
report_file()
{
	local name=$1 log=$2 rc=$3 secs=$4 limit=$5 line n_results=0 n_notok=0
	local plan='' bailed=0 desc reason
	# why a test failed, under its FAIL line of the summary (a CI log is
	# often seen only by its end): the first diagnostic line that names a
	# failure, else the last one of the "not ok" that led them
	local fail_idx=-1 why_fail='' why_last='' d

	while IFS= read -r line || [ -n "$line" ]; do
		echo "$name: $line"
		if [ "$fail_idx" -ge 0 ] && [[ $line == \#* ]]; then
			d=${line#\#}
			d=${d#"${d%%[![:space:]]*}"}
			[ -n "$d" ] && why_last=$d
			if [ -z "$why_fail" ] && [[ $d =~ FAIL:|failed|Bail\ out|[Ee]rror ]]; then
				why_fail=$d
			fi
			continue
		fi
		add_why
		if [[ $line =~ ^not\ ok([[:space:]]+[0-9]+)?([[:space:]]+-?[[:space:]]*(.*))?$ ]]; then
			desc=${BASH_REMATCH[3]}
			n_results=$((n_results + 1))
			if [[ $desc =~ \#[[:space:]]*[Tt][Oo][Dd][Oo]([[:space:]]+(.*))?$ ]]; then
				total_skip=$((total_skip + 1))
				reason=${BASH_REMATCH[2]:-}
				skipped_list+=("$name: ${desc%%#*}(TODO${reason:+: $reason})")
			else
				n_notok=$((n_notok + 1))
				total_fail=$((total_fail + 1))
				failed_list+=("$name: $desc")
				fail_idx=$((${#failed_list[@]} - 1))
			fi
		elif [[ $line =~ ^ok([[:space:]]+[0-9]+)?([[:space:]]+-?[[:space:]]*(.*))?$ ]]; then
			desc=${BASH_REMATCH[3]}
			n_results=$((n_results + 1))
			if [[ $desc =~ \#[[:space:]]*[Ss][Kk][Ii][Pp][A-Za-z]*([[:space:]]+(.*))?$ ]]; then
				reason=${BASH_REMATCH[2]:-no reason given}
				total_skip=$((total_skip + 1))
				desc=${desc%%#*}
				desc=${desc%"${desc##*[![:space:]]}"}
				skipped_list+=("$name: $desc: $reason")
				skip_reasons+=("$name: $reason")
			else
				total_pass=$((total_pass + 1))
			fi
		elif [[ $line =~ ^1\.\.([0-9]+)([[:space:]]*\#[[:space:]]*[Ss][Kk][Ii][Pp][A-Za-z]*[[:space:]]*(.*))?$ ]]; then
			plan=${BASH_REMATCH[1]}
			if [ "$plan" = 0 ]; then
				reason=${BASH_REMATCH[3]:-no reason given}
				total_skip=$((total_skip + 1))
				skipped_list+=("$name: (whole file): $reason")
				skip_reasons+=("$name: $reason")
			fi
		elif [[ $line =~ ^Bail\ out! ]]; then
			bailed=1
		fi
	done <"$log"
	add_why
	rm -f "$log"

	local problem=
	if [ "$rc" -eq 124 ]; then
		problem="timed out after ${limit}s"
	elif [ "$rc" -eq 137 ]; then
		problem="killed by SIGKILL (timed out after ${limit}s and did not stop on SIGTERM, or OOM)"
	elif [ "$rc" -eq 126 ] || [ "$rc" -eq 127 ]; then
		problem="could not be executed (exit $rc)"
	elif [ "$rc" -gt 128 ]; then
		problem="crashed (killed by signal $((rc - 128)))"
	elif [ "$bailed" = 1 ]; then
		problem="bailed out"
	elif [ -z "$plan" ] && [ "$n_results" -eq 0 ]; then
		problem="printed no TAP plan or results (exit $rc)"
	elif [ -z "$plan" ]; then
		problem="printed no TAP plan: it stopped early? (exit $rc)"
	elif [ -n "$plan" ] && [ "$plan" != 0 ] && [ "$plan" != "$n_results" ]; then
		problem="planned $plan tests but ran $n_results (exit $rc)"
	elif [ "$rc" -ne 0 ] && [ "$n_notok" -eq 0 ]; then
		problem="exited with status $rc without reporting a failure"
	fi
	if [ -n "$problem" ]; then
		echo "$name: not ok - $name $problem"
		total_fail=$((total_fail + 1))
		failed_list+=("$name: $problem")
	fi
	echo "--- $name: ${secs}s"
	durations+=("$secs $name")
}

# VM files: test_*_vm*.sh. With TEST_VM_PARALLEL=1 they run in a lane of
# their own (start_vm_lane), and their reports are printed as they end
# (report_vm_done) and at the end (wait_vm_lane).
is_vm_file()
{
	[[ $1 =~ ^test_.*_vm(_[a-z0-9_]+)?$ ]]
}
vm_names=()
vm_reported=0

start_vm_lane()
{
	local i
	[ ${#vm_names[@]} -gt 0 ] || return 0
	echo "=== ${#vm_names[@]} VM files run beside the others: ${vm_names[*]}"
	set -m
	(
		for i in "${!vm_names[@]}"; do
			limit=$(load_scaled "$TEST_TIMEOUT_VM")
			echo "$limit" >"$work/vm.$i.limit"
			TEST_TIMEOUT=$limit timeout -k 10 "$limit" \
				bash "$TOP_SRCDIR/tests/integration/${vm_names[$i]}.sh" \
				</dev/null >"$work/vm.$i.log" 2>&1 &
			echo $! >"$work/vm.running"
			t0=$SECONDS
			rc=0
			wait $! || rc=$?
			echo "$rc $((SECONDS - t0))" >"$work/vm.$i.tmp"
			mv "$work/vm.$i.tmp" "$work/vm.$i.done"
		done
	) 2>/dev/null &
	vm_lane=$!
	set +m
}

report_vm_done()
{
	local res
	while [ "$vm_reported" -lt ${#vm_names[@]} ] && [ -e "$work/vm.$vm_reported.done" ]; do
		res=$(cat "$work/vm.$vm_reported.done")
		echo "=== ${vm_names[$vm_reported]} (VM lane)"
		report_file "${vm_names[$vm_reported]}" "$work/vm.$vm_reported.log" \
			"${res% *}" "${res#* }" "$(cat "$work/vm.$vm_reported.limit" 2>/dev/null || echo "$TEST_TIMEOUT_VM")"
		vm_reported=$((vm_reported + 1))
	done
}

wait_vm_lane()
{
	[ -n "$vm_lane" ] || return 0
	wait "$vm_lane"
	vm_lane=''
	report_vm_done
}

# matches NAME: NAME passes -k and is not excluded by -x.
matches()
{
	if [ -n "$exclude" ] && [[ $1 =~ $exclude ]]; then
		return 1
	fi
	[ -z "$pattern" ] && return 0
	[[ $1 =~ $pattern ]]
}

# What no test may change on the machine: hostname, domainname, the
# sysctls a container could reach, and the mount table of this namespace
# (mount point and type; paths that concurrent work on a shared machine
# mounts and unmounts are left out, as in tests/lib.sh host_mounts).
host_settings()
{
	local k
	echo "hostname=$(hostname 2>&1)"
	for k in kernel/hostname kernel/domainname kernel/core_pattern \
		net/ipv4/ping_group_range fs/mqueue/queues_max kernel/msgmax \
		kernel/shmmni; do
		echo "sysctl ${k//\//.}=$(cat "/proc/sys/$k" 2>&1)"
	done
	awk '{ for (i = 7; i < NF && $i != "-"; i++); print "mount " $5 " " $(i + 1) }' \
		/proc/self/mountinfo 2>&1 |
		awk '$2 ~ "^/(tmp|run/user|run/netns|run/containers|var/lib/containers|work|var/tmp)/" { next } { print }' |
		LC_ALL=C sort
}

# host_settings_check BEFORE: one failure named "host-settings" per
# changed line.
host_settings_check()
{
	local after line
	after=$(host_settings)
	[ "$after" = "$1" ] && return 0
	echo "=== host-settings"
	while IFS= read -r line; do
		echo "host-settings: not ok - $line"
		total_fail=$((total_fail + 1))
		failed_list+=("host-settings: changed by the tests: $line")
	done < <(diff <(echo "$1") <(echo "$after") | grep '^[<>]' |
		sed 's/^</before:/; s/^>/after: /')
}

int_files=()
if [ "$mode" != unit ]; then
	shopt -s nullglob
	files=("$TOP_SRCDIR"/tests/integration/test_*.sh)
	shopt -u nullglob
	if [ ${#files[@]} -gt 0 ]; then
		mapfile -t files < <(printf '%s\n' "${files[@]}" | LC_ALL=C sort)
	fi
	for f in "${files[@]}"; do
		name=$(basename "$f" .sh)
		matches "$name.sh" || continue
		if [ "${TEST_VM_PARALLEL:-1}" = 1 ] && is_vm_file "$name"; then
			vm_names+=("$name")
		else
			int_files+=("$f")
		fi
	done
fi
host_before=$(host_settings)
start_vm_lane

if [ "$mode" != integration ]; then
	for t in ${UNIT_TESTS:-}; do
		name=$(basename "$t")
		matches "$name" || continue
		case "$t" in
		/*) bin=$t ;;
		*) bin=$TOP_BUILDDIR/$t ;;
		esac
		if [ ! -x "$bin" ]; then
			echo "=== $name"
			echo "$name: not ok - $name: binary $bin not found (run make first)"
			total_fail=$((total_fail + 1))
			failed_list+=("$name: binary $bin not found")
			continue
		fi
		run_file "$name" "$bin"
		report_vm_done
	done
fi

for f in "${int_files[@]}"; do
	name=$(basename "$f" .sh)
	if is_vm_file "$name"; then
		run_file_vm "$name" bash "$f"
	else
		run_file "$name" bash "$f"
	fi
	report_vm_done
done
wait_vm_lane
host_settings_check "$host_before"

# With TEST_ALLOWED_SKIPS, a skip is a failure unless its "FILE: REASON"
# matches a line of that file (.ci/run: the CI machine has everything the
# tests need but some hardware).
if [ -n "$allowed" ] && [ ${#skip_reasons[@]} -gt 0 ]; then
	[ -r "$allowed" ] || echo "run-tests.sh: cannot read TEST_ALLOWED_SKIPS=$allowed: no skip is allowed"
	mapfile -t patterns < <(grep -v '^[[:space:]]*\(#\|$\)' "$allowed" 2>/dev/null)
	for x in "${skip_reasons[@]}"; do
		ok=0
		for p in "${patterns[@]}"; do
			if [[ $x =~ $p ]]; then
				ok=1
				break
			fi
		done
		if [ "$ok" = 0 ]; then
			total_fail=$((total_fail + 1))
			failed_list+=("$x (a skip not allowed by $allowed: this machine should run it)")
		fi
	done
fi

echo
echo "=== Summary"
if [ ${#durations[@]} -gt 0 ]; then
	echo "Slowest files: $(printf '%s\n' "${durations[@]}" | sort -rn |
		head -n 5 | awk '{ printf "%s%s %ss", sep, $2, $1; sep = ", " }')"
fi
if [ ${#failed_list[@]} -gt 0 ]; then
	echo "Failed:"
	for x in "${failed_list[@]}"; do
		echo "  FAIL $x"
	done
fi
if [ ${#skipped_list[@]} -gt 0 ]; then
	echo "Skipped:"
	for x in "${skipped_list[@]}"; do
		echo "  SKIP $x"
	done
fi
echo "$total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
