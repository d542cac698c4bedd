#!/usr/bin/env bash
# bench/ckpt.sh BUILD [DIR] - checkpoint write rate against the disk's own
# sequential write rate, measured the same way (into DIR, fsync included).
#
# The checkpoint is a real one: tidal-train trains one step of an MLP whose
# parameters plus Adam state come to ~256 MB (hidden 2720, 4 hidden layers:
# 22.4 M parameters x 3 tensors x 4 bytes) and writes it with
# --ckpt-every 1; its "ckpt" event carries bytes, ms and MB/s (temp file,
# fsync, rename, marker, directory fsync).  The disk's rate is
# `dd bs=8M count=32 conv=fsync` of zeros into the same directory.  Each is
# run BENCH_CKPT_REPS times (default 5), alternating which goes first (a
# shared or virtual disk's rate drifts); the median is printed.  Nothing
# here passes or fails; the target is a ratio of at least 80%.
#
# GPL-2.0-or-later.
set -euo pipefail

BUILD=${1:-build}
DIR=${2:-${BENCH_CKPT_DIR:-$BUILD/bench-ckpt}}
REPS=${BENCH_CKPT_REPS:-5}
T=$BUILD/tidal-train
if [ ! -x "$T" ]; then
	echo "bench/ckpt.sh: $T is not built (needs libgloo-dev); skipped"
	exit 0
fi
mkdir -p "$DIR"
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

ck=() dd_=()
ckpt_once() {
	rm -rf "$DIR/job"
	sync
	ev=$(TIDAL_CKPT_DIR=$DIR/job "$T" --backend cpu --hidden 2720 --layers 4 \
		--global-batch 8 --iters 1 --ckpt-every 1 --log-every 0 |
		grep '"ev":"ckpt"')
	ck+=("$(echo "$ev" | sed 's/.*"mb_s":\([0-9.e+]*\).*/\1/')")
	bytes=$(echo "$ev" | sed 's/.*"bytes":\([0-9.e+]*\).*/\1/')
}
dd_once() {
	sync
	out=$(LC_ALL=C dd if=/dev/zero of="$DIR/dd.tmp" bs=8M count=32 \
		conv=fsync 2>&1 | tail -1)
	# "268435456 bytes (268 MB, 256 MiB) copied, 0.5 s, 537 MB/s"
	secs=$(echo "$out" | sed 's/.*copied, \([0-9.e+-]*\) s.*/\1/')
	dd_+=("$(awk -v s="$secs" 'BEGIN { printf "%.1f", 268435456 / 1e6 / s }')")
	rm -f "$DIR/dd.tmp"
}
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for ((i = 0; i < REPS; i++)); do
	if ((i % 2)); then dd_once; ckpt_once; else ckpt_once; dd_once; fi
done
rm -rf "$DIR/job"
c=$(printf '%s\n' "${ck[@]}" | median)
d=$(printf '%s\n' "${dd_[@]}" | median)
echo "checkpoint write rate vs the disk's (bench/ckpt.sh): $(uname -n)," \
     "$(df -P "$DIR" | awk 'NR == 2 { print $1 }'), median of $REPS," \
     "$bytes B checkpoint"
echo "  load before: $load0; after: $(cut -d' ' -f1-3 /proc/loadavg)" \
     "(a shared disk or CPU skews single runs)"
printf '  %-4s %14s %14s %7s\n' run "ckpt MB/s" "dd MB/s" ratio
for ((i = 0; i < REPS; i++)); do
	awk -v i=$((i + 1)) -v c="${ck[i]}" -v d="${dd_[i]}" \
	    'BEGIN { printf "  %-4s %14.1f %14.1f %6.0f%%\n", i, c, d, 100 * c / d }'
done
awk -v c="$c" -v d="$d" 'BEGIN { printf "  %-4s %14.1f %14.1f %6.0f%%   (target >= 80%%)\n", "med", c, d, 100 * c / d }'
