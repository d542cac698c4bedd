#!/bin/bash
# test_agent_resize2.sh - the issue's end-to-end resize over two nodes
# (4 nodes x 4 fake GPUs, Policy=elastic-edf, tidald on every node):
#
#   R   n1, n2 full; R2 2 GPUs on each of n3, n4 (rigid)
#   E   --elastic-gpus=2-4, 1 GPU per node asked: gets 2 + 2 on n3, n4;
#       srun starts one tidal-launch per node (with the GPUs this run
#       holds, not the submission's), one tidal-train rank per GPU
#       (CPU/Gloo), rendezvous on n3, checkpoints every 200 steps
#   D   2 GPUs with a deadline: E shrinks to 2.  The plugin asks the batch
#       host's tidald for checkpoint_stop; on its ack E is requeued, its
#       request changed, and it starts at 2 ranks from that checkpoint
#       (fetched through tidald when it lands on the other node), losing
#       no step; the loss goes on from where it was
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
for b in tidald tidal-launch tidal-train; do
	[ -x "${BUILD_ABS:-/nonexistent}/$b" ] || {
		echo "$TEST_NAME: skipped: $BUILD/$b not built"
		echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
done
cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
RejectAction=cancel"

for n in $NODES; do
	"$BUILD_ABS/tidald" -D -N "$n" --listen 127.0.0.1:0 --run-dir "$T/tidal-run" \
		--ckpt-dir "$T/ckpt/$n" --heartbeat 1 >>"$T/log/tidald-$n.log" 2>&1 &
	disown
done
agents_up() { [ "$("$TIDALCTL" -o show nodes 2>/dev/null | grep -c 'Agent=UP')" -eq 4 ]; }
check "4 agents up" wait_for 30 agents_up

gpus_of() { "$TIDALCTL" -o show job "$1" 2>/dev/null | grep -o 'AllocGPUs=[0-9]*' | cut -d= -f2; }
has_gpus() { [ "$(job_state "$1")" = RUNNING ] && [ "$(gpus_of "$1")" = "$2" ]; }

r=$(submit -N2 --gpus-per-node=4 --wrap 'sleep 600')
check "R ($r) fills n1, n2" wait_state 30 "$r" RUNNING
r2=$(submit -N2 --gpus-per-node=2 --wrap 'sleep 600')
check "R2 ($r2) takes 2 GPUs on n3 and n4" wait_state 30 "$r2" RUNNING
cat >"$T/out/elastic.sh" <<EOF
#!/bin/bash
export TIDAL_RUN_DIR="$T/tidal-run"
# sbatch exported the size asked at submission (SLURM_GPUS_PER_NODE=1):
# after a resize the step must take what this run of the job holds, and
# one task per node of this run (SLURM_NTASKS is still the first run's).
srun --ntasks=\$SLURM_JOB_NUM_NODES --ntasks-per-node=1 --gpus-per-node=\$SLURM_GPUS_ON_NODE "$BUILD_ABS/tidal-launch" -- \
	"$BUILD_ABS/tidal-train" --iters 10000000 --ckpt-every 200 --log-every 50
EOF
# --open-mode=append: the output of both runs (a requeue truncates it).
e=$(submit -N2 --gpus-per-node=1 --elastic-gpus=2-4 --open-mode=append "$T/out/elastic.sh")
check "E ($e, elastic 2-4) runs on 4 GPUs over n3, n4" wait_for 40 has_gpus "$e" 4
show_queue
ckpt_done() { ls "$T"/ckpt/n3/"$e"/*.done >/dev/null 2>&1; }
check "E trains and checkpoints on n3" wait_for 90 ckpt_done
check "... at world 4: 2 ranks on n3, 2 on n4" \
	grep -q "tidal-launch\[n4\] .*generation 0: world 4, ranks 2-3 here" "$T/out/$e.out"
d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 600')
check "D ($d, 2 GPUs, deadline) starts" wait_state 120 "$d" RUNNING
check "E runs again, at 2 GPUs" wait_for 90 has_gpus "$e" 2
show_queue
log=$T/log/slurmctld.log
step=$(grep -o "resize JobId=$e: tidald checkpointed it at step [0-9]*" "$log" | head -1 | awk '{print $NF}')
check "E was requeued on tidald's ack (step ${step:-none})" test -n "$step"
resumed() { grep -q "world 2, .*resuming from step $step " "$T/out/$e.out"; }
check "E resumed at world 2 from exactly that checkpoint" wait_for 60 resumed
grep -E "generation|resum|fetch" "$T/out/$e.out" | sed 's/^/   /'
# Resize latency: the plugin's decision (slurmctld's log) to the first
# training step at the new size (the launcher's "running" line).
t_dec=$(grep -o "^\[[^]]*\] sched/tidal: resize JobId=$e to 2 GPUs" "$log" | head -1 | cut -c2-24)
t_run=$(grep -o "^tidal-launch\[n[34]\] [0-9:.]* generation [0-9]* running: .* at step $step" "$T/out/$e.out" | head -1 | awk '{print $2}')
if [ -n "$t_dec" ] && [ -n "$t_run" ]; then
	ms=$(( $(date -d "${t_dec%T*} $t_run" +%s%3N) - $(date -d "${t_dec/T/ }" +%s%3N) ))
	say "resize latency, decision to the first step at 2 ranks: $ms ms (0 steps lost)"
fi
grep -h "fetch job $e" "$T"/log/tidald-n*.log | sed 's/^/   /'
"$TIDALCTL" show job "$e"
finish
