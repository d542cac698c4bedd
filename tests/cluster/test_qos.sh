#!/bin/bash
# test_qos.sh - QOS and association limits keep jobs from starting under
# sched/tidal exactly as under sched/backfill, with Slurm's Reasons, and
# a job over a limit holds no GPUs that the jobs behind it could use.
#
# One cluster with slurmdbd (ACCOUNTING=1) per scheduler: backfill, the
# reference, then sched/tidal under fifo, tiresias and elastic-edf.  Each
# gets the same QOS and accounts (sacctmgr) and the same jobs, in order:
#
#   a  -q gpu8 (MaxTRESPerUser=gres/gpu=8)  8 GPUs   runs
#   b  -q gpu8                             8 GPUs   QOSMaxGRESPerUser
#   c  (normal QOS, after b)               4 GPUs   runs: b blocks nothing
#   d  -q job1 (MaxJobsPerUser=1)          1 GPU    runs
#   e  -q job1                             1 GPU    QOSMaxJobsPerUserLimit
#   f  -q pj4 (MaxTRESPerJob=gres/gpu=4)   8 GPUs   QOSMaxGRESPerJob
#   g  -q grp8 (GrpTRES=gres/gpu=8)        4 GPUs   runs
#   h  -q grp8                             4 GPUs   runs
#   i  -q grp8                             1 GPU    QOSGrpGRES
#   j  -A small (GrpTRES=gres/gpu=2)       2 GPUs   runs
#   k  -A small                            1 GPU    AssocGrpGRES
#   l  -q wall (MaxWall=10)  -t 20                  QOSMaxWallDurationPerJobLimit
#   m  -q el6 (MaxTRESPerJob=gres/gpu=6)   elastic 2-16, 9 GPUs free: runs,
#                                          under elastic-edf at 2 to 6 GPUs
#
# then a is cancelled and b starts.  The states and Reasons of every job
# under each policy must be backfill's, and m must still run at 6 GPUs
# or fewer: an elastic policy sizes jobs within their limits (a start
# or resize past one would leave the job pending for ever).
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
ACCOUNTING=1

setup() {
	sacctmgr -i add qos gpu8 MaxTRESPerUser=gres/gpu=8 &&
		sacctmgr -i add qos job1 MaxJobsPerUser=1 &&
		sacctmgr -i add qos pj4 MaxTRESPerJob=gres/gpu=4 &&
		sacctmgr -i add qos grp8 GrpTRES=gres/gpu=8 &&
		sacctmgr -i add qos wall MaxWall=10 &&
		sacctmgr -i add qos el6 MaxTRESPerJob=gres/gpu=6 &&
		sacctmgr -i modify user root set qos+=gpu8,job1,pj4,grp8,wall,el6 &&
		sacctmgr -i add account small GrpTRES=gres/gpu=2 &&
		sacctmgr -i add user root account=small
} >/dev/null

# run SCHED: the jobs under SCHED on a cluster of their own; each job's
# "STATE REASON" in seen[SCHED,NAME]
declare -A seen
within() { # within LO HI N...: every N is a number in [LO, HI]
	local lo=$1 hi=$2 n; shift 2
	[ $# -gt 0 ] || return 1
	for n; do [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge "$lo" ] && [ "$n" -le "$hi" ] || return 1; done
}
run() {
	local s=$1 x id
	if [ "$s" = backfill ]; then
		SCHED_TYPE=sched/backfill SCHED_PARAMS= cluster_up "Policy=fifo"
	else
		SCHED_TYPE=sched/tidal cluster_up "Policy=$s
CycleInterval=1
ResizeSignal=none"
	fi
	setup || { fail "$s: sacctmgr could not set up the QOS and accounts"; cluster_down; return; }
	declare -A id_of
	for x in "a -q gpu8 --gpus=8" "b -q gpu8 --gpus=8" "c --gpus=4" \
		"d -q job1 --gpus=1" "e -q job1 --gpus=1" "f -q pj4 --gpus=8" \
		"g -q grp8 --gpus=4" "h -q grp8 --gpus=4" "i -q grp8 --gpus=1" \
		"j -A small --gpus=2" "k -A small --gpus=1" "l -q wall --gpus=1 -t 20" \
		"m -q el6 --elastic-gpus=2-16 --gpus=2"; do
		# shellcheck disable=SC2086 # the options split on purpose
		id=$(submit -J "${x%% *}" ${x#* } --wrap 'sleep 600')
		id_of[${x%% *}]=$id
		sleep 0.3 # submitted in this order, each seen by a cycle
	done
	settled() { [ -z "$(squeue -h -t PD -o '%r' | grep -E '^(None|Priority|Resources)$|TidalQueue|TidalHold')" ]; }
	wait_for 20 settled
	sleep 3
	for x in a b c d e f g h i j k l m; do
		seen[$s,$x]="$(job_state "${id_of[$x]}") $(job_reason "${id_of[$x]}")"
	done
	[ "$s" = backfill ] || seen[$s,m_gpus]=$(gpus_of "${id_of[m]}")
	scancel "${id_of[a]}"
	if wait_state 20 "${id_of[b]}" RUNNING; then seen[$s,after]=RUNNING
	else seen[$s,after]="$(job_state "${id_of[b]}") $(job_reason "${id_of[b]}")"; fi
	sleep 3 # a cycle or more with 8 more GPUs free
	seen[$s,m_after]="$(job_state "${id_of[m]}") $(job_reason "${id_of[m]}")"
	[ "$s" = backfill ] || seen[$s,m_gpus]+=" $(gpus_of "${id_of[m]}")"
	[ "$s" = backfill ] || check "$s: a over MaxTRESPerUser holds no GPUs: c, a later 4-GPU job, runs" \
		eval '[ "${seen[$s,c]}" = "RUNNING None" ]'
	cluster_down
}

scheds="backfill fifo tiresias elastic-edf"
for s in $scheds; do run "$s"; done

printf '\n%-6s' job; for s in $scheds; do printf ' %-32s' "$s"; done; echo
for x in a b c d e f g h i j k l m after m_after m_gpus; do
	printf '%-6s' "$x"
	for s in $scheds; do printf ' %-32s' "${seen[$s,$x]:-?}"; done
	echo
done
echo
for s in $scheds; do
	[ "$s" = backfill ] && continue
	for x in a b c d e f g h i j k l m m_after; do
		check "$s: job $x ${seen[$s,$x]:-?}, as under backfill (${seen[backfill,$x]:-?})" \
			eval '[ "${seen[$s,$x]}" = "${seen[backfill,$x]}" ] && [ -n "${seen[backfill,$x]}" ]'
	done
	check "$s: b starts once a is cancelled, as under backfill (${seen[$s,after]:-?})" \
		eval '[ "${seen[$s,after]}" = RUNNING ] && [ "${seen[backfill,after]}" = RUNNING ]'
	# shellcheck disable=SC2086 # two numbers
	check "$s: m (elastic 2-16, MaxTRESPerJob=gres/gpu=6) runs at 2 to 6 GPUs before and after a ends: ${seen[$s,m_gpus]:-?}" \
		within 2 6 ${seen[$s,m_gpus]:-x}
done
finish
