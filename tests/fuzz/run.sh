#!/usr/bin/env bash
# tests/fuzz/run.sh SECONDS BIN... - run each libFuzzer target for SECONDS
# from its seed corpus (tests/fuzz/corpus/<target>/), writing new inputs to
# a scratch directory so the committed corpus stays as it is.  A crash
# leaves its reproducer under build-fuzz/crashes/<target>/.
set -uo pipefail
secs=$1; shift
here=$(cd "$(dirname "$0")" && pwd)
fail=0
for bin in "$@"; do
	name=$(basename "$bin"); target=${name#fuzz-}
	seeds=$here/corpus/$target
	scratch=$(mktemp -d); crashes=$(dirname "$bin")/crashes/$target
	mkdir -p "$crashes"
	log=$(dirname "$bin")/$name.log
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=8192 -artifact_prefix="$crashes/" -print_final_stats=1 \
		"$scratch" "$seeds" >"$log" 2>&1
	rc=$?
	runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
	rm -rf "$scratch"
	if [ $rc -eq 0 ]; then
		echo "check-fuzz: $name: ok, ${runs:-?} runs in ${secs} s"
	else
		fail=1
		echo "check-fuzz: $name: FAILED (exit $rc); log $log, reproducer in $crashes/"
		grep -E 'ERROR|SUMMARY|runtime error|deadly|uncaught' "$log" | head -5
	fi
done
exit $fail
