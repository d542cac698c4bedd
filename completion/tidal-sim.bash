# bash completion for tidal-sim(1)                      -*- shell-script -*-
# Installed as $(datarootdir)/bash-completion/completions/tidal-sim.
#
# The options come from tidal-sim --help and the presets and policies from
# tidal-sim --list, so that this file never falls behind the program.
# --policy takes a comma separated list: the word after the last comma is
# completed.
#
# GPL-2.0-or-later.

_tidal_sim_list()
{
	# _tidal_sim_list PROG presets|policies|formats: the names of that
	# section of --list.
	"$1" --list 2>/dev/null |
		awk -v want="$2:" '$0 == want {p = 1; next} /^[a-z]/ {p = 0} p {print $1}'
}

_tidal_sim()
{
	local prog=${COMP_WORDS[0]} cur=${COMP_WORDS[COMP_CWORD]}
	local prev=${COMP_WORDS[COMP_CWORD - 1]}
	case $prev in
	--preset)
		COMPREPLY=($(compgen -W "$(_tidal_sim_list "$prog" presets)" -- "$cur"))
		return ;;
	--policy)
		local head= last=$cur
		if [[ $cur == *,* ]]; then
			head=${cur%,*},
			last=${cur##*,}
		fi
		COMPREPLY=($(compgen -P "$head" -W "$(_tidal_sim_list "$prog" policies)" -- "$last"))
		compopt -o nospace 2>/dev/null
		return ;;
	--trace-format)
		COMPREPLY=($(compgen -W "$(_tidal_sim_list "$prog" formats)" -- "$cur"))
		return ;;
	--cluster | --trace | --profiles | --policy-config | --estimates | \
	--json | --jobs-csv | --timeseries-csv | --plot | --submit-plan | \
	--live-result | --acct-out | --live)
		if declare -F _filedir >/dev/null; then
			_filedir
		else
			COMPREPLY=($(compgen -f -- "$cur"))
		fi
		return ;;
	--param | --seed | --speedup)
		COMPREPLY=()
		return ;;
	esac
	if [[ $cur == -* || -z $cur ]]; then
		COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
			grep -oE '(^|[ ,])--[a-z][a-z-]*' | tr -d ' ,' | sort -u)" -- "$cur"))
	fi
}
complete -F _tidal_sim tidal-sim
