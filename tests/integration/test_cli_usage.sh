#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# The usage exits every command shares (runtime/cli/common.c): --help
# prints the command's usage on stdout and exits 0; an unknown option or a
# wrong number of operands prints it on stderr and exits 1, with nothing
# on stdout and nothing done.
. "$(dirname "$0")/../lib.sh"

# Commands with their usage line's start ("Usage: agentrun ...").
COMMANDS="changes diff commit discard overlays ui delete kill list ps events
exec update start pause resume state"

t_help()
{
	local c
	for c in $COMMANDS; do
		assert_status 0 ar "$c" --help
		assert_match "${OUT%%$'\n'*}" "^Usage: agentrun $c( |$)" "$c --help: stdout"
		assert_eq "$ERR" "" "$c --help: stderr"
		assert_status 0 ar "$c" -h
		assert_match "${OUT%%$'\n'*}" "^Usage: agentrun $c( |$)" "$c -h: stdout"
	done
	for c in exec list stop; do
		assert_status 0 ar sandbox "$c" --help
		assert_match "$OUT" "^Usage: agentrun sandbox exec" \
			"sandbox $c --help: stdout"
		assert_eq "$ERR" "" "sandbox $c --help: stderr"
	done
}

t_unknown_option()
{
	local c
	for c in $COMMANDS; do
		assert_status 1 ar "$c" --no-such-option
		assert_eq "$OUT" "" "$c --no-such-option: stdout"
		assert_contains "$ERR" "Usage: agentrun $c"
	done
	for c in exec stop; do
		assert_status 1 ar sandbox "$c" --no-such-option
		assert_eq "$OUT" "" "sandbox $c --no-such-option: stdout"
		assert_contains "$ERR" "Usage: agentrun sandbox exec"
	done
}

# usage_error CMD ARGS...: exit 1, the usage of CMD on stderr only.
usage_error()
{
	local c=$1
	assert_status 1 ar "$@"
	assert_eq "$OUT" "" "$*: stdout"
	assert_contains "$ERR" "Usage: agentrun $c"
}

t_operands()
{
	local c
	# no SANDBOX or ID at all
	for c in changes diff commit discard delete kill ps events exec update \
		start pause resume state; do
		usage_error "$c"
	done
	# too many
	usage_error discard a b
	usage_error overlays a
	usage_error ui a
	usage_error delete a b
	usage_error kill a TERM c
	usage_error ps a b
	usage_error events a b
	usage_error update a b
	usage_error start a b
	# options before the operand are still parsed: diff --stat, commit -f
	usage_error diff --stat
	usage_error commit -f
	assert_status 1 ar diff --stat no-such-sandbox
	assert_not_contains "$ERR" "Usage:"
	assert_status 1 ar commit -f no-such-sandbox
	assert_not_contains "$ERR" "Usage:"
	assert_status 1 ar discard no-such-sandbox
	assert_not_contains "$ERR" "Usage:"
	assert_status 1 ar changes no-such-sandbox a/path
	assert_not_contains "$ERR" "Usage:"
}

run_test "--help and -h: the usage on stdout, exit 0" t_help
run_test "an unknown option: the usage on stderr, exit 1" t_unknown_option
run_test "a wrong number of operands: the usage on stderr, exit 1" t_operands
finish
