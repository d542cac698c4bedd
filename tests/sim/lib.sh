# tests/sim/lib.sh - helpers for golden replay tests (sourced).
#
#   SIM        path to tidal-sim (set by tests/sim/run.sh)
#   ANCHORS    ../shared/anchors relative to the repository root
#   check NAME JSON POLICY METRIC EXPECTED TOL_PCT
#       passes if |value - EXPECTED| <= TOL_PCT% of |EXPECTED|
#       (TOL_PCT 0 = exact to 1e-9)
#   finish     prints "N passed, M failed" and returns non-zero on failure

: "${SIM:?SIM must point at tidal-sim}"
ANCHORS=${ANCHORS:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/../shared/anchors}
PASSED=0
FAILED=0
if [ ! -d "$ANCHORS" ]; then
	echo "skipped: no research anchors at $ANCHORS (they sit beside the checkout as ../shared)"
	echo "0 passed, 0 failed"
	exit 0
fi

check() {
	local name=$1 json=$2 policy=$3 metric=$4 want=$5 tol=$6 got
	got=$(jq -r --arg p "$policy" --arg m "$metric" '.policies[$p][$m]' "$json")
	if awk -v g="$got" -v w="$want" -v t="$tol" 'BEGIN {
		if (g == "null" || g == "") exit 1
		d = g - w; if (d < 0) d = -d
		a = w; if (a < 0) a = -a
		lim = (t == 0) ? 1e-9 * (a > 1 ? a : 1) : t / 100 * a
		exit !(d <= lim) }'; then
		PASSED=$((PASSED + 1))
		printf 'ok    %-40s %-10s %-15s %s (want %s ±%s%%)\n' "$name" "$policy" "$metric" "$got" "$want" "$tol"
	else
		FAILED=$((FAILED + 1))
		printf 'FAIL  %-40s %-10s %-15s %s (want %s ±%s%%)\n' "$name" "$policy" "$metric" "$got" "$want" "$tol"
	fi
}

finish() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
