#!/bin/bash
# test_partitions.sh - partition states and limits, and licences, keep jobs
# from starting under sched/tidal exactly as under Slurm's own schedulers,
# with Slurm's Reasons, and let them go once the partition or the licences
# take them again.
#
#   gpu DOWN                  a job waits, Reason=PartitionDown; UP: runs
#   gpu INACTIVE              a pending job waits, Reason=PartitionInactive
#   gpu MaxTime=10, job -t 20 waits, Reason=PartitionTimeLimit;
#                             MaxTime=30: runs
#   job -t 20 --time-min 5, MaxTime=10
#                             runs with TimeLimit=10, fitted as backfill does
#   -p spare,gpu, spare DOWN  runs in gpu
#   -p spare,gpu and -p gpu,spare, spare's PriorityTier higher
#                             both run in spare
#   -L fluent:1 while another job holds both fluent licences
#                             waits, Reason=Licenses; runs once they are back
#   --begin=now+30            waits, Reason=BeginTime; so does salloc with
#                             --deadline on a busy node (Slurm's test15.37)
#   -t 60, deadline in 10 min ends in DEADLINE, Reason=DeadLine
#   -t 60 --time-min 5, deadline in 30 min
#                             runs with its limit cut to 30 min
#   the same without GPUs under elastic-edf (it admits by deadline):
#                             limit cut too; -t 60, deadline in 10 min:
#                             DEADLINE, as under fifo
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
EXTRA_SLURM_CONF="Licenses=fluent:2
PartitionName=spare Nodes=n[1-4] MaxTime=INFINITE State=UP"
cluster_up "Policy=fifo
CycleInterval=1"

part() { scontrol update PartitionName="$1" "$2"; }
# Still pending with REASON after three cycles.
waits_with() {
	sleep 3
	is_state "$1" PENDING && reason_has "$1" "$2"
}

k=$(submit --gpus=1 -t 5 --begin=now+30 --wrap 'sleep 300')
check "job $k (--begin=now+30) waits, Reason=BeginTime: $(job_reason "$k")" \
	wait_for 10 waits_with "$k" BeginTime
# An interactive one with a deadline on a busy node (Slurm gives it
# Reason=Resources at submission), as Slurm's test15.37 does.
blk=$(submit -w n1 --exclusive -t 5 --wrap 'sleep 300')
wait_state 20 "$blk" RUNNING
salloc -J begin-salloc -w n1 --begin=now+30 --deadline=now+120 --time-min=1 \
	sleep 300 </dev/null >/dev/null 2>&1 &
sleep 2
l=$(squeue -h -n begin-salloc -o %i)
check "salloc job ${l:-?} (-w busy node, --begin=now+30, --deadline) waits, Reason=BeginTime: $(job_reason "$l")" \
	wait_for 10 waits_with "$l" BeginTime
scancel "$k" "$l" "$blk"
wait_for 20 no_jobs_active

part gpu State=DOWN
a=$(submit -p gpu --gpus=1 -t 5 --wrap 'sleep 300')
check "job $a in a DOWN partition waits, Reason=PartitionDown" \
	wait_for 10 waits_with "$a" PartitionDown
part gpu State=UP
check "job $a starts once the partition is UP" wait_state 20 "$a" RUNNING

b=$(submit -p gpu --gpus=1 -t 5 --begin=now+4 --wrap 'sleep 300')
part gpu State=INACTIVE
check "job $b in an INACTIVE partition waits, Reason=PartitionInactive" \
	wait_for 20 waits_with "$b" PartitionInactive
part gpu State=UP
check "job $b starts once the partition is UP" wait_state 20 "$b" RUNNING

part gpu MaxTime=10
c=$(submit -p gpu --gpus=1 -t 20 --wrap 'sleep 300')
check "job $c over the partition's MaxTime waits, Reason=PartitionTimeLimit" \
	wait_for 10 waits_with "$c" PartitionTimeLimit
part gpu MaxTime=30
check "job $c starts once MaxTime takes it" wait_state 20 "$c" RUNNING
part gpu MaxTime=10

# --time-min: held to its minimum, and started with its limit cut to
# MaxTime, as backfill fits it.
g=$(submit -p gpu --gpus=1 -t 20 --time-min 5 --wrap 'sleep 300')
check "job $g (-t 20 --time-min 5, MaxTime=10) starts" \
	wait_state 20 "$g" RUNNING
check "job $g's limit is fitted to MaxTime: $(scontrol -o show job "$g" | grep -o 'TimeLimit=[^ ]*')" \
	eval 'scontrol -o show job "$g" | grep -q "TimeLimit=00:10:00 "'
part gpu MaxTime=30

part spare State=DOWN
d=$(submit -p spare,gpu --gpus=1 -t 5 --wrap 'sleep 300')
check "job $d (-p spare,gpu, spare DOWN) runs" wait_state 20 "$d" RUNNING
check "job $d runs in gpu" \
	test "$(squeue -h -j "$d" -o %P)" = gpu
# Several partitions: the first by PriorityTier takes the job, wherever
# it stands in -p (Slurm's test5.10; 24.11 leaves part_ptr on the last
# one it tried at submission).
part spare State=UP
part spare PriorityTier=2
s1=$(submit -p spare,gpu --gpus=1 -t 5 --wrap 'sleep 300')
s2=$(submit -p gpu,spare --gpus=1 -t 5 --wrap 'sleep 300')
for s in "$s1" "$s2"; do
	check "job $s ($(scontrol -o show job "$s" | grep -o ' Partition=[^ ]*')) runs" \
		wait_state 20 "$s" RUNNING
	check "job $s runs in spare, the higher PriorityTier" \
		test "$(squeue -h -j "$s" -o %P)" = spare
done
scancel "$s1" "$s2"
part spare PriorityTier=1
e=$(submit -L fluent:2 --gpus=1 -t 5 --wrap 'sleep 300')
check "job $e holds both fluent licences" wait_state 20 "$e" RUNNING
f=$(submit -L fluent:1 --gpus=1 -t 5 --wrap 'sleep 300')
check "job $f waits for a licence, Reason=Licenses" \
	wait_for 10 waits_with "$f" Licenses
scancel "$e"
check "job $f starts once the licences are back" wait_state 20 "$f" RUNNING
# Slurm's deadline rule, under a policy that does not plan deadlines
# itself (fifo): a job whose limit cannot end by its --deadline ends in
# state DEADLINE; one with --time-min starts with its limit cut to end by
# the deadline.
# Slurm 24.11 refuses the first at submission itself ("Requested time
# limit is invalid"), before any scheduler sees it.
part gpu MaxTime=UNLIMITED
dead_line() {
	scontrol -o show job "$h" | grep -q 'JobState=DEADLINE .*Reason=DeadLine '
}
past_deadline() { # past_deadline LABEL SBATCH-ARGS...
	local label=$1
	shift
	h=$(submit "$@" --wrap 'sleep 300' 2>"$T/out/sbatch.err")
	case "$version" in
	22.05.*) check "$label: job $h ends in DEADLINE, Reason=DeadLine" \
		wait_for 10 dead_line ;;
	*) check "$label: Slurm $version refuses it at submission" \
		grep -q "Requested time limit is invalid" "$T/out/sbatch.err" ;;
	esac
}
version=$(slurmctld -V 2>/dev/null | awk '{print $2}')
past_deadline "-t 60, deadline in 10 min" --gpus=1 -t 60 \
	--deadline=now+10minutes
i=$(submit --gpus=1 -t 60 --time-min 5 --deadline=now+30minutes --wrap 'sleep 300')
check "job $i (-t 60 --time-min 5, deadline in 30 min) starts" \
	wait_state 20 "$i" RUNNING
cut_to_deadline() {
	scontrol -o show job "$i" | grep -qE 'TimeLimit=00:(29|30):00 '
}
check "job $i's limit is cut to end by its deadline: $(scontrol -o show job "$i" | grep -o 'TimeLimit=[^ ]*')" \
	cut_to_deadline
# Under a policy that admits jobs by their deadlines (elastic-edf), a job
# it does not plan (no GPUs, placed by Slurm) still starts with its limit
# cut to end by its deadline, as Slurm's test1.103 asks.
set_tidal_conf "Policy=elastic-edf
CycleInterval=1"
m=$(submit -t 120 --time-min 1 --deadline=now+1hour --wrap 'sleep 300')
check "elastic-edf: job $m (no GPUs, -t 120 --time-min 1, deadline in 1 h) starts" \
	wait_state 20 "$m" RUNNING
cut_to_hour() {
	scontrol -o show job "$m" | grep -qE 'TimeLimit=(00:59|01:00):00 '
}
check "elastic-edf: job $m's limit is cut to end by its deadline: $(scontrol -o show job "$m" | grep -o 'TimeLimit=[^ ]*')" \
	cut_to_hour
# and one it does not plan whose limit cannot end by its deadline ends in
# DEADLINE, as Slurm's test15.37 asks.
past_deadline "elastic-edf: no GPUs, -t 60, deadline in 10 min" -t 60 \
	--deadline=now+10minutes
show_queue
finish
