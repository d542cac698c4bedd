#!/bin/bash
# test_e2e.sh - the issue's story, end to end, over two nodes (4 nodes x 4
# fake GPUs, Policy=elastic-edf, tidald on every node):
#
#   R   n1, n2 full; R2 2 GPUs on each of n3, n4 (rigid, sleeping)
#   E   --elastic-gpus=2-4, 1 GPU per node asked: starts at 4, 2 + 2 on
#       n3, n4; srun starts one tidal-launch per node (with the GPUs this
#       run holds, not the submission's), one tidal-train rank per GPU
#       (CPU/Gloo), rendezvous on n3 (rank 0: it writes the checkpoints),
#       a checkpoint every $CKI steps, $ITERS steps in all
#   D   2 GPUs with a deadline: E shrinks to 2.  The plugin asks n3's
#       tidald for checkpoint_stop; on its ack Slurm requeues E, its
#       request changes, and it starts again at 2 ranks from exactly that
#       checkpoint (local, or fetched through tidald from n3 when it lands
#       on n4: the launcher asks its tidald first, so an older copy on n4
#       is not used)
#
# Asserted: the resume step is that checkpoint's, and no more than one
# checkpoint interval behind the last step logged before the stop; the
# loss goes on from where it was (the first losses after the resume are
# near the last ones before, far below the first); E and D both end
# COMPLETED; tidalctl shows the story (start at 4, the decision and its
# reason, the checkpoint's step and node, the requeue, the restart at 2).
# Measured: decision to the first step at 2 ranks, and the steps lost.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
CKI=100      # checkpoint interval, steps
ITERS=3000   # E's length (about 30 s at 2 ranks here)
skip_unless_node_side
agents_cluster_up

final_state() { scontrol -o show job "$1" 2>/dev/null | grep -o 'JobState=[A-Z_]*' | cut -d= -f2; }
ended() { case $(final_state "$1") in COMPLETED|FAILED|CANCELLED|TIMEOUT|NODE_FAIL|OUT_OF_MEMORY) true;; *) false;; esac; }

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
# The store port is one of this cluster's (the default, 29400 + job id,
# is the same in every test cluster on this host).
srun --ntasks=\$SLURM_JOB_NUM_NODES --ntasks-per-node=1 --gpus-per-node=\$SLURM_GPUS_ON_NODE "$BUILD_ABS/tidal-launch" \
	--store-port $((PORT_CTL + 7)) -- \
	"$BUILD_ABS/tidal-train" --iters $ITERS --ckpt-every $CKI --log-every 25
EOF
# --open-mode=append: the output of both runs (a requeue truncates it).
e=$(submit -N2 --gpus-per-node=1 --elastic-gpus=2-4 --open-mode=append "$T/out/elastic.sh")
out=$T/out/$e.out
check "E ($e, elastic 2-4) starts on 4 GPUs over n3, n4" wait_for 40 has_gpus "$e" 4
show_queue
ckpt_done() { ls "$T"/ckpt/n3/"$e"/*.done >/dev/null 2>&1; }
check "E trains and checkpoints on n3" wait_for 90 ckpt_done
check "... at world 4: ranks 0-1 on n3, 2-3 on n4" eval \
	"grep -q 'tidal-launch\[n3\] .*generation 0: world 4, ranks 0-1 here' $out &&
	 grep -q 'tidal-launch\[n4\] .*generation 0: world 4, ranks 2-3 here' $out"
d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 45')
check "D ($d, 2 GPUs, deadline) arrives and starts" wait_state 120 "$d" RUNNING
check "E runs again, at 2 GPUs" wait_for 90 has_gpus "$e" 2
show_queue
log=$T/log/slurmctld.log
step=$(grep -o "resize JobId=$e: tidald checkpointed it at step [0-9]*" "$log" | head -1 | awk '{print $NF}')
check "the plugin asked n3's tidald (E's batch host) for checkpoint_stop" \
	grep -q "resize JobId=$e to 2 GPUs: checkpoint_stop asked of n3's tidald" "$log"
check "Slurm requeued E on tidald's ack (step ${step:-none}), not on the timeout" \
	test -n "$step" -a -z "$(grep "JobId=$e: no checkpoint ack" "$log")"
resumed() { grep -q "world 2, ranks 0-1 here, resuming from step $step " "$out"; }
check "E resumed at world 2 from exactly that checkpoint" wait_for 60 resumed
where=$(grep -o "tidal-launch\[n[34]\] [0-9:.]* generation 0: world 2, ranks 0-1" "$out" | tail -1 | cut -c14-15)
say "E's second run has rank 0 on ${where:-?}"
if [ "$where" = n4 ]; then
	check "... fetched from n3 through n4's tidald (asked first)" \
		grep -q "world 2, ranks 0-1 here, resuming from step $step (.*, fetched from n3)" "$out"
fi
sc=$("$TIDALCTL" show job "$e"); echo "$sc"
story=$(grep -o 'ResizeStory=.*' <<<"$sc")
check "tidalctl: E started at 4 GPUs on n[3-4]" grep -q "started at 4 GPUs on n\[3-4\]" <<<"$story"
check "tidalctl: the resize 4 -> 2 and the policy's reason" \
	grep -q "resize from 4 to 2 GPUs decided on n\[3-4\] (elastic-edf: [^)]" <<<"$story"
check "tidalctl: checkpoint at step $step on n3, then the requeue" \
	grep -q "checkpoint_stop delivered to n3's tidald; [0-9:]* checkpoint at step $step on n3 .*requeued, to restart at 2 GPUs" <<<"$story"
restarted() { "$TIDALCTL" show job "$e" | grep -q "running again at 2 GPUs on n[34]"; }
check "tidalctl: running again at 2 GPUs" wait_for 10 restarted
"$TIDALCTL" explain "$e" | sed 's/^/   /'

check "E completes (all $ITERS steps)" wait_for 150 ended "$e"
st=$(final_state "$e")
check "... $st, trained to the end" eval \
	"[ '$st' = COMPLETED ] && grep -q 'training done at step $ITERS' $out"
check "D completes" wait_for 90 ended "$d"
st=$(final_state "$d")
check "... $st" test "$st" = COMPLETED
grep -E "generation|resum|fetch|stopped|done|warning|SIG" "$out" | sed 's/^/   /'

# The loss curve, from node 0's step lines (both runs are in $out):
# steps and losses before the stop, after the resume.
curve=$(awk -v s="$step" '
	/ step [0-9]+ loss / {
		for (i = 1; i < NF; i++) if ($i == "step") n = $(i + 1)
		for (i = 1; i < NF; i++) if ($i == "loss") l = $(i + 1) + 0
		if (first == "") first = l
		if (!stopped) { b1 = b2; b2 = l; last = n }
		else if (resumed && na < 2) { a[++na] = l }
	}
	/trainers stopped at step/ { stopped = 1 }
	stopped && /world 2, ranks 0-1 here, resuming from step/ { resumed = 1 }
	END { printf "%s %s %s %s %s %s\n", first, last, b1, b2, a[1], a[2] }' "$out")
read -r first last b1 b2 a1 a2 <<<"$curve"
say "loss: first $first; last before the stop (step $last) $b1 $b2; first after the resume $a1 $a2"
check "no more than one checkpoint interval lost: resume step $step >= $last - $CKI" \
	test "${step:-0}" -ge $(( ${last:-0} - CKI ))
say "steps lost: $(( ${last:-0} > ${step:-0} ? ${last:-0} - ${step:-0} : 0 )) (last logged step $last, resumed from $step)"
check "the loss curve goes on: after ($a1 $a2) within 50% of before ($b1 $b2), below half the first ($first)" \
	awk -v f="$first" -v b1="$b1" -v b2="$b2" -v a1="$a1" -v a2="$a2" 'BEGIN {
		if (a1 == "" || b1 == "") exit 1
		b = (b1 + b2) / 2; a = (a1 + a2) / 2
		d = a - b; if (d < 0) d = -d
		exit !(d <= 0.5 * b && a < 0.5 * f) }'

# Resize latency: the plugin's decision (slurmctld's log) to the first
# training step at the new size (the launcher's "running" line).
t_dec=$(grep -o "^\[[^]]*\] sched/tidal: resize JobId=$e to 2 GPUs" "$log" | head -1 | cut -c2-24)
t_run=$(grep -o "^tidal-launch\[n[34]\] [0-9:.]* generation [0-9]* running: .* at step $step" "$out" | head -1 | awk '{print $2}')
if [ -n "$t_dec" ] && [ -n "$t_run" ]; then
	ms=$(( $(date -d "${t_dec%T*} $t_run" +%s%3N) - $(date -d "${t_dec/T/ }" +%s%3N) ))
	say "resize latency, decision to the first step at 2 ranks: $ms ms"
fi
grep -h "fetch job $e" "$T"/log/tidald-n*.log | sed 's/^/   /'
[ "$FAILED" -gt 0 ] && { scontrol show job "$e"; grep -v "step [0-9]* loss\|checkpoint durable" "$out" | tail -n 40; }
scancel "$r" "$r2"
finish
