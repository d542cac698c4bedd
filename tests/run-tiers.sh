#!/usr/bin/env bash
# tests/run-tiers.sh MAKE GROUP... - make check's runner: each GROUP is a
# tier (a make target), or several joined by "+" that run at the same time
# (the two cluster tiers, which spend most of their time waiting on their
# own loopback clusters: together they take about as long as one).  A
# parallel tier's lines come prefixed with its name, as they are written.
#
# Every tier runs even after one fails; at the end, a table of every
# tier's result and seconds (CI's budget is 90 min), then the failed
# tiers, each with the scripts that failed and its first failed checks
# (lines "FAIL - ..."), so that the last lines of a long log say what
# broke; exits non-zero if any failed.
set -uo pipefail
make=$1; shift
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

run_one() { # run_one TIER PREFIX: PREFIX non-empty prefixes its lines
	local t=$1 rc
	date +%s >"$dir/$t.start"
	if [ -z "$2" ]; then
		$make --no-print-directory "$t" </dev/null 2>&1 | tee "$dir/$t.log"
	else
		$make --no-print-directory "$t" </dev/null 2>&1 |
			tee "$dir/$t.log" | sed -u "s/^/$t| /"
	fi
	rc=${PIPESTATUS[0]}
	echo "$rc $(date +%s)" >"$dir/$t.end"
}

failed=() rows=()
for group in "$@"; do
	IFS=+ read -ra tiers <<<"$group"
	if [ ${#tiers[@]} -eq 1 ]; then
		run_one "$group" ""
	else
		for t in "${tiers[@]}"; do run_one "$t" prefix & done
		wait
	fi
	for t in "${tiers[@]}"; do
		read -r rc end <"$dir/$t.end"
		start=$(cat "$dir/$t.start")
		r=ok
		[ "$rc" -eq 0 ] || { r=FAILED; failed+=("$t"); }
		beside=
		[ ${#tiers[@]} -eq 1 ] || beside="   (at the same time: ${group//+/, })"
		rows+=("$(printf '  %-18s %-6s %6d%s' "$t" "$r" $((end - start)) "$beside")")
	done
done
printf 'make check: tiers on %s (%s CPUs)\n  %-18s %-6s %6s\n' \
	"$(hostname)" "$(nproc)" tier result seconds
printf '%s\n' "${rows[@]}"
if [ ${#failed[@]} -gt 0 ]; then
	for t in "${failed[@]}"; do
		echo "make check: $t failed:"
		grep -E '^[a-z0-9-]+: failed scripts: ' "$dir/$t.log" | sed 's/^/  /'
		grep -E 'FAIL - |^\[  FAILED  \] [^0-9]' "$dir/$t.log" | head -n 15 |
			sed 's/^/  /'
	done
	echo "make check: failed tiers: ${failed[*]}"
	exit 1
fi
