#!/bin/bash
# test_rounds.sh - Gavel's rounds in a live slurmctld: max-min-fairness
# with 30 s rounds, six 2-GPU jobs on 2 x 4 GPUs (four run at a time, so
# each job should run two rounds of every three).
#
# From the start of the first round the running jobs are sampled every
# second for 12 rounds (four times that cycle, so every job's share of the
# rounds is exactly 2/3; ending 3 s before the thirteenth: rounds keep
# their phase).  Then:
# - the LP's time share of each job (tidalctl explain: share) is 2/3;
# - each job's measured share of that time (seconds running / seconds
#   sampled) is within 10% of its share: what a job loses when it enters
#   a round (the leavers' requeue takes Slurm a few seconds) counts
#   against it;
# - a job leaves only at a round's end: it was requeued (Slurm's restart
#   count, read in the same squeue as each sample's states: a requeue at
#   the thirteenth round's start must count on neither side) exactly as
#   often as it was seen to stop running, and no more than twice per
#   round;
# - an entrant waits only for its leaver's requeue to finish: Slurm
#   refuses a start on a node until the job leaving it has completed
#   (the node COMPLETING, a few seconds), so the plugin waits for it and
#   tries again each cycle; at most 10 such tries per job that left.
# - CycleInterval is 10 s, a third of a round: each round turns over at
#   its end all the same, because the plugin runs its next cycle when the
#   policy asks (Plan::wake_at, the round's end): every requeue of a
#   leaver comes within 3 s of a round's end (slurmctld's log).
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
NODES="n1 n2"
GPUS_PER_NODE=4
ROUND=30
ROUNDS=12
cluster_up "Policy=max-min-fairness
Gavel.RoundLength=$ROUND
CycleInterval=10"

jobs=()
for i in 1 2 3 4 5 6; do
	jobs+=("$(submit -N1 --gpus-per-node=2 -J "r$i" --wrap 'sleep 3000')")
done
say "jobs: ${jobs[*]}"
four_running() { [ "$(squeue -h -t R -o %i | wc -l)" -eq 4 ]; }
check "four of the six jobs run in the first round" \
	wait_for $((ROUND + 30)) four_running
# The end of the round in force (epoch s), as tidalctl explains it.
first_end=
for j in $(squeue -h -t R -o %i); do
	first_end=$("$TIDALCTL" -o explain "$j" 2>/dev/null |
		grep -o 'round_end=[0-9.]*' | head -n 1 | cut -d= -f2)
	[ -n "$first_end" ] && break
done
say "the round in force ends at ${first_end:-?}"

declare -A ran stops last restarts
for j in "${jobs[@]}"; do ran[$j]=0; stops[$j]=0; last[$j]=0; restarts[$j]=x; done
samples=0
end=$((SECONDS + ROUND * ROUNDS - 3))
while [ $SECONDS -lt $end ]; do
	running=" "
	while read -r id state count; do
		[ "$state" = R ] && running+="$id "
		restarts[$id]=$count
	done < <(squeue -h -t all -O 'JobID:12,StateCompact:4,RestartCnt:8')
	for j in "${jobs[@]}"; do
		if [[ $running == *" $j "* ]]; then
			ran[$j]=$((ran[$j] + 1)); now=1
		else
			now=0
		fi
		[ "${last[$j]}" = 1 ] && [ $now = 0 ] && stops[$j]=$((stops[$j] + 1))
		last[$j]=$now
	done
	samples=$((samples + 1))
	sleep 1
done
show_queue

# A job the thirteenth round requeued is neither pending nor running
# until its requeue is done (a few seconds), and tidalctl explain refuses
# it meanwhile: on a loaded machine the reads below can come after that
# round's start, so each is tried again for up to 30 s.
share_of() {
	local s t
	for t in $(seq 30); do
		s=$("$TIDALCTL" -o explain "$1" 2>/dev/null | grep -o 'share=[0-9.]*' | cut -d= -f2)
		[ -z "$s" ] || break
		sleep 1
	done
	echo "$s"
}
total_stops=0
for j in "${jobs[@]}"; do
	share=$(share_of "$j")
	frac=$(awk -v r="${ran[$j]}" -v n="$samples" 'BEGIN { printf "%.3f", r / n }')
	say "job $j: share $share, ran ${ran[$j]} of $samples samples ($frac), stopped ${stops[$j]} times, Restarts=${restarts[$j]}"
	check "job $j: the LP's share is 2/3" \
		awk -v s="${share:-0}" 'BEGIN { exit !(s > 0.66 && s < 0.67) }'
	check "job $j: ran $frac of the time, within 10% of its share $share" \
		awk -v f="$frac" -v s="${share:-0}" 'BEGIN { exit !(f >= 0.9 * s && f <= 1.1 * s) }'
	check "job $j: requeued only when it left a round (${restarts[$j]} restarts, ${stops[$j]} stops)" \
		[ "${restarts[$j]}" = "${stops[$j]}" ]
	total_stops=$((total_stops + stops[$j]))
done
check "at most two jobs leave per round ($total_stops stops in $ROUNDS rounds)" \
	[ "$total_stops" -le $((2 * ROUNDS)) ]
busy=$(grep -c "still completing a job: start tried again\|start failed: Requested nodes are busy" "$T/log/slurmctld.log")
check "entrants wait only for their leavers' requeue ($busy tries on busy nodes for $total_stops leavers)" \
	[ "$busy" -le $((10 * total_stops)) ]
# Each leaver's requeue against the round ends (first_end + k ROUND).
late=$(grep -o '^\[[0-9T:.-]*\] sched/tidal: requeued JobId' "$T/log/slurmctld.log" |
	cut -c2-24 | while read -r t; do date -d "$t" +%s.%N; done |
	awk -v e="${first_end:-0}" -v r=$ROUND '
		{ d = ($1 - e) % r; if (d < 0) d += r
		  if (d > r - 0.5) d -= r # the log keeps milliseconds only
		  n++; if (d > m) m = d }
		END { printf "%d %.1f", n, m }')
check "every round turns over at its end with CycleInterval=10: the latest of ${late% *} requeues came ${late#* } s after a round's end" \
	awk -v l="$late" 'BEGIN { split(l, a, " "); exit !(a[1] > 0 && a[2] <= 3) }'
grep -E "requeued JobId|started JobId" "$T/log/slurmctld.log" | tail -n 12 | sed 's/^/   /'
finish
