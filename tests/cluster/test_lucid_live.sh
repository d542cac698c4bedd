#!/bin/bash
# test_lucid_live.sh - Lucid, live: every new job is profiled first on the
# node lent to profiling, then packed beside a running job when their
# measured GPU use allows, and kept apart when it does not.
#
# n1 (2 GPUs, 2 shards each) runs jobs; n2 (2 GPUs) is the profiler
# (Lucid.ProfilerNodes=n2, ProfileTime=20 s, sharing always on).  Each job
# trains through tidal-launch, paced by a stage profile, and reports its
# GPU utilisation (its compute stage's share of a step) and memory:
#
#   A  heavy (compute 90% of a step: sharescore 2), 3000 MiB
#   B, D  heavy, 3000 MiB
#   C  light (compute 10%: sharescore 0), 3000 MiB
#
#   A runs on n2 first; after 20 s it is preempted with its profile
#     (checkpointed, requeued: its story says so) and resumes on n1
#   B, profiled the same way, is kept apart from A (2 + 2 is over 2):
#     it starts on n1's other GPU, slurmctld's log saying why
#   C, profiled, packs beside A (0 + 2): both hold a shard of the same
#     GPU (Slurm's view), tidalctl shows the pair and the GpuUse; the two
#     run at once (a pack, not turns) at the speeds Lucid's
#     colocate_info.csv gives their workloads side by side (heavy
#     ResNet18/CIFAR-10/64/0, light DCGAN/LSUN/128/0), against the speeds
#     each ran at alone
#   D, heavy, profiled, waits (no GPU free, no partner); kill -9 of
#     slurmctld: every job keeps its shard, D still waits (and never
#     goes back to the profiler); B ends and D starts on n1,
#     not profiled again (its profile is in the plugin's state)
#   all gone: no GPU and no shard held
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
skip_unless_node_side
NODES="n1 n2"
GPUS_PER_NODE=2
SHARDS_PER_GPU=2
profile=$(mktemp /tmp/tidal-lucid-live.XXXXXX)
chmod 644 "$profile"
cat >"$profile" <<'CSV'
model,data,compute,comm
heavy,0.005,0.100,0.006
light,0.080,0.010,0.010
CSV
# The pair's speeds: the Lucid artifact's table when the anchors are beside
# the checkout, else a table of the same form made here.
HEAVY=ResNet18/CIFAR-10/64/0
LIGHT=DCGAN/LSUN/128/0
colocate=$(cd "$(dirname "$0")/../.." && pwd)/../shared/anchors/lucid/lucid/colocate_info.csv
made_table=
if [ ! -r "$colocate" ]; then
	colocate=$(mktemp /tmp/tidal-lucid-colocate.XXXXXX)
	made_table=$colocate
	chmod 644 "$colocate"
	cat >"$colocate" <<'CSV'
,model1,dataset1,gpu_num1,batchsize1,amp1,speed1,model2,dataset2,gpu_num2,batchsize2,amp2,speed2,gpu_util,gmem_util,gmem
0,ResNet18,CIFAR-10,1,64,0,0.5,DCGAN,LSUN,1,128,0,0.8,99.0,48.0,5778
CSV
fi
PAIR_SPEED=$(cd "$(dirname "$0")/.." && pwd)/pair_speed.py
# pair_speed J T: J's speed beside T in the table
pair_speed() { python3 "$PAIR_SPEED" "$colocate" "$1" "$2"; }
cluster_up "Policy=lucid
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
Lucid.ProfilerNodes=n2
Lucid.ProfileTime=20
Lucid.Sharing=always"
trap 'cluster_down; rm -f "$profile" $made_table' EXIT
check "the agents are up" start_agents

common="--stage-profile $profile --iters 100000 --log-every 5 --ckpt-every 20 --in 8 --out 2 --hidden 16 --layers 1 --gpu-mem 3000 --colocate $colocate"
train_script "$T/heavy.sh" "$common --profile-model heavy --workload $HEAVY"
train_script "$T/light.sh" "$common --profile-model light --workload $LIGHT"
# rate JOB: its trainer's iterations/s (tidalctl's Training=)
rate() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -oE 'Training=step [0-9]+, [0-9.]+ it/s' | awk '{print $3}'; }
# steady JOB SECS: SECS of samples of its rate, 1 s apart, the median
steady() {
	local i r=()
	for i in $(seq "$2"); do r+=("$(rate "$1")"); sleep 1; done
	printf '%s\n' "${r[@]}" | grep -E '^[0-9.]+$' | sort -g | awk '{v[NR]=$1} END {print NR ? v[int((NR+1)/2)] : ""}'
}
ratio_within() { # ratio_within GOT BASE SPEED PCT: GOT/BASE within PCT% of SPEED
	python3 -c "import sys; g,b,s,p=map(float,sys.argv[1:]); sys.exit(0 if abs(g/b-s)<=s*p/100 else 1)" "$@" 2>/dev/null
}
story() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -o 'ResizeStory=.*'; }
on_node() { is_state "$1" RUNNING && [ "$(job_nodes "$1")" = "$2" ]; }

# A: profiled on n2, then on n1.
a=$(submit -N1 --gpus=1 -t 10 "$T/heavy.sh")
check "A ($a) starts on the profiler node n2" wait_for 30 on_node "$a" n2
gpu_use() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -o 'GpuUse=[^=]*MiB'; }
measured() { gpu_use "$1" | grep -qE 'GpuUse=utilisation (8[5-9]|9[0-9])%, memory 3000 MiB'; }
check "A's trainer reports its GPU use (about 90%, 3000 MiB)" wait_for 30 measured "$a"
say "A: $(gpu_use "$a")"
profiled() { story "$1" | grep -q "profiled for [0-9]* s (GPU utilisation [0-9]*%, 3000 MiB of GPU memory, sharescore $2)"; }
check "after 20 s, A leaves the profiler with its profile (sharescore 2)" wait_for 60 profiled "$a" 2
story "$a" | tr ';' '\n' | sed 's/^ */    /'
check "A runs again, on n1" wait_for 60 on_node "$a" n1
check "... resuming from its checkpoint" \
	wait_for 60 grep -qE "resuming from step [1-9]" "$T/out/$a.out"
a_base=$(train_step "$a")
check "A trains on n1" wait_for 60 eval 'train_past "$a" $((${a_base:-0} + 20))'
a_alone=$(steady "$a" 5)
say "A alone on its GPU: ${a_alone:-?} it/s"

# B: profiled, then kept apart from A.
b=$(submit -N1 --gpus=1 -t 10 "$T/heavy.sh")
check "B ($b) is profiled on n2" wait_for 30 on_node "$b" n2
check "B leaves the profiler (sharescore 2)" wait_for 60 profiled "$b" 2
check "B runs on n1" wait_for 60 on_node "$b" n1
ga=$(shard_gpu "$a") gb=$(shard_gpu "$b")
say "Slurm's shards: A on n1 GPU ${ga:-none}, B on n1 GPU ${gb:-none}"
check "A and B hold shards of different GPUs" eval '[ -n "$ga" ] && [ -n "$gb" ] && [ "$ga" != "$gb" ]'
# A start's reason is in slurmctld's log (tidalctl shows the last cycle's).
started() { grep -F "sched/tidal: started JobId=$1 on n1" "$T/log/slurmctld.log" | tail -1; }
apart() { started "$b" | grep -q "not packed: job $a sharescore 2 + 2 is over 2"; }
check "B was kept apart: sharescore 2 + 2 over 2 (slurmctld's log)" wait_for 10 apart
started "$b" | sed 's/.*sched.tidal: /    /'

# C: profiled, then packed beside A.
c=$(submit -N1 --gpus=1 -t 10 "$T/light.sh")
check "C ($c) is profiled on n2" wait_for 30 on_node "$c" n2
check "C trains on the profiler" wait_for 30 eval 'train_past "$c" 20'
c_alone=$(steady "$c" 5)
say "C alone (profiled): ${c_alone:-?} it/s"
check "C leaves the profiler (sharescore 0)" wait_for 60 profiled "$c" 0
check "C runs on n1" wait_for 60 on_node "$c" n1
gc=$(shard_gpu "$c")
say "Slurm's shards: C on n1 GPU ${gc:-none}"
check "C holds a shard of A's GPU" eval '[ -n "$gc" ] && [ "$gc" = "$ga" ]'
packed() {
	show=$("$TIDALCTL" show job "$c" 2>&1)
	grep -q "SharesGPUsWith=$a" <<<"$show"
}
check "tidalctl show job: C shares its GPU with A" wait_for 10 packed
grep -oE '(SharesGPUsWith|SharedGPU|GpuUse)=[^ ]*( [^=]*MiB)?' <<<"$show" | sed 's/^/    /'
why() { "$TIDALCTL" explain "$c" 2>/dev/null | grep -q "packed with job $a"; }
check "tidalctl explain: C packed with A" wait_for 10 why
check "C's start: packed beside A, sharescore 0 + 2" \
	eval 'started "$c" | grep -q "packed beside job $a: sharescore 0 + 2"'
started "$c" | sed 's/.*sched.tidal: /    /'
check "C trains beside A" wait_for 60 eval 'train_past "$c" 25'
# Packed, the two run at once at the table's speeds for the pair.
s_a=$(pair_speed $HEAVY $LIGHT) s_c=$(pair_speed $LIGHT $HEAVY)
sleep 3 # a step window or two that began before C joined
a_packed=$(steady "$a" 5) c_packed=$(steady "$c" 5)
say "packed: A ${a_packed:-?} it/s (alone ${a_alone:-?}, table ${s_a:-?}), C ${c_packed:-?} it/s (alone ${c_alone:-?}, table ${s_c:-?})"
check "A runs at the table's speed beside C ($s_a of alone, within 10%)" \
	ratio_within "$a_packed" "$a_alone" "$s_a" 10
check "C runs at the table's speed beside A ($s_c of alone, within 10%)" \
	ratio_within "$c_packed" "$c_alone" "$s_c" 10
check "C's trainer says it runs packed beside A, at the table's speed" \
	grep -q "pack n1-gpu$ga: beside job $a ($HEAVY); speed $s_c of alone (--colocate)" "$T/out/$c.out"
check "tidald has A and C in one pack, not an interleaving group" \
	eval 'grep -q "pack: n1-gpu$ga: job [0-9]* rank 0 (uid [0-9]*) joins; in it now: $a ($HEAVY), $c ($LIGHT)" "$T"/log/tidald-n1.log &&
		! grep -q "interleave: group n1-gpu$ga" "$T"/log/tidald-n1.log'
show_queue

# D, heavy too, is profiled and then waits: n1 is full, and A and C are
# packed, B too heavy to join.  kill -9 slurmctld: the jobs keep their
# shards, and D's profile survives in the plugin's state: when B ends, D
# starts on n1 and is not profiled again.
d=$(submit -N1 --gpus=1 -t 10 "$T/heavy.sh")
check "D ($d) is profiled on n2" wait_for 30 on_node "$d" n2
check "D leaves the profiler (sharescore 2)" wait_for 60 profiled "$d" 2
waits() { is_state "$d" PENDING && reason_has "$d" "needs 1 GPU, 0 free"; }
check "D waits: no GPU free, and no job it may pack beside" wait_for 60 waits
say "D: $(job_reason "$d")"
restart_slurmctld_hard || { say "slurmctld did not restart"; dump_logs; exit 1; }
all_run() { is_state "$a" RUNNING && is_state "$b" RUNNING && is_state "$c" RUNNING; }
check "after kill -9 of slurmctld, A, B and C still run" wait_for 30 all_run
check "... C still on A's GPU" eval '[ "$(shard_gpu "$c")" = "$ga" ]'
sleep 3 # a few cycles of the new slurmctld
check "... and D still waits: nothing is free for it, and B is no partner" \
	is_state "$d" PENDING
scancel "$b"
check "B ends: D starts on n1" wait_for 60 on_node "$d" n1
started "$d" | sed 's/.*sched.tidal: /    /'
on_n2=$(grep -c "sched/tidal: started JobId=$d on n2" "$T/log/slurmctld.log")
check "... not profiled again: D started on n2 once only ($on_n2 times)" test "$on_n2" = 1
# (more than once in one loaded run, not since: what the log says of D
# and of the restart, for whoever meets it next)
[ "$on_n2" = 1 ] ||
	grep -E "JobId=$d[: ]|job $d:|state restored|no good state|previous good state" \
		"$T/log/slurmctld.log" | grep -v "debug" | sed 's/^/    /'
check "... resuming from its checkpoint" \
	wait_for 60 grep -qE "resuming from step [1-9]" "$T/out/$d.out"
show_queue

scancel "$a" "$c" "$d"
check "all gone: no GPU and no shard held" wait_for 30 gres_idle n1 n2
finish
