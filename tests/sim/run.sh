#!/usr/bin/env bash
# tests/sim/run.sh SIM - run every golden replay test (tests/sim/test_*.sh).
# Each script sources lib.sh, runs tidal-sim and checks numbers against the
# anchors' own results.
set -uo pipefail
export SIM=$(realpath "$1")
cd "$(dirname "$0")"
fail=0 total_pass=0 total_fail=0
for t in test_*.sh; do
	[ -e "$t" ] || continue
	echo "== $t"
	out=$(bash "$t" 2>&1); rc=$?
	echo "$out"
	p=$(echo "$out" | awk '/ passed, .* failed$/ {print $1}' | tail -1)
	f=$(echo "$out" | awk '/ passed, .* failed$/ {print $3}' | tail -1)
	total_pass=$((total_pass + ${p:-0}))
	total_fail=$((total_fail + ${f:-0}))
	if [ $rc -ne 0 ]; then fail=1; [ "${f:-0}" -eq 0 ] && total_fail=$((total_fail + 1)); fi
done
echo "check-sim: $total_pass passed, $total_fail failed"
exit $fail
