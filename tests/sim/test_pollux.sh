# tests/sim/test_pollux.sh - the pollux preset against the Pollux OSDI'21
# artifact's Tiresias+TunedJobs (reference_results/results-jobload/
# tiresias-1.0/summary.json): workload-6 is the anchor (±1%); workloads 2
# and 3 reproduce job by job too, so they are pinned exactly.
. "$(dirname "$0")/lib.sh"
P=$ANCHORS/pollux
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for w in 6 2 3; do
	"$SIM" --preset pollux --cluster "$P/slurm.conf" --profiles "$P/traces" \
		--trace "$P/workloads/workload-$w.csv" --policy tiresias \
		--json "$out/w$w.json" --quiet
done
check "pollux workload-6" "$out/w6.json" tiresias avg_jct 3469.69375 1
check "pollux workload-6 (exact)" "$out/w6.json" tiresias avg_jct 3469.69375 0
check "pollux workload-2 (exact)" "$out/w2.json" tiresias avg_jct 5144.9625 0
check "pollux workload-3 (exact)" "$out/w3.json" tiresias avg_jct 3876.25625 0
finish
