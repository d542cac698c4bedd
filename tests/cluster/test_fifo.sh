#!/bin/bash
# test_fifo.sh - FIFO in a live slurmctld: head-of-line blocking, and the
# Reason Tidal gives the jobs it holds.
#
#   A 24 GPUs  runs
#   B 16 GPUs  pending: needs 16, 8 free            Reason TidalHold: ...
#   C  8 GPUs  pending although 8 are free: FIFO blocks it behind B
#   A ends -> B and C start
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"

a=$(submit -N3 --gpus-per-node=8 --wrap 'sleep 300')
b=$(submit -N2 --gpus-per-node=8 --wrap 'sleep 300')
c=$(submit -N1 --gpus-per-node=8 --wrap 'sleep 300')
check "A ($a, 24 GPUs) starts" wait_state 30 "$a" RUNNING
check "B ($b, 16 GPUs) is held: not enough GPUs" \
	wait_for 20 reason_has "$b" "TidalHold: fifo.*needs 16 GPUs, 8 free"
check "C ($c, 8 GPUs) waits behind B although 8 GPUs are free" \
	wait_for 20 reason_has "$c" "waiting behind job $b"
check "C is still pending" is_state "$c" PENDING
show_queue
scancel "$a"
check "B starts once A ends" wait_state 40 "$b" RUNNING
check "C starts once A ends" wait_state 20 "$c" RUNNING
show_queue
finish
