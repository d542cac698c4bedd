#!/bin/bash
# bench/emu.sh BUILD - the plugin's cycle cost over the emulated slurmctld
# (tests/emu): lock hold per cycle (snapshot + apply, what slurmctld's
# other threads wait for) and decide (no lock held), at 1,000, 10,000,
# 30,000 and 50,000 jobs.  Targets (issue 16): at 10,000 pending+running
# jobs on 1,000 nodes x 8 GPUs, decide p99 < 10 ms for the queue and
# elastic policies and hold p99 < 1 ms.
# hold is the sum of a cycle's lock sections (snapshot, apply, Reasons);
# sect. the longest one; own the hold less the time in the emulated
# slurmctld's select_nodes/job_requeue/update_job (a stand-in, neither
# the plugin's nor the real cost); other the unlocked work besides
# decide (laying the snapshot out, choosing what to apply).  Printed, not asserted.
# GPL-2.0-or-later.
set -eu
build=${1:-build}
emu="$build/tidal-emu"
[ -x "$emu" ] || { echo "bench/emu.sh: $emu not built (no Slurm source tree?)"; exit 0; }
cycles=${EMU_CYCLES:-30}
echo "== sched/tidal cycle over the emulator ($(nproc) CPUs, $(uname -m)); $cycles cycles each"
echo "                                 wall ms                      | CPU ms (this thread)"
echo "                                                                |   lock held per cycle                          |                            | no lock"
echo "policy         jobs nodes   seen |  hold p50 hold p99 decide p99 | hold p50 hold p99 sect.p99  own p50  own p99 | dec. p50 dec. p99 dec. max | other p50"
for policy in fifo tiresias elastic-edf; do
	for scale in "1000 100" "10000 100" "10000 1000" "30000 3000" \
		"50000 5000"; do
		set -- $scale
		"$emu" --bench "$1" "$2" "$cycles" "$policy"
	done
done
