#!/usr/bin/env bash
# scripts/demo.sh BUILD - the main job, `make demo`.
#
#   0. a throwaway live cluster with sched/tidal running a small mixed
#      workload (scripts/demo_cluster.sh; skipped with a note where it
#      cannot run: no root, no Slurm, no plugin);
#   1. a synthetic week of training jobs (bench/gen_trace.cc, fixed seed) on
#      the example cluster in conf/ (8 nodes x 8 GPUs, two leaf switches),
#      replayed with six policies side by side, with a plot;
#   2. if the research anchors are beside the checkout (../shared/anchors),
#      each anchor preset replays its reference trace and prints Tidal's
#      numbers next to the anchor's own;
#   3. a live replay (about two minutes): conf/live-20.events through a
#      throwaway slurmctld with sched/tidal (scripts/sim_live.sh), its
#      metrics beside tidal-sim's replay of the same trace (skipped with a
#      note where no live cluster can run).
# Outputs land in BUILD/demo/.
set -euo pipefail

build=${1:-build}
top=$(cd "$(dirname "$0")/.." && pwd)
sim="$top/$build/tidal-sim"
gen="$top/$build/gen-trace"
out="$top/$build/demo"
anchors="$top/../shared/anchors"
mkdir -p "$out"

step() { printf '\n== %s\n' "$*"; }

# Step 3, the last of either path below.
live_replay() {
	step "Live replay: conf/live-20.events through slurmctld (fifo), beside tidal-sim"
	local w="$out/live-replay"
	rm -rf "$w"
	# The four 8-GPU nodes the live cluster gets (tidal-sim --live).
	printf 'NodeName=n[1-4] Gres=gpu:8 CPUs=16\nPartitionName=gpu Nodes=n[1-4] Default=YES\n' \
		>"$out/live-replay.conf"
	if ! PROGRESS=20 "$sim" --cluster "$out/live-replay.conf" \
		--trace "$top/conf/live-20.events" --policy fifo --live "$w" \
		--json "$w/compare.json" --jobs-csv "$w/jobs.csv" --plot "$w/compare.svg"; then
		echo "demo: the live replay did not run to its end (see above)"
		return 0
	fi
	echo "sacct's record: $w/run/slurm_acct.out   plot: $w/compare.svg"
}

step "Live: sched/tidal in a throwaway Slurm cluster (elastic-edf)"
bash "$top/scripts/demo_cluster.sh" "$build" ||
	echo "demo: the live cluster part failed (see above); going on with the replays"

step "Replay: 600 synthetic jobs (offered load 1.3) on conf/slurm.conf"
"$gen" 600 64 1.3 7 > "$out/synthetic.csv"
"$sim" --cluster "$top/conf/slurm.conf" --trace "$out/synthetic.csv" \
	--policy fifo,sjf,qssf,srtf,srsf,tiresias \
	--json "$out/synthetic.json" --jobs-csv "$out/synthetic-jobs.csv" \
	--plot "$out/synthetic.svg"
echo "plot: $out/synthetic.svg   per-job CSV: $out/synthetic-jobs.csv"

if [ ! -d "$anchors" ]; then
	step "No ../shared/anchors beside the checkout: skipping the anchor replays"
	live_replay
	exit 0
fi

# anchor_row PRESET POLICY METRIC ANCHOR_VALUE JSON
anchor_row() {
	local got
	got=$(jq -r --arg p "$2" --arg m "$3" '.policies[$p][$m]' "$5")
	awk -v pr="$1" -v p="$2" -v m="$3" -v a="$4" -v g="$got" 'BEGIN {
		d = (a != 0) ? 100 * (g - a) / a : 0
		printf "%-12s %-10s %-15s %16.3f %16.3f %+9.4f%%\n", pr, p, m, a, g, d }'
}

step "Anchor presets: Tidal's replay of each research simulator"
printf '%-12s %-10s %-15s %16s %16s %10s\n' preset policy metric anchor tidal diff
j="$out/muri.json"
"$sim" --quiet --preset muri --cluster "$anchors/muri/simulator/cluster_spec/n8g8.csv" \
	--trace "$anchors/muri/simulator/trace-data/trace3.csv" \
	--policy srtf,srsf,tiresias --json "$j"
anchor_row muri srtf avg_jct 193081.796 "$j"
anchor_row muri srsf avg_jct 185021.880 "$j"
anchor_row muri tiresias avg_jct 347213.248 "$j"
anchor_row muri srtf makespan 8174135.28 "$j"

j="$out/elasticflow.json"
"$sim" --quiet --preset elasticflow --cluster "$anchors/elasticflow/cluster_specs/n16g8.csv" \
	--profiles "$anchors/elasticflow/throughputs_A100" \
	--trace "$anchors/elasticflow/traces/generated_fig10_100jobs_1500lam_seed1.csv" \
	--policy tiresias,edf --json "$j"
anchor_row elasticflow tiresias deadline_ratio 1.0 "$j"
anchor_row elasticflow edf deadline_ratio 0.92 "$j"
anchor_row elasticflow tiresias avg_jct 51045.4 "$j"
anchor_row elasticflow edf avg_jct 63318.8 "$j"

j="$out/lucid.json"
v="$anchors/lucid/synthetic/variantA_1day_900jobs"
"$sim" --quiet --preset lucid --cluster "$anchors/lucid/lucid/venus_vc_config.csv" \
	--profiles "$anchors/lucid/lucid" --estimates "$v/synthetic_ebm_estimates.csv" \
	--trace "$v/cluster_full_log.csv" --policy fifo,sjf,srtf,qssf,tiresias --json "$j"
# The reference per-job logs hold the anchor's JCTs (qssf: the sweep run).
lucid_ref() {
	local f="$v/ref_logs/$1_consolidate_all_log.csv"
	[ -f "$f" ] || f="$v/ref_logs/$1_consolidate_all_log__sweep_EBM.csv"
	awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "jct") c = i; next }
		{ s += $c; n++ } END { printf "%.6f", s / n }' "$f"
}
for p in fifo sjf srtf qssf tiresias; do
	anchor_row lucid "$p" avg_jct "$(lucid_ref "$p")" "$j"
done

j="$out/pollux.json"
"$sim" --quiet --preset pollux --cluster "$anchors/pollux/slurm.conf" \
	--profiles "$anchors/pollux/traces" \
	--trace "$anchors/pollux/workloads/workload-6.csv" --policy tiresias --json "$j"
anchor_row pollux tiresias avg_jct 3469.69375 "$j"
live_replay
echo
echo "demo outputs: $out"
