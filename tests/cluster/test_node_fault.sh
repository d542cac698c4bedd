#!/bin/bash
# test_node_fault.sh - a node (its slurmd, its tidald, its job processes)
# killed, twice, on a live cluster (4 nodes x 4 fake GPUs, elastic-edf,
# tidald everywhere).  Slurm notices a dead slurmd only after
# SlurmdTimeout (60 s here): the test marks the node DOWN itself with
# scontrol, as an administrator (or a health check) would, and it stays
# DOWN (ReturnToService=1): under Slurm 24.11's ReturnToService=2, a reply
# the node's slurmd sent just before it died, taken in after the DOWN,
# would bring the node back.
#
#   Ra, Rb  n1, n2 full (rigid, sleeping); R2 2 GPUs on n3 and on n4
#   E       elastic 2-4: 2 + 2 on n3 (rank 0: it writes every checkpoint)
#           and n4
#   1. D (deadline, 2 GPUs) arrives: E shrinks.  The moment the plugin
#      asks n3's tidald for checkpoint_stop, n4 dies.  The checkpoint's
#      node survives: Slurm requeues E for the failed node, the resize goes
#      on (no requeue delay), and E runs again off n4, from a checkpoint no
#      older than the newest one durable when n4 died.
#   2. D and R2 go; n1's tidald has copied E's checkpoint (as a
#      replication would); E checkpoints on; then n3, the only node with
#      E's newest checkpoints, dies.  Ra ends, so E can only go to n1: it restarts
#      there from the older copy, and its log says which step on which
#      node was out of reach.  n1's heartbeats told the plugin of its
#      copy, so a fetch on n2, which had none, copies it from n1 and says
#      that the newest was out of reach (before, it found nothing, and a
#      launcher there would have started from scratch).
#
# Ra and Rb sleep far longer than the test runs: one that ended early
# would leave E a second free node.  (Under elastic-edf a pending
# deadline job ranks first: D, left pending in step 2, would have Rb
# preempted for it.)
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
RETURN_TO_SERVICE=1
skip_unless_node_side
skip_unless_python "tidald requests"
agents_cluster_up
newest_done() { # newest_done NODE JOB: the step of its newest .done, or 0
	local f
	f=$(ls "$T/ckpt/$1/$2"/ckpt-*.done 2>/dev/null | tail -1)
	f=${f##*/ckpt-}; f=${f%.done}
	echo $((10#${f:-0}))
}

ra=$(submit -w n1 -N1 --gpus-per-node=4 --wrap 'sleep 3600')
rb=$(submit -w n2 -N1 --gpus-per-node=4 --wrap 'sleep 3600')
check "Ra ($ra) on n1, Rb ($rb) on n2" eval "wait_state 30 $ra RUNNING && wait_state 30 $rb RUNNING"
r2=$(submit -N2 --gpus-per-node=2 --wrap 'sleep 600')
check "R2 ($r2) takes 2 GPUs on n3 and n4" wait_state 30 "$r2" RUNNING
cat >"$T/out/elastic.sh" <<EOF
#!/bin/bash
export TIDAL_RUN_DIR="$T/tidal-run"
srun --ntasks=\$SLURM_JOB_NUM_NODES --ntasks-per-node=1 --gpus-per-node=\$SLURM_GPUS_ON_NODE "$BUILD_ABS/tidal-launch" \
	--store-port $((PORT_CTL + 7)) --rdzv-timeout 20 -- \
	"$BUILD_ABS/tidal-train" --iters 10000000 --ckpt-every 100 --log-every 100
EOF
e=$(submit -N2 --gpus-per-node=1 --elastic-gpus=2-4 --open-mode=append "$T/out/elastic.sh")
out=$T/out/$e.out
check "E ($e) runs on 4 GPUs over n3, n4" wait_for 40 has_gpus "$e" 4
check "E checkpoints on n3 (rank 0's node)" wait_for 90 eval "[ \$(newest_done n3 $e) -gt 0 ]"

# ---- 1. n4 dies mid-resize
log=$T/log/slurmctld.log
d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 600')
asked() { grep -q "resize JobId=$e to 2 GPUs: checkpoint_stop asked of n3's tidald" "$log"; }
check "D ($d) arrives: the plugin asks n3's tidald for E's checkpoint_stop" wait_for 60 asked
n=$(kill_node n4)
scontrol update nodename=n4 state=down reason="killed by $TEST_NAME"
had=$(newest_done n3 "$e")
say "n4 killed ($n processes) and marked DOWN; E's newest durable checkpoint then: step $had"
grep -E "resize JobId=$e|requeue job JobId=$e" "$log" | sed 's/^/   /'
running_off_n4() { is_state "$e" RUNNING && ! job_nodes "$e" | grep -q n4; }
check "E runs again, off n4 ($(job_nodes "$e" 2>/dev/null))" wait_for 90 running_off_n4
# Its size is the policy's: 2 GPUs on n3 beside D, or all 4 of n3 when
# n4's death took D's place and R2 away first.
rstep() { grep -oE "generation [0-9]+: world [0-9]+, ranks 0-[0-9]+ here, resuming from step [0-9]+" "$out" | tail -1 | awk '{print $NF}'; }
resumed_after() { [ -n "$(rstep)" ] && [ "$(rstep)" -ge "$had" ] && is_state "$e" RUNNING; }
check "... resumed from a reachable checkpoint, no older than step $had" wait_for 60 resumed_after
say "E resumed from step $(rstep)"
# Which came first is a race: n3's ack (the plugin requeues), or Slurm's
# requeue for the DOWN node (the plugin carries the resize through it).
if grep -q "resize JobId=$e: requeued by Slurm before the checkpoint ack" "$log"; then
	pass "Slurm requeued E for n4 before the ack; the plugin carried the resize through"
else
	check "n3's tidald acked first; the plugin requeued E" \
		grep -q "resize JobId=$e: tidald checkpointed it at step" "$log"
fi
say "E now on $(job_nodes "$e"): $(grep -oE "generation [0-9]+: world [0-9]+, ranks 0-[0-9]+ here, resuming from step .*" "$out" | tail -1)"
"$TIDALCTL" show job "$e" | grep -o 'ResizeStory=.*' | sed 's/^/   /'

# ---- 2. the only node with E's newest checkpoint dies
# D and R2 have served.  Left pending, D (its deadline ranks it first
# under elastic-edf) would have Rb preempted once n3 died, and E would
# follow D onto n2 (seen on a loaded run): gone, E grows to all of n3,
# and once n3 dies only Ra's end makes room for it.
scancel "$d" "$r2"
alone_on_n3() { has_gpus "$e" 4 && [ "$(job_nodes "$e")" = n3 ]; }
check "D and R2 gone: E runs on all 4 GPUs of n3" wait_for 60 alone_on_n3
home=$(job_nodes "$e")
r=$(fetch_on n1 "$e"); echo "   n1: $r"
copy=$(grep -o '"step":[0-9]*' <<<"$r" | cut -d: -f2)
check "n1's tidald holds a copy of E's checkpoint (step ${copy:-none}, from $home)" \
	grep -q '"ok":true' <<<"$r"
newer() { [ "$(newest_done "$home" "$e")" -gt "${copy:-0}" ]; }
check "E checkpoints on past it on $home" wait_for 60 newer
# The plugin learns of checkpoints from heartbeats: wait until it knows
# of one past the copy too, or the fetch below names the copy's step.
plugin_newer() {
	local s
	s=$("$TIDALCTL" -o show job "$e" | sed -n "s/.*Checkpoint=step \([0-9]*\) on $home.*/\1/p")
	[ "${s:-0}" -gt "${copy:-0}" ]
}
wait_for 30 plugin_newer
n=$(kill_node "$home")
scontrol update nodename="$home" state=down reason="killed by $TEST_NAME"
newest=$(newest_done "$home" "$e")
say "$home killed ($n processes) and marked DOWN; newest checkpoint lost with it: step $newest"
t0=$(date +%s%3N)
r=$(fetch_on n2 "$e"); echo "   n2: $r ($(( $(date +%s%3N) - t0 )) ms)"
# The plugin knows the newest as of the last heartbeat: at most $newest.
known=$(sed -n "s/.*are out of reach (.*step \([0-9]*\) on $home (.*/\1/p" <<<"$r")
check "n2 (no copy): tidald's fetch says the newest (step ${known:-?}) is out of reach" \
	eval '[ -n "$known" ] && [ "$known" -gt "$copy" ] && [ "$known" -le "$newest" ]'
check "... and copies n1's (step $copy), which n1's heartbeat told the plugin of" \
	eval 'grep -q "\"ok\":true" <<<"$r" && [ "$(grep -o "\"step\":[0-9]*" <<<"$r" | head -1 | cut -d: -f2)" = "$copy" ] && grep -q "\"from\":\"n1\"" <<<"$r" && grep -q "using the older step $copy from n1" <<<"$r"'

requeued() { [ "$(job_state "$e")" = PENDING ]; }
check "Slurm requeues E for the failed node" wait_for 30 requeued
# Slurm delays a requeued job's start by the credential lifetime (2 min);
# the plugin undoes that for its own requeues only.  The administrator:
scontrol update JobId="$e" StartTime=now
scancel "$ra"
on_n1() { is_state "$e" RUNNING && [ "$(job_nodes "$e")" = n1 ]; }
check "Ra ends: E runs again, on n1" wait_for 90 on_n1
# n1's launcher lines (E's first resume, on n3, resumed from the same step).
older() { grep -q "^tidal-launch\[n1\] .* here, resuming from step $copy " "$out"; }
check "... from n1's older copy (step $copy)" wait_for 60 older
said_why() {
	grep -q "warning: tidald: job $e's newer checkpoints are out of reach (.*step $known on $home (.*)): using the older step $copy on n1" "$out"
}
check "... and its log says the newest (step $known on $home) was out of reach" \
	wait_for 10 said_why
grep -E "generation|resum|fetch|warning|SIG|fail" "$out" | tail -n 20 | sed 's/^/   /'
scancel "$e" "$rb"
finish
