#!/bin/bash
# test_restart.sh - the state file (state.c) carries attained service and
# requeues across a restart; a torn file is refused, not half-read; a
# requeue that a restarted slurmctld lost is done again.
. "$(dirname "$0")/lib.sh"
emu restart.jobs
expect 4 '^job 1 PENDING .*tiresias: queue 1' "job 2 preempts job 1 (queue 1)"
expect 4 '^job 2 RUNNING gpus=1 ' "job 2 runs"
expect 6 '^job 1 PENDING .*tiresias: queue 1' "after a restart job 1 is still in queue 1"
expect 6 '^job 2 RUNNING gpus=1 ' "and job 2 keeps running"
if echo "$OUT" | grep -q "no completion marker"; then pass "a torn state file is refused with a message"; else fail "torn state file not reported"; fi
if echo "$OUT" | grep -q "using the previous good state .*/tidal_state.prev"; then pass "... and the previous good file is used, with a message"; else fail "previous state file not used"; fi
expect 8 '^job 1 PENDING .*tiresias: queue 1' "from the previous file job 1 is still in queue 1"
expect 8 '^job 2 RUNNING gpus=1 ' "and job 2 keeps running"
if echo "$OUT" | grep -q "no good state in .*tidal_state or .*tidal_state.prev"; then pass "both files torn: refused with a message"; else fail "both torn files not reported"; fi
expect 11 '^job 1 RUNNING gpus=32 ' "without its state Tidal forgets job 1's service: it runs again"

emu resize_restart.jobs
expect 2 '^job 2 RUNNING gpus=16 .*signals=1 requeues=0 ' "resize under way: signal sent"
expect 10 '^job 2 RUNNING gpus=32 .*signals=1 requeues=1 ' "after a restart the resize goes on: one requeue, 32 GPUs"

emu resize_lost.jobs
expect 5 '^job 2 PENDING .*requeues=1 ' "resize: job 2 requeued"
expect 6 '^job 2 PENDING .*requeues=1 ' "slurmctld restarted from state before that requeue: the run it lists is requeued again"
expect 14 '^job 2 RUNNING gpus=32 .*signals=1 requeues=1 ' "and the resize completes at 32 GPUs, with no second checkpoint signal"
finish
