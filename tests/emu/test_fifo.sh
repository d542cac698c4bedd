#!/bin/bash
# test_fifo.sh - FIFO through the plugin's snapshot and apply code: a job
# that does not fit holds those behind it; the Reason says why.
. "$(dirname "$0")/lib.sh"
emu fifo.jobs
expect 1 '^job 1 RUNNING gpus=24 nodes=n1,n2,n3 ' "job 1 starts on 3 nodes"
expect 1 '^job 2 PENDING .*reason=TidalHold: fifo.*needs 16 GPUs, 8 free' "job 2 held: not enough GPUs"
expect 1 '^job 3 PENDING .*waiting behind job 2' "job 3 blocked behind job 2"
expect 2 '^job 2 RUNNING gpus=16' "job 2 starts once job 1 ends"
expect 2 '^job 3 RUNNING gpus=8' "job 3 starts too"
finish
