#!/usr/bin/env bash
# scripts/demo_cluster.sh BUILD - the live half of `make demo`.
#
# A throwaway Slurm cluster on loopback (tests/cluster/lib.sh: munged,
# slurmctld with sched/tidal, 4 slurmd x 8 fake GPUs) runs a small mixed
# workload under Policy=elastic-edf:
#
#   rigid-a    16 GPUs, 40 s
#   elastic-1  --elastic-gpus=8-32, deadline in 1 h: starts at what is
#              free, grows when rigid-a ends (checkpoint signal, requeue,
#              restart at the new size)
#   rigid-b     8 GPUs, deadline in 30 min: elastic-1 shrinks for it
#   elastic-2  --elastic-gpus=4-16, deadline in 2 h
#   late       a deadline it cannot meet: held with a TidalReject reason
#
# tidalctl's one-line records are printed whenever a decision changes,
# then the cluster is torn down.  Without root, Slurm or the plugin this
# prints why and exits 0, so the replay half of the demo still runs.
#
# GPL-2.0-or-later.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.."
. tests/cluster/lib.sh
TEST_NAME=demo
DEMO_SECONDS=${DEMO_SECONDS:-100}

cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=USR1
CheckpointTimeout=3
RejectAction=hold"

trainer='trap "echo checkpoint at \$(date +%T)" USR1
echo "start on $SLURM_JOB_NUM_NODES node(s) at $(date +%T)"
while :; do sleep 1; done'
submit -J rigid-a -N2 --gpus-per-node=8 --wrap 'sleep 40' >/dev/null
sleep 2
submit -J elastic-1 --open-mode=append --elastic-gpus=8-32 --gpus=8 -t 50 --deadline=now+1hour \
	--wrap "$trainer" >/dev/null
submit -J elastic-2 --open-mode=append --elastic-gpus=4-16 --gpus=4 -t 60 --deadline=now+2hours \
	--wrap "$trainer" >/dev/null
submit -J late -N1 --gpus-per-node=8 -t 120 --time-min=5 \
	--deadline=now+10minutes --wrap 'sleep 30' >/dev/null
(sleep 55; submit -J rigid-b -N1 --gpus-per-node=8 -t 20 \
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
say "what the elastic jobs saw (their batch output)"
for f in "$T"/out/*.out; do
	grep -q '^start on' "$f" 2>/dev/null || continue
	echo "-- $(basename "$f")"; cat "$f"
done
