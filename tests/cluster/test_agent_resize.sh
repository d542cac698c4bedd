#!/bin/bash
# test_agent_resize.sh - an elastic resize carried out by tidald, end to
# end on a live cluster (4 nodes x 4 fake GPUs, Policy=elastic-edf):
#
#   tidald on n1..n4       registered, heartbeating every second
#   R  12 GPUs, rigid      n1..n3
#   E  --elastic-gpus=2-4  tidal-launch + tidal-train (CPU/Gloo, one rank
#                          per GPU) on n4's 4 GPUs, checkpointing every
#                          200 steps
#   D  2 GPUs, --deadline  E must shrink to 2: the plugin queues
#                          checkpoint_stop for n4's tidald, which asks E's
#                          launcher; on the ack the plugin requeues E at
#                          once (ResizeSignal=none, CheckpointTimeout=120:
#                          only the agent can make this quick)
#   E again                2 ranks, resumed from exactly that checkpoint
#   n1, n2                 fetch E's checkpoint from n4 through tidald
#                          (ckpt_where, ckpt_get), also after a kill -9 of
#                          slurmctld with E gone (the location is in the
#                          plugin state)
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
skip_unless_node_side
agents_cluster_up

r=$(submit -N3 --gpus-per-node=4 --wrap 'sleep 600')
check "R ($r, 12 GPUs) starts" wait_state 30 "$r" RUNNING
cat >"$T/out/elastic.sh" <<EOF
#!/bin/bash
exec "$BUILD_ABS/tidal-launch" --run-dir "$T/tidal-run" -- \
	"$BUILD_ABS/tidal-train" --iters 10000000 --ckpt-every 200 --log-every 50
EOF
e=$(submit -N1 --elastic-gpus=2-4 --gpus=2 --train-iters=10000000 "$T/out/elastic.sh")
check "E ($e, elastic 2-4) runs on n4's 4 GPUs" wait_for 40 has_gpus "$e" 4
ckpt_done() { ls "$T/ckpt/n4/$e/"*.done >/dev/null 2>&1; }
check "E trains and checkpoints on n4" wait_for 60 ckpt_done
agent_sees_e() { "$TIDALCTL" show job "$e" | grep -q "Training=step"; }
check "tidald n4 reports E's training to the plugin" wait_for 10 agent_sees_e
# The policy's view of E's work left comes from those reports (steps done,
# it/s), not from the time limit: over 200 of its 10^7 iterations are done.
measured_left() {
	local left
	left=$("$TIDALCTL" -o show job "$e" | grep -o 'RemainingIters=[0-9]*' | cut -d= -f2)
	[ -n "$left" ] && [ $((10000000 - left)) -ge 200 ]
}
check "the plugin counts E's remaining work from the agent's reports" \
	wait_for 10 measured_left

# tidald is not in the job's path: killed and restarted, it finds E's
# launcher again by its socket and reports it.
p4=$(cat "$T/run/tidald-n4.pid")
kill -9 "$p4"
# dead, every thread, before the new one probes its socket
wait_for 10 dead "$p4"
start_tidald n4
reregistered() { [ "$(grep -c 'registered with sched/tidal' "$T/log/tidald-n4.log")" -ge 2 ]; }
check "tidald n4 killed -9 and restarted: registered again" wait_for 15 reregistered
train_step() { "$TIDALCTL" -o show job "$e" | grep -o 'Training=step [0-9]*' | awk '{print $2}'; }
s1=$(train_step)
newer_step() { [ "$(train_step)" -gt "${s1:-0}" ]; }
check "... E kept running, and n4's new agent reports its progress" \
	eval 'is_state "$e" RUNNING && wait_for 10 newer_step'

d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 600')
t0=$(date +%s)
check "D ($d, 2 GPUs, deadline) starts" wait_state 120 "$d" RUNNING
check "E runs again, at 2 GPUs" wait_for 60 has_gpus "$e" 2
t1=$(date +%s)
say "D submitted to E running at 2 GPUs: $((t1 - t0)) s"
log=$T/log/slurmctld.log
check "the plugin asked n4's tidald for checkpoint_stop" \
	grep -q "resize JobId=$e to 2 GPUs: checkpoint_stop asked of n4's tidald" "$log"
step=$(acked_step "$e")
check "E was requeued on the ack (step ${step:-none}), not on the timeout" \
	test -n "$step" -a -z "$(grep "JobId=$e: no checkpoint ack" "$log")"
check "tidald n4 logged the command" \
	grep -q "job $e checkpointed at step $step" "$T/log/tidald-n4.log"
resumed() { grep -q "world 2, .*resuming from step $step " "$T/out/$e.out"; }
check "E resumed from exactly that checkpoint, at world 2" wait_for 30 resumed ||
	tail -n 20 "$T/out/$e.out"
grep -E "generation|resum" "$T/out/$e.out" | sed 's/^/   /'
out=$("$TIDALCTL" show job "$e"); echo "$out"
check "tidalctl shows E's checkpoint" grep -q "Checkpoint=step [0-9]* on n4" <<<"$out"
check "tidalctl tells the resize story" \
	grep -q "ResizeStory=.*checkpoint_stop delivered to n4.*requeued, to restart at 2 GPUs" <<<"$out"
grep -E "checkpoint_stop|tidald checkpointed|requeued|running again" "$log" | sed 's/^/   /'

# Restart elsewhere: n1's tidald asks the plugin (ckpt_where) and copies
# E's newest checkpoint from n4's tidald, verifying it.
if command -v python3 >/dev/null; then
	reply=$(fetch_on n1 "$e")
	echo "   $reply"
	check "n1's tidald fetches E's checkpoint from n4 (ckpt_where, ckpt_get)" \
		grep -q "\"ok\":true,.*\"from\":\"n4\"" <<<"$reply"
	f=$(sed -n 's/.*"path":"\([^"]*\)".*/\1/p' <<<"$reply")
	check "... into n1's checkpoint directory, with its .done marker" \
		test -f "${f%.tck}.done" -a "${f#$T/ckpt/n1/}" != "$f"
	# Where E's checkpoint is survives a slurmctld restart (plugin state),
	# even with E gone and no heartbeat to tell it again.
	scancel "$e"
	wait_for 20 eval '[ -z "$(job_state "$e")" ] || [ "$(job_state "$e")" = CANCELLED ]'
	sleep 2 # a cycle writes the plugin state
	check "the plugin state records E's checkpoint location" \
		grep -q "^ckpt $e [0-9]* [0-9]* n4 127.0.0.1:[0-9]* $T/ckpt/n4/$e/ckpt-" "$T/state/tidal_state"
	kill -9 "$(cat "$T/run/slurmctld.pid")"
	start_slurmctld && wait_for 60 scontrol ping
	wait_for 30 grep -q "state restored from" "$log"
	reply=$(fetch_on n2 "$e"); echo "   $reply"
	check "after kill -9 of slurmctld, ckpt_where still knows: n2 fetches from n4" \
		grep -q "\"ok\":true,.*\"from\":\"n4\"" <<<"$reply"
else
	say "python3 not installed: the cross-node fetch is not tested"
fi
scancel "$e" "$r" "$d"
finish
