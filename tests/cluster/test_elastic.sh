#!/bin/bash
# test_elastic.sh - elastic resizes in a live slurmctld (Policy=elastic-edf).
#
#   R  16 GPUs, rigid          runs
#   E  --elastic-gpus=8-32     starts at the 16 left (its request was 8)
#   R ends                     E grows to 32: USR1 to its batch step
#                              (checkpoint), requeue, restart on 4 nodes
#   D  16 GPUs, --deadline     E shrinks to 16, D runs beside it
#   X  --deadline it cannot meet: cancelled with a TidalReject reason
#
# E keeps its job id throughout and is never anything but RUNNING or
# PENDING: a resize never loses the job.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=USR1
CheckpointTimeout=3
RejectAction=cancel"

log="$T/out/elastic.log"
elastic_job=$(elastic_sleeper "$log")

r=$(submit -N2 --gpus-per-node=8 --wrap 'sleep 600')
check "R ($r, 16 GPUs) starts" wait_state 30 "$r" RUNNING
e=$(submit --elastic-gpus=8-32 --gpus=8 --wrap "$elastic_job")
check "E ($e, elastic 8-32) starts at the 16 GPUs left" wait_for 40 has_gpus "$e" 16
# its script must have set the USR1 trap before a resize signals it
check "E's script runs on 2 nodes" wait_for 30 grep -q "start nodes=2" "$log"
show_queue
scancel "$r"
check "E grows to 32 once R ends" wait_for 90 has_gpus "$e" 32
check "E got the checkpoint signal before its requeue" grep -q checkpoint "$log"
check "E runs on 4 nodes now" wait_for 10 grep -q "start nodes=4" "$log"
show_queue
d=$(submit -N2 --gpus-per-node=8 --deadline=now+2hours -t 30 --wrap 'sleep 600')
check "D ($d, 16 GPUs, deadline) starts" wait_state 90 "$d" RUNNING
check "E shrinks to 16 beside D" wait_for 60 has_gpus "$e" 16
# running in squeue comes before the batch script's first line
wait_for 30 eval '[ "$(grep -c "^start" "$log")" -ge 3 ]'
check "E started three times under one id (16, 32, 16 GPUs)" \
	test "$(grep -c '^start' "$log")" -eq 3
check "E saw two checkpoint signals" test "$(grep -c checkpoint "$log")" -eq 2
check "tidalctl explains E's size" \
	eval "$TIDALCTL show job $e | grep -q 'elastic 8-32'"
show_queue
x=$(submit -N1 --gpus-per-node=8 -t 120 --time-min=5 --deadline=now+10minutes --wrap 'sleep 600')
xstate() { scontrol -o show job "$x" 2>/dev/null; }
check "X ($x, 2 h of work, 10 min to its deadline) is cancelled" \
	wait_for 30 eval "xstate | grep -q 'JobState=CANCELLED'"
check "X's Reason says why" eval "xstate | grep -q 'Reason=TidalReject:.elastic-edf.*infeasible'" ||
	xstate
finish
