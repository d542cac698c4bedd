#!/bin/bash
# test_sim_live_train.sh - a live replay whose jobs are trainers
# (tidal-sim(1), LIVE REPLAY): 8 jobs of an ElasticFlow-format trace, each
# with its model, batch, iterations and deadline, go through a real
# slurmctld with sched/tidal (Policy=elasticflow), real slurmd and real
# sbatch submissions; each runs tidal-launch over tidal-train paced by its
# table (4 to 13.5 steps a second), with a tidald on every node, and
# tidal-sim sets sacct's record beside its own replay.
#
#   trace    8 jobs of 1 to 4 GPUs and 10 to 20 s on 4 x 8 GPUs, four of
#            them elastic; jobs 2 and 7 cannot meet their deadlines
#   model    --live's defaults, with Tidal.RankStart=0.05: the start of a
#            trainer's world, 0.05 s a rank on 2 cores (bench/rank_start.sh)
#   checks   elasticflow rejects the same two jobs live as in the replay
#            (cancelled before they start); every other job ran once, to
#            its last step, under tidal-launch; the deadline ratio live
#            within 0.02 of the replay's, average JCT and makespan within
#            15% (a world's start is CPU-bound, so a loaded machine
#            starts worlds later than the model says)
#
# run-scripts: alone
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cd "$(dirname "$0")/../.." || exit 1
ACCOUNTING=1
SIM="$BUILD_ABS/tidal-sim"
[ -x "$SIM" ] || { say "skipped: $BUILD/tidal-sim not built"; echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
skip_unless_runnable
skip_unless_node_side
W=$(mktemp -d /tmp/tidal-sim-live-train.XXXXXX)
trap 'rm -rf "$W"' EXIT

mkdir -p "$W/profiles"
# Slow steps (at most 13.5 a second), so that the trainers cost little CPU.
printf 'global_batch_size,1,2,4\n64,4.0,7.5,13.5\n' >"$W/profiles/slow.csv"
cat >"$W/trace.csv" <<'TRACE'
job_id,submit_time,iteration,model_name,ddl,batch_size,num_gpu,duration,best_effort
0,0,80,slow,60,64,1,20,0
1,2,135,slow,40,64,4,10,0
2,4,40,slow,8,64,1,10,0
3,5,135,slow,30,64,4,10,0
4,8,150,slow,45,64,2,20,0
5,10,270,slow,50,64,4,20,0
6,12,60,slow,35,64,1,15,0
7,15,500,slow,60,64,1,125,0
TRACE
printf 'NodeName=n[1-4] Gres=gpu:8 CPUs=16\nPartitionName=gpu Nodes=n[1-4] Default=YES\n' >"$W/cluster.conf"
start=$(date +%s)
"$SIM" --cluster "$W/cluster.conf" --trace "$W/trace.csv" --profiles "$W/profiles" \
	--policy elasticflow --live "$W/live" --json "$W/cmp.json" \
	--jobs-csv "$W/jobs.csv" >"$W/cmp.out" 2>"$W/live.log"
rc=$?
grep -E 'tidald|submitted;|latest|left the queue|rejected|record|failed|did not|--live' "$W/live.log" | sed 's/^/   /'
sed 's/^/   /' "$W/cmp.out"
check "tidal-sim --live replays the trainer jobs live and beside it (rc $rc, $(($(date +%s) - start)) s)" \
	test "$rc" -eq 0 || tail -n 30 "$W/live.log"
check "the plan's jobs are trainers, with their deadlines" \
	test "$(grep -c -- '--train-model=slow --train-batch=64 --train-iters=' "$W/live/plan.tsv")" -eq 8
acct=$W/live/run/slurm_acct.out
rejected_as() { # POLICY: the trace ids it rejected, from the job CSV
	awk -F, -v p="$1" '$1 == p && $12 == 1 { print $2 }' "$W/jobs.csv" | sort -n | tr '\n' ' '
}
say "rejected live: $(rejected_as live:elasticflow); replayed: $(rejected_as elasticflow)"
check "elasticflow rejects jobs 2 and 7, live as replayed" \
	test "$(rejected_as live:elasticflow)" = "2 7 " -a "$(rejected_as elasticflow)" = "2 7 "
check "... cancelled before they ever started" \
	test "$(awk -F'|' '$7 ~ /^CANCELLED/ && $8 == ""' "$acct" | wc -l)" -eq 2
check "the other six: one COMPLETED run each" \
	test "$(awk -F'|' '$7 == "COMPLETED" && $2 ~ /^tidal-/' "$acct" | wc -l)" -eq 6
trained() { [ "$(grep -l 'training done at step' "$W"/live/run/jobs/*.out 2>/dev/null | wc -l)" -eq 6 ]; }
check "... each trained to its last step under tidal-launch" trained

within() { # within METRIC LIMIT [abs]: live and replay, from the JSON
	jq -e --arg m "$1" --argjson p "$2" --arg abs "${3:-}" \
		'.policies["live:elasticflow"][$m] as $l | .policies.elasticflow[$m] as $s |
		 ($l - $s | fabs) <= (if $abs == "abs" then $p else $p / 100 * $s end)' \
		"$W/cmp.json" >/dev/null
}
check "average JCT live within 15% of tidal-sim's" within avg_jct 15
check "makespan live within 15% of tidal-sim's" within makespan 15
check "deadline ratio live within 0.02 of tidal-sim's" within deadline_ratio 0.02 abs
finish
