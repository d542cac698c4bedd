#!/usr/bin/env bash
# test_elasticflow.sh - the elasticflow preset against the ElasticFlow
# artifact's Fig 10 run (100 jobs, n16g8 = 128 GPUs, 240 s slot, A100
# throughputs).  Anchor values: shared/anchors/README.md.
. "$(dirname "$0")/lib.sh"
EF=$ANCHORS/elasticflow
out=$(mktemp)
out2=$(mktemp)
trap 'rm -f "$out" "$out2"' EXIT
"$SIM" --preset elasticflow --cluster "$EF/cluster_specs/n16g8.csv" \
	--profiles "$EF/throughputs_A100" \
	--trace "$EF/traces/generated_fig10_100jobs_1500lam_seed1.csv" \
	--policy tiresias,edf,elasticflow,gandiva,themis --quiet --json "$out" || { echo "FAIL  tidal-sim exited $?"; exit 1; }

check fig10 "$out" tiresias deadline_ratio 1.0 0
check fig10 "$out" tiresias avg_jct 51045.4 1
check fig10 "$out" tiresias makespan 740161 1
check fig10 "$out" tiresias jobs 100 0
check fig10 "$out" edf deadline_ratio 0.92 0
check fig10 "$out" edf avg_jct 63318.8 1
check fig10 "$out" edf makespan 1358163 1
check fig10 "$out" edf jobs 100 0
check fig10 "$out" elasticflow deadline_ratio 1.0 0
check fig10 "$out" elasticflow avg_jct 23806.9 1
check fig10 "$out" elasticflow makespan 668124 1
check fig10 "$out" elasticflow jobs 100 0
check fig10 "$out" gandiva deadline_ratio 0.79 0
check fig10 "$out" gandiva avg_jct 63852.8 1
check fig10 "$out" gandiva makespan 740211 1
check fig10 "$out" gandiva jobs 100 0
# Themis was not rerun for the anchor; the authors' committed ratio.
check fig10-upstream "$out" themis deadline_ratio 0.99 0
# Tighter than the anchor's tolerance: today the replay is exact.
check fig10-exact "$out" elasticflow avg_jct 23806.94 0.001
check fig10-exact "$out" elasticflow makespan 668124 0
check fig10-exact "$out" gandiva avg_jct 63852.78 0.001
check fig10-exact "$out" gandiva makespan 740211 0
check fig10-exact "$out" tiresias avg_jct 51045.37 0.001
check fig10-exact "$out" edf avg_jct 63318.75 0.001
check fig10-exact "$out" tiresias makespan 740161 0
check fig10-exact "$out" edf makespan 1358163 0

# cluster01 on n64g8 (2 switches x 32 nodes), 60 s slot: the anchor rerun
# of 2026-11-24 (1,352 admitted, 243 declined; 1,359 rows of job.csv).
# Needs the artifact's free-node order across switches (node ids are per
# switch): with global ids the cache flags, hence the overheads, differ
# from the second event on and the ratio drops to 0.828.
"$SIM" --preset elasticflow --cluster "$EF/cluster_specs/n64g8.csv" \
	--profiles "$EF/throughputs_A100" --trace "$EF/traces/cluster01.csv" \
	--policy elasticflow --param ElasticFlow.Slot=60 --quiet --json "$out2" ||
	{ echo "FAIL  tidal-sim exited $? on cluster01"; exit 1; }
check cluster01 "$out2" elasticflow deadline_ratio 0.8476 0.59
check cluster01 "$out2" elasticflow avg_jct 6221.96 1
check cluster01 "$out2" elasticflow makespan 2870400 0.5
check cluster01 "$out2" elasticflow jobs 1359 0
check cluster01-exact "$out2" elasticflow deadline_ratio 0.8476489028213167 0
check cluster01-exact "$out2" elasticflow avg_jct 6221.96468 0.0001
finish
