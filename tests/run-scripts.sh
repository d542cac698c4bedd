#!/usr/bin/env bash
# tests/run-scripts.sh TIER SCRIPT... - run a tier's test scripts one after
# another, every one of them even after one fails, then one closing line
# with the checks of all of them added up and the scripts that failed.
#
# A script fails if it exits non-zero; its own closing line ("NAME: N
# passed, M failed", see tests/cluster/lib.sh) gives the counts.  A script
# that failed without saying how many checks it failed counts as one.
# Each script's wall time follows its closing line ("took N s"), and the
# slowest scripts are listed at the end, so that a tier that grows towards
# CI's time limit shows where its time goes.
# Exits non-zero if any script failed.
set -uo pipefail
tier=$1; shift
pass=0 fail=0 failed=() times=()
tier_start=$(date +%s)
for t in "$@"; do
	[ -f "$t" ] || continue
	log=$(mktemp)
	start=$(date +%s)
	bash "$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	secs=$(( $(date +%s) - start ))
	echo "$tier: $(basename "$t" .sh) took $secs s"
	times+=("$secs $(basename "$t" .sh)")
	counts=$(grep -E '^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	rm -f "$log"
	p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$counts")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$counts")
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ "$rc" -ne 0 ]; then
		failed+=("$(basename "$t") (exit $rc)")
		[ "${f:-0}" -gt 0 ] || fail=$((fail + 1))
	fi
done
[ ${#failed[@]} -eq 0 ] || echo "$tier: failed scripts: ${failed[*]}"
if [ ${#times[@]} -gt 1 ]; then
	echo "$tier: slowest: $(printf '%s\n' "${times[@]}" | sort -rn | head -n 5 |
		awk '{printf "%s%s %d s", (NR > 1 ? ", " : ""), $2, $1}')"
fi
echo "$tier: $pass passed, $fail failed in $(( $(date +%s) - tier_start )) s"
[ ${#failed[@]} -eq 0 ]
