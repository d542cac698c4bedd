#!/bin/bash
# test_metrics.sh - the Prometheus metrics of sched/tidal and of every
# tidald, scraped by Debian's real prometheus server and read back over
# its HTTP API (4 nodes x 4 fake GPUs, Policy=elastic-edf).
#
#   MetricsPort set by scontrol reconfigure: the plugin serves /metrics
#   (text exposition 0.0.4); other paths 404, other methods 405
#   tidald --metrics 127.0.0.1:0 on every node (port in its log)
#   prometheus scrapes the plugin and the four agents every second
#   R  8 GPUs, rigid; E --elastic-gpus=4-16 starts at 8, grows to 16 when
#      R ends: the resize is in the scraped series (tidal_resizes_total,
#      its checkpoint and restart phases), and so are the cycles, the
#      decisions by action, the jobs by state and class, the agents up
#   X  a --deadline it cannot meet: tidal_admissions_total{result="rejected"}
#   L  --elastic-gpus=2-4 under tidal-launch + tidal-train on n4; D (2 GPUs,
#      deadline) makes it shrink: n4's tidald checkpoints it on the
#      plugin's order (tidal_agent_checkpoints_total, its seconds and
#      bytes), and n1's tidald fetches that checkpoint from n4
#      (tidal_agent_fetches_total, bytes)
#   MetricsPort=0 by reconfigure: nothing listens there any more
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
skip_unless_node_side
skip_unless_python "fetch_on"
for b in prometheus curl jq; do
	command -v $b >/dev/null 2>&1 ||
		{ say "skipped: $b not installed"; echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
done
# E's resize signals its batch script (no launcher: CheckpointTimeout);
# L's goes through n4's tidald, which acks as soon as it has checkpointed.
conf="Policy=elastic-edf
CycleInterval=1
ResizeSignal=USR1
CheckpointTimeout=3
RejectAction=cancel"
cluster_up "$conf"
PORT_METRICS=$((PORT_CTL + 6)) PORT_PROM=$((PORT_CTL + 7))
url="http://127.0.0.1:$PORT_METRICS"

check "no metrics before MetricsPort is set" \
	eval "! curl -s -o /dev/null --max-time 2 $url/metrics"
set_tidal_conf "$conf
MetricsPort=$PORT_METRICS
MetricsAddress=127.0.0.1"
check "reconfigure: slurmctld says where the metrics are" \
	wait_for 20 grep -q "metrics at $url/metrics" "$T/log/slurmctld.log"
scrape() { curl -s --max-time 5 "$url/metrics"; }
check "/metrics answers in the text exposition format" \
	eval "curl -s -o /dev/null -w '%{content_type}' $url/metrics | grep -q 'text/plain; version=0.0.4'"
check "/metrics has the cycle histogram and the build" \
	eval "scrape | grep -q '^tidal_cycle_seconds_bucket{le=\"+Inf\"} ' && scrape | grep -q '^tidal_build_info{version=\"[0-9.]*\"} 1$'"
check "/metrics has # HELP and # TYPE for each family" \
	eval "[ \"\$(scrape | grep -c '^# TYPE tidal_')\" -eq \"\$(scrape | grep -c '^# HELP tidal_')\" ] && [ \"\$(scrape | grep -c '^# TYPE tidal_')\" -ge 12 ]"
check "another path is 404" \
	eval "[ \"\$(curl -s -o /dev/null -w '%{http_code}' $url/nope)\" = 404 ]"
check "POST is 405" \
	eval "[ \"\$(curl -s -o /dev/null -w '%{http_code}' -X POST -d x=1 $url/metrics)\" = 405 ]"

TIDALD_ARGS="--metrics 127.0.0.1:0"
check "4 agents up, each serving metrics" start_agents
targets=""
for n in $NODES; do
	p=$(grep -o 'metrics at http://127.0.0.1:[0-9]*' "$T/log/tidald-$n.log" | tail -1 | cut -d: -f3)
	[ -n "$p" ] && targets+="'127.0.0.1:$p', "
done
check "every tidald says where its metrics are" test "$(grep -o "'" <<<"$targets" | wc -l)" -eq 8
mkdir -p "$T/prom"
cat >"$T/etc/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: tidal
    static_configs:
      - targets: ['127.0.0.1:$PORT_METRICS']
  - job_name: tidald
    static_configs:
      - targets: [${targets%, }]
EOF
prometheus --config.file="$T/etc/prometheus.yml" --storage.tsdb.path="$T/prom" \
	--web.listen-address="127.0.0.1:$PORT_PROM" --log.level=warn \
	>"$T/log/prometheus.log" 2>&1 &
echo $! >"$T/run/prometheus.pid"
prom="http://127.0.0.1:$PORT_PROM"
stop_prometheus() { kill_pidfile "$T/run/prometheus.pid"; }
trap 'stop_prometheus; cluster_down' EXIT
# query EXPR: the value of EXPR's first series now, "" if none.
query() {
	curl -s --max-time 5 -G "$prom/api/v1/query" --data-urlencode "query=$1" |
		jq -r '.data.result[0].value[1] // empty' 2>/dev/null
}
at_least() { local v; v=$(query "$1"); [ -n "$v" ] && awk -v v="$v" -v m="$2" 'BEGIN { exit !(v >= m) }'; }
check "prometheus is ready" wait_for 60 curl -sf -o /dev/null "$prom/-/ready"
check "prometheus scrapes the plugin (up == 1)" wait_for 30 at_least 'up{job="tidal"}' 1
check "prometheus scrapes the four agents" wait_for 30 at_least 'sum(up{job="tidald"})' 4
check "scraped: the plugin counts 4 agents up" wait_for 20 at_least 'tidal_agents{state="up"}' 4
check "scraped: every agent registered" wait_for 20 at_least 'sum(tidal_agent_registered)' 4
check "scraped: cycles run" wait_for 20 at_least 'tidal_cycles_total' 1

log="$T/out/elastic.log"
elastic_job=$(elastic_sleeper "$log")
r=$(submit -N2 --gpus-per-node=4 --wrap 'sleep 600')
check "R ($r, 8 GPUs) starts" wait_state 30 "$r" RUNNING
e=$(submit --elastic-gpus=4-16 --gpus=4 --wrap "$elastic_job")
check "E ($e, elastic 4-16) starts at the 8 GPUs left" wait_for 40 has_gpus "$e" 8
check "E's script runs on 2 nodes" wait_for 30 grep -q "start nodes=2" "$log"
check "scraped: one elastic and one rigid job running" \
	wait_for 20 eval "at_least 'tidal_jobs{state=\"running\",class=\"elastic\"}' 1 && at_least 'tidal_jobs{state=\"running\",class=\"rigid\"}' 1"
scancel "$r"
check "E grows to 16 once R ends" wait_for 90 has_gpus "$e" 16
check "scraped: the resize (tidal_resizes_total{kind=\"resize\"} >= 1)" \
	wait_for 20 at_least 'tidal_resizes_total{kind="resize"}' 1
check "scraped: its checkpoint phase timed" \
	wait_for 20 at_least 'tidal_resize_phase_seconds_count{kind="resize",phase="checkpoint"}' 1
check "scraped: its restart phase timed" \
	wait_for 20 at_least 'tidal_resize_phase_seconds_count{kind="resize",phase="restart"}' 1
check "scraped: resize decisions counted" \
	wait_for 20 at_least 'tidal_decisions_total{action="resize"}' 1
x=$(submit -N1 --gpus-per-node=4 -t 120 --time-min=5 --deadline=now+10minutes --wrap 'sleep 600')
check "scraped: X ($x, infeasible deadline) counted as rejected" \
	wait_for 30 at_least 'tidal_admissions_total{result="rejected"}' 1
check "scraped: the policy in force" \
	wait_for 10 at_least 'tidal_policy_info{policy="elastic-edf"}' 1
check "scraped: the p99 cycle time is a number (histogram_quantile)" \
	eval "query 'histogram_quantile(0.99, rate(tidal_cycle_seconds_bucket[1m]))' | grep -Eq '^[0-9.e+-]+$'"

scancel "$e" "$x"
wait_for 30 no_jobs_active

# ---- the agents' side: a resize through n4's tidald, a fetch on n1
r2=$(submit -N3 --gpus-per-node=4 --wrap 'sleep 600')
check "R2 ($r2, 12 GPUs) starts" wait_state 30 "$r2" RUNNING
train_script "$T/out/launch.sh" --iters 10000000 --ckpt-every 200 --log-every 50
l=$(submit -N1 --elastic-gpus=2-4 --gpus=2 --train-iters=10000000 "$T/out/launch.sh")
check "L ($l, elastic 2-4, under tidal-launch) runs on n4's 4 GPUs" wait_for 40 has_gpus "$l" 4
ckpt_done() { ls "$T/ckpt/n4/$l/"*.done >/dev/null 2>&1; }
check "L trains and checkpoints on n4" wait_for 60 ckpt_done
check "scraped: n4's tidald has a launcher" \
	wait_for 20 at_least 'sum(tidal_agent_launchers)' 1
d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 600')
check "D ($d, 2 GPUs, deadline) starts" wait_state 90 "$d" RUNNING
check "L runs again at 2 GPUs" wait_for 90 has_gpus "$l" 2
check "scraped: the checkpoint n4's tidald took on the plugin's order" \
	wait_for 20 at_least 'sum(tidal_agent_checkpoints_total{result="ok"})' 1
check "scraped: its duration and bytes" \
	wait_for 20 eval "at_least 'sum(tidal_agent_checkpoint_seconds_count)' 1 && at_least 'sum(tidal_agent_checkpoint_bytes_total)' 1"
fetched=$(fetch_on n1 "$l")
say "n1 fetch: $fetched"
check "n1's tidald fetches L's checkpoint from a peer" grep -q '"ok": *true' <<<"$fetched"
check "scraped: the fetch, with its bytes, on n1" \
	wait_for 20 eval "at_least 'sum(tidal_agent_fetches_total{result=\"ok\"})' 1 && at_least 'sum(tidal_agent_fetch_bytes_total)' 1"
nvml_down() { [ "$(query 'max(tidal_agent_nvml_up)')" = 0 ]; }
if [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ]; then
	say "NVML is installed here: its GPU series are not checked against fake GPUs"
else
	check "scraped: NVML down on fake GPUs (no libnvidia-ml.so.1), said by tidal_agent_nvml_up" nvml_down
fi

say "a sample of the scraped metrics:"
scrape | grep -E '^(tidal_resizes_total|tidal_resize_phase_seconds_(sum|count)|tidal_cycles_total|tidal_decisions_total|tidal_jobs\{state="running"|tidal_admissions_total|tidal_lock_hold_seconds_(sum|count)|tidal_agents)' |
	sed 's/^/  /'
say "and from tidald (prometheus, summed over the nodes):"
for q in 'sum(tidal_agent_checkpoints_total) by (result)' 'sum(tidal_agent_checkpoint_bytes_total)' \
	'sum(tidal_agent_checkpoint_seconds_sum)' 'sum(tidal_agent_fetches_total) by (result)' \
	'sum(tidal_agent_fetch_bytes_total)' 'sum(tidal_agent_fetch_seconds_sum)' 'max(tidal_agent_nvml_up)'; do
	printf '  %-50s %s\n' "$q" "$(query "$q")"
done
say "p99 cycle $(query 'histogram_quantile(0.99, rate(tidal_cycle_seconds_bucket[1m]))') s, p99 lock hold $(query 'histogram_quantile(0.99, rate(tidal_lock_hold_seconds_bucket[1m]))') s (prometheus)"

set_tidal_conf "$conf"
check "MetricsPort unset by reconfigure: nothing listens there" \
	wait_for 20 eval "! curl -s -o /dev/null --max-time 2 $url/metrics"
finish
