#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Every JSON document agentrun writes stays valid JSON when a string in it
# holds the characters JSON must escape: a bundle path with '"', '\', a
# tab and a newline goes through state, list --format json, the hooks'
# stdin, the JSON log (--log-format json) and the error it logs; each
# output is parsed back with jq and the path compared byte for byte.
. "$(dirname "$0")/../lib.sh"

WEIRD=$'we"ird\\dir\twith\nnewline'

# weird_bundle: a bundle in $TEST_TMP/$WEIRD whose prestart hook copies its
# stdin (the state JSON) to $TEST_TMP/hook.json.
weird_bundle()
{
	local b=$TEST_TMP/$WEIRD
	make_bundle "$b"
	config_set "$b" '.process.args = ["true"]
	  | .hooks = {createRuntime: [{path: "/bin/sh",
	      args: ["sh", "-c", "cat >\"$OUT\""],
	      env: ["OUT=" + $out]}]}' --arg out "$TEST_TMP/hook.json"
	echo "$b"
}

test_state_and_list()
{
	local b id out
	b=$(weird_bundle)
	id=$(unique_id)
	ar create --bundle "$b" "$id"
	defer ar delete --force "$id"
	out=$(ar state "$id")
	assert_eq "$(jq -r .bundle <<<"$out")" "$b"
	out=$(ar list --format json)
	jq -e . <<<"$out" >/dev/null || fail "list --format json is not JSON: $out"
	assert_eq "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .bundle' <<<"$out")" "$b"
	# The hook's stdin.
	jq -e . "$TEST_TMP/hook.json" >/dev/null ||
		fail "the hook's state is not JSON: $(cat "$TEST_TMP/hook.json")"
	assert_eq "$(jq -r .bundle "$TEST_TMP/hook.json")" "$b"
}

test_json_log()
{
	local b id log line n=0
	b=$TEST_TMP/$WEIRD-missing
	id=$(unique_id)
	log=$TEST_TMP/log.json
	: >"$log"
	# A bundle that does not exist: the error names the path, in the log.
	if ar --log "$log" --log-format json create --bundle "$b" "$id" 2>/dev/null; then
		ar delete --force "$id"
		fail "create of a missing bundle succeeded"
	fi
	[ -s "$log" ] || fail "nothing logged"
	while IFS= read -r line; do
		jq -e . <<<"$line" >/dev/null || fail "log line is not JSON: $line"
		n=$((n + 1))
	done <"$log"
	# The whole path, escapes undone, is in one message.
	jq -r .msg "$log" | grep -qF "we\"ird\\dir" ||
		fail "the logged error does not name the path: $(cat "$log")"
	echo "# $n JSON log line(s)"
}


run_test "bundle path with quote, backslash, tab, newline: state, list --format json, hook stdin" test_state_and_list
run_test "JSON log of an error naming such a path" test_json_log
finish
