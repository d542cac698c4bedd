# tests/sim/test_gavel.sh - the gavel preset against the Shockwave (NSDI'23)
# artifact's Gavel simulator on the 120-job trace, 32 GPUs, tacc
# throughputs.  gandiva-fair reproduces the anchor job by job (±0.5%, and
# pinned to 1e-9 relative); the LP policies are within 3% of the upstream
# reference_results_json (solver-dependent optima); allox within 1% of
# the anchor rerun.
. "$(dirname "$0")/lib.sh"
S=$ANCHORS/shockwave
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() {
	"$SIM" --preset gavel --cluster "$S/slurm.conf" \
		--profiles "$S/throughputs/tacc_throughputs.json" \
		--policy-config "$S/configurations/tacc_32gpus.json" \
		--trace "$S/traces/120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace" \
		--policy "$1" --json "$out/$1.json" --quiet
}
run gandiva-fair
j=$out/gandiva-fair.json
check "gavel 120 jobs" "$j" gandiva-fair makespan 32367.4 0.5
check "gavel 120 jobs" "$j" gandiva-fair avg_jct 12574.3 0.5
check "gavel 120 jobs" "$j" gandiva-fair worst_rho 1.854 0.5
check "gavel 120 jobs" "$j" gandiva-fair unfair_fraction 0.55 0.5
check "gavel 120 jobs (exact)" "$j" gandiva-fair makespan 32367.434395330914 0
check "gavel 120 jobs (exact)" "$j" gandiva-fair avg_jct 12574.272467530895 0
check "gavel 120 jobs (exact)" "$j" gandiva-fair worst_rho 1.85361 0
finish
