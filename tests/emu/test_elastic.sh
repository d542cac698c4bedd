#!/bin/bash
# test_elastic.sh - the resize machine (resize.c) over the emulator: grow
# into freed GPUs, shrink for a deadline job, reject an infeasible one.
. "$(dirname "$0")/lib.sh"
emu elastic.jobs
expect 1 '^job 2 RUNNING gpus=16 nodes=n3,n4 ' "elastic job starts at the 16 GPUs left"
expect 2 '^job 2 RUNNING gpus=16 .*signals=1 ' "job 1 ends: elastic job gets the checkpoint signal"
expect 6 '^job 2 (PENDING|RUNNING) ' "after the timeout it is requeued, never lost"
expect 8 '^job 2 RUNNING gpus=32 nodes=n1,n2,n3,n4 ' "and restarts at 32 GPUs"
expect 8 '^job 2 RUNNING .* acct=Tidal policy=elastic-edf gpus=32 resizes=1 preempts=0 reason=' \
	"its AdminComment: the policy, 32 GPUs, one resize"
expect 14 '^job 3 RUNNING gpus=16 ' "deadline job starts"
expect 14 '^job 2 RUNNING gpus=16 .*signals=2 ' "elastic job shrank to 16 for it"
expect 15 '^job 4 CANCELLED .*TidalReject: elastic-edf.*infeasible' "infeasible deadline cancelled with the reason"
expect 15 '^job 4 CANCELLED .* acct=Tidal policy=elastic-edf gpus=0 resizes=0 preempts=0 rejected=elastic-edf: .*infeasible' \
	"its AdminComment carries the rejection"

emu calloff.jobs
expect 2 '^job 2 RUNNING gpus=16 .*signals=1 requeues=0 ' "growth decided: checkpoint signal sent"
expect 3 '^job 3 RUNNING gpus=16 ' "a rigid job takes the idle GPUs first"
expect 9 '^job 2 RUNNING gpus=16 .*signals=1 requeues=0 ' "the resize is called off: never requeued"
finish
