#!/bin/bash
# test_antman_live.sh - AntMan, live: a best-effort (opportunistic) job
# runs beside a guaranteed one on a GPU that is under-used, and is evicted,
# checkpointed, when the guaranteed owner grows onto its GPU.
#
# 1 node x 2 GPUs with 2 shards each; Policy=antman:
#
#   H  guaranteed, --gpus=1, a 60 s sleep           GPU of its own (shard)
#   G  guaranteed, --elastic-gpus=1-2, training     1 GPU (H holds the
#                                                   other), a shard of it
#   O  --best-effort, training                      no GPU idle: joins a
#                                                   guaranteed job's GPU
#                                                   (under the 80% cap:
#                                                   H's default 10%, G's
#                                                   measured compute share)
#
#   O runs beside H or G, both holding a shard of the same GPU; tidalctl
#     shows the shared GPU and the partner, explain the utilisation
#   H ends: G can grow to 2 GPUs, whole, so O is evicted (checkpointed
#     and requeued, Reason naming G), then G restarts on both GPUs
#   O waits while G holds them, its Reason saying why
#   G cancelled: O starts again and resumes from its checkpoint
#   all gone: no GPU and no shard held
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
skip_unless_node_side
NODES="n1"
GPUS_PER_NODE=2
SHARDS_PER_GPU=2
profile=$(mktemp /tmp/tidal-antman-live.XXXXXX)
chmod 644 "$profile"
cat >"$profile" <<'CSV'
model,data,compute,comm
mlp,0.050,0.100,0.010
CSV
cluster_up "Policy=antman
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120"
trap 'cluster_down; rm -f "$profile"' EXIT
check "the agent is up" start_agents

args="--stage-profile $profile --profile-model mlp --iters 100000 --log-every 5 --ckpt-every 20 --in 8 --out 2 --hidden 16 --layers 1"
train_script "$T/g.sh" "$args"
train_script "$T/o.sh" "$args"
begin=$(date -d '+8 sec' +%Y-%m-%dT%H:%M:%S)
h=$(submit --begin="$begin" --gpus=1 -t 10 --wrap 'sleep 60')
g=$(submit --begin="$begin" -N1 --elastic-gpus=1-2 --gpus=1 -t 10 "$T/g.sh")
both_run() { is_state "$h" RUNNING && is_state "$g" RUNNING; }
check "guaranteed H ($h) and G ($g) run, one GPU each" wait_for 60 both_run
check "G started at 1 GPU (H holds the other)" wait_for 10 has_gpus "$g" 1
o=$(submit --best-effort --gpus=1 -t 10 "$T/o.sh")
check "best-effort O ($o) runs, though no GPU is idle" wait_for 60 is_state "$o" RUNNING
show_queue
og=$(shard_gpu "$o") hg=$(shard_gpu "$h") gg=$(shard_gpu "$g")
say "Slurm's shards: H on GPU ${hg:-none}, G on GPU ${gg:-none}, O on GPU ${og:-none}"
owner=
[ -n "$og" ] && [ "$og" = "$hg" ] && owner=$h
[ -n "$og" ] && [ "$og" = "$gg" ] && owner=$g
check "O holds a shard of a guaranteed job's GPU" test -n "$owner"
# tidalctl's view is the last cycle's: the one after O's start names it.
shown() {
	show=$("$TIDALCTL" show job "$o" 2>&1)
	grep -q "SharedGPU=n1-gpu$og" <<<"$show" && grep -q "SharesGPUsWith=$owner" <<<"$show"
}
check "tidalctl show job: O's shared GPU and its partner" wait_for 10 shown
grep -oE '(SharesGPUsWith|SharedGPU)=[^ ]*' <<<"$show" | sed 's/^/    /'
explained() {
	ex=$("$TIDALCTL" explain "$o" 2>&1)
	grep -qE "best-effort, sharing its GPUs with job $owner; their guaranteed jobs use [0-9]+%, under the cap of 80% \([0-9]+% in all\)" <<<"$ex"
}
check "tidalctl explain: beside its owner, under the cap" wait_for 10 explained
grep -m1 'antman' <<<"$ex" | sed 's/^/    /'

check "O trains (past its first checkpoint)" wait_for 60 train_past "$o" 25

# H's sleep ends: G may grow to both GPUs, whole, and O must go first.
# The Reason says it while O stops; its story keeps it.
story() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -o 'ResizeStory=.*'; }
evicted() { ! is_state "$o" RUNNING && story "$o" | grep -q "evicted (checkpointed): guaranteed job $g grows onto its GPUs"; }
check "H ends; O is evicted for G (its story names G)" wait_for 90 evicted
story "$o" | tr ';' '\n' | sed 's/^ */    /'
check "O's launcher checkpointed before it stopped" \
	grep -qE "checkpoint.*(step [1-9]|stop)" "$T/out/$o.out"
check "G grows to 2 GPUs" wait_for 90 has_gpus "$g" 2
scontrol show job "$g" | grep -oE 'TresPerNode=[^ ]*|TRES=[^ ]*' | sed 's/^/    /'
show_queue
waits() { is_state "$o" PENDING && reason_has "$o" "best-effort; no 1-GPU set is idle or shared under the utilisation cap of 80%"; }
check "O waits while G holds both GPUs whole" wait_for 30 waits
say "O: $(job_reason "$o")"

scancel "$g"
check "G gone: O runs again" wait_for 60 is_state "$o" RUNNING
check "O resumes from its checkpoint" \
	wait_for 60 grep -qE "generation [0-9]+: world 1, ranks 0-0 here, resuming from step [1-9]" "$T/out/$o.out"
grep -E "resuming from step" "$T/out/$o.out" | sed 's/^/    /'
scancel "$o"
check "all gone: no GPU and no shard held" wait_for 30 gres_idle n1
finish
