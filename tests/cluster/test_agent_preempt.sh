#!/bin/bash
# test_agent_preempt.sh - a preemption that loses no work: a job under
# tidal-launch is checkpointed through its node's tidald before it is
# requeued (n1 alone, its 2 fake GPUs: n2..n4 drained; Policy=tiresias
# with a 10 GPU*s first queue):
#
#   A  tidal-launch + tidal-train, 2 ranks, checkpointing every 200 steps;
#      runs past the first queue
#   B  2 GPUs, queue 0: A must go; the plugin asks n1's tidald for
#      checkpoint_stop and requeues A on the ack (CheckpointTimeout=120,
#      so only the ack can make it quick), its request unchanged
#   B runs; once B is cancelled, A resumes from exactly that checkpoint
#   S  a plain batch script (no launcher) preempted the same way is
#      requeued at once: nothing is asked of tidald for it
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=2
skip_unless_node_side
cluster_up "Policy=tiresias
Tiresias.Thresholds=10
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120"
check "4 agents up" start_agents
scontrol update NodeName=n[2-4] State=DRAIN Reason=test_agent_preempt
log=$T/log/slurmctld.log

train_script "$T/out/train.sh" --iters 10000000 --ckpt-every 200 --log-every 50
a=$(submit -N1 --gpus=2 "$T/out/train.sh")
check "A ($a, tidal-launch, 2 GPUs) runs" wait_state 30 "$a" RUNNING
ckpt_done() { ls "$T/ckpt/n1/$a/"*.done >/dev/null 2>&1; }
check "A trains and checkpoints" wait_for 60 ckpt_done
reported() { "$TIDALCTL" show job "$a" | grep -q "Training=step"; }
check "n1's tidald reports A's launcher to the plugin" wait_for 10 reported
req_before=$(scontrol show job "$a" | grep -o 'TresPerJob=[^ ]*\|TresPerNode=[^ ]*' | sort)

b=$(submit -N1 --gpus=2 --wrap 'sleep 600')
check "B ($b, queue 0) starts" wait_state 120 "$b" RUNNING
check "A was preempted: pending" is_state "$a" PENDING
check "the plugin asked n1's tidald for checkpoint_stop" \
	grep -q "preempt JobId=$a: checkpoint_stop asked of n1's tidald" "$log"
step=$(acked_step "$a")
check "A was requeued on the ack (step ${step:-none}), not on the timeout" \
	test -n "$step" -a -z "$(grep "JobId=$a: no checkpoint ack" "$log")"
check "... and the log says it was a preemption" \
	grep -q "preemption of JobId=$a: requeued" "$log"
# (tidalctl shows A again once its requeue has completed)
story_told() {
	"$TIDALCTL" show job "$a" 2>/dev/null | grep -q \
		"ResizeStory=.*preemption decided on n1 (tiresias: .*checkpoint_stop delivered to n1.*requeued (preempted)"
}
check "A's story tells the preemption" wait_for 20 story_told
"$TIDALCTL" show job "$a" | grep -o 'ResizeStory=.*' | sed 's/^/   /'
req_after=$(scontrol show job "$a" | grep -o 'TresPerJob=[^ ]*\|TresPerNode=[^ ]*' | sort)
check "A's GPU request is as it was ($req_after)" [ "$req_after" = "$req_before" ]

scancel "$b"
check "B cancelled: A runs again" wait_state 60 "$a" RUNNING
resumed() { grep -q "resuming from step $step " "$T/out/$a.out"; }
check "A resumed from exactly that checkpoint (step ${step:-none})" \
	wait_for 60 resumed

s=$(submit -N1 --gpus=2 --wrap 'sleep 600')
scancel "$a"
check "S ($s, a plain script) runs" wait_state 60 "$s" RUNNING
sleep 8 # past the 10 GPU*s of queue 0
b2=$(submit -N1 --gpus=2 --wrap 'sleep 600')
check "B2 ($b2) preempts S" wait_state 60 "$b2" RUNNING
check "S was requeued at once, with nothing asked of tidald" \
	eval 'grep -q "requeued JobId=$s" "$log" && ! grep -q "JobId=$s: checkpoint_stop" "$log"'
finish
