#!/usr/bin/env bash
# tests/node/test_gpu.sh - the cuda-nccl backend of tidal-train on a real
# GPU: the loss goes down on the GPU; a GPU checkpoint resumes on CPU and a
# CPU checkpoint resumes on the GPU, each within tolerance of the run it
# continues; a GPU run resumed on the GPU reproduces itself bit for bit;
# with two or more GPUs, two ranks train over NCCL; --bench-gemm prints its
# table.  Without a usable GPU (CI, or built without CUDA) every check is
# skipped with the reason.
set -uo pipefail
NAME=test_gpu
. "$(dirname "$0")/lib.sh"

# Does a GPU train here?  The start event says which backend was picked;
# the one stderr line says why not.
"$T" --backend cuda --iters 0 --log-every 0 >"$W/probe" 2>"$W/probe.err"
if [ "$(jq -r 'select(.ev=="start") | .backend' "$W/probe")" != cuda-nccl ]; then
	why=$(sed -n 's/.*no GPU (\(.*\)).*/\1/p' "$W/probe.err" | head -1)
	echo "skip - no GPU (${why:-see $T --backend cuda}): GPU tests not run"
	finish
fi

MODEL=(--hidden 48 --layers 2 --global-batch 30 --lr 0.003 --seed 7 --log-every 1)
# one BACKEND OUT CKPTDIR RESUME ARGS...: a world-1 run
one() {
	local be=$1 out=$2 dir=$3 resume=$4
	shift 4
	TIDAL_CKPT_DIR=$dir TIDAL_RESUME=$resume timeout 120 "$T" --backend "$be" \
		"${MODEL[@]}" "$@" >"$out" 2>"$out.err"
}
losses() { jq -r "select(.ev==\"step\" and .step>$2) | \"\(.step) \(.loss)\"" "$1"; }
crc() { jq -r 'select(.ev=="done") | .params_crc32c' "$1"; }
# within FILE_A FILE_B REL: the same steps, losses within REL relative
within() {
	awk -v r="$3" 'NR == FNR { w[$1] = $2; next }
		{ n++; d = $2 - w[$1]; if (d < 0) d = -d; if (d > r * w[$1]) bad++ }
		END { exit !(n > 0 && !bad) }' "$1" "$2"
}

check "GPU: 60 steps finish" one cuda "$W/g" "$W/none" "" --iters 60
check "GPU: start event says cuda-nccl" \
	test "$(jq -r 'select(.ev=="start") | .backend' "$W/g")" = cuda-nccl
first=$(losses "$W/g" 0 | head -1 | cut -d' ' -f2)
last=$(losses "$W/g" 0 | tail -1 | cut -d' ' -f2)
check "GPU: loss decreases ($first -> $last)" \
	awk -v a="$first" -v b="$last" 'BEGIN { exit !(b < a / 2) }'
one cpu "$W/c" "$W/none" "" --iters 60
check "GPU and CPU losses agree within 2% over 60 steps" \
	within <(losses "$W/c" 0) <(losses "$W/g" 0) 0.02

# GPU checkpoint -> CPU, CPU checkpoint -> GPU, GPU -> GPU
one cuda "$W/g25" "$W/ckg" "" --iters 25 --ckpt-every 25
one cpu "$W/c25" "$W/ckc" "" --iters 25 --ckpt-every 25
ckg=$W/ckg/ckpt-000000000025.tck ckc=$W/ckc/ckpt-000000000025.tck
check "GPU checkpoint at step 25 is complete" test -f "${ckg%.tck}.done"
check "GPU checkpoint resumes on CPU" one cpu "$W/gc" "$W/x1" "$ckg" --iters 60
check "GPU -> CPU: losses 26..60 within 2% of the GPU run's" \
	within <(losses "$W/g" 25) <(losses "$W/gc" 25) 0.02
check "CPU checkpoint resumes on the GPU" one cuda "$W/cg" "$W/x2" "$ckc" --iters 60
check "CPU -> GPU: losses 26..60 within 2% of the CPU run's" \
	within <(losses "$W/c" 25) <(losses "$W/cg" 25) 0.02
check "GPU -> GPU resume finishes" one cuda "$W/gg" "$W/x3" "$ckg" --iters 60
check "GPU -> GPU: losses 26..60 and parameters equal bit for bit" \
	test "$(losses "$W/gg" 25)" = "$(losses "$W/g" 25)" -a "$(crc "$W/gg")" = "$(crc "$W/g")"

# two ranks over NCCL, when there are two GPUs (two ranks on one GPU is
# refused by NCCL, and the world falls back to CPU + Gloo together)
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
"$T" --store-server 127.0.0.1:0 >"$W/store.out" &
PIDS+=($!)
for _ in $(seq 50); do grep -q listening "$W/store.out" && break; sleep 0.1; done
STORE=$(sed -n 's/^store: listening on //p' "$W/store.out")
world2() {
	local out=$1 r rc=0 pids=()
	for r in 0 1; do
		TIDAL_RANK=$r TIDAL_WORLD=2 TIDAL_LOCAL_RANK=$r TIDAL_STORE=$STORE \
		TIDAL_STORE_PREFIX=gpu/$out timeout 120 "$T" --backend cuda \
			"${MODEL[@]}" --iters 60 >"$W/$out.$r" 2>"$W/$out.$r.err" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=$?; done
	return $rc
}
check "world 2: both ranks finish" world2 w2
b0=$(jq -r 'select(.ev=="start") | .backend' "$W/w2.0")
b1=$(jq -r 'select(.ev=="start") | .backend' "$W/w2.1")
check "world 2: both ranks picked the same backend ($b0, $b1)" test "$b0" = "$b1"
if [ "${ngpu:-0}" -ge 2 ]; then
	check "world 2 on $ngpu GPUs: cuda-nccl" test "$b0" = cuda-nccl
	check "world 2 (NCCL): losses within 2% of world 1 on the GPU" \
		within <(losses "$W/g" 0) <(losses "$W/w2.0" 0) 0.02
else
	echo "skip - world 2 over NCCL needs 2 GPUs (found ${ngpu:-0})"
fi

"$T" --bench-gemm --backend cuda --hidden 256 --global-batch 256 >"$W/bench" 2>&1
check "--bench-gemm prints the GEMM, step and checkpoint rows" \
	test -n "$(grep 'all GEMMs of one step' "$W/bench")" -a \
	-n "$(grep 'training step' "$W/bench")" -a \
	-n "$(grep 'read: file + H2D' "$W/bench")"
finish
