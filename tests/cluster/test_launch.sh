#!/bin/bash
# test_launch.sh - tidal-launch under real Slurm: an sbatch job on 2 nodes
# with 2 (fake) GPUs each runs
#
#   srun --ntasks-per-node=1 tidal-launch -- tidal-train ...
#
# The launchers take job, node, node index and count from the step's
# environment and their rank count from CUDA_VISIBLE_DEVICES (2), meet
# through node 0's store on SLURM_LAUNCH_NODE_IPADDR, and train a world of
# 4 CPU ranks (the GPUs are fake: tidal-train falls back to CPU) to the end
# with the loss going down.  A rank killed with -9 midway is restarted,
# with the others, from the last checkpoint.  Then the scheduler's way of
# resizing: checkpoint_stop on node 0's control socket (the launchers stay,
# the step goes on), scontrol requeue (SIGTERM ends the launchers), and the
# requeued job resumes from exactly that checkpoint, with the restart it
# spent before still counted.  (Slurm truncates the output file when the
# job runs again: the checks before the requeue read the first run's.)
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
for b in tidal-launch tidal-train; do
	if [ ! -x "$BUILD_ABS/$b" ]; then
		echo "$TEST_NAME: skipped: $BUILD/$b not built"
		echo "$TEST_NAME: 0 passed, 0 failed"
		exit 0
	fi
done
cluster_up "Policy=fifo
CycleInterval=1"

mkdir -p "$T/ckpt" "$T/run"
cat >"$T/out/train.sh" <<EOF
#!/bin/bash
srun --ntasks-per-node=1 $BUILD_ABS/tidal-launch --ckpt-dir $T/ckpt \\
	--store-port $((PORT_CTL + 7)) \\
	--run-dir $T/run -- $BUILD_ABS/tidal-train --hidden 64 \\
	--iters 8000 --ckpt-every 500 --log-every 100
EOF
j=$(submit -N2 --gpus-per-node=2 "$T/out/train.sh")
out="$T/out/$j.out"
check "job $j starts on 2 nodes" wait_state 30 "$j" RUNNING
check "world 4: ranks 0-1 on node 0, 2-3 on node 1" wait_for 30 eval \
	"grep -q 'generation 0: world 4, ranks 0-1 here' $out && grep -q 'generation 0: world 4, ranks 2-3 here' $out"
check "a checkpoint becomes durable" wait_for 60 grep -q "checkpoint durable" "$out"
node1=$(grep -o 'tidal-launch\[[^]]*\] [0-9:.]* generation 0: world 4, ranks 2-3' "$out" | sed 's/tidal-launch\[\([^]]*\)\].*/\1/')
victim=$("$BUILD_ABS/tidal-launch" --ctl status -J "$j" -N "$node1" --run-dir "$T/run" |
	grep -o '"rank":3,"pid":[0-9]*' | sed 's/.*://')
if [ -n "$victim" ]; then
	say "kill -9 rank 3 (pid $victim on $node1)"
	kill -9 "$victim"
fi
check "rank 3 killed with -9: all restart as generation 1 from a checkpoint" \
	wait_for 60 grep -q "generation 1: world 4, ranks 0-1 here, resuming from step" "$out"
first=$(grep -m1 -o ' loss [0-9.]*' "$out" | awk '{print $2}')
check "generation 1 runs" wait_for 30 grep -q "generation 1 running: ranks 0-1" "$out"
node0=$(grep -o 'tidal-launch\[[^]]*\] [0-9:.]* generation 0: world 4, ranks 0-1' "$out" | sed 's/tidal-launch\[\([^]]*\)\].*/\1/')
reply=$("$BUILD_ABS/tidal-launch" --ctl checkpoint_stop -J "$j" -N "$node0" --run-dir "$T/run")
stop=$(echo "$reply" | grep -o '"step":[0-9]*' | sed 's/.*://')
say "checkpoint_stop: $reply"
check "checkpoint_stop: a durable step ($stop) whose .done exists" \
	test -n "$stop" -a -f "$T/ckpt/$j/ckpt-$(printf %012d "${stop:-0}").done"
check "checkpoint_stop: both launchers wait, the job still runs" wait_for 10 eval \
	"[ \$(grep -c 'trainers stopped at step $stop' $out) -eq 2 ] && [ \$(job_state $j) = RUNNING ]"
scontrol requeue "$j"
# A requeued job waits ~2 minutes (its BeginTime); sched/tidal lifts that
# for its own requeues only.  Past the revoked credential's second, now.
wait_for 20 eval "[ \$(job_state $j) = PENDING ]"
sleep 2
scontrol update JobId="$j" StartTime=now
check "requeued: the job runs again" wait_for 60 eval \
	"grep -q 'restart budget: 1 of 3 spent by earlier runs' $out"
check "requeued: resumes from the checkpoint_stop step $stop" wait_for 30 \
	grep -q "generation 0: world 4, ranks 0-1 here, resuming from step $stop " "$out"
check "job $j completes" wait_for 180 eval "! squeue -h -j $j -t R,CG,PD | grep -q ."
check "trained to the last step" grep -q "training done at step 8000" "$out"
check "both launchers saw the end" test "$(grep -c 'all ranks of all nodes finished' "$out")" -eq 2
last=$(grep -o ' loss [0-9.]*' "$out" | tail -1 | awk '{print $2}')
check "the loss goes down ($first -> $last)" awk -v a="$first" -v b="$last" 'BEGIN { exit !(b + 0 < a + 0) }'
grep -E 'generation|failed|restart|done|stopped|SIG' "$out" | head -40
finish
