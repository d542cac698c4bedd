#!/bin/bash
# test_elastic_split.sh - an elastic job asked per node is given a GPU count
# that does not divide over nodes (Policy=elastic-edf).
#
#   4 nodes x 4 GPUs.  R 8 GPUs (n1, n2), R1 1 GPU: 7 GPUs are left, on
#   n3 and n4
#   E   -N2 --gpus-per-node=1 --elastic-gpus=2-8: the policy gives it the
#       7 free GPUs over 2 nodes; Slurm cannot ask 7 per-node GPUs of 2
#       nodes, so the plugin turns E's request into 7 GPUs per job and
#       starts it (it used to stay pending, its request refused, until 8
#       were free)
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=USR1
CheckpointTimeout=3
RejectAction=cancel"

r=$(submit -N2 --gpus-per-node=4 --wrap 'sleep 600')
check "R ($r, 8 GPUs) starts" wait_state 30 "$r" RUNNING
r1=$(submit --gpus=1 --wrap 'sleep 600')
check "R1 ($r1, 1 GPU) starts" wait_state 30 "$r1" RUNNING
e=$(submit -N2 --gpus-per-node=1 --elastic-gpus=2-8 --wrap 'sleep 600')
check "E ($e, elastic 2-8 asked per node) starts on the 7 GPUs left" \
	wait_for 30 has_gpus "$e" 7
show_queue
check "E now asks 7 GPUs per job" \
	eval "scontrol -o show job $e | grep -Eq 'TresPerJob=gres[:/]gpu:7'"
check "slurmctld did not refuse E's request" \
	eval "! grep -q 'JobId=$e: cannot ask for' '$T/log/slurmctld.log'"
scancel "$r" "$r1" "$e"
finish
