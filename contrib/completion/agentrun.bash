# SPDX-License-Identifier: GPL-2.0-or-later
# bash completion for agentrun. Installed by `make install` as
# $(bashcompletiondir)/agentrun (bash-completion loads it on first use), or
# source it from ~/.bashrc.
#
# Commands and options come from the binary itself (`agentrun --help`,
# `agentrun COMMAND --help`), so completion always matches the build;
# container ids from `agentrun list -q`, sandboxes of `--overlay` from
# ~/.local/share/agentrun/sandboxes, sandbox sessions from the state root's
# .sandboxes/ (watch: its .control/*.sock), profile names from
# ~/.config/agentrun/profiles and the
# installed profiles (next to the binary: BINDIR/../share/agentrun/profiles).

# _agentrun_profiles BIN: the profile names --profile NAME accepts.
_agentrun_profiles()
{
	local d f exe
	exe=$(command -v "$1" 2>/dev/null)
	for d in "${XDG_CONFIG_HOME:-$HOME/.config}/agentrun/profiles" \
		${exe:+"$(dirname "$exe")/../share/agentrun/profiles"} \
		/usr/share/agentrun/profiles /usr/local/share/agentrun/profiles; do
		for f in "$d"/*.json; do
			[ -f "$f" ] || continue
			f=${f##*/}
			echo "${f%.json}"
		done
	done | sort -u
}

# _agentrun_help_opts BIN [COMMAND]: the options an --help lists, one per
# line as "OPTION ARG" (ARG empty when it takes none).
_agentrun_help_opts()
{
	local line spec w arg
	local -a ws
	"$@" --help 2>/dev/null | while read -r line; do
		[[ $line == -* ]] || continue
		# "-b, --bundle DIR   text", "--tty, --no-tty   text"
		spec=${line%%  *}
		read -r -a ws <<<"${spec//,/ }"
		arg=
		for w in "${ws[@]}"; do
			[[ $w == -* ]] || arg=$w
		done
		for w in "${ws[@]}"; do
			[[ $w == -* ]] && printf '%s %s\n' "$w" "$arg"
		done
	done
}

_agentrun()
{
	local cur prev bin cmd='' i w root='' opts arg
	cur=${COMP_WORDS[COMP_CWORD]}
	prev=${COMP_WORDS[COMP_CWORD - 1]}
	bin=${COMP_WORDS[0]}

	# The command: the first word that is not a global option or its
	# argument.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		--root | --log | --log-format | --log-level | --cgroup-manager | --rootless)
			[ "$w" = --root ] && root=${COMP_WORDS[i + 1]}
			i=$((i + 1))
			;;
		--root=*) root=${w#--root=} ;;
		-*) ;;
		*)
			cmd=$w
			break
			;;
		esac
	done

	if [ -z "$cmd" ]; then
		case $prev in
		--root)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
			return
			;;
		--log)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return
			;;
		--log-format)
			mapfile -t COMPREPLY < <(compgen -W "text json" -- "$cur")
			return
			;;
		--log-level)
			mapfile -t COMPREPLY < <(compgen -W "error warning info debug" -- "$cur")
			return
			;;
		--cgroup-manager)
			mapfile -t COMPREPLY < <(compgen -W "cgroupfs systemd disabled" -- "$cur")
			return
			;;
		--rootless)
			mapfile -t COMPREPLY < <(compgen -W "true false auto" -- "$cur")
			return
			;;
		esac
		if [[ $cur == -* ]]; then
			opts=$(_agentrun_help_opts "$bin" | cut -d' ' -f1)
		else
			# the "Commands:" section of --help
			opts=$("$bin" --help 2>/dev/null |
				sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
		fi
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi

	# sandbox allow|revoke NAME --net HOST | --ro DIR | --rw DIR
	w=${COMP_WORDS[i + 1]}
	if [[ $cmd == sandbox ]] && ((COMP_CWORD > i + 2)) &&
		[[ $w == allow || $w == revoke ]]; then
		case $prev in
		--ro | --rw)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
			return
			;;
		--net) return ;;
		esac
		opts="--net --ro --rw"
		[[ $w == allow ]] && opts="$opts --force"
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi

	# --net: its help line lists none|host; allow= and ask too
	if [[ $cmd == sandbox && $prev == --net ]]; then
		mapfile -t COMPREPLY < <(compgen -W "none host allow= ask" -- "$cur")
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == allow= ]] &&
			compopt -o nospace 2>/dev/null
		return
	fi
	# The argument of a command's option.
	if [[ $prev == -* ]]; then
		arg=$(_agentrun_help_opts "$bin" "$cmd" |
			awk -v o="$prev" '$1 == o { print $2; exit }')
		case $arg in
		"") ;;
		FILE\|NAME)
			# a profile name, or a file
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -W "$(_agentrun_profiles "$bin")" -- "$cur"
				compgen -f -- "$cur")
			return
			;;
		DIR)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -d -- "$cur")
			return
			;;
		ADDR:PORT)
			# agentrun ui --listen: loopback only
			compopt -o nospace 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -W "127.0.0.1: localhost:" -- "$cur")
			return
			;;
		*"|"*)
			mapfile -t COMPREPLY < <(compgen -W "${arg//|/ }" -- "$cur")
			return
			;;
		FILE | F | PATH | S)
			compopt -o filenames 2>/dev/null
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
			return
			;;
		*) return ;;
		esac
	fi
	if [[ $cur == -* ]]; then
		opts=$(_agentrun_help_opts "$bin" "$cmd" | cut -d' ' -f1)
		mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
		return
	fi
	case $cmd in
	help)
		opts=$("$bin" --help 2>/dev/null |
			sed -n '/^Commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p')
		;;
	start | state | kill | exec | delete | update | pause | resume | ps | events)
		opts=$("$bin" ${root:+--root "$root"} list -q 2>/dev/null)
		;;
	changes | diff | commit | discard)
		opts=$(ls "${XDG_DATA_HOME:-$HOME/.local/share}/agentrun/sandboxes" 2>/dev/null)
		;;
	watch)
		# a running sandbox's name (its control socket)
		if [ -n "$root" ]; then
			w=$root
		elif ((EUID == 0)); then
			w=/run/agentrun
		elif [ -n "${XDG_RUNTIME_DIR:-}" ]; then
			w=$XDG_RUNTIME_DIR/agentrun
		else
			w=/tmp/agentrun-$EUID
		fi
		opts=$(ls "$w/.control" 2>/dev/null | sed -n 's/\.sock$//p')
		;;
	sandbox)
		w=${COMP_WORDS[i + 1]}
		if ((COMP_CWORD == i + 2)) && [[ $w == exec || $w == stop || $w == requests || $w == answer || $w == allow || $w == revoke ]]; then
			# a running session's name
			if [ -n "$root" ]; then
				w=$root
			elif ((EUID == 0)); then
				w=/run/agentrun
			elif [ -n "${XDG_RUNTIME_DIR:-}" ]; then
				w=$XDG_RUNTIME_DIR/agentrun
			else
				w=/tmp/agentrun-$EUID
			fi
			opts=$(ls "$w/.sandboxes" 2>/dev/null)
		elif ((COMP_CWORD == i + 1)); then
			mapfile -t COMPREPLY < <(compgen -W "exec list stop requests answer allow revoke learn" -- "$cur"
				compgen -c -- "$cur")
			return
		else
			mapfile -t COMPREPLY < <(compgen -c -- "$cur")
			return
		fi
		;;
	*) opts= ;;
	esac
	mapfile -t COMPREPLY < <(compgen -W "$opts" -- "$cur")
}

complete -F _agentrun agentrun
