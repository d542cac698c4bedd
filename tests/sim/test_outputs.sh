#!/usr/bin/env bash
# test_outputs.sh - tidal-sim's output files: regular files are replaced
# whole, and a FIFO (like /dev/null or /dev/stdout) is written in place,
# never renamed over.
source "$(dirname "$0")/lib.sh"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
printf 'id,submit,gpus,duration\n1,0,2,100\n2,10,4,50\n' >"$T/trace.csv"
printf 'NodeName=n[1-2] Gres=gpu:4\n' >"$T/slurm.conf"

ok() { # NAME CONDITION...
	local name=$1
	shift
	if "$@"; then
		PASSED=$((PASSED + 1)); echo "ok    $name"
	else
		FAILED=$((FAILED + 1)); echo "FAIL  $name"
	fi
}

mkfifo "$T/pipe"
cat "$T/pipe" >"$T/from-pipe" &
reader=$!
"$SIM" --quiet --cluster "$T/slurm.conf" --trace "$T/trace.csv" \
	--policy fifo --json "$T/pipe"
wait "$reader"
ok "a FIFO output stays a FIFO" test -p "$T/pipe"
ok "the JSON went through the FIFO" grep -q '"fifo"' "$T/from-pipe"
check "json through a FIFO" "$T/from-pipe" fifo jobs 2 0

"$SIM" --quiet --cluster "$T/slurm.conf" --trace "$T/trace.csv" \
	--policy fifo --json "$T/out.json" --jobs-csv "$T/jobs.csv"
ok "regular outputs written, no temporary left" \
	test -s "$T/out.json" -a -s "$T/jobs.csv" -a ! -e "$T/out.json.tmp"
# 8 GPUs, 30 s restart overhead (the tidal preset's default): job 1 (2 GPUs,
# 100 s) starts at 0 and ends at 130; job 2 (4 GPUs, 50 s) fits beside it at
# 10 and ends at 90: JCTs 130 and 80, average 105.
check "avg JCT of a 2-job FIFO replay" "$T/out.json" fifo avg_jct 105 0
finish
