#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS BIN...       - run each libFuzzer target for
#                                          SECONDS (make check-fuzz)
# tests/fuzz/run.sh --runs N BIN...      - run each target for N executions
#                                          (make fuzz-long), whatever it takes
#
# Each target starts from its seed corpus (tests/fuzz/corpus/<target>/) and
# writes new inputs to a scratch directory, so the committed corpus stays as
# it is.  A crash leaves its reproducer under build-fuzz/crashes/<target>/.
# One line per target: ok or FAILED, the executions, the seconds, the rate.
#
#   FUZZ_TIMEOUT=S  an input running longer than S wall seconds is a
#                   failure (default 10); raise it for a long run niced
#                   beside other work, where a starved process is slow
#                   without any input being so.
set -uo pipefail
if [ "${1:-}" = --runs ]; then
	limit=(-runs="$2"); what="$2 runs"; shift 2
else
	limit=(-max_total_time="$1"); what="$1 s"; shift
fi
here=$(cd "$(dirname "$0")" && pwd)
fail=0
for bin in "$@"; do
	name=$(basename "$bin"); target=${name#fuzz-}
	seeds=$here/corpus/$target
	scratch=$(mktemp -d); crashes=$(dirname "$bin")/crashes/$target
	mkdir -p "$crashes"
	log=$(dirname "$bin")/$name.log
	start=$(date +%s)
	"$bin" "${limit[@]}" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 \
		-max_len=8192 -artifact_prefix="$crashes/" -print_final_stats=1 \
		"$scratch" "$seeds" >"$log" 2>&1
	rc=$?
	secs=$(( $(date +%s) - start ))
	runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
	rate=$(( ${runs:-0} / (secs > 0 ? secs : 1) ))
	rm -rf "$scratch"
	if [ $rc -eq 0 ]; then
		echo "check-fuzz: $name: ok, ${runs:-?} runs in ${secs} s (${rate}/s; asked for $what)"
	else
		fail=1
		echo "check-fuzz: $name: FAILED (exit $rc) after ${runs:-?} runs in ${secs} s; log $log, reproducer in $crashes/"
		grep -E 'ERROR|SUMMARY|runtime error|deadly|uncaught' "$log" | head -5
	fi
done
exit $fail
