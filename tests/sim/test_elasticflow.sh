#!/usr/bin/env bash
# test_elasticflow.sh - the elasticflow preset against the ElasticFlow
# artifact's Fig 10 run (100 jobs, n16g8 = 128 GPUs, 240 s slot, A100
# throughputs).  Anchor values: shared/anchors/README.md.
. "$(dirname "$0")/lib.sh"
EF=$ANCHORS/elasticflow
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$SIM" --preset elasticflow --cluster "$EF/cluster_specs/n16g8.csv" \
	--profiles "$EF/throughputs_A100" \
	--trace "$EF/traces/generated_fig10_100jobs_1500lam_seed1.csv" \
	--policy tiresias,edf --quiet --json "$out" || { echo "FAIL  tidal-sim exited $?"; exit 1; }

check fig10 "$out" tiresias deadline_ratio 1.0 0
check fig10 "$out" tiresias avg_jct 51045.4 1
check fig10 "$out" tiresias makespan 740161 1
check fig10 "$out" tiresias jobs 100 0
check fig10 "$out" edf deadline_ratio 0.92 0
check fig10 "$out" edf avg_jct 63318.8 1
check fig10 "$out" edf makespan 1358163 1
check fig10 "$out" edf jobs 100 0
# Tighter than the anchor's tolerance: today the replay is exact.
check fig10-exact "$out" tiresias avg_jct 51045.37 0.001
check fig10-exact "$out" edf avg_jct 63318.75 0.001
check fig10-exact "$out" tiresias makespan 740161 0
check fig10-exact "$out" edf makespan 1358163 0
finish
