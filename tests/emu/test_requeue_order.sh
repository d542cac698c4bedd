#!/bin/bash
# test_requeue_order.sh - a requeued job goes to the back of its Tiresias
# queue level (Job::seq, as the replay keeps it): it waits behind the jobs
# of its level that kept running, instead of preempting them in turn.
. "$(dirname "$0")/lib.sh"
emu requeue_order.jobs
expect 1 '^job 1 RUNNING gpus=2 nodes=n1 ' "job 1 starts on n1"
expect 1 '^job 2 RUNNING gpus=2 nodes=n2 ' "job 2 starts on n2"
expect 4 '^job 3 RUNNING gpus=2 nodes=n1 ' "job 3 (queue 0) takes n1"
expect 4 '^job 1 PENDING .*requeues=1 .*tiresias: queue 1' "job 1 is preempted for it and waits in queue 1"
expect 4 '^job 2 RUNNING gpus=2 nodes=n2 .*requeues=0 ' "job 2, ahead of the requeued job 1 in queue 1, keeps running"
finish
