#!/bin/bash
# test_rounds_restart.sh - kill -9 of slurmctld in the middle of a Gavel
# round and as one ends: the round schedule resumes where it was, from
# the policy's state in the plugin's state file, and no job runs twice at
# once.
#
# max-min-fairness, 30 s rounds, six 8-GPU jobs on 4 x 8 GPUs (four run
# per round; each job's share is 2/3).  tidalctl explain gives the end of
# the round in force (round_end).
#   kill -9 12 s into a round, slurmctld started again:
#     the round in force is the same (same end), the same four jobs run
#     on and none leaves before that end; then the next round ends a
#     round later.  A restarted policy that forgot its rounds would start
#     a new one at once, from nothing.
#   kill -9 as soon as a round has begun (tidalctl gives its end; its
#     leavers requeued), started
#     again: that round stays in force (same end), its entrants start,
#     four jobs run, and none leaves before its end
#   scontrol reconfigure in the middle of a round: the same round, the
#     same jobs
#   throughout: each job's process runs at most once at any sample, and
#   each job was requeued (Restarts) exactly as often as it was seen to
#   stop running
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
ROUND=30
cluster_up "Policy=max-min-fairness
Gavel.RoundLength=$ROUND
CycleInterval=1"

# Each job's own command line, so that its processes can be counted.
tag=$((RANDOM % 9000 + 1000))
jobs=()
for i in 1 2 3 4 5 6; do
	jobs+=("$(submit -N1 --gpus-per-node=8 -J "rr$i" --wrap "sleep ${tag}0$i")")
done
say "jobs: ${jobs[*]}"
running_set() {
	local ids
	ids=$(squeue -h -t R -o %i) || return 1
	sort -n <<<"$ids" | tr '\n' ' '
}
four_running() { [ "$(squeue -h -t R -o %i | wc -l)" -eq 4 ]; }
# The end of the round in force (epoch seconds), as tidalctl explains it
# for a running job (one being requeued has no decision for a moment).
round_end() {
	local j e
	for j in $(squeue -h -t R -o %i); do
		e=$("$TIDALCTL" -o explain "$j" 2>/dev/null |
			grep -o 'round_end=[0-9.]*' | head -n 1 | cut -d= -f2)
		[ -n "$e" ] && { echo "${e%.*}"; return 0; }
	done
	return 1
}
check "four of the six jobs run in the first round" \
	wait_for $((ROUND + 30)) four_running

declare -A stops was
for j in "${jobs[@]}"; do stops[$j]=0; was[$j]=0; done
twice=0 leaves=0
# sample: one look at the queue and the processes.
sample() {
	local set i j n now
	set=$(running_set) || return 0 # slurmctld busy: no sample
	for i in 1 2 3 4 5 6; do
		j=${jobs[$((i - 1))]}
		n=$(pgrep -fxc "sleep ${tag}0$i")
		[ "$n" -le 1 ] || { twice=$((twice + 1)); say "job $j: $n processes at once"; }
		now=0; [[ " $set" == *" $j "* ]] && now=1
		if [ "${was[$j]}" = 1 ] && [ $now = 0 ]; then
			stops[$j]=$((stops[$j] + 1))
			leaves=$((leaves + 1))
			say "job $j left at $(date +%T)"
		fi
		was[$j]=$now
	done
}
# watch_until EPOCH: sample every second until then.
watch_until() {
	while [ "$(date +%s)" -lt "$1" ]; do sample; sleep 1; done
}
# next_round END: sampling every second, wait (up to 20 s) until the
# round in force is no longer the one that ends at END, and set NEXT to
# the new one's end (END itself if none came: the caller's check
# fails).  On a loaded machine the cycle that turns the round over can
# come a few seconds after its end.  (Not in a $(...): sample's counts
# must stay in this shell.)
next_round() {
	local e t=$(($(date +%s) + 20))
	NEXT=$1
	while [ "$(date +%s)" -lt "$t" ]; do
		e=$(round_end)
		[ -n "$e" ] && [ "$e" != "$1" ] && { NEXT=$e; return 0; }
		sample
		sleep 1
	done
}
kill_ctld() {
	local pid set
	sample # the jobs that left before the kill count before it
	pid=$(cat "$T/run/slurmctld.pid")
	set=$(running_set)
	kill -9 "$pid"
	wait_for 10 eval "! kill -0 $pid"
	say "kill -9 slurmctld ($pid), running: $set"
	start_slurmctld || return 1
	wait_for 60 eval 'scontrol ping >/dev/null'
}
sample

# -- 12 s into a round
e1=$(round_end)
say "the round in force ends at ${e1:-?}"
[ -n "$e1" ] || { fail "tidalctl explain gives no round_end"; finish; exit 1; }
watch_until $((e1 + 12))
e2=$(round_end)
check "a round later, the next round ends $((e2 - e1)) s after it (${ROUND})" \
	[ "$((e2 - e1))" -eq "$ROUND" ]
before=$(running_set)
check "slurmctld is back after kill -9 in the middle of a round" kill_ctld
wait_for 20 four_running
check "the same four jobs run after the restart (before: $before; after: $(running_set))" \
	[ "$before" = "$(running_set)" ]
check "the round in force is the same: it ends at $(round_end), as before (${e2})" \
	[ "$(round_end)" = "$e2" ]
n=$leaves
watch_until $((e2 - 2))
check "after the restart in the middle of a round, no job left before its end ($((leaves - n)) left)" \
	[ "$leaves" -eq "$n" ]
watch_until $((e2 + 1))

# -- a second into a round
next_round "$e2"
e3=$NEXT
check "the next round ends a round later ($((e3 - e2)) s)" \
	[ "$((e3 - e2))" -eq "$ROUND" ]
# tidalctl explains a round as soon as the policy decided it, before
# the cycle requeued its leavers; that cycle saves the plugin's state
# after it did.  Kill after that save: killed between the decision and
# its apply, the restarted plugin requeues the leavers itself (the same
# round, kept in phase), and they would be seen to leave after the
# restart.
# (tidalctl writes the end with three decimals; e3 is its whole part.)
saved_round() {
	awk -v e="$1" '$1 == "policy" && $3 == "round" {
		v = sprintf("%.3f", $4); sub(/\..*/, "", v); if (v == e) f = 1 }
		END { exit !f }' "$T/state/tidal_state"
}
check "the plugin's state file holds the round that ends at $e3" \
	wait_for 10 saved_round "$e3"
check "slurmctld is back after kill -9 as a round begins" kill_ctld
check "the round's entrants start: four jobs run" wait_for 30 four_running
check "that round is in force: it ends at $(round_end), as before (${e3})" \
	[ "$(round_end)" = "$e3" ]
sample # the round's leavers, gone before its entrants could start
n=$leaves
watch_until $((e3 - 2))
check "after the restart as the round began, no job left before its end ($((leaves - n)) left)" \
	[ "$leaves" -eq "$n" ]
watch_until $((e3 + 1))
next_round "$e3"
check "then the next round began: it ends at $NEXT" \
	[ "$NEXT" = "$((e3 + ROUND))" ]

# -- scontrol reconfigure (22.05: the same slurmctld reads tidal.conf
# again; 24.11: a new slurmctld takes over) in the middle of a round
check "the plugin's state file holds that round" wait_for 10 saved_round "$NEXT"
wait_for 20 four_running
e4=$(round_end)
before=$(running_set)
sample # that round's leavers, gone before the reconfigure
n=$leaves
scontrol reconfigure
sleep 3
wait_for 60 eval 'scontrol ping >/dev/null'
wait_for 20 four_running
check "after scontrol reconfigure the round in force is the same: it ends at $(round_end), as before (${e4})" \
	[ "$(round_end)" = "$e4" ]
check "the same four jobs run (before: $before; after: $(running_set))" \
	[ "$before" = "$(running_set)" ]
watch_until $((e4 - 2))
check "after scontrol reconfigure, no job left before the round's end ($((leaves - n)) left)" \
	[ "$leaves" -eq "$n" ]

check "no job ran twice at once ($twice samples saw it)" [ "$twice" -eq 0 ]
check "jobs left rounds ($leaves times)" [ "$leaves" -gt 0 ]
for j in "${jobs[@]}"; do
	restarts=$(scontrol show job "$j" | grep -o 'Restarts=[0-9]*' | cut -d= -f2)
	check "job $j: requeued only when it left a round ($restarts restarts, ${stops[$j]} stops)" \
		[ "${restarts:-x}" = "${stops[$j]}" ]
done
check "the plugin's state file holds the rounds" \
	grep -q "^policy max-min-fairness round " "$T/state/tidal_state"
show_queue
finish
