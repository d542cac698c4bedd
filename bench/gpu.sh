#!/usr/bin/env bash
# bench/gpu.sh BUILD [DIR] - the cuda-nccl backend's numbers on a GPU, as
# tables: cuBLAS SGEMM alone at each GEMM shape of the model against a
# whole training step (ms, TFLOP/s, the step's share of the GEMM-only
# rate), and the checkpoint's write (D2H + file, fsync) and read (file +
# H2D) rates in DIR (default $BUILD/bench-gpu).  Two models: the default
# small MLP and the ~256 MB one of bench/ckpt.sh at a GPU-sized batch.
# Without a usable GPU it prints "skipped: no GPU (reason)" and exits 0.
#
# GPL-2.0-or-later.
set -uo pipefail

BUILD=${1:-build}
DIR=${2:-${BENCH_GPU_DIR:-$BUILD/bench-gpu}}
T=$BUILD/tidal-train
if [ ! -x "$T" ]; then
	echo "bench/gpu.sh: skipped: $T is not built (needs libgloo-dev)"
	exit 0
fi
mkdir -p "$DIR"
header="GPU backend ($(uname -n))"
run() {
	local err out
	if ! out=$(TIDAL_BENCH_DIR=$DIR "$T" --bench-gemm --backend cuda "$@" 2>"$DIR/err"); then
		err=$(sed -n 's/.*no GPU (\(.*\)).*/\1/p' "$DIR/err" | head -1)
		if [ -n "$err" ]; then
			echo "bench/gpu.sh: skipped: no GPU ($err)"
			exit 0
		fi
		echo "bench/gpu.sh: tidal-train --bench-gemm $*: $(cat "$DIR/err")" >&2
		exit 1
	fi
	[ -n "$header" ] && printf '%s\n\n' "$header" && header=
	printf '%s\n\n' "$out"
}
run --hidden 256 --layers 2 --global-batch 64
run --hidden 2720 --layers 4 --global-batch 1024
run --hidden 4096 --layers 4 --global-batch 4096
rm -f "$DIR/err"
