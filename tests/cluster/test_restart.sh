#!/bin/bash
# test_restart.sh - kill -9 slurmctld mid-run and start it again: no job is
# lost or started twice, and Tidal's own state (attained service, arrival
# order) comes back from StateSaveLocation.
#
# Tiresias, Tiresias.Thresholds=100 GPU*s:
#   A 32 GPUs runs ~4 s (128 GPU*s: queue 1), then B (1 GPU) and C (2 GPUs)
#   arrive in queue 0: A is preempted, B and C run.  A cannot run beside
#   them (32 GPUs) and waits in queue 1.
#   kill -9 slurmctld; restart.  Had Tidal forgotten A's attained service,
#   A would be back in queue 0, first in arrival order, and would preempt
#   B and C.  It must not: B and C keep running with their start times, each
#   job script has started exactly as often as before, A waits in queue 1.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=tiresias
Tiresias.Thresholds=100
CycleInterval=1"

job='echo "start $(date +%s)" >>'"$T"'/out/runs.$SLURM_JOB_ID; sleep 600'
runs() { cat "$T/out/runs.$1" 2>/dev/null | wc -l; }
start_of() { squeue -h -j "$1" -o %S 2>/dev/null; }

a=$(submit -N4 --gpus-per-node=8 --wrap "$job")
check "A ($a, 32 GPUs) starts" wait_state 30 "$a" RUNNING
sleep 5 # 32 GPUs x 5 s > 100 GPU*s: A is in queue 1
b=$(submit -N1 --gpus=1 --wrap "$job")
c=$(submit -N1 --gpus=2 --wrap "$job")
check "B ($b) starts" wait_state 40 "$b" RUNNING
check "C ($c) starts" wait_state 40 "$c" RUNNING
check "A was preempted and waits in queue 1" \
	wait_for 20 reason_has "$a" "tiresias: queue 1"
check "the state file is written with its magic and end marker" \
	wait_for 10 eval "head -1 $T/state/tidal_state | grep -qx 'TIDAL-STATE 1' && tail -1 $T/state/tidal_state | grep -q '^end '"
show_queue
sb=$(start_of "$b"); sc=$(start_of "$c")
# RUNNING in squeue comes before the batch script's first line
wait_for 20 eval '[ "$(runs $b)" -ge 1 ] && [ "$(runs $c)" -ge 1 ]'
ra=$(runs "$a"); rb=$(runs "$b"); rc=$(runs "$c")
# No wait for slurmctld's own state save (within 5 s of a change): the
# plugin saves the job state in the cycle that started B and C, so a
# kill -9 as soon as their scripts run must not forget the starts.

restart_slurmctld_hard || { say "slurmctld did not restart"; dump_logs; exit 1; }
check "slurmctld answers again" wait_for 60 scontrol ping
check "the plugin restored its state" \
	wait_for 30 grep -q "state restored from $T/state/tidal_state" "$T/log/slurmctld.log"
sleep 8 # several cycles of the restarted plugin
show_queue
check "no job lost: A, B and C are all still there" \
	test "$(squeue -h -j "$a,$b,$c" -o %i | wc -l)" -eq 3
check "B still running, same start ($sb)" test "$(start_of "$b")" = "$sb" -a "$(job_state "$b")" = RUNNING
check "C still running, same start ($sc)" test "$(start_of "$c")" = "$sc" -a "$(job_state "$c")" = RUNNING
check "A still pending in queue 1" reason_has "$a" "tiresias: queue 1"
check "no job script started twice (A $ra, B $rb, C $rc)" \
	test "$(runs "$a")$(runs "$b")$(runs "$c")" = "$ra$rb$rc"
check "tidalctl still counts A's attained service" \
	eval "$TIDALCTL -o show job $a | grep -Eq 'AttainedGPUSec=(1[0-9]{2}|[2-9][0-9]{2})'"
finish
