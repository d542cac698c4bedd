#!/bin/bash
# test_ckpt_where.sh - checkpoint locations that cannot go stale, on a live
# cluster (4 nodes x 4 fake GPUs, Policy=fifo, tidald on every node):
#
#   C  tidal-launch + tidal-train on one node (call it H), checkpointing
#      every 10 steps (several checkpoints per heartbeat: the trainer
#      rotates each away long before the plugin hears of the next)
#   3x kill -9 of slurmctld while C trains, restarted from its state
#                         after each: H keeps pinned the step the plugin
#                         recorded (keep-<step>), however many checkpoints
#                         follow; another node's tidald fetches a complete
#                         checkpoint from H, at least as new as that step
#   C cancelled           a fetch on a third node gets exactly H's newest
#                         complete checkpoint, whatever the plugin last
#                         heard
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
skip_unless_node_side
skip_unless_python "the fetch client"
cluster_up "Policy=fifo
CycleInterval=1"

check "4 agents up" start_agents

train_script "$T/out/train.sh" --iters 100000000 --ckpt-every 10 --log-every 100
c=$(submit -N1 --gpus=1 "$T/out/train.sh")
check "C ($c) runs" wait_state 40 "$c" RUNNING
h=$(job_nodes "$c")
others=$(echo $NODES | tr ' ' '\n' | grep -vx "$h" | head -2)
a=$(sed -n 1p <<<"$others") b=$(sed -n 2p <<<"$others")
say "C runs on $h; $a and $b fetch from it"
dir=$T/ckpt/$h/$c
newest_done() { ls "$dir" 2>/dev/null | sed -n 's/^ckpt-0*\([0-9][0-9]*\)\.done$/\1/p' | sort -n | tail -1; }
recorded() { "$TIDALCTL" -o show job "$c" 2>/dev/null | grep -o 'Checkpoint=step [0-9]*' | awk '{print $2}'; }
has_record() { [ -n "$(recorded)" ]; }
check "C checkpoints on $h and the plugin records it" wait_for 60 has_record
pin_of() { ls "$dir" 2>/dev/null | sed -n 's/^keep-0*\([0-9][0-9]*\)$/\1/p' | tail -1; }
pinned() { [ -n "$(pin_of)" ]; }
check "$h's tidald pins the recorded checkpoint (keep-<step>)" wait_for 10 pinned
first_pin=$(pin_of)

log=$T/log/slurmctld.log
# sched/tidal saves a start at once (test_restart.sh shows a kill -9 right
# after one); this test is about checkpoint locations, so it kills only
# once C's start is plainly on disk: a job-state save at or after it.  (No
# later save need come: nothing changes while C runs.)
t_start=$(date -d "$(squeue -h -j "$c" -o %S)" +%s)
start_saved() { [ "$(stat -c %Y "$T/state/job_state")" -ge "$t_start" ]; }
check "slurmctld saved C's start" wait_for 30 start_saved
fetch_ok() { # fetch_ok NODE MIN_STEP: a complete copy from H, step >= MIN
	local reply step path
	reply=$(fetch_on "$1" "$c")
	step=$(sed -n 's/.*"step":\([0-9]*\).*/\1/p' <<<"$reply")
	path=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p' <<<"$reply")
	grep -q "\"ok\":true,.*\"from\":\"$h\"" <<<"$reply" && [ "${step:-0}" -ge "$2" ] &&
		[ -f "${path%.tck}.done" ] || { echo "   $reply"; return 1; }
	echo "   $1 fetched step $step (recorded $2) from $h"
}
for round in 1 2 3; do
	# The plugin saves its state every cycle: what it recorded before the
	# kill is what it knows after.
	sleep 2
	kill -9 "$(cat "$T/run/slurmctld.pid")"
	rec=$(awk -v j="$c" -v h="$h" '$1 == "ckpt" && $2 == j && $5 == h { print $3 }' "$T/state/tidal_state")
	# C goes on checkpointing (and rotating) while slurmctld is away.
	sleep 2
	start_slurmctld && wait_for 60 scontrol ping
	restored() { [ "$(grep -c "state restored from" "$log")" -ge "$round" ]; }
	wait_for 30 restored
	check "round $round: C is still RUNNING after the kill -9 of slurmctld" \
		wait_state 10 "$c" RUNNING || squeue -j "$c" 
	check "round $round: the saved record (step ${rec:-none}) is still on $h" \
		test -n "$rec" -a -f "$dir/ckpt-$(printf %012d "${rec:-0}").done"
	check "round $round: $a fetches a complete checkpoint from $h, at least step $rec" \
		fetch_ok "$a" "${rec:-1}"
	rm -rf "${T:?}/ckpt/$a/$c" # the next round copies anew
done
many=$(newest_done)
check "C wrote many checkpoints past the first pin (newest step $many, first pin ${first_pin:-none})" \
	test "${many:-0}" -gt $(( ${first_pin:-0} + 30 ))

scancel "$c"
wait_for 30 eval '[ -z "$(job_state "$c")" ]'
last=$(newest_done)
files=$(ls "$dir")
done_n=$(grep -c '\.done$' <<<"$files") keep_n=$(grep -c '^keep-' <<<"$files")
check "rotation kept the newest 3 and the pinned ones, no more ($done_n complete, $keep_n pinned)" \
	test "$done_n" -le $((3 + keep_n)) -a "$keep_n" -le 3
reply=$(fetch_on "$b" "$c"); echo "   $reply"
check "after C ends, $b gets $h's newest complete checkpoint (step $last)" \
	grep -q "\"ok\":true,.*\"step\":$last,.*\"from\":\"$h\"" <<<"$reply"
finish
