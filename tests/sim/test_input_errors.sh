#!/usr/bin/env bash
# test_input_errors.sh - what tidal-sim says to a user's mistakes: one
# message naming the input, the value and the rule, and the exit status of
# tidal-sim(1): 2 for bad usage (options, names), 1 for bad input (files,
# parameter values and keys).  Needs no anchor data.
: "${SIM:?SIM must point at tidal-sim}"
PASSED=0
FAILED=0
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1

printf 'NodeName=n[1-2] Gres=gpu:4\n' >slurm.conf
printf 'id,submit,gpus,duration\n1,0,2,100\n2,10,4,50\n' >trace.csv
printf 'id,submit,gpus\n1,0,2\n' >nodur.csv
: >empty.csv
printf 'id,submit,gpus,duration\n1,0,2,100\n\n7,10,16,50\n' >big.csv
printf '%s\n' id,submit,gpus,duration,model,batch,deadline \
	1,0,2,100,resnet,64,900 2,5,2,50,vgg,32,900 >ef.csv
mkdir profiles
printf 'global_batch_size,1,2,4\n64,1.0,1.9,3.6\n' >profiles/resnet.csv
printf 'Placement=best-fit\nBogus=1\n' >conf.txt
# A one-job Gavel run: cluster, trace, throughputs, Shockwave's config.
printf 'GresTypes=gpu\nNodeName=w[00-01] CPUs=8 Gres=gpu:v100:1\n' >g.conf
printf 'ResNet-18 (batch size 32)\tpython3 main.py\tcifar10\t--num_steps\t1\t1000\t1\taccordion\t1\t-1.0\t3338\t0\n' >g.trace
printf '{"v100": {"(%s, 1)": {"null": 10.0}}}\n' "'ResNet-18 (batch size 32)'" >tp.json
printf '{"k": "x"}\n' >sw_bad.json
printf '{"log_approximation_bases": [1, "a"]}\n' >sw_bases.json

pass() { PASSED=$((PASSED + 1)); echo "ok    $1"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL  $1"; }

# expect NAME STATUS MESSAGE ARGS...: tidal-sim ARGS exits STATUS and its
# stderr holds MESSAGE ("" = stderr is empty).
expect() {
	local name=$1 want=$2 msg=$3 rc
	shift 3
	"$SIM" --quiet "$@" >out 2>err
	rc=$?
	if [ "$rc" != "$want" ]; then
		fail "$name: exit $rc, want $want ($(head -1 err))"
	elif [ -z "$msg" ] && [ -s err ]; then
		fail "$name: unexpected stderr: $(head -1 err)"
	elif [ -n "$msg" ] && ! grep -qF -- "$msg" err; then
		fail "$name: stderr lacks '$msg': $(head -1 err)"
	else
		pass "$name"
	fi
}
run() { # the cluster and trace every case but the trace ones uses
	expect "$1" "$2" "$3" --cluster slurm.conf --trace trace.csv "${@:4}"
}

# Traces.
expect "a missing column is named" 1 \
	"tidal-sim: nodur.csv:1: cannot tell the trace format: the header is closest to the tidal format but lacks column 'duration'" \
	--cluster slurm.conf --trace nodur.csv --policy fifo
expect "an empty trace says so" 1 "tidal-sim: empty.csv: the trace is empty" \
	--cluster slurm.conf --trace empty.csv --policy fifo
expect "a job larger than the cluster: file, line, job, GPUs" 1 \
	"tidal-sim: big.csv:4: job 7 asks for 16 GPUs; the cluster in slurm.conf has 8" \
	--cluster slurm.conf --trace big.csv --policy fifo

# Parameter values: fatal, and no "using the default".
run "a bad list value" 1 \
	"tidal-sim: --param Tiresias.Thresholds=abc: must be a comma separated list of numbers in [0, 1e+18]" \
	--policy tiresias --param Tiresias.Thresholds=abc
run "a bad choice" 1 \
	"tidal-sim: --param Placement=nowhere: must be one of consolidated, switch-aware, first-fit, best-fit, count, most-free" \
	--policy fifo --param Placement=nowhere
run "a bad number" 1 \
	"tidal-sim: --param Tidal.RestartOverhead=-5: must be a number in [0, 86400]" \
	--policy fifo --param Tidal.RestartOverhead=-5
if grep -q default err; then
	fail "no fallback wording"
else
	pass "no fallback wording"
fi

# Parameter keys.
run "a typo of a key" 1 \
	"tidal-sim: --param Tiresias.Treshold=5: unknown key (did you mean Tiresias.Thresholds?)" \
	--policy tiresias --param Tiresias.Treshold=5 --json out.json
if [ -e out.json ]; then fail "nothing written"; else pass "nothing written"; fi
run "an unknown key of a --policy-config file" 1 \
	"tidal-sim: conf.txt:2: Bogus=1: unknown key" --policy fifo --policy-config conf.txt
expect "a Shockwave config value that is not a number" 1 \
	'tidal-sim: sw_bad.json: "k" must be a number (got "x")' \
	--preset gavel --cluster g.conf --trace g.trace --profiles tp.json \
	--policy shockwave --policy-config sw_bad.json
expect "Shockwave's bases that are not numbers" 1 \
	'tidal-sim: sw_bases.json: "log_approximation_bases" must be an array of numbers' \
	--preset gavel --cluster g.conf --trace g.trace --profiles tp.json \
	--policy shockwave --policy-config sw_bases.json
run "a key of another policy is a warning" 0 \
	"tidal-sim: warning: --param Tiresias.Thresholds=100: ignored: not read by the tidal preset or its policy fifo; a key of policy tiresias" \
	--policy fifo --param Tiresias.Thresholds=100
run "keys the policies read, any case" 0 "" --policy fifo,tiresias \
	--param tiresias.thresholds=100 --param PLACEMENT=best-fit \
	--param Tidal.RestartOverhead=10

# Names and options: usage errors.
run "an unknown preset, with the nearest" 2 \
	"tidal-sim: --preset muir: unknown preset (did you mean muri?); known: elasticflow, gavel, lucid, muri, pollux, tidal" \
	--preset muir --policy fifo
run "an unknown policy, with the nearest" 2 \
	"tidal-sim: --policy fifi: the tidal preset has no such policy (did you mean fifo?); known: " \
	--policy fifo,fifi
run "a policy of another preset" 2 \
	"tidal-sim: --policy muri-s: the tidal preset has no such policy (the muri preset has it: --preset muri)" \
	--policy muri-s
run "an unknown trace format" 2 \
	"tidal-sim: --trace-format csv: unknown trace format; known: muri, elasticflow" \
	--policy fifo --trace-format csv
run "an empty policy list" 2 "tidal-sim: --policy ',' names no policy" --policy ,
run "a missing --policy" 2 "tidal-sim: --policy P[,P...] is required"
run "a malformed --param" 2 "tidal-sim: --param Placement: must be KEY=VALUE" \
	--policy fifo --param Placement
run "a --speedup that is not a positive number" 2 \
	"tidal-sim: --speedup 0: must be a number in (0, 1000000]" --policy fifo --speedup 0
run "--live-result with two policies" 2 \
	"tidal-sim: --live-result: the live run is of one policy; --policy names 2" \
	--policy fifo,sjf --live-result x.out
run "--live with two policies" 2 \
	"tidal-sim: --live: the live run is of one policy; --policy names 2" \
	--policy fifo,sjf --live live.d
run "--live with another preset" 2 \
	"tidal-sim: --live runs sched/tidal, which the tidal preset models; drop --preset muri" \
	--policy srtf --preset muri --live live.d
run "a bad Tidal.CycleInterval" 1 \
	"tidal-sim: --param Tidal.CycleInterval=-1: must be a number in [0, 3600]" \
	--policy fifo --param Tidal.CycleInterval=-1
expect "a bad option, said once" 2 "tidal-sim: unknown option '--bogus'" --bogus
if [ "$(grep -c bogus err)" = 1 ]; then
	pass "one message for --bogus"
else
	fail "one message for --bogus: $(cat err)"
fi
expect "a near option is suggested" 2 \
	"tidal-sim: unknown option '--polcy' (did you mean --policy?)" --polcy fifo
expect "an option without its value" 2 \
	"tidal-sim: option '--cluster' needs a value" --cluster

# The tidal preset's elasticflow and its throughput tables.
ef() {
	expect "$1" "$2" "$3" --cluster slurm.conf --trace ef.csv \
		--policy elasticflow "${@:4}"
}
ef "elasticflow without profiles warns" 0 \
	"tidal-sim: warning: policy elasticflow has no throughput profiles, so it will reject every job; give --profiles DIR or --param ElasticFlow.Profiles=DIR"
ef "elasticflow takes --profiles" 0 \
	"tidal-sim: warning: policy elasticflow: 1 of 2 jobs have no throughput profile in profiles and will be rejected (first: job 2, model 'vgg' at batch 32)" \
	--profiles profiles --json ef.json
if jq -e '.policies.elasticflow.jobs == 1' ef.json >/dev/null; then
	pass "the profiled job ran"
else
	fail "the profiled job ran"
fi
ef "a --profiles that does not load" 1 \
	"tidal-sim: --profiles nowhere: cannot read throughput tables" --profiles nowhere

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
