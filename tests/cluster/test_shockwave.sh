#!/bin/bash
# test_shockwave.sh - Policy=shockwave live: Shockwave's plan picks the
# jobs of each round, the run completes, and tidalctl explains each
# decision.
#
# 30 s rounds, eight 8-GPU jobs (20 s of work each, -t 1) on 4 x 8 GPUs,
# two of them arriving a round later:
#   - at most four run at once, and never more than the GPUs;
#   - a waiting job's Reason and tidalctl explain say why (Shockwave's
#     plan, or its round's GPUs not yet free), with its epochs done, the
#     epochs its work is split into and the end of the round in force;
#   - the rounds keep their phase (round_end moves by whole rounds);
#   - every job completes, within six rounds;
#   - the log has no solve that ran out of its limit.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
ROUND=30
cluster_up "Policy=shockwave
Gavel.RoundLength=$ROUND
CycleInterval=1"
log=$T/log/slurmctld.log

jobs=()
for i in 1 2 3 4 5 6; do
	jobs+=("$(submit -N1 --gpus-per-node=8 -t 1 -J "sw$i" --wrap 'sleep 20')")
done
round_end() {
	local j e
	for j in "${jobs[@]}"; do
		e=$("$TIDALCTL" -o explain "$j" 2>/dev/null |
			grep -o 'round_end=[0-9.]*' | head -n 1 | cut -d= -f2)
		[ -n "$e" ] && { echo "${e%.*}"; return 0; }
	done
	return 1
}
four_running() { [ "$(squeue -h -t R -o %i | wc -l)" -eq 4 ]; }
check "four jobs run in the first round" wait_for 40 four_running
e1=$(round_end)
check "tidalctl explain gives the round's end (${e1:-none})" test -n "$e1"
waiting=$(squeue -h -t PD -o %i | head -n 1)
explained=$("$TIDALCTL" -o explain "$waiting" 2>/dev/null)
say "job $waiting: $(grep -o 'Reason=.*' <<<"$explained" | head -n 1)"
check "a waiting job's Reason names Shockwave's plan: $(job_reason "$waiting")" \
	reason_has "$waiting" "Shockwave's plan"
check "tidalctl explain shows its epochs: $(grep -o 'epoch=[0-9]* epochs=[0-9]*' <<<"$explained" | head -n 1)" \
	grep -q 'epoch=0 .*epochs=10' <<<"$explained"

# Two more, a round later.
sleep 10
for i in 7 8; do
	jobs+=("$(submit -N1 --gpus-per-node=8 -t 1 -J "sw$i" --wrap 'sleep 20')")
done

in_round2() { [ "$(round_end)" != "$e1" ] && four_running; }
check "the next round runs four jobs" wait_for $((ROUND + 20)) in_round2
e2=$(round_end)
check "its end is a round after the last (${e2:-?} - $e1)" \
	[ "$((${e2:-0} - e1))" -eq "$ROUND" ]

most=0
all_done() {
	local n
	n=$(squeue -h -t R -o %i | wc -l)
	[ "$n" -gt "$most" ] && most=$n
	[ -z "$(squeue -h -o %i)" ]
}
check "all eight jobs complete within six rounds" wait_for $((6 * ROUND)) all_done
check "at most four ran at once (saw $most)" [ "$most" -le 4 ]
for j in "${jobs[@]}"; do
	state=$(sacct -n -X -j "$j" -o State 2>/dev/null | head -n 1 | tr -d ' ')
	[ -n "$state" ] || state=$(scontrol show job "$j" 2>/dev/null | grep -o 'JobState=[A-Z]*' | cut -d= -f2)
	check "job $j completed (${state:-gone})" [ "${state:-COMPLETED}" = COMPLETED ]
done
ends=$(grep -o 'started JobId=[0-9]*' "$log" | wc -l)
check "each job started once ($ends starts for ${#jobs[@]} jobs)" [ "$ends" -eq "${#jobs[@]}" ]
check "no solve ran out of its limit" \
	eval "! grep -q 'not solved within' '$log'"
grep -E "started JobId|requeued JobId" "$log" | sed 's/^/   /'
finish
