#!/bin/bash
# test_reservations.sh - advanced reservations keep jobs in and out of their
# nodes under sched/tidal as under Slurm's own schedulers.
#
#   r1: n1, now, root       3 whole-node jobs outside r1 run on n2..n4, a 4th
#                           waits: none ever runs on n1
#   --reservation=r1        runs on n1
#   the 4th, once n3 frees  runs, not on n1
#   r2: n2, in an hour      a job in r2 waits, Reason=Reservation
#   r3: n4, in 10 minutes   a job outside it, -t 30, does not start on n4
#                           (it would run into r3); -t 5 does
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"

resv() { scontrol create ReservationName="$1" "${@:2}" Users=root >/dev/null; }
# Still pending with REASON after three cycles.
waits_with() {
	sleep 3
	is_state "$1" PENDING && reason_has "$1" "$2"
}
all_running() { # all_running JOB...
	local j
	for j in "$@"; do
		is_state "$j" RUNNING || return 1
	done
}
not_on() { # not_on NODE JOB...: none of the jobs runs on NODE
	local j
	for j in "${@:2}"; do
		[ "$(job_nodes "$j")" != "$1" ] || return 1
	done
}

check "reservation r1 on n1 is created" \
	resv r1 StartTime=now Duration=60 Nodes=n1
outside=()
for _ in 1 2 3; do
	outside+=("$(submit -N1 --gpus-per-node=8 -t 5 --wrap 'sleep 300')")
done
check "3 whole-node jobs outside r1 run (${outside[*]})" \
	wait_for 30 all_running "${outside[@]}"
check "none of them runs on n1: $(for j in "${outside[@]}"; do printf '%s ' "$(job_nodes "$j")"; done)" \
	not_on n1 "${outside[@]}"
w=$(submit -N1 --gpus-per-node=8 -t 5 --wrap 'sleep 300')
check "a 4th whole-node job outside r1 ($w) waits" \
	wait_for 10 waits_with "$w" ""
check "and is not started on n1" not_on n1 "$w"

in_r1=$(submit --reservation=r1 -N1 --gpus-per-node=8 -t 5 --wrap 'sleep 300')
check "a job in r1 ($in_r1) runs" wait_state 20 "$in_r1" RUNNING
check "on n1: $(job_nodes "$in_r1")" test "$(job_nodes "$in_r1")" = n1

scancel "${outside[1]}"
check "the 4th ($w) runs once a node outside r1 frees" \
	wait_state 30 "$w" RUNNING
check "not on n1: $(job_nodes "$w")" not_on n1 "$w"
scancel "$w" "$in_r1" "${outside[0]}" "${outside[2]}"
wait_for 20 no_jobs_active

check "reservation r2 on n2, in an hour, is created" \
	resv r2 StartTime=now+3600 Duration=60 Nodes=n2
in_r2=$(submit --reservation=r2 --gpus=1 -t 5 --wrap 'sleep 300')
check "a job in r2 ($in_r2) waits, Reason=Reservation: $(job_reason "$in_r2")" \
	wait_for 10 waits_with "$in_r2" Reservation

# r3 on n4 in 10 minutes; n1 (r1), n2 and n3 are filled first, so that
# only n4 is left.
check "reservation r3 on n4, in 10 minutes, is created" \
	resv r3 StartTime=now+600 Duration=60 Nodes=n4
fill=$(submit -N2 --gpus-per-node=8 -w n2,n3 -t 50 --wrap 'sleep 300')
check "n2 and n3 are filled ($fill)" wait_state 20 "$fill" RUNNING
long=$(submit -N1 --gpus-per-node=8 -t 30 --wrap 'sleep 300')
check "a job outside r3 with -t 30 ($long) waits: it would run into r3" \
	wait_for 10 waits_with "$long" ""
check "and is not started on n4" not_on n4 "$long"
short=$(submit -N1 --gpus-per-node=8 -t 5 --wrap 'sleep 300')
check "a job outside r3 with -t 5 ($short) runs on n4" \
	wait_state 20 "$short" RUNNING
check "on n4: $(job_nodes "$short")" test "$(job_nodes "$short")" = n4
check "slurmctld logged no start refused on planned nodes" \
	eval '! grep -q "start on planned nodes failed" "$T/log/slurmctld.log"'
show_queue
scontrol show reservation
finish
