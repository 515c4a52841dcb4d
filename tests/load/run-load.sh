#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/load/run-load.sh -- `make check-load`: every test_*.sh of
# tests/load/ (TAP, like the integration tests) with the machine loaded
# by the tests themselves. Fails on any "not ok", a script's non-zero
# exit, or a script that prints no plan. Prints "N passed, N failed,
# N skipped" last. LOAD_CONNS (default 200) sets the connections per path.
set -u -o pipefail
TOP_SRCDIR=$(cd "${TOP_SRCDIR:-$(dirname "$0")/../..}" && pwd)
export TOP_SRCDIR TOP_BUILDDIR AGENTRUN
pass=0 failn=0 skipn=0 rc=0
for t in "$TOP_SRCDIR"/tests/load/test_*.sh; do
	echo "== $(basename "$t") ($(date -u +%H:%M:%S), loadavg $(cut -d' ' -f1-3 /proc/loadavg))"
	out=$(timeout 900 bash "$t" </dev/null 2>&1)
	st=$?
	printf '%s\n' "$out"
	ok=$(grep -cE '^ok [0-9]+ ' <<<"$out")
	sk=$(grep -cE '^ok [0-9]+ .*# SKIP' <<<"$out")
	pass=$((pass + ok - sk))
	skipn=$((skipn + sk))
	failn=$((failn + $(grep -cE '^not ok ' <<<"$out")))
	if [ "$st" -ne 0 ] || ! grep -qE '^1\.\.[0-9]+' <<<"$out"; then
		echo "$(basename "$t"): exit status $st or no plan"
		failn=$((failn + 1))
	fi
done
echo "$pass passed, $failn failed, $skipn skipped"
[ "$failn" -eq 0 ] || rc=1
exit $rc
