#!/bin/bash
# test_pollux.sh - Policy=pollux live: four elastic trainers with different
# models and batch ranges on 4 x 8 GPUs, arriving over time, each through
# tidal-launch and tidal-train (profile mode, CPU/Gloo, one rank per GPU)
# with tidald on every node.  Pollux re-allocates every 15 s (and at each
# arrival and end), from what the trainers report.
#
#   A  model ma, --elastic-gpus=1-8, batch 32..512
#   B  model mb, --elastic-gpus=2-8, batch 64..1024      (+15 s)
#   C  model ma, --elastic-gpus=1-4, batch 16..128, short (+30 s): ends
#   D  model mb, --elastic-gpus=1-8, batch 32..256       (+45 s)
#
# The profiles make a step cost a fixed overhead plus a per-sample time
# and a synchronisation that grows with the GPUs, so a larger local batch
# is cheaper per sample and more GPUs help less than linearly.  Checked,
# over about three minutes sampled every 2 s:
#   - every job starts; Pollux grows jobs from their floors (the artifact's
#     exploration: at most twice the GPUs measured) and allocations change
#     (slurmctld's log: the plugin carried out a resize);
#   - a batch above --train-batch is chosen and reaches a trainer
#     (tidal-launch: "global batch B, chosen by the scheduler"), and the
#     batch Pollux chose for a job grew while its measured gradient noise
#     grew;
#   - tidalctl explain shows each decision's speedup, efficiency,
#     throughput, batch and objective, and no sample has the chosen
#     allocation's objective below that of keeping the current one;
#   - C completes, and the others get its GPUs;
#   - every trainer resumes its training across each restart rather than
#     starting over: the mean of the three losses after it is at most
#     1.1 x the mean of the three before, or, once training has brought
#     the loss down, gives back at most half of that (a run from scratch
#     goes back to the first losses).  One step's loss is one batch's, and
#     Pollux changes the batch, so a resumed run's next losses scatter by
#     more than 10% (seen: 0.805 -> 0.890 after a restart that kept every
#     step).
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
skip_unless_node_side
cluster_up "Policy=pollux
Pollux.Interval=15
Pollux.RestartPenalty=5
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
RejectAction=cancel"
check "4 agents up" start_agents

# Iterations/s at G GPUs and global batch B: a step takes 0.15 s of
# overhead, PER_SAMPLE s per local sample and 0.03 s per doubling of G.
profile() { # profile FILE PER_SAMPLE
	awk -v ps="$2" 'BEGIN {
		printf "global_batch_size,1,2,3,4,5,6,7,8\n"
		for (b = 16; b <= 1024; b *= 2) {
			printf "%d", b
			for (g = 1; g <= 8; g++)
				printf ",%.4f", 1 / (0.15 + ps * b / g + 0.03 * log(g) / log(2))
			printf "\n"
		}
	}' >"$1"
}
profile "$T/out/ma.csv" 0.002
profile "$T/out/mb.csv" 0.001

# job NAME MODEL RANGE START_GPUS BATCH MAX_BATCH ITERS SEED
job() {
	local name=$1 model=$2 range=$3 gpus=$4 batch=$5 max=$6 iters=$7 seed=$8
	train_script "$T/out/$name.sh" --hidden 32 --layers 1 --lr 0.003 \
		--seed "$seed" --global-batch "$batch" --iters "$iters" \
		--ckpt-every-s 2 --log-every 5 --profile "$T/out/$model.csv" \
		--profile-model "$model"
	submit -N1 -J "$name" --open-mode=append --elastic-gpus="$range" \
		--gpus="$gpus" \
		--train-model="$model" --train-batch="$batch" \
		--train-max-batch="$max" --train-iters="$iters" "$T/out/$name.sh"
}

declare -A id train_batch
sample_dir=$T/out/samples
mkdir -p "$sample_dir"
# One line per job and sample: time GPUs batch noise objective keep, "-"
# for what is not (yet) there.
field() { # field TEXT REGEX: the first match's value, or -
	local v
	v=$(grep -oE "$2" <<<"$1" | head -n 1 | sed -E 's/^[^=]*=//; s/^noise scale //')
	echo "${v:--}"
}
sample() {
	local j t n ex sh
	t=$SECONDS
	for n in "${!id[@]}"; do
		j=${id[$n]}
		ex=$("$TIDALCTL" -o explain "$j" 2>/dev/null) || continue
		sh=$("$TIDALCTL" -o show job "$j" 2>/dev/null)
		echo "$t $(field "$sh" 'AllocGPUs=[0-9]+') $(field "$ex" ' batch=[0-9]+') $(field "$sh" 'noise scale [0-9.e+-]+') $(field "$ex" ' objective=[0-9.e+-]+') $(field "$ex" 'objective_keep=[0-9.e+-]+')" \
			>>"$sample_dir/$n"
		field "$ex" 'Action=[A-Za-z]+' >>"$sample_dir/$n.actions"
	done
}
run_for() { # run_for SECONDS: sample every 2 s
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do sample; sleep 2; done
}

train_batch=([a]=32 [b]=64 [c]=16 [d]=32)
id[a]=$(job a ma 1-8 1 32 512 100000000 1)
run_for 15
id[b]=$(job b mb 2-8 2 64 1024 100000000 2)
run_for 15
id[c]=$(job c ma 1-4 1 16 128 700 3)
run_for 15
id[d]=$(job d mb 1-8 1 32 256 100000000 4)
say "jobs: a=${id[a]} b=${id[b]} c=${id[c]} d=${id[d]}"
all_ran() {
	local n
	for n in a b c d; do
		grep -q "generation 0 running" "$T/out/${id[$n]}.out" 2>/dev/null ||
			return 1
	done
}
check "all four jobs start" wait_for 60 all_ran
c_done() { ! squeue -h -j "${id[c]}" 2>/dev/null | grep -q .; }
run_for 150
show_queue

for n in a b c d; do
	say "$n (${id[$n]}): GPUs over time: $(awk '{print $2}' "$sample_dir/$n" | uniq | tr '\n' ' ')"
	say "$n: batch chosen: $(awk '$3 != "-" {print $3}' "$sample_dir/$n" | uniq | tr '\n' ' ')"
done
grew() { awk -v lo="$2" '$2 != "-" && $2 > lo { f = 1 } END { exit !f }' "$sample_dir/$1"; }
check "Pollux grew A beyond its first GPU" grew a 1
check "... and D beyond its first GPU" grew d 1
# A Resize is in explain only until it is carried out, which a sample
# every 2 s (4 s and more on a loaded machine) can miss: slurmctld's log
# has every one the plugin carried out.
changes=$(cat "$sample_dir"/?.actions | grep -c '^Resize')
resizes=$(grep -cE 'sched/tidal: resize JobId=[0-9]+ to [0-9]+ GPUs: (checkpoint_stop|signal|no checkpoint signal)' "$T/log/slurmctld.log")
check "allocations changed: slurmctld resized jobs $resizes times ($changes samples saw a Resize decided)" \
	test "$resizes" -ge 1
check "C completed: $(grep -o 'training done at step [0-9]*' "$T/out/${id[c]}.out" | head -n 1)" \
	eval 'c_done && grep -q "training done at step" "$T/out/${id[c]}.out"'

above=0
for n in a b c d; do
	b=$(grep -o 'global batch [0-9]*, chosen by the scheduler' "$T/out/${id[$n]}.out" |
		awk '{print $3 + 0}' | sort -n | tail -n 1)
	say "$n: largest batch a launcher got: ${b:-none} (--train-batch ${train_batch[$n]})"
	[ -n "$b" ] && [ "$b" -gt "${train_batch[$n]}" ] && above=$((above + 1))
done
check "a batch above --train-batch reached the trainers of $above jobs" \
	test "$above" -ge 1
# The batch chosen for A, against its noise, where both moved.
noise_and_batch() { # the first and last sample of JOB with both
	awk '$3 != "-" && $4 != "-" { if (!f) { b0 = $3; n0 = $4; f = 1 } b1 = $3; n1 = $4 }
		END { if (f) print b0, n0, b1, n1 }' "$sample_dir/$1"
}
grown=0
for n in a b d; do
	read -r b0 n0 b1 n1 <<<"$(noise_and_batch "$n")"
	say "$n: batch $b0 at noise scale $n0 -> batch $b1 at noise scale $n1"
	if [ -n "$b1" ] && awk -v a="$b0" -v b="$b1" -v x="$n0" -v y="$n1" \
		'BEGIN { exit !(b > a && y > x) }'; then
		grown=$((grown + 1))
	fi
done
check "a job's chosen batch grew as its measured gradient noise grew ($grown jobs)" \
	test "$grown" -ge 1
worse=$(cat "$sample_dir"/[abcd] | awk '$5 != "-" && $6 != "-" && $5 + 1e-9 < $6' | wc -l)
total=$(cat "$sample_dir"/[abcd] | awk '$5 != "-" && $6 != "-"' | wc -l)
check "no decision's objective is below keeping the allocation ($worse of $total samples)" \
	test "$worse" -eq 0 -a "$total" -gt 0
ex=$("$TIDALCTL" -o explain "${id[a]}")
say "explain A: $(grep -o 'speedup=.*' <<<"$ex" | head -n 1)"
for k in speedup efficiency throughput batch objective objective_keep; do
	check "tidalctl explain shows $k" grep -q " $k=" <<<"$ex"
done

# Loss across every restart: the launcher logs "step N loss X" lines, and
# each run after a requeue starts "resuming from step" (--open-mode=append
# keeps every run's lines in the job's output).
loss_falls() { # loss_falls OUTFILE: every restart resumes, not restarts
	awk '/resuming from step/ { cut[++k] = n }
		/ step [0-9]+ loss / { for (i = 1; i <= NF; i++) if ($i == "loss") l[++n] = $(i + 1) }
		END {
			bad = 0
			first = (l[1] + l[2] + l[3]) / 3 # where training began
			for (c = 1; c <= k; c++) {
				p = cut[c]; if (p < 3 || p + 3 > n) continue
				before = (l[p] + l[p - 1] + l[p - 2]) / 3
				after = (l[p + 1] + l[p + 2] + l[p + 3]) / 3
				limit = 1.1 * before
				if (before + (first - before) / 2 > limit)
					limit = before + (first - before) / 2
				printf "restart %d: %.4f -> %.4f (at most %.4f)\n", c, before, after, limit
				if (after > limit) bad++
			}
			exit bad > 0
		}' "$1"
}
for n in a b c d; do
	out=$T/out/${id[$n]}.out
	restarts=$(grep -c "resuming from step" "$out")
	check "$n: training resumes across its $restarts restarts$(loss_falls "$out" | tr '\n' ';' | sed 's/^/ (/; s/;$/)/')" \
		loss_falls "$out"
done
finish
