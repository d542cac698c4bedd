#!/bin/bash
# test_interactive.sh - srun and salloc start when their GPUs are free, not
# at the next cycle: a submission wakes sched/tidal's cycle.
#
#   CycleInterval=600   srun --gpus=1 hostname      done long before 600 s
#                       salloc --gpus=1 true        likewise
#
# srun still says "queued and waiting for resources" first: with
# SchedulerParameters=defer every allocation is answered pending, and
# only slurmctld's own immediate start (which would bypass the policy)
# avoids it.  The bound checked is the cycle the job would otherwise wait
# for, not a speed target.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=600"
# The first cycle ran when the plugin started; the next is 600 s away.
sleep 2

start=$(date +%s)
out=$(timeout 120 srun -D "$T/out" --gpus=1 -t 1 hostname 2>&1)
rc=$? took=$(( $(date +%s) - start ))
check "srun ran (rc $rc)" test "$rc" -eq 0
check "srun started without waiting for the 600 s cycle ($took s)" \
	test "$took" -lt 60
check "srun's job ran: $(tail -1 <<<"$out")" \
	grep -qx "$(hostname)" <<<"$out"

start=$(date +%s)
timeout 120 salloc -D "$T/out" --gpus=1 -t 1 true >"$T/out/salloc.log" 2>&1
rc=$? took=$(( $(date +%s) - start ))
check "salloc ran (rc $rc)" test "$rc" -eq 0
check "salloc got its allocation without waiting for the cycle ($took s)" \
	test "$took" -lt 60
finish
