#!/usr/bin/env bash
# bench/anchors.sh BUILD - tidal-sim's replay cost against what each research
# anchor's own simulator cost on the same trace and policy, on a 2-core
# machine like this one (shared/anchors/README.md, "What the anchors cost",
# measured side by side on 2026-11-24).
#
# Both sides are whole-process CPU seconds (user + sys): the anchor's
# command (Python start-up and imports included) and one tidal-sim process
# per policy (reading the cluster, trace and profiles included).  "replay
# s" is the part of tidal-sim's that is the replay itself (cpu_seconds in
# its JSON).  The goal (issue 16) is 1000x wherever the anchor needs 5 CPU
# s or more: the rows marked "goal" say by how much tidal-sim misses it or
# meets it.  Nothing here passes or fails.
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

# row PRESET CASE POLICY ANCHOR_CPU ARGS... - one tidal-sim process of
# POLICY, timed whole, and its table row.
row() {
	local preset=$1 case=$2 policy=$3 anchor=$4 json=$WORK/out.json
	shift 4
	rm -f "$json"
	# bash's `times`: the children's user and sys, to the millisecond
	( "$SIM" --quiet --json "$json" --preset "$preset" --policy "$policy" \
		"$@" >/dev/null; times ) | tail -1 >"$WORK/time.txt"
	local replay
	replay=$(jq -r --arg p "$policy" '.policies[$p].cpu_seconds' "$json")
	awk -v pr="$preset" -v c="$case" -v p="$policy" -v a="$anchor" \
	    -v r="$replay" -v timed="$(cat "$WORK/time.txt")" '
	function secs(x, m) {	# 1m2.345s
		m = index(x, "m")
		return substr(x, 1, m - 1) * 60 + substr(x, m + 1, length(x) - m - 1)
	}
	BEGIN {
		split(timed, t, " "); w = secs(t[1]) + secs(t[2])
		x = (w > 0) ? a / w : 0
		goal = ""
		if (a >= 5)
			goal = sprintf("goal 1000x: %s", x >= 1000 ? "met" :
				       sprintf("%.1fx short", 1000 / x))
		printf "%-12s %-12s %-13s %10.2f %9.3f %9.4f %9.0fx  %s\n",
		       pr, c, p, a, w, r, x, goal }'
}

echo
echo "anchor replay cost: the research simulator's whole process against"
echo "tidal-sim's, CPU s (user + sys), one policy a process"
printf '%-12s %-12s %-13s %10s %9s %9s %10s\n' preset case policy \
	"anchor s" "tidal s" "replay s" speed-up

M=$A/muri/simulator
for p in "srtf 0.44" "muri-s 17.59"; do
	set -- $p
	row muri trace3 "$1" "$2" --cluster "$M/cluster_spec/n8g8.csv" \
		--trace "$M/trace-data/trace3.csv"
done

EF=$A/elasticflow
for p in "elasticflow 1.22" "edf 0.18"; do
	set -- $p
	row elasticflow fig10 "$1" "$2" \
		--cluster "$EF/cluster_specs/n16g8.csv" \
		--profiles "$EF/throughputs_A100" \
		--trace "$EF/traces/generated_fig10_100jobs_1500lam_seed1.csv"
done
row elasticflow cluster01 elasticflow 782.1 \
	--cluster "$EF/cluster_specs/n64g8.csv" \
	--profiles "$EF/throughputs_A100" \
	--trace "$EF/traces/cluster01.csv" --param ElasticFlow.Slot=60

v=$A/lucid/synthetic/variantA_1day_900jobs
row lucid synthetic-A lucid 10.89 --cluster "$A/lucid/lucid/venus_vc_config.csv" \
	--profiles "$A/lucid/lucid" --estimates "$v/synthetic_ebm_estimates.csv" \
	--trace "$v/cluster_full_log.csv"

for p in "tiresias 7.26" "pollux 754.1"; do
	set -- $p
	row pollux workload-6 "$1" "$2" --cluster "$A/pollux/slurm.conf" \
		--profiles "$A/pollux/traces" \
		--trace "$A/pollux/workloads/workload-6.csv" --seed 1
done

s=$A/shockwave
for p in "fifo 1.38" "gandiva-fair 1.41" "allox 1.26"; do
	set -- $p
	row gavel 120-jobs "$1" "$2" --cluster "$s/slurm.conf" \
		--profiles "$s/throughputs/tacc_throughputs.json" \
		--trace "$s/traces/120_0.2_5_100_40_25_0,0.5,0.5_0.6,0.3,0.09,0.01_multigpu_dynamic.trace"
done
echo "lucid's anchor ran two pool workers (5.9 s wall); its CPU is both."
