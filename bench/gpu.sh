#!/usr/bin/env bash
# bench/gpu.sh BUILD [DIR] - the cuda-nccl backend's numbers on a GPU, as
# tables: cuBLAS SGEMM alone at each GEMM shape of the model and at the
# device's peak (8192^3) against a whole training step (ms, TFLOP/s, the
# step's share of each), and the checkpoint's write (D2H + file, fsync) and
# read (file + H2D) rates in DIR (default $BUILD/bench-gpu), with dd's
# write rate in DIR beside them.  Three models: the default small MLP, the
# ~256 MB one of bench/ckpt.sh at a GPU-sized batch, and one whose GEMMs
# are 4096 square.  Without a usable GPU it prints "skipped: no GPU
# (reason)" and exits 0.
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

# The disk's own sequential write rate in the same directory, for the
# checkpoint rows above: dd of 1 GiB with one fsync at the end.
dd_rate=$(dd if=/dev/zero of="$DIR/dd" bs=1M count=1024 conv=fsync 2>&1 |
	sed -n 's/.*copied, \([0-9.]*\) s.*/\1/p')
rm -f "$DIR/dd"
[ -n "$dd_rate" ] && awk -v s="$dd_rate" -v d="$DIR" 'BEGIN {
	printf "  %-40s %8.2f %8.1f\n", "dd 1 GiB to " d " (fsync)", s * 1e3, 1073.741824 / s }'
