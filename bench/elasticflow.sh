#!/usr/bin/env bash
# bench/elasticflow.sh BUILD - replay cost of the elasticflow preset against
# the anchor's (shared/anchors/README.md "What the anchors cost").  Prints CPU
# seconds per run and the mean and peak number of jobs in the system; not a
# test.  ElasticFlow's cost per event grows with the jobs in the system:
# every GPU level granted from the leftover re-evaluates every other job's
# marginal (core/policies/elasticflow_leftover.cc keeps that from
# re-planning jobs whose inputs did not change).
#
#   fig10       generated_fig10_100jobs_1500lam_seed1.csv, n16g8, 240 s
#   195job      the 195-job real trace, n16g8, 240 s
#   1000-job    ten back-to-back copies of the Fig 10 trace (the anchor's
#               1000-job trace is not shipped); squeezed x2 and x4 in time
#               to show the growth with concurrency
#   cluster01   1595 jobs, n64g8, 60 s slot
set -euo pipefail
BUILD=${1:-build}
SIM=$BUILD/tidal-sim
EF=${ANCHORS:-$(cd "$(dirname "$0")/.." && pwd)/../shared/anchors}/elasticflow
[ -d "$EF" ] || { echo "no anchors at $EF"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# tile TRACE COPIES SQUEEZE
tile() {
	awk -F, -v n="$2" -v sq="$3" 'NR == 1 { print; next }
	{ r[NR] = $0; if ($2 > m) m = $2 }
	END {
		span = m + 1500; id = 0
		for (c = 0; c < n; c++)
			for (i = 2; i <= NR; i++) {
				split(r[i], f, ",")
				s = f[2] + c * span; d = f[5] + c * span
				ns = int(s / sq)
				printf "%d,%d,%s,%s,%d", id++, ns, f[3], f[4], ns + d - s
				for (k = 6; k <= length(f); k++) printf ",%s", f[k]
				print ""
			}
	}' "$1"
}

# run NAME CLUSTER TRACE POLICIES [ARGS...]
run() {
	local name=$1 cluster=$2 trace=$3 pols=$4
	shift 4
	"$SIM" --preset elasticflow --profiles "$EF/throughputs_A100" \
		--cluster "$EF/cluster_specs/$cluster.csv" --trace "$trace" \
		--policy "$pols" --quiet --json "$tmp/o.json" \
		--jobs-csv "$tmp/j.csv" "$@"
	python3 - "$name" "$tmp/o.json" "$tmp/j.csv" <<'PY'
import csv, json, sys
name, js, jc = sys.argv[1:]
rows = [r for r in csv.DictReader(open(jc)) if r["rejected"] == "0"]
for pol, v in json.load(open(js))["policies"].items():
    rs = [r for r in rows if r["policy"] == pol]
    span = max(float(r["end"]) for r in rs) - min(float(r["submit"]) for r in rs)
    busy = sum(float(r["jct"]) for r in rs) / span
    # peak: most jobs in the system (submitted, not ended) at once
    ev = sorted([(float(r["submit"]), 1) for r in rs] +
                [(float(r["end"]), -1) for r in rs])
    cur = peak = 0
    for _, d in ev:
        cur += d
        peak = max(peak, cur)
    print(f"{name:22s} {pol:20s} cpu {v['cpu_seconds']:8.3f} s"
          f"   jobs {v['jobs']:5d}   in system mean {busy:6.1f}"
          f" peak {peak:4d}")
PY
}

F10=$EF/traces/generated_fig10_100jobs_1500lam_seed1.csv
run fig10 n16g8 "$F10" elasticflow,elasticflow-noadmit,edf,edf-admit,tiresias,gandiva,themis
run 195job n16g8 "$EF/traces/195job.csv" elasticflow
for sq in 1 2 4; do
	tile "$F10" 10 "$sq" >"$tmp/t.csv"
	run "1000-job squeeze x$sq" n16g8 "$tmp/t.csv" elasticflow
done
run cluster01 n64g8 "$EF/traces/cluster01.csv" elasticflow \
	--param ElasticFlow.Slot=60
