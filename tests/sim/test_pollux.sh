# tests/sim/test_pollux.sh - the pollux preset against the Pollux OSDI'21
# artifact (reference_results/results-jobload/*-1.0/summary.json):
#   Tiresias+TunedJobs: workload-6 is the anchor (±1%); workloads 2 and 3
#     reproduce job by job too, so they are pinned exactly;
#   Optimus+Oracle, workload-6: ±5% of 5301.875;
#   Pollux, workload-6: ±5% of 2446.13125 (the artifact's GA is unseeded,
#     so only its distribution can be matched; ours is seeded and
#     deterministic, and its --seed 1 value is held to ±1% to catch drift
#     while allowing for libm differences in the fitted models; the
#     default optimiser, Pollux.Optimizer=hybrid, gives 2457.99375).
. "$(dirname "$0")/lib.sh"
P=$ANCHORS/pollux
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # WORKLOAD POLICY
	"$SIM" --preset pollux --cluster "$P/slurm.conf" --profiles "$P/traces" \
		--trace "$P/workloads/workload-$1.csv" --policy "$2" --seed 1 \
		--json "$out/$2-w$1.json" --quiet
}
run 6 pollux &
for w in 6 2 3; do
	run $w tiresias
done
run 6 optimus
wait
check "pollux workload-6" "$out/tiresias-w6.json" tiresias avg_jct 3469.69375 1
check "pollux workload-6 (exact)" "$out/tiresias-w6.json" tiresias avg_jct 3469.69375 0
check "pollux workload-2 (exact)" "$out/tiresias-w2.json" tiresias avg_jct 5144.9625 0
check "pollux workload-3 (exact)" "$out/tiresias-w3.json" tiresias avg_jct 3876.25625 0
check "optimus workload-6" "$out/optimus-w6.json" optimus avg_jct 5301.875 5
check "optimus workload-6 (ours, exact)" "$out/optimus-w6.json" optimus avg_jct 5288.74375 0
check "pollux workload-6" "$out/pollux-w6.json" pollux avg_jct 2446.13125 5
check "pollux workload-6 (ours, seed 1)" "$out/pollux-w6.json" pollux avg_jct 2457.99375 1
finish
