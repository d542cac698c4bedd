#!/bin/bash
# test_preemptive.sh - EDF and Tiresias choices in a live slurmctld, with
# the policy switched by rewriting tidal.conf and `scontrol reconfigure`.
#
# EDF:      F (32 GPUs, no deadline) runs; D (8 GPUs, --deadline) arrives:
#           F is requeued, D runs, F waits with a TidalHold reason;
#           F's AdminComment counts the preemption.
# Tiresias: A (32 GPUs) runs past the first queue threshold (40 GPU*s);
#           B (8 GPUs) arrives in queue 0: A is preempted, B runs although
#           it came later.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=edf
CycleInterval=1"

f=$(submit -N4 --gpus-per-node=8 --wrap 'sleep 300')
check "EDF: F ($f, 32 GPUs, no deadline) starts" wait_state 30 "$f" RUNNING
d=$(submit -N1 --gpus-per-node=8 --deadline=now+2hours -t 30 --wrap 'sleep 300')
check "EDF: D ($d, deadline) starts" wait_state 40 "$d" RUNNING
check "EDF: F is requeued and waits" wait_state 30 "$f" PENDING
check "EDF: F's Reason comes from Tidal" \
	wait_for 20 reason_has "$f" "^Tidal.*edf: no deadline"
check "EDF: F's AdminComment counts the preemption (accounting)" \
	eval "scontrol show job $f | grep -q 'AdminComment=Tidal policy=edf gpus=32 resizes=0 preempts=1 '"
show_queue
scancel "$f" "$d"
wait_for 20 no_jobs_active

set_tidal_conf "Policy=tiresias
Tiresias.Thresholds=40
CycleInterval=1"
check "reconfigure: tiresias is in force" \
	wait_for 10 grep -q "policy tiresias" "$T/log/slurmctld.log"
a=$(submit -N4 --gpus-per-node=8 --wrap 'sleep 300')
check "Tiresias: A ($a, 32 GPUs) starts" wait_state 30 "$a" RUNNING
sleep 3 # A attains 32 GPU*s per second: past the 40 GPU*s threshold
b=$(submit -N1 --gpus-per-node=8 --wrap 'sleep 300')
check "Tiresias: B ($b, queue 0) starts before A" wait_state 40 "$b" RUNNING
check "Tiresias: A (queue 1) was preempted" wait_state 30 "$a" PENDING
check "Tiresias: A's Reason names its queue" \
	wait_for 20 reason_has "$a" "tiresias: queue 1"
show_queue
finish
