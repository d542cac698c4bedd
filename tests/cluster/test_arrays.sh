#!/bin/bash
# test_arrays.sh - job arrays under sched/tidal, as under Slurm's own
# schedulers: the pending array record is split into tasks that the policy
# sees as jobs, every task runs once, %N caps the tasks running at once,
# and a dependency on one task waits for that task.
#
#   fifo         --array=0-5 (2 GPUs each)    all 6 tasks complete
#                --array=0-5%2                never more than 2 running,
#                                             Reason=JobArrayTaskLimit
#                -d afterok:ARRAY_3           runs once task 3 is done
#                --array=0-99, 32 GPUs each   1 runs, 64 wait as jobs of
#                                             their own, the record says why
#                20 of them released at once  1,280 tasks split in one cycle;
#                                             slurmctld stays up
#   tiresias,    --array=0-3                  all 4 tasks complete
#   elastic-edf
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"

# Tasks of array $1 in state $2 (scontrol keeps ended ones for MinJobAge).
tasks_in() {
	scontrol -o show job "$1" 2>/dev/null | grep -c "JobState=$2 "
}
all_done() { [ "$(tasks_in "$1" COMPLETED)" -eq "$2" ]; }
running_now() { squeue -h -r -j "$1" -t R -o %i 2>/dev/null | wc -l; }

a=$(submit --array=0-5 --gpus=2 -t 1 --wrap 'sleep 2')
check "array $a: all 6 tasks run and complete" wait_for 60 all_done "$a" 6
check "array $a: no task ran twice" \
	test "$(scontrol -o show job "$a" | grep -c "ArrayJobId=$a ")" -eq 6
scontrol -o show job "$a" | grep -o 'JobId=[0-9]* ArrayJobId=[0-9]* ArrayTaskId=[0-9]*\|JobState=[A-Z]*' | paste - - | head -8

b=$(submit --array=0-5%2 --gpus=1 -t 1 --wrap 'sleep 4')
most=0 limit_seen=0
for _ in $(seq 120); do
	r=$(running_now "$b")
	[ "$r" -gt "$most" ] && most=$r
	squeue -h -j "$b" -t PD -o %r 2>/dev/null | grep -q JobArrayTaskLimit &&
		limit_seen=1
	all_done "$b" 6 && break
	sleep 0.5
done
check "array $b (%2): all 6 tasks complete" all_done "$b" 6
check "array $b (%2): at most 2 tasks ran at once (saw $most)" test "$most" -le 2
check "array $b (%2): 2 tasks ran at once" test "$most" -eq 2
check "array $b (%2): pending tasks said JobArrayTaskLimit" test "$limit_seen" = 1

c=$(submit --array=0-5 --gpus=1 -t 1 --wrap 'sleep 3')
d=$(submit -d "afterok:${c}_3" --gpus=1 -t 1 --wrap 'true')
check "job $d waits on task ${c}_3" \
	wait_for 20 reason_has "$d" Dependency
job_done() { scontrol -o show job "$1" 2>/dev/null | grep -q 'JobState=COMPLETED '; }
check "job $d runs once ${c}_3 is done" wait_for 60 job_done "$d"
field() { scontrol -o show job "$1" | grep -o " $2=[^ ]*" | head -1 | cut -d= -f2; }
check "job $d started no earlier than ${c}_3 ended" \
	test "$(date -d "$(field "$d" StartTime)" +%s)" -ge \
	"$(date -d "$(field "${c}_3" EndTime)" +%s)"
check "array $c: all 6 tasks complete" wait_for 30 all_done "$c" 6

# A large array: 4 tasks fill the cluster, 64 more wait as jobs of their
# own, and the rest stay in the array's record with a Reason saying so.
f=$(submit --array=0-99 --gpus=32 -t 1 --wrap 'sleep 300')
# (squeue folds pending tasks into ID_[FIRST-LAST]; scontrol shows the
# array's record with ArrayTaskId=FIRST-LAST and each task on its own)
split_pending() {
	scontrol -o show job "$f" | grep 'JobState=PENDING ' |
		grep -c 'ArrayTaskId=[0-9]* '
}
one_runs() { [ "$(running_now "$f")" -eq 1 ]; }
window_full() { [ "$(split_pending)" -eq 64 ]; }
check "array $f: one task runs" wait_for 20 one_runs
check "array $f: 64 tasks wait as jobs of their own" wait_for 10 window_full
say "array $f: $(split_pending) tasks pending as jobs of their own"
check "array $f: the array's record says why the rest wait" \
	reason_has "$f" TidalQueue
squeue -h -j "$f" -o '%i %T %r' | cut -c1-100 | head -3
scancel "$f"

# 20 such arrays eligible in one cycle: 1,280 tasks split out in one walk
# (bench/load.sh's burst crashed slurmctld this way: the walk outgrew the
# table the snapshot had sized before it).
ids=
for _ in $(seq 20); do
	ids+="${ids:+,}$(submit -H --array=0-99 --gpus=32 -t 1 --wrap 'sleep 300')"
done
scontrol release "$ids"
all_split() {
	[ "$(scontrol -o show job | grep 'JobState=PENDING ' |
		grep -c 'ArrayTaskId=[0-9]* ')" -ge $((20 * 64 - 1)) ]
}
check "20 arrays released at once: 64 tasks of each split out" wait_for 30 all_split
sleep 3
check "slurmctld is up after splitting them" scontrol ping
check "one of their tasks runs" wait_for 20 eval '[ "$(squeue -h -t R -o %i | wc -l)" -eq 1 ]'
IFS=, read -ra big <<<"$ids"
scancel "${big[@]}"
wait_for 60 no_jobs_active

for policy in tiresias elastic-edf; do
	set_tidal_conf "Policy=$policy
CycleInterval=1"
	e=$(submit --array=0-3 --gpus=4 -t 1 --wrap 'sleep 2')
	check "Policy=$policy: array $e's 4 tasks complete" \
		wait_for 60 all_done "$e" 4
done
show_queue
finish
