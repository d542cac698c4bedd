# bash completion for tidalctl(1)                       -*- shell-script -*-
# Installed as $(datarootdir)/bash-completion/completions/tidalctl.
#
# Commands and their words; job ids from squeue; policy names from
# tidal-sim --list, which lists the registry sched/tidal runs too.
#
# GPL-2.0-or-later.

_tidalctl_jobs()
{
	command -v squeue >/dev/null 2>&1 && squeue -h -o %i 2>/dev/null
}

_tidalctl_policies()
{
	command -v tidal-sim >/dev/null 2>&1 &&
		tidal-sim --list 2>/dev/null |
		awk '/^policies:/ {p = 1; next} /^[a-z]/ {p = 0} p {print $1}'
}

_tidalctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} words=() w i
	# The words before the cursor, options left out.
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		[[ $w == -* ]] || words+=("$w")
	done
	if [[ $cur == -* ]]; then
		if [[ ${words[0]} == check ]]; then
			COMPREPLY=($(compgen -W '--min-free' -- "$cur"))
		else
			COMPREPLY=($(compgen -W '-o --oneliner --json -h --help -V --version' -- "$cur"))
		fi
		return
	fi
	case "${words[*]}" in
	'') COMPREPLY=($(compgen -W 'show explain set check' -- "$cur")) ;;
	show) COMPREPLY=($(compgen -W 'jobs job nodes policy config decisions' -- "$cur")) ;;
	'show job' | explain) COMPREPLY=($(compgen -W "$(_tidalctl_jobs)" -- "$cur")) ;;
	set) COMPREPLY=($(compgen -W 'policy' -- "$cur")) ;;
	'set policy') COMPREPLY=($(compgen -W "$(_tidalctl_policies)" -- "$cur")) ;;
	*) COMPREPLY=() ;;
	esac
}
complete -F _tidalctl tidalctl
