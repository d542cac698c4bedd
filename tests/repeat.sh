#!/usr/bin/env bash
# tests/repeat.sh N SCRIPT... - run each test script N times in a row and
# print a table of runs, failures and seconds per script: the flakiness
# check of the cluster and node tiers (run it beside a build or a fuzz
# campaign to load the machine as CI's 2 cores are).
#
#   BUILD=build tests/repeat.sh 10 tests/cluster/test_*.sh tests/node/test_*.sh
#
# A failed run's output is kept as $REPEAT_LOGS/SCRIPT.RUN.log (default
# /tmp/tidal-repeat); passing runs' output is dropped.  One progress line
# per run.  Exits non-zero if any run failed.
set -uo pipefail
n=$1; shift
logs=${REPEAT_LOGS:-/tmp/tidal-repeat}
mkdir -p "$logs"
rows=() anyfail=0
for t in "$@"; do
	[ -f "$t" ] || continue
	name=$(basename "$t" .sh); dir=$(basename "$(dirname "$t")")
	fails=0 total=0 slowest=0
	for i in $(seq 1 "$n"); do
		log=$logs/$dir.$name.$i.log
		start=$(date +%s)
		bash "$t" >"$log" 2>&1
		rc=$?
		secs=$(( $(date +%s) - start ))
		total=$((total + secs)); [ $secs -gt $slowest ] && slowest=$secs
		if [ $rc -eq 0 ]; then
			rm -f "$log"
			echo "repeat: $dir/$name run $i/$n: ok in $secs s"
		else
			fails=$((fails + 1)); anyfail=1
			echo "repeat: $dir/$name run $i/$n: FAILED (exit $rc) in $secs s; log $log"
			grep -E '^FAIL|^not ok' "$log" | head -3 | sed 's/^/    /'
		fi
	done
	rows+=("$(printf '%-28s %5d %6d %8d %8d' "$dir/$name" "$n" "$fails" \
		$((total / n)) "$slowest")")
done
printf '%-28s %5s %6s %8s %8s\n' script runs failed "mean s" "max s"
printf '%s\n' "${rows[@]}"
echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), load $(cut -d' ' -f1-3 /proc/loadavg)"
exit $anyfail
