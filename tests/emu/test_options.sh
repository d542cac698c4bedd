#!/bin/bash
# test_options.sh - the job's options as the plugin reads them: --elastic-gpus
# checked against the job's GPU request and the cluster (what sbatch cannot
# see): never an elastic job with no GPU, a request outside the range, or a
# MAX the cluster does not have; a deadline job without a known run time
# (elastic-edf), or a job without a throughput profile or iterations
# (elasticflow), rejected saying what it lacks.
. "$(dirname "$0")/lib.sh"
emu options.jobs
expect 1 '^job 1 PENDING gpus=0 .*reason=TidalReject: --elastic-gpus=2-8: the job asks for no GPUs; give the size it starts at with --gpus=N, 2 <= N <= 8$' \
	"elastic with no GPU request: rejected, not started without GPUs"
expect 1 '^job 2 PENDING gpus=0 .*reason=TidalReject: --elastic-gpus=2-8: the job asks for 16 GPUs, outside the range; its GPU request must be from MIN to MAX$' \
	"a request outside the range: rejected with both numbers"
expect 1 '^job 3 PENDING gpus=0 .*reason=TidalReject: --elastic-gpus=1-4096: MAX is more than the 32 GPUs of the cluster; MAX must be at most 32$' \
	"MAX beyond the cluster: rejected, naming its GPU count"
expect 1 '^job 2 PENDING .* acct=Tidal policy=[a-z-]+ gpus=0 resizes=0 preempts=0 rejected=--elastic-gpus=2-8: the job asks for 16 GPUs, outside the range; its GPU request must be from MIN to MAX reason=' \
	"a held rejection is in its AdminComment too"
expect 1 '^job 4 RUNNING gpus=8 ' "2 nodes x 1 GPU is within 2-8: it runs (and grows)"
expect 1 '^job 5 RUNNING gpus=8 ' "a request within the range runs"

# A deadline under elastic-edf needs a known run time: the Reason says what
# the job lacks, not what a year of placeholder would need.
emu deadline.jobs
expect 1 '^job 1 PENDING .*reason=TidalReject: elastic-edf: deadline in 3600 s; its work is unknown: no time limit and no --train-iters, so the deadline cannot be checked; give it a time limit \(sbatch -t\)$' \
	"no -t, no --train-iters: rejected as unknown work"
expect 1 '^job 2 PENDING .*reason=TidalReject: elastic-edf: .*its run time is unknown: no time limit, and its --train-iters have no measured speed yet, .*give it a time limit \(sbatch -t\)$' \
	"--train-iters without -t: rejected, saying the speed is not known"
expect 1 '^job 3 RUNNING gpus=4 ' "with -t it runs"
if echo "$OUT" | grep -q 'needs 7884000 s'; then fail "a Reason counts the placeholder year"; else pass "no Reason counts the placeholder year"; fi

# Under elasticflow a job it cannot plan (no model, batch or iterations) is
# rejected naming what it lacks, never held forever with an empty name.
PROFILES=$(mktemp -d /tmp/tidal-emu-profiles.XXXXXX)
cp "$(dirname "$0")/../../conf/throughput-demo.csv" "$PROFILES/demo.csv"
cat >"$PROFILES/ef.jobs" <<EOF
nodes 4 8
conf Policy=elasticflow ElasticFlow.Profiles=$PROFILES ElasticFlow.Slot=10
job 1 1 deadline=+3600 limit=60
job 2 1 deadline=+3600 train-model=demo train-batch=64
job 3 1 deadline=+3600 train-model=bert train-batch=64 train-iters=100
job 4 1 elastic=1-8 deadline=+3600 train-model=demo train-batch=64 train-iters=1000
job 5 1 deadline=+3630 train-model=demo train-batch=64 train-iters=1000
job 6 1 deadline=+3630 limit=30 train-model=demo train-batch=64 train-iters=1000
cycle
EOF
# With Profiles=, a pending job's --train-* work counts at its table's
# speed, not for its whole time limit: elastic-edf admits job 1 (1000
# iterations at 8 it/s, 125 s on 1 GPU, 31 s on its 4), whose 60-minute
# limit alone would miss its deadline, as it does for job 3.
cat >"$PROFILES/prof.jobs" <<EOF
nodes 4 8
conf Policy=elastic-edf Profiles=$PROFILES
job 1 1 elastic=1-4 deadline=+600 limit=60 train-model=demo train-batch=64 train-iters=1000
job 2 1 elastic=1-4 deadline=+600 limit=60 train-model=demo train-batch=64 train-iters=100000
job 3 1 elastic=1-4 deadline=+600 limit=60
cycle
EOF
PROF_OUT=$("$EMU" "$PROFILES/prof.jobs" 2>&1) || { fail "prof.jobs: tidal-emu failed"; echo "$PROF_OUT"; }
OUT=$("$EMU" "$PROFILES/ef.jobs" 2>&1) || { fail "ef.jobs: tidal-emu failed"; echo "$OUT"; }
rm -rf "$PROFILES"
expect 1 '^job 1 PENDING .*reason=TidalReject: elasticflow cannot plan this job without its throughput profile and its iterations: no --train-model, no --train-batch, no --train-iters$' \
	"elasticflow, no model: rejected naming the three options"
expect 1 '^job 2 PENDING .*reason=TidalReject: elasticflow cannot plan .*: no --train-iters$' \
	"elasticflow, no --train-iters: rejected naming it"
expect 1 '^job 3 PENDING .*reason=TidalReject: .*no throughput table for --train-model=bert \(tables: demo\)$' \
	"elasticflow, a model without a table: rejected naming the tables"
expect 1 '^job 4 RUNNING ' "a job with its profile and iterations runs"
# Its limit is cut to its deadline rounded up to the minute: it was
# planned to end by the deadline, and Slurm's rule (rounded down, 60)
# would end it up to a minute before then.  Its own shorter limit stays.
expect 1 '^job 5 RUNNING .* limit=61 ' "a planned deadline job's limit: the deadline in 3630 s, rounded up to 61 minutes"
expect 1 '^job 6 RUNNING .* limit=30 ' "... or its own limit, when that ends first"
if echo "$OUT" | grep -q 'profile for  at'; then fail "a Reason with an empty model name"; else pass "no Reason with an empty model name"; fi
OUT=$PROF_OUT
expect 1 '^job 1 RUNNING gpus=4 ' "Profiles=: --train-* work counted by its table, admitted and run"
expect 1 '^job 2 PENDING .*reason=TidalReject: elastic-edf: deadline in 600 s; infeasible: needs 3125 s at 4 GPUs$' \
	"... and the table's time is what an infeasible one is refused with"
expect 1 '^job 3 PENDING .*reason=TidalReject: elastic-edf: deadline in 600 s; infeasible: needs 900 s at 4 GPUs$' \
	"without --train-*, its time limit counts, as before"
finish
