#!/usr/bin/env bash
# tests/pkg/test_completion.sh - the bash completions (completion/) offer
# what the programs accept: tidal-sim's options as --help lists them, its
# presets and policies as --list does, comma lists for --policy;
# tidalctl's commands, the things show accepts (as its usage error lists
# them) and the policy names for set policy.
#
# GPL-2.0-or-later.
set -uo pipefail
NAME=test_completion
. "$(dirname "$0")/lib.sh"
bin=$(cd "$here/$BUILD" && pwd)
for p in tidal-sim tidalctl; do
	[ -x "$bin/$p" ] || skip "$bin/$p is not built"
done
export PATH=$bin:$PATH

# complete FILE FUNCTION WORD...: what FUNCTION offers for the last WORD,
# sorted, space separated.
complete_words() {
	local file=$1 fn=$2; shift 2
	bash -c '
		file=$1 fn=$2; shift 2
		. "$file"
		COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		COMPREPLY=()
		"$fn"
		printf "%s\n" "${COMPREPLY[@]}" | sort | tr "\n" " " | sed "s/ $//"
	' _ "$file" "$fn" "$@"
}
sim() { complete_words "$here/completion/tidal-sim.bash" _tidal_sim tidal-sim "$@"; }
ctl() { complete_words "$here/completion/tidalctl.bash" _tidalctl tidalctl "$@"; }
same() { # same WHAT GOT WANT
	if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: offered '$2', want '$3'"; fi
}

list() { tidal-sim --list | awk -v want="$1:" '$0 == want {p = 1; next} /^[a-z]/ {p = 0} p {print $1}' | sort | tr '\n' ' ' | sed 's/ $//'; }
want_opts=$(tidal-sim --help | grep -oE '(^|[ ,])--[a-z][a-z-]*' | tr -d ' ,' | sort -u | tr '\n' ' ' | sed 's/ $//')
same "tidal-sim: every option of --help" "$(sim "")" "$want_opts"
same "tidal-sim --preset: every preset of --list" "$(sim --preset "")" "$(list presets)"
same "tidal-sim --policy: every policy of --list" "$(sim --policy "")" "$(list policies)"
same "tidal-sim --policy fifo,ti: the word after the comma" "$(sim --policy fifo,ti)" "fifo,tiresias"
same "tidal-sim --trace-format: the formats of --list" "$(sim --trace-format "")" \
	"elasticflow gavel lucid muri pollux sacct tidal ub"
same "tidal-sim --cluster: files" "$(sim --cluster "$here/conf/slurm.c")" "$here/conf/slurm.conf"

same "tidalctl: its commands" "$(ctl "")" "check explain set show"
same "tidalctl check: its option" "$(ctl check -)" "--min-free"
same "tidalctl: its options" "$(ctl -)" "--help --json --oneliner --version -V -h -o"
# What `show` accepts, as its usage error lists them.
accepted=$(tidalctl show bogus 2>&1 | sed -n "s/.*is not one of //p" | sed 's/job ID/job/; s/, / /g' | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')
same "tidalctl show: what show accepts" "$(ctl show "")" "$accepted"
same "tidalctl -o show: options are skipped" "$(ctl -o show "")" "$accepted"
same "tidalctl set: policy" "$(ctl set "")" "policy"
same "tidalctl set policy: the policies" "$(ctl set policy "")" "$(list policies)"
finish
