#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# `agentrun --help`, `agentrun help CMD`, `agentrun CMD --help` and the man
# pages (docs/man/*.1.md) agree: every command of --help has a page and a
# line in agentrun(1); for each command, the --options its --help lists
# are those of the OPTIONS of its page (the "#### **--opt**" entries) and
# those its source accepts (the getopt table of runtime/cli/CMD.c). The
# generated pages, when configure found go-md2man, render with man.
. "$(dirname "$0")/../lib.sh"

MAN_DIR=$TOP_SRCDIR/docs/man

# The commands of `agentrun --help` (its "Commands:" section), without
# `help` itself.
commands()
{
	"$AGENTRUN" --help |
		sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' |
		grep -vx help
}

# help_opts TEXT: the --long options of the option lines ("  -b, --bundle
# DIR   text", "  --tty, --no-tty   text") of a --help text up to the two
# spaces before the description, sorted.
help_opts()
{
	grep -E '^[[:space:]]+-' <<<"$1" | sed -E 's/^[[:space:]]+//; s/  .*//' |
		grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# man_opts FILE: the --long options of the "#### " option entries.
man_opts()
{
	grep -E '^#### ' "$1" | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u
}

# src_opts FILE: the long option names of the getopt tables in FILE.
src_opts()
{
	grep -oE '\{ "[a-z][a-z0-9-]*", (no|required|optional)_argument' "$1" |
		sed -E 's/\{ "([^"]*)".*/--\1/' | sort -u
}

t_help_command()
{
	local c
	assert_status 0 "$AGENTRUN" help
	assert_contains "$OUT" "Commands:"
	assert_eq "$OUT" "$("$AGENTRUN" --help)" "help = --help"
	for c in $(commands); do
		assert_status 0 "$AGENTRUN" help "$c"
		assert_contains "$OUT" "Usage: agentrun $c" "help $c"
		assert_eq "$OUT" "$("$AGENTRUN" "$c" --help)" "help $c = $c --help"
		assert_eq "$("$AGENTRUN" "$c" -h)" "$OUT" "$c -h = $c --help"
		assert_contains "$OUT" "--help" "$c --help lists --help"
	done
	assert_status 1 "$AGENTRUN" help no-such-command
	assert_contains "$ERR" "unknown command \`no-such-command\`"
}

t_every_command_has_a_page()
{
	local c page=$MAN_DIR/agentrun.1.md
	[ -f "$page" ] || fail "missing $page"
	for c in $(commands); do
		[ -f "$MAN_DIR/agentrun-$c.1.md" ] ||
			fail "command $c has no docs/man/agentrun-$c.1.md"
		grep -q "^\*\*$c\*\*$" "$page" ||
			fail "agentrun.1.md does not list the command $c"
		grep -q "^agentrun-$c - " "$MAN_DIR/agentrun-$c.1.md" ||
			fail "agentrun-$c.1.md: no NAME line 'agentrun-$c - ...'"
	done
	# and no page for a command that is gone
	for page in "$MAN_DIR"/agentrun-*.1.md; do
		c=${page##*/agentrun-}
		c=${c%.1.md}
		commands | grep -qx "$c" ||
			fail "$page documents $c, which agentrun --help does not list"
	done
}

# compare WHAT GOT EXPECTED: fail with the options in one list only.
compare()
{
	local d
	d=$(diff <(echo "$2") <(echo "$3") | grep -E '^[<>]' || true)
	[ -z "$d" ] || fail "$1 ('<' only in the first, '>' only in the second):
$d"
}

t_options_agree()
{
	local c page src got bad=0 out
	for c in $(commands); do
		page=$MAN_DIR/agentrun-$c.1.md
		got=$(help_opts "$("$AGENTRUN" "$c" --help)")
		[ -n "$got" ] || fail "$c --help lists no option"
		out=$( (compare "$c: --help vs docs/man/agentrun-$c.1.md" \
			"$got" "$(man_opts "$page")") 2>&1) || {
			echo "$out"
			bad=1
		}
		# what the source accepts (run shares create.c's table; create
		# rejects run's --detach and --keep)
		case $c in
		run) src=$TOP_SRCDIR/runtime/cli/create.c ;;
		*) src=$TOP_SRCDIR/runtime/cli/$c.c ;;
		esac
		if [ "$c" = create ]; then
			out=$( (compare "$c: --help vs $src" "$got" \
				"$(src_opts "$src" | grep -vx -e --detach -e --keep)") 2>&1) ||
				{
					echo "$out"
					bad=1
				}
		elif grep -q 'getopt_long' "$src"; then
			out=$( (compare "$c: --help vs $src" "$got" \
				"$(src_opts "$src")") 2>&1) || {
				echo "$out"
				bad=1
			}
		fi
	done
	# global options: agentrun --help vs agentrun(1) vs main.c
	got=$(help_opts "$("$AGENTRUN" --help)")
	out=$( (compare "global: --help vs agentrun.1.md" "$got" \
		"$(man_opts "$MAN_DIR/agentrun.1.md")") 2>&1) || {
		echo "$out"
		bad=1
	}
	out=$( (compare "global: --help vs main.c" "$got" \
		"$(src_opts "$TOP_SRCDIR/runtime/cli/main.c")") 2>&1) || {
		echo "$out"
		bad=1
	}
	[ "$bad" = 0 ] || fail "options disagree (above)"
}

t_man_pages_render()
{
	local f n=0
	require_cmd man
	[ -f "$TOP_BUILDDIR/docs/man/agentrun.1" ] ||
		skip "man pages not built (configure did not find go-md2man)"
	for f in "$MAN_DIR"/*.1.md; do
		f=${f##*/}
		f=$TOP_BUILDDIR/docs/man/${f%.md}
		[ -s "$f" ] || fail "$f was not generated"
		assert_status 0 env MANWIDTH=80 man -l "$f"
		assert_contains "$OUT" "NAME" "$f"
		assert_contains "$OUT" "--help" "$f"
		n=$((n + 1))
	done
	assert_status 0 env MANWIDTH=80 man -l "$TOP_BUILDDIR/docs/man/agentrun-run.1"
	assert_contains "$OUT" "--bundle=DIR"
	[ "$n" -ge 22 ] || fail "only $n pages"
}

run_test "help: help, help CMD, CMD --help and CMD -h agree" t_help_command
run_test "help: every command has a man page and a line in agentrun(1)" \
	t_every_command_has_a_page
run_test "help: --help options = man page options = getopt table" \
	t_options_agree
run_test "help: the generated man pages render" t_man_pages_render
finish
