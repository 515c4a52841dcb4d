#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
# Shell completion (contrib/completion/): the bash completion, sourced in a
# fresh bash, completes commands, global and per-command options, option
# values and container ids; the zsh one parses and, with zsh's completion
# builtins stubbed, offers the same.
. "$(dirname "$0")/../lib.sh"

BASH_COMP=$TOP_SRCDIR/contrib/completion/agentrun.bash
ZSH_COMP=$TOP_SRCDIR/contrib/completion/_agentrun

# bash_complete WORDS...: what TAB after the last word offers, one per line
# (the last word is the one being completed). `agentrun` is $AGENTRUN with
# --root $AR_ROOT, through a directory put first in PATH.
bash_complete()
{
	mkdir -p "$TEST_TMP/bin"
	printf '#!/bin/sh\nexec "%s" --root "%s" "$@"\n' "$AGENTRUN" "$AR_ROOT" \
		>"$TEST_TMP/bin/agentrun"
	chmod +x "$TEST_TMP/bin/agentrun"
	PATH=$TEST_TMP/bin:$PATH bash --norc --noprofile -c '
		source "$1"; shift
		COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
		_agentrun
		printf "%s\n" "${COMPREPLY[@]}"' bash "$BASH_COMP" "$@"
}

t_bash_commands()
{
	local got
	got=$(bash_complete agentrun ru)
	assert_eq "$got" run "agentrun ru<TAB>"
	got=$(bash_complete agentrun s)
	assert_eq "$(echo "$got" | sort | tr '\n' ' ')" \
		"sandbox spec start state " "agentrun s<TAB>"
	got=$(bash_complete agentrun --debug de)
	assert_eq "$got" delete "after a global option"
	got=$(bash_complete agentrun help ex)
	assert_eq "$got" exec "agentrun help ex<TAB>"
	# complete -F is registered for agentrun
	got=$(bash --norc --noprofile -c 'source "$1"; complete -p agentrun' \
		bash "$BASH_COMP")
	assert_eq "$got" "complete -F _agentrun agentrun"
}

t_bash_options()
{
	local got o
	got=$(bash_complete agentrun run --)
	for o in --bundle --detach --keep --pid-file --console-socket \
		--no-pivot --no-new-keyring --preserve-fds --help; do
		grep -qx -- "$o" <<<"$got" ||
			fail "agentrun run --<TAB> lacks $o; got: $got"
	done
	# exactly the options of `agentrun run --help`
	assert_eq "$(sort <<<"$got" | tr '\n' ' ')" \
		"$("$AGENTRUN" run --help | grep -oE -- '--[a-z][a-z0-9-]*' |
			sort -u | tr '\n' ' ')"
	got=$(bash_complete agentrun run --de)
	assert_eq "$got" --detach
	got=$(bash_complete agentrun --ro)
	assert_eq "$(sort <<<"$got" | tr '\n' ' ')" "--root --rootless " \
		"global options"
	got=$(bash_complete agentrun --log-format '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "text json "
	got=$(bash_complete agentrun --log-level '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "error warning info debug "
	got=$(bash_complete agentrun --log-level debug li)
	assert_eq "$got" list "the command after --log-level LEVEL"
	got=$(bash_complete agentrun list --format j)
	assert_eq "$got" json
	got=$(bash_complete agentrun sandbox --landlock '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "auto on off "
	got=$(bash_complete agentrun ui --listen '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "127.0.0.1: localhost: " "ui --listen: loopback only"
	got=$(bash_complete agentrun u)
	assert_eq "$(sort <<<"$got" | tr '\n' ' ')" "ui update " "agentrun u<TAB>"
	got=$(bash_complete agentrun sandbox --net '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "none host allow= ask " "--net values"
	got=$(bash_complete agentrun sandbox --net al)
	assert_eq "$got" "allow="
	mkdir -p "$TEST_TMP/bundle-dir"
	got=$(cd "$TEST_TMP" && bash_complete agentrun run --bundle bundle-)
	assert_eq "$got" bundle-dir "a directory for --bundle"
}

# --profile offers profile names (and files), never the words of its
# FILE|NAME placeholder; sandbox offers its subcommands, exec and stop the
# running sessions' names.
t_bash_sandbox()
{
	local got cfg=$TEST_TMP/xdg-config
	mkdir -p "$cfg/agentrun/profiles" "$TEST_TMP/sroot/.sandboxes/web1"
	echo '{}' >"$cfg/agentrun/profiles/myagent.json"
	got=$(XDG_CONFIG_HOME=$cfg bash_complete agentrun sandbox --profile '')
	grep -qx myagent <<<"$got" || fail "no profile name myagent in: $got"
	assert_not_contains "$got" FILE
	assert_not_contains "$(grep -x NAME <<<"$got" || true)" NAME
	got=$(XDG_CONFIG_HOME=$cfg bash_complete agentrun sandbox --profile mya)
	assert_eq "$got" myagent
	got=$(bash_complete agentrun sandbox ex)
	grep -qx exec <<<"$got" || fail "no subcommand exec in: $got"
	got=$(bash_complete agentrun sandbox li)
	grep -qx list <<<"$got" || fail "no subcommand list in: $got"
	got=$(bash_complete agentrun --root "$TEST_TMP/sroot" sandbox exec '')
	assert_eq "$got" web1
	got=$(bash_complete agentrun --root "$TEST_TMP/sroot" sandbox stop w)
	assert_eq "$got" web1
	# allow/revoke NAME --net HOST | --ro DIR | --rw DIR
	got=$(bash_complete agentrun sandbox al)
	grep -qx allow <<<"$got" || fail "no subcommand allow in: $got"
	got=$(bash_complete agentrun --root "$TEST_TMP/sroot" sandbox revoke w)
	assert_eq "$got" web1
	got=$(bash_complete agentrun sandbox allow web1 --)
	assert_eq "$(tr '\n' ' ' <<<"$got")" "--net --ro --rw --force "
	got=$(bash_complete agentrun sandbox revoke web1 --)
	assert_eq "$(tr '\n' ' ' <<<"$got")" "--net --ro --rw "
	got=$(cd "$TEST_TMP" && bash_complete agentrun sandbox allow web1 --ro sro)
	assert_eq "$got" sroot
}

t_bash_container_ids()
{
	require_root
	local b=$TEST_TMP/b id got
	make_bundle "$b"
	config_set "$b" '.process.args=["sleep","100"]'
	id=$(unique_id)
	defer ar delete --force "$id"
	assert_status 0 ar create --bundle "$b" "$id"
	got=$(bash_complete agentrun kill '')
	assert_eq "$got" "$id" "agentrun kill <TAB>"
	got=$(bash_complete agentrun state "${id:0:5}")
	assert_eq "$got" "$id"
	# no ids where a command takes none
	got=$(bash_complete agentrun spec '')
	assert_eq "$got" ""
}

# zsh_complete WORDS...: what _agentrun offers through stubs of compadd,
# _describe, _files, _message and _command_names (one per line; files as
# "FILES", directories as "DIRS").
zsh_complete()
{
	PATH=$TEST_TMP/bin:$PATH zsh -f -c '
		compadd() { [[ $1 == -- ]] && shift; print -l -- "$@"; }
		_describe() {
			local -a a; a=(${(P)4})
			print -l -- ${a%%:*}
		}
		_files() { [[ $1 == -/ ]] && print DIRS || print FILES; }
		_message() { print "MESSAGE $1"; }
		_command_names() { print COMMANDS; }
		# the file ends by calling _agentrun (first autoload): not yet
		source <(grep -vx "_agentrun \"\$@\"" "$1"); shift
		words=("$@"); CURRENT=$#
		_agentrun
		' zsh "$ZSH_COMP" "$@"
}

t_zsh()
{
	local got
	require_cmd zsh
	zsh -n "$ZSH_COMP" || fail "zsh -n $ZSH_COMP"
	bash_complete agentrun >/dev/null # writes the wrapper in $TEST_TMP/bin
	got=$(zsh_complete agentrun '')
	grep -qx run <<<"$got" || fail "no command run: $got"
	grep -qx sandbox <<<"$got" || fail "no command sandbox: $got"
	got=$(zsh_complete agentrun run --)
	grep -qx -- --bundle <<<"$got" || fail "no --bundle: $got"
	grep -qx -- --detach <<<"$got" || fail "no --detach: $got"
	got=$(zsh_complete agentrun run --bundle '')
	assert_eq "$got" DIRS
	got=$(zsh_complete agentrun --log-format '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "text json "
	got=$(zsh_complete agentrun --log-level '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "error warning info debug "
	got=$(zsh_complete agentrun sandbox '')
	assert_eq "$(tr '\n' ' ' <<<"$got")" "exec list stop requests answer allow revoke learn COMMANDS "
	mkdir -p "$TEST_TMP/zcfg/agentrun/profiles" "$TEST_TMP/zroot/.sandboxes/web2"
	echo '{}' >"$TEST_TMP/zcfg/agentrun/profiles/zagent.json"
	got=$(XDG_CONFIG_HOME=$TEST_TMP/zcfg zsh_complete agentrun sandbox --profile '')
	grep -qx zagent <<<"$got" || fail "no profile name zagent: $got"
	grep -qx NAME <<<"$got" && fail "the placeholder NAME offered: $got"
	got=$(zsh_complete agentrun --root "$TEST_TMP/zroot" sandbox exec '')
	assert_eq "$got" web2
}

run_test "completion: bash completes commands" t_bash_commands
run_test "completion: bash completes options and their values" t_bash_options
run_test "completion: bash completes profile names and sandbox sessions" t_bash_sandbox
run_test "completion: bash completes container ids" t_bash_container_ids
run_test "completion: zsh completion parses and completes" t_zsh
finish
