#!/bin/bash
# test_reason.sh - the incremental snapshot sees jobs submitted between
# cycles; Reasons carry no queue rank and follow the job ahead.
. "$(dirname "$0")/lib.sh"
emu reason.jobs
expect 2 '^job 2 PENDING .*reason=TidalHold: fifo: submitted at [0-9]+ s; needs 16 GPUs, 0 free$' "job 2 held, no rank in its Reason"
expect 2 '^job 4 PENDING .*reason=TidalHold: fifo: .*; waiting behind job 2$' "job 4 waits behind job 2"
expect 3 '^job 90 PENDING .*waiting behind job 2$' "a job with an id far ahead is seen"
expect 4 '^job 2 RUNNING gpus=16 ' "job 2 starts when job 1 ends"
expect 4 '^job 3 PENDING .*needs 8 GPUs, 0 free$' "job 3 is the one blocking now"
expect 4 '^job 4 PENDING .*waiting behind job 3$' "job 4's Reason follows: behind job 3"
expect 4 '^job 90 PENDING .*waiting behind job 3$' "and so does job 90's"
if echo "$OUT" | grep -q 'rank [0-9]* of'; then fail "a Reason names a rank"; else pass "no Reason names a rank"; fi
finish
