#!/bin/bash
# test_binding.sh - GPU jobs with Slurm's binding and shape options start
# under sched/tidal as under Slurm's own schedulers.  The policy plans
# GPUs per node; where Slurm's select plugin will not take the planned
# nodes (tasks spread over -N nodes, sockets, CPUs per GPU), Slurm chooses
# the nodes, at once, instead of the start failing cycle after cycle.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"

while read -r opts; do
	[ -n "$opts" ] || continue
	# shellcheck disable=SC2086 # word splitting of the options is meant
	out=$(timeout 60 srun -D "$T/out" $opts -t 1 hostname </dev/null 2>&1)
	rc=$?
	check "srun $opts starts and runs (rc $rc)" \
		test "$rc" -eq 0 -a "$(grep -cx "$(hostname)" <<<"$out")" -ge 1
done <<'OPTS'
--gpus=1 --cpus-per-gpu=2
--gpus-per-task=1 -n3 --nodes=3
--gpus=3 -N3
--gpus-per-socket=1 --sockets-per-node=1
--gpus=2 --gpu-bind=closest
--gpus-per-node=2 --mem-per-gpu=100
--gpus=4 --ntasks-per-gpu=1
--gpus-per-node=8 -N2 --ntasks-per-node=2
OPTS
check "no start failed" \
	test "$(grep -c 'sched/tidal: .*start.* failed' "$T/log/slurmctld.log")" -eq 0
grep 'sched/tidal: .*start.* failed' "$T/log/slurmctld.log" | head -5
finish
