#!/usr/bin/env bash
# bench/anchors.sh BUILD - tidal-sim's replay cost against what each research
# anchor's own simulator cost on the same trace and policy, on a 2-core
# machine like this one (shared/anchors/README.md, "What the anchors cost").
# CPU s is tidal-sim's cpu_seconds for that policy (the replay alone); the
# ratio is anchor cost / Tidal CPU.  Some anchor costs were measured as wall
# time (marked "wall"); the anchors are single-threaded Python, so wall is
# close to CPU there.  Nothing here passes or fails.
set -euo pipefail

BUILD=${1:-build}
SIM=$BUILD/tidal-sim
A=${ANCHORS:-$(cd "$(dirname "$0")/.." && pwd)/../shared/anchors}
if [ ! -d "$A" ]; then
	echo "anchors: no research anchors at $A; skipping the cost comparison"
	exit 0
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tidal-anchors.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

# cpu_of JSON POLICY
cpu_of() {
	jq -r --arg p "$2" '.policies[$p].cpu_seconds' "$1"
}

# row PRESET CASE POLICY ANCHOR_COST KIND JSON
row() {
	local cpu
	cpu=$(cpu_of "$6" "$3")
	awk -v pr="$1" -v c="$2" -v p="$3" -v a="$4" -v k="$5" -v t="$cpu" 'BEGIN {
		r = (t > 0) ? a / t : 0
		printf "%-12s %-18s %-20s %10.2f %-4s %10.4f %9.0fx\n", pr, c, p, a, k, t, r }'
}

# sim OUT.json ARGS... - one tidal-sim run, quiet, JSON to OUT.json
sim() {
	local out=$1
	shift
	"$SIM" --quiet --json "$out" "$@"
}

echo
echo "anchor replay cost (anchor: the research simulator; Tidal: tidal-sim cpu_seconds)"
printf '%-12s %-18s %-20s %10s %-4s %10s %10s\n' preset case policy "anchor s" "" "tidal s" speed-up

j=$WORK/muri.json
sim "$j" --preset muri --cluster "$A/muri/simulator/cluster_spec/n8g8.csv" \
	--trace "$A/muri/simulator/trace-data/trace3.csv" \
	--policy srtf,srsf,tiresias,antman,muri-l,muri-s
row muri trace3 srtf 10.2 wall "$j"
row muri trace3 srsf 12.0 wall "$j"
row muri trace3 tiresias 14.5 wall "$j"
row muri trace3 antman 16.1 wall "$j"
row muri trace3 muri-l 358 wall "$j"
row muri trace3 muri-s 364 wall "$j"

j=$WORK/elasticflow.json
sim "$j" --preset elasticflow --cluster "$A/elasticflow/cluster_specs/n16g8.csv" \
	--profiles "$A/elasticflow/throughputs_A100" \
	--trace "$A/elasticflow/traces/generated_fig10_100jobs_1500lam_seed1.csv" \
	--policy elasticflow,edf,tiresias,gandiva
row elasticflow fig10 elasticflow 4.9 cpu "$j"
row elasticflow fig10 edf 0.66 cpu "$j"
row elasticflow fig10 tiresias 0.94 cpu "$j"
row elasticflow fig10 gandiva 1.4 cpu "$j"

j=$WORK/lucid.json
v=$A/lucid/synthetic/variantA_1day_900jobs
sim "$j" --preset lucid --cluster "$A/lucid/lucid/venus_vc_config.csv" \
	--profiles "$A/lucid/lucid" --estimates "$v/synthetic_ebm_estimates.csv" \
	--trace "$v/cluster_full_log.csv" --policy lucid,fifo,tiresias
row lucid synthetic-A lucid 100.9 wall "$j"
row lucid synthetic-A fifo 29.5 wall "$j"
row lucid synthetic-A tiresias 33.4 wall "$j"

j=$WORK/pollux.json
sim "$j" --preset pollux --cluster "$A/pollux/slurm.conf" \
	--profiles "$A/pollux/traces" \
	--trace "$A/pollux/workloads/workload-6.csv" --policy tiresias,pollux \
	--seed 1
row pollux workload-6 tiresias 43.6 cpu "$j"
# the anchor's GA policy: 4-8 h extrapolated; the low end is the ratio's
row pollux workload-6 pollux 14400 cpu "$j"

j=$WORK/gavel.json
s=$A/shockwave
sim "$j" --preset gavel --cluster "$s/slurm.conf" \
	--profiles "$s/throughputs/tacc_throughputs.json" \
	--policy-config "$s/configurations/tacc_32gpus.json" \
	--trace "$s/traces/120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace" \
	--policy gandiva-fair,allox
row gavel 120-jobs gandiva-fair 26.9 wall "$j"
row gavel 120-jobs allox 40.0 wall "$j"

echo "pollux's anchor cost is extrapolated (4-8 h; 4 h above).  Not in the"
echo "table: muri-s on trace3_pr and the elasticflow cluster01 run, whose"
echo "anchors did not finish (days/hours);"
echo "see bench/elasticflow.sh below for cluster01."
