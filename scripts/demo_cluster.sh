#!/usr/bin/env bash
# scripts/demo_cluster.sh BUILD - the live half of `make demo`.
#
# A throwaway Slurm cluster on loopback (tests/cluster/lib.sh: munged,
# slurmctld with sched/tidal, 4 slurmd x 4 fake GPUs) with a tidald on
# every node runs a small mixed workload under Policy=elastic-edf.  The
# elastic jobs are real trainers: srun starts one tidal-launch per node,
# which starts one tidal-train rank per GPU (CPU + Gloo here), each step
# paced by conf/throughput-demo.csv; checkpoints go to each node's
# directory and a resize is carried out by the node's tidald
# (checkpoint_stop, ack, requeue, restart from that checkpoint):
#
#   rigid-a    8 GPUs, 40 s
#   elastic-1  --elastic-gpus=2-8, deadline in 1 h: starts at what is
#              free, grows when rigid-a ends
#   elastic-2  --elastic-gpus=1-4, deadline in 2 h
#   rigid-b    8 GPUs, deadline in 30 min, at +55 s: the elastic jobs
#              shrink for it
#   late       a deadline it cannot meet: held with a TidalReject reason
#
# tidalctl's one-line records are printed whenever a decision changes,
# then the resize stories and the trainers' own lines, and the cluster is
# torn down.  Without root, Slurm or the plugin this prints why and exits
# 0, so the replay half of the demo still runs.
#
# GPL-2.0-or-later.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
. tests/cluster/lib.sh
TEST_NAME=demo
DEMO_SECONDS=${DEMO_SECONDS:-100}

GPUS_PER_NODE=4
skip_unless_node_side
# No ResizeSignal: the agents checkpoint the trainers (a signal would
# reach the batch script, not them).
cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=30
RejectAction=hold"

start_agents || say "not every tidald registered: a resize there requeues after CheckpointTimeout"

# One launcher per node with the GPUs this run of the job holds
# (tidal-launch --srun); $1 = iterations.
cat >"$T/out/train.sh" <<EOF
#!/bin/bash
export TIDAL_RUN_DIR="$T/tidal-run"
"$BUILD_ABS/tidal-launch" --srun -- "$BUILD_ABS/tidal-train" --hidden 64 \\
	--iters \$1 --ckpt-every 500 --log-every 500 \\
	--profile "$PWD/conf/throughput-demo.csv" --profile-model demo
EOF
chmod +x "$T/out/train.sh"
submit -J rigid-a -N2 --gpus-per-node=4 --wrap 'sleep 40' >/dev/null
sleep 2
e1=$(submit -J elastic-1 --open-mode=append --elastic-gpus=2-8 --gpus-per-node=1 -N2 \
	--train-iters=4000 -t 10 --deadline=now+1hour "$T/out/train.sh" 4000)
e2=$(submit -J elastic-2 --open-mode=append --elastic-gpus=1-4 --gpus=1 \
	--train-iters=2500 -t 10 --deadline=now+2hours "$T/out/train.sh" 2500)
submit -J late -N1 --gpus-per-node=4 -t 120 --time-min=5 \
	--deadline=now+10minutes --wrap 'sleep 30' >/dev/null
(sleep 55; submit -J rigid-b -N2 --gpus-per-node=4 -t 20 \
	--deadline=now+30minutes --wrap 'sleep 60' >/dev/null) &

say "watching for ${DEMO_SECONDS} s: a record is printed when its decision changes"
declare -A seen
t0=$(date +%s)
while [ $(($(date +%s) - t0)) -lt "$DEMO_SECONDS" ]; do
	while IFS= read -r rec; do
		id=${rec%% *}
		key=$(echo "$rec" | sed 's/Reason=.*//')
		[ "${seen[$id]:-}" = "$key" ] && continue
		seen[$id]=$key
		printf '[+%3ds] %s\n' $(($(date +%s) - t0)) "$rec"
	done < <("$TIDALCTL" -o show jobs 2>/dev/null | grep '^JobId=')
	sleep 1
done
echo
say "final queue"
show_queue
echo
say "tidalctl show decisions"
"$TIDALCTL" show decisions
say "the elastic jobs as the plugin and the agents saw them"
for id in $e1 $e2; do
	"$TIDALCTL" show job "$id" 2>/dev/null ||
		echo "job $id: no longer pending or running ($(scontrol -o show job "$id" 2>/dev/null | grep -o 'JobState=[A-Z]*'))"
	echo
done
say "what the elastic jobs' launchers said (their batch output)"
for f in "$T"/out/*.out; do
	grep -q 'tidal-launch' "$f" 2>/dev/null || continue
	echo "-- $(basename "$f")"
	grep -E 'generation|resum|stopped|SIGTERM|finished|checkpoint_stop|error|tidal-train: rank [0-9]+: step' "$f" |
		grep -v 'not bound' | head -40
done
