# tests/cluster/lib.sh - a private Slurm cluster on loopback, for tests.
#
# Sourced by tests/cluster/test_*.sh.  cluster_up starts, in a fresh
# temporary directory and on free loopback ports:
#
#   munged     own socket and key (AuthInfo=socket=...)
#   slurmctld  SchedulerType=sched/tidal from $BUILD, defer,sched_interval=-1
#              (SCHED_TYPE and SCHED_PARAMS - a whole SchedulerParameters=
#              line, or empty for none - replace them: bench/load.sh runs
#              sched/builtin; EXTRA_SLURM_CONF adds lines; MIN_JOB_AGE
#              replaces MinJobAge=600; MPI_PARAMS replaces MpiParams;
#              TOPOLOGY_PLUGIN and TOPOLOGY_CONF replace topology/tree
#              with switches s1 (n1, n2) and s2 (n3, n4) under top;
#              RETURN_TO_SERVICE replaces ReturnToService=2)
#   slurmd x4  n1..n4 (slurmd -N), own ports, 8 fake GPUs each: character
#              devices made with mknod (major 195, like /dev/nvidiaN);
#              with SHARDS_PER_GPU=S also gres/shard, S shards on each
#              GPU (GresTypes=gpu,shard), for the GPU-sharing policies
#
# With ACCOUNTING=1 also, before slurmctld (start_accounting):
#
#   mariadbd   a private database server on a loopback port, its files in
#              the cluster's directory (grant tables off: loopback only)
#   slurmdbd   on a loopback port, storing into it; the cluster is added
#              with sacctmgr, and slurmctld enforces associations, limits
#              and QOS, with gres/gpu as a tracked TRES
#
# SAN_PLUGIN=DIR (make check-cluster-san): slurmctld loads sched_tidal.so
# from DIR, an ASan+UBSan build (make SAN=1), with the sanitizer runtime
# preloaded; a sanitizer report from slurmctld fails the test.  Leak
# detection stays off: Slurm's own daemon does not free what it holds at
# exit.
#
# and cluster_down tears it all down: jobs are cancelled first so that no
# slurmstepd outlives its slurmd, then daemons are stopped by their pid
# files, and finally any process still carrying this cluster's SLURM_CONF
# in its environment (only ours can) is killed by pid.
#
# Needs root (mknod, slurmd).  Without root, Slurm or the plugin, the test
# prints why it is skipped and exits 0.
#
# GPL-2.0-or-later.

BUILD=${BUILD:-build}
BUILD_ABS=$(cd "$BUILD" 2>/dev/null && pwd)
# SLURM_PREFIX=DIR (make check-cluster-24): run the Slurm installed under
# DIR (scripts/slurm-build.sh), its daemons, commands and plugins, with
# sched_tidal.so and spank_tidal.so built for it in PLUGIN_BUILD; unset,
# the installed Slurm and the plugins in $BUILD.
PLUGIN_ABS=$(cd "${PLUGIN_BUILD:-$BUILD}" 2>/dev/null && pwd)
SLURM_PLUGINS=/usr/lib/x86_64-linux-gnu/slurm-wlm
if [ -n "${SLURM_PREFIX:-}" ]; then
	PATH=$SLURM_PREFIX/bin:$SLURM_PREFIX/sbin:$PATH
	SLURM_PLUGINS=$SLURM_PREFIX/lib/slurm
fi
# Where slurmctld finds sched_tidal.so (spank_tidal.so is named by path):
# first in PluginDir, so that a sched_tidal.so installed beside Slurm's own
# plugins (the tidal-slurmctld package) never stands in for this one.
SCHED_DIR=$PLUGIN_ABS
[ -z "${SAN_PLUGIN:-}" ] || SCHED_DIR=$(cd "$SAN_PLUGIN" 2>/dev/null && pwd)
NODES="n1 n2 n3 n4"
GPUS_PER_NODE=8
PASSED=0
FAILED=0
TEST_NAME=$(basename "$0" .sh)

say() { echo "$TEST_NAME: $*"; }
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { # check DESCRIPTION COMMAND... : pass if the command succeeds
	local what=$1; shift
	if "$@"; then pass "$what"; else fail "$what"; fi
}
finish() {
	[ -z "${SAN_PLUGIN:-}" ] || [ -z "${T:-}" ] || san_reports
	echo "$TEST_NAME: $PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}

skip_unless_runnable() {
	local why=
	[ "$(id -u)" -eq 0 ] || why="not root"
	for b in slurmctld slurmd munged sbatch squeue scontrol \
		${ACCOUNTING:+slurmdbd sacctmgr mariadbd mariadb-install-db}; do
		command -v $b >/dev/null 2>&1 || why="$b not installed"
	done
	[ -n "$PLUGIN_ABS" ] && [ -f "$PLUGIN_ABS/sched_tidal.so" ] ||
		why="${PLUGIN_BUILD:-$BUILD}/sched_tidal.so not built (no Slurm source tree?)"
	[ -z "${SLURM_PREFIX:-}" ] || [ -x "$SLURM_PREFIX/sbin/slurmctld" ] ||
		why="SLURM_PREFIX=$SLURM_PREFIX has no sbin/slurmctld"
	if [ -n "${SAN_PLUGIN:-}" ]; then
		[ -n "$SCHED_DIR" ] && [ -f "$SCHED_DIR/sched_tidal.so" ] ||
			why="SAN_PLUGIN=$SAN_PLUGIN has no sched_tidal.so"
		[ -f "$(asan_runtime)" ] || why="no libasan.so for SAN_PLUGIN"
	fi
	if [ -n "$why" ]; then
		echo "$TEST_NAME: skipped: $why"
		echo "$TEST_NAME: 0 passed, 0 failed"
		exit 0
	fi
}

# A base port with 20 free TCP ports after it, below the kernel's
# ephemeral range: a port in that range may be taken at any moment as the
# local end of some outgoing connection (seen: a job's rendezvous store
# at base + 7 failing with "Address already in use").  The daemons take
# base to base + 9; the launchers' rendezvous stores base + 10 to base + 19
# (TIDAL_STORE_PORTS, which the jobs inherit from sbatch: without it every
# concurrent test cluster's job 1 would take 29401).  Step ports
# (MpiParams) go below 20000, 8 per base.
# A cluster of more than four nodes (NODES) takes one port more per node
# after those 20 (node_port).
pick_ports() {
	local used base i ok low slots width
	width=$((20 + $(node_count) - 4))
	[ "$width" -ge 20 ] || width=20
	read -r low _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || low=32768
	slots=$(((low - 20000) / width - 1))
	# Bases up to 32000 keep MpiParams' ranges below 20000.
	[ "$slots" -gt $((12000 / width)) ] && slots=$((12000 / width))
	[ "$slots" -ge 1 ] || slots=1
	used=$(ss -Htan 2>/dev/null | awk '{print $4}' | sed 's/.*://' | sort -u)
	for _ in $(seq 50); do
		base=$((20000 + (RANDOM % slots) * width))
		ok=1
		for i in $(seq 0 $((width - 1))); do
			echo "$used" | grep -qx "$((base + i))" && ok=0
		done
		[ $ok = 1 ] && { echo $base; return; }
	done
	echo 27000
}

node_count() { echo $NODES | wc -w; }
# node_port I: slurmd's port on the Ith node (from 1): base + 1 to base + 4,
# then past the 20 ports of pick_ports.
node_port() { if [ "$1" -le 4 ]; then echo $((PORT_CTL + $1)); else echo $((PORT_CTL + 15 + $1)); fi; }

write_conf() { # write_conf POLICY_CONF_TEXT
	local host i=0 n
	host=$(hostname -s)
	mkdir -p "$T/etc" "$T/state" "$T/spool" "$T/log" "$T/run" "$T/out"
	cat >"$T/etc/slurm.conf" <<EOF
ClusterName=tidaltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT_CTL
# Ports Slurm reserves per step (tidal-launch's store): one range per
# cluster, derived from its base port, so concurrent test clusters differ.
# MPI_PARAMS replaces the line (empty: none; Slurm's regression suite runs
# steps of more tasks than 8 ports allow).
${MPI_PARAMS-MpiParams=ports=$((10000 + (PORT_CTL - 20000) / 10 * 8))-$((10007 + (PORT_CTL - 20000) / 10 * 8))}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$T/state
SlurmdSpoolDir=$T/spool/%n
SlurmctldPidFile=$T/run/slurmctld.pid
SlurmdPidFile=$T/run/slurmd-%n.pid
SlurmctldLogFile=$T/log/slurmctld.log
SlurmdLogFile=$T/log/slurmd-%n.log
SlurmctldDebug=debug
SlurmdDebug=info
PluginDir=$SCHED_DIR:$SLURM_PLUGINS
PlugStackConfig=$T/etc/plugstack.conf
SchedulerType=${SCHED_TYPE:-sched/tidal}
${SCHED_PARAMS-SchedulerParameters=defer,sched_interval=-1}
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu${SHARDS_PER_GPU:+,shard}
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
$(accounting_conf)
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
TopologyPlugin=${TOPOLOGY_PLUGIN:-topology/tree}
SlurmdParameters=config_overrides
ReturnToService=${RETURN_TO_SERVICE:-2}
SlurmdTimeout=60
MessageTimeout=10
KillWait=2
MinJobAge=${MIN_JOB_AGE:-600}
JobRequeue=1
PrivateData=jobs
${EXTRA_SLURM_CONF:-}
EOF
	: >"$T/etc/gres.conf"
	for n in $NODES; do
		i=$((i + 1))
		echo "NodeName=$n NodeHostname=$host NodeAddr=127.0.0.1 Port=$(node_port $i) CPUs=16 RealMemory=4000 Gres=gpu:$GPUS_PER_NODE${SHARDS_PER_GPU:+,shard:$((SHARDS_PER_GPU * GPUS_PER_NODE))} State=UNKNOWN" >>"$T/etc/slurm.conf"
		mkdir -p "$T/dev/$n" "$T/spool/$n"
		for g in $(seq 0 $((GPUS_PER_NODE - 1))); do
			mknod "$T/dev/$n/nvidia$g" c 195 "$g"
		done
		echo "NodeName=$n Name=gpu File=$T/dev/$n/nvidia[0-$((GPUS_PER_NODE - 1))]" >>"$T/etc/gres.conf"
		[ -z "${SHARDS_PER_GPU:-}" ] ||
			echo "NodeName=$n Name=shard Count=$((SHARDS_PER_GPU * GPUS_PER_NODE)) File=$T/dev/$n/nvidia[0-$((GPUS_PER_NODE - 1))]" >>"$T/etc/gres.conf"
	done
	local all tree
	all=$(echo $NODES | tr ' ' ',')
	echo "PartitionName=gpu Nodes=$all Default=YES MaxTime=INFINITE State=UP" >>"$T/etc/slurm.conf"
	# TOPOLOGY_CONF (with TOPOLOGY_PLUGIN) replaces the switch tree: two
	# leaves of two nodes under top, or one leaf for another NODES.
	tree="SwitchName=s1 Nodes=$all"
	[ "$NODES" = "n1 n2 n3 n4" ] && tree="SwitchName=s1 Nodes=n[1-2]
SwitchName=s2 Nodes=n[3-4]
SwitchName=top Switches=s[1-2]"
	printf '%s\n' "${TOPOLOGY_CONF:-$tree}" >"$T/etc/topology.conf"
	: >"$T/etc/plugstack.conf"
	[ -f "$PLUGIN_ABS/spank_tidal.so" ] &&
		echo "required $PLUGIN_ABS/spank_tidal.so" >"$T/etc/plugstack.conf"
	tidal_conf "$1"
}

# slurm.conf's accounting lines: slurmdbd's with ACCOUNTING=1, else none.
accounting_conf() {
	if [ -z "${ACCOUNTING:-}" ]; then
		echo "AccountingStorageType=accounting_storage/none"
		return
	fi
	cat <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$PORT_DBD
AccountingStorageEnforce=associations,limits,qos
AccountingStorageTRES=gres/gpu
# Clients find munged for slurmdbd connections here, not in AuthInfo.
AccountingStoragePass=socket=$T/munge/munge.socket
EOF
}

# start_accounting: mariadbd and slurmdbd for this cluster (ACCOUNTING=1),
# and the cluster added to the database, root's association with it.
start_accounting() {
	local db=$T/db try
	mkdir -p "$db"
	# Once in a make check of both tiers it failed, the cause in the
	# lines dump_logs' tail did not show: its first lines are kept, and
	# it is tried once more on an empty data directory.
	for try in 1 2; do
		rm -rf "$db/data"
		mariadb-install-db --no-defaults --datadir="$db/data" --user=root \
			--auth-root-authentication-method=normal --skip-test-db \
			>"$T/log/mariadb-install.log" 2>&1 && break
		say "mariadb-install-db failed (try $try of 2); its first lines:"
		head -n 20 "$T/log/mariadb-install.log" | sed 's/^/    /'
		[ "$try" = 2 ] && return 1
	done
	mariadbd --no-defaults --datadir="$db/data" --user=root \
		--bind-address=127.0.0.1 --port="$PORT_DB" \
		--socket="$T/run/mariadb.sock" --pid-file="$T/run/mariadbd.pid" \
		--log-error="$T/log/mariadbd.log" --skip-grant-tables \
		--innodb-buffer-pool-size=64M >/dev/null 2>&1 &
	wait_for 30 mariadb --no-defaults -h 127.0.0.1 -P "$PORT_DB" -u root \
		-e 'select 1' >/dev/null || return 1
	cat >"$T/etc/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$T/munge/munge.socket
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$PORT_DBD
SlurmUser=root
PidFile=$T/run/slurmdbd.pid
LogFile=$T/log/slurmdbd.log
DebugLevel=info
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$PORT_DB
StorageUser=root
StorageLoc=tidal_acct
EOF
	chmod 600 "$T/etc/slurmdbd.conf"
	slurmdbd || return 1
	wait_for 60 sacctmgr -n list cluster >/dev/null || return 1
	sacctmgr -i add cluster tidaltest >/dev/null || return 1
}

# tidal.conf = TEXT plus this cluster's CtlPort (tidalctl's port).
tidal_conf() {
	printf '%s\nCtlPort=%s\n' "$1" "$PORT_TIDALCTL" >"$T/etc/tidal.conf"
}

start_munge() {
	# The socket's directory is open to all (tidalctl as another user);
	# the key's is not.
	mkdir -p "$T/munge" "$T/munge-key"
	chmod 755 "$T/munge"
	chmod 700 "$T/munge-key"
	dd if=/dev/urandom of="$T/munge-key/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$T/munge-key/munge.key"
	munged --force --socket="$T/munge/munge.socket" \
		--key-file="$T/munge-key/munge.key" --pid-file="$T/run/munged.pid" \
		--log-file="$T/log/munged.log" --seed-file="$T/munge-key/seed" ||
		return 1
}

# wait_for SECONDS COMMAND...: poll every 0.5 s until COMMAND succeeds.
wait_for() {
	local t=$1 i; shift
	for i in $(seq $((t * 2))); do
		"$@" 2>/dev/null && return 0
		sleep 0.5
	done
	return 1
}

nodes_idle() { # (a node in two partitions is listed twice)
	[ "$(sinfo -h -N -o '%N %t' | sort -u | grep -cE ' (idle|mix|alloc)$')" -eq \
		"$(echo $NODES | wc -w)" ]
}

cluster_up() { # cluster_up "Policy=fifo ..."
	skip_unless_runnable
	T=$(mktemp -d /tmp/tidal-cluster.XXXXXX)
	chmod 755 "$T"
	PORT_CTL=$(pick_ports)
	PORT_TIDALCTL=$((PORT_CTL + 5))
	PORT_DBD=$((PORT_CTL + 8)) PORT_DB=$((PORT_CTL + 9))
	export TIDAL_STORE_PORTS="$((PORT_CTL + 10))-$((PORT_CTL + 19))"
	export SLURM_CONF="$T/etc/slurm.conf"
	trap cluster_down EXIT
	trap 'cluster_down; exit 130' INT
	trap 'cluster_down; exit 143' TERM
	write_conf "$1"
	start_munge || { say "munged did not start"; dump_logs; exit 1; }
	[ -z "${ACCOUNTING:-}" ] || start_accounting ||
		{ say "mariadbd or slurmdbd did not start"; dump_logs; exit 1; }
	start_slurmctld -i || { say "slurmctld did not start"; dump_logs; exit 1; }
	for n in $NODES; do
		start_slurmd "$n" || { say "slurmd $n did not start"; dump_logs; exit 1; }
	done
	if ! wait_for 60 nodes_idle; then
		say "nodes did not come up"; sinfo -N; dump_logs; exit 1
	fi
	say "cluster up in $T (ports $PORT_CTL-$((PORT_CTL + 4)))"
}

asan_runtime() { ${CC:-gcc} -print-file-name=libasan.so; }

# restart_slurmctld_hard: kill -9 this cluster's slurmctld, wait until it
# is gone, and start it again (its state from StateSaveLocation).  RET 1
# if it did not start.
restart_slurmctld_hard() {
	local pid
	pid=$(cat "$T/run/slurmctld.pid")
	say "kill -9 slurmctld ($pid)"
	kill -9 "$pid"
	wait_for 10 eval "! kill -0 $pid"
	start_slurmctld
}

# start_slurmctld [ARGS...]: this cluster's slurmctld, under the sanitizer
# runtime where SAN_PLUGIN is set (reports in $T/log/san-slurmctld.PID).
start_slurmctld() {
	if [ -z "${SAN_PLUGIN:-}" ]; then
		slurmctld -f "$SLURM_CONF" "$@"
		return
	fi
	local opts="log_path=$T/log/san-slurmctld:halt_on_error=1:print_stacktrace=1"
	env LD_PRELOAD="$(asan_runtime)" \
		ASAN_OPTIONS="$opts:detect_leaks=0:fast_unwind_on_malloc=0" \
		UBSAN_OPTIONS="$opts" slurmctld -f "$SLURM_CONF" "$@"
}

# san_reports: fail (once per report file) for every sanitizer report
# slurmctld wrote, and print it.
san_reports() {
	local f
	for f in "$T"/log/san-slurmctld.*; do
		[ -f "$f" ] && [ "${f%.seen}" = "$f" ] || continue
		fail "sanitizer report from slurmctld: $f"
		cat "$f"
		mv "$f" "$f.seen"
	done
}

dump_logs() { # TIDAL_LOG_DIR=DIR: also keep every log whole there
	[ -z "${TIDAL_LOG_DIR:-}" ] ||
		{ mkdir -p "$TIDAL_LOG_DIR" && cp -r "$T"/log/. "$T"/out "$TIDAL_LOG_DIR"/; }
	for f in "$T"/log/*.log; do
		[ -f "$f" ] || continue
		echo "---- $f (last 25 lines)"
		tail -n 25 "$f"
	done
}

kill_pidfile() { # kill_pidfile FILE: TERM, then KILL after 5 s
	local pid
	[ -f "$1" ] || return 0
	pid=$(cat "$1" 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill "$pid" 2>/dev/null
	for _ in $(seq 10); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.5
	done
	kill -9 "$pid" 2>/dev/null
}

# stop_slurmctld: TERM, then KILL after 5 s, every slurmctld of this
# cluster, found by its command line rather than its pid file: Slurm
# 24.11's scontrol reconfigure starts a new slurmctld, which writes the pid
# file only a moment later.
ctld_running() { pgrep -f "slurmctld -f $SLURM_CONF" >/dev/null; }
stop_slurmctld() {
	pkill -f "slurmctld -f $SLURM_CONF" || return 0
	wait_for 5 eval '! ctld_running' && return 0
	pkill -9 -f "slurmctld -f $SLURM_CONF"
	wait_for 5 eval '! ctld_running'
}

# Pids whose environment names this cluster's slurm.conf: daemons we
# started and everything they started (slurmstepd, job scripts).
our_pids() {
	local p
	for p in /proc/[0-9]*; do
		[ "${p#/proc/}" = "$$" ] && continue
		{ tr "\0" "\n" <"$p/environ"; } 2>/dev/null |
			grep -qx "SLURM_CONF=$T/etc/slurm.conf" && echo "${p#/proc/}"
	done
}

no_jobs_active() {
	[ -z "$(squeue -h -t R,CG,CF,S -o %i 2>/dev/null)" ]
}

cluster_down() {
	trap - EXIT INT TERM
	[ -n "${T:-}" ] && [ -d "$T" ] || return 0
	if [ "$FAILED" -gt 0 ] || [ -n "${TIDAL_KEEP_LOGS:-}${TIDAL_LOG_DIR:-}" ]; then
		dump_logs
	fi
	scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null
	wait_for 20 no_jobs_active
	for n in $NODES; do
		kill_pidfile "$T/run/slurmd-$n.pid"
	done
	kill_pidfile "$T/run/slurmctld.pid"
	kill_pidfile "$T/run/slurmdbd.pid"
	kill_pidfile "$T/run/mariadbd.pid"
	kill_pidfile "$T/run/munged.pid"
	local san_failed=0
	if [ -n "${SAN_PLUGIN:-}" ]; then
		# What slurmctld's shutdown reported (finish has run by now).
		local before=$FAILED
		san_reports
		[ "$FAILED" -eq "$before" ] || san_failed=1
	fi
	for p in $(our_pids); do
		kill -9 "$p" 2>/dev/null
	done
	rm -rf "$T"
	T=
	[ "$san_failed" -eq 0 ] || exit 1
}

# ---- helpers for assertions

submit() { # submit SBATCH_ARGS... : prints the job id
	sbatch --parsable -D "$T/out" -o "$T/out/%j.out" "$@" | cut -d';' -f1
}
job_state() { squeue -h -j "$1" -o %T 2>/dev/null; }
job_reason() { squeue -h -j "$1" -o %r 2>/dev/null; }
job_nodes() { squeue -h -j "$1" -o %N 2>/dev/null; }
is_state() { [ "$(job_state "$1")" = "$2" ]; }
reason_has() { job_reason "$1" | grep -q -- "$2"; }
# wait_state SECS JOB STATE
wait_state() { wait_for "$1" is_state "$2" "$3"; }
TIDALCTL="$BUILD_ABS/tidalctl"
# A job's GPUs as tidalctl reports them; has_gpus JOB N: running on N.
gpus_of() { "$TIDALCTL" -o show job "$1" 2>/dev/null | grep -o 'AllocGPUs=[0-9]*' | cut -d= -f2; }
has_gpus() { [ "$(job_state "$1")" = RUNNING ] && [ "$(gpus_of "$1")" = "$2" ]; }
# A job's trainer step as its launcher reports it (tidalctl's Training=);
# train_past JOB N: it is at step N or later.
train_step() { "$TIDALCTL" show job "$1" 2>/dev/null | grep -o 'Training=step [0-9]*' | awk '{print $2}'; }
train_past() { [ "$(train_step "$1")" -ge "$2" ] 2>/dev/null; }
# gres_idle [NODE...]: no GPU and no shard in use on each (all of $NODES
# if none named).
gres_idle() {
	local n used
	for n in ${*:-$NODES}; do
		used=$(scontrol show node -d "$n" | sed -n 's/.*GresUsed=\([^ ]*\).*/\1/p' |
			sed 's/([^)]*)//g')
		[ -n "$used" ] || return 1
		! tr ',' '\n' <<<"$used" | grep -qv ':0$' || return 1
	done
}
# The GPU a job holds a shard of: GRES=shard:1(IDX:0) on 22.05,
# GRES=shard:1(1/2,0/2) (shards taken per GPU) on 24.11.
shard_gpu() {
	scontrol show job -d "$1" | grep -o 'GRES=shard:[0-9]*([^)]*)' | head -1 |
		sed -E 's/.*\((.*)\)/\1/' | awk -F, '
		/^IDX:/ { sub(/^IDX:/, ""); print; exit }
		{ for (i = 1; i <= NF; i++) if ($i !~ /^0\//) { print i - 1; exit } }'
}
show_queue() { squeue -o '%.6i %.9T %.5D %.12b %.10N %r'; }
set_tidal_conf() { # set_tidal_conf TEXT: rewrite and scontrol reconfigure
	tidal_conf "$1"
	scontrol reconfigure
}

# start_slurmd NODE: its slurmd, marked (TIDAL_TEST_NODE) so that
# kill_node finds it and every slurmstepd it forks.
start_slurmd() {
	TIDAL_TEST_NODE=$1 slurmd -f "$SLURM_CONF" -N "$1"
}

# kill_node NODE: NODE dies as a machine would: kill -9 of its slurmd, of
# its tidald (pid in $T/run/tidald-NODE.pid, when the test wrote one), and
# of every job process there (environment SLURMD_NODENAME=NODE) with the
# slurmstepd above it, and of every other slurmstepd of the node.  Slurm
# notices only after SlurmdTimeout; tests mark
# the node DOWN themselves (scontrol), as an administrator would.
kill_node() {
	local total=0 pass n
	# Again until nothing of the node is left: a step that slurmd or a
	# slurmstepd was forking as the first pass looked (seen: a job's
	# batch script started in that instant, then alive beside the next
	# job given its GPUs) is found by the next.
	for pass in 1 2 3 4 5; do
		n=$(kill_node_once "$1" "$pass")
		[ "$n" -gt 0 ] || break
		total=$((total + n))
		sleep 0.2
	done
	echo "$total"
}
kill_node_once() { # kill_node_once NODE PASS
	local p pp pids=
	for p in $(our_pids); do
		# A job's processes, or the node's slurmd and the slurmstepds
		# it forked (start_slurmd's mark, before they write anything)
		{ tr "\0" "\n" <"/proc/$p/environ"; } 2>/dev/null |
			grep -qxE "SLURMD_NODENAME=$1|TIDAL_TEST_NODE=$1" || continue
		pids="$pids $p"
		pp=$(ps -o ppid= -p "$p" 2>/dev/null | tr -d ' ')
		[ -n "$pp" ] && ps -o comm= -p "$pp" 2>/dev/null | grep -q '^slurmstepd' &&
			pids="$pids $pp"
	done
	# The node's other slurmstepds (a step ending, its processes gone):
	# those writing to its slurmd log.  A live one would talk for the dead
	# node.
	for p in $(pgrep -x slurmstepd); do
		ls -l "/proc/$p/fd" 2>/dev/null | grep -qF "$T/log/slurmd-$1.log" &&
			pids="$pids $p"
	done
	# (its daemons in the first pass only: dead, they may linger as
	# zombies)
	for p in "$T/run/slurmd-$1.pid" "$T/run/tidald-$1.pid"; do
		[ "$2" = 1 ] && [ -f "$p" ] && pids="$(cat "$p") $pids"
	done
	pids=$(echo $pids | tr ' ' '\n' | sort -u | tr '\n' ' ')
	# shellcheck disable=SC2086
	[ -z "${pids// /}" ] || kill -9 $pids 2>/dev/null
	echo "$pids" | wc -w
}

# ---- the node side: tidald on every node, the trainers' programs.

# Skip (exit 0 with a line) unless tidald, tidal-launch and tidal-train are
# built: called before cluster_up.
# acked_step JOB: the step at which the plugin logged JOB's checkpoint_stop
# acked by tidald (a resize or a preemption), or nothing.
acked_step() {
	grep -o "JobId=$1: tidald checkpointed it at step [0-9]*" "$T/log/slurmctld.log" |
		head -1 | awk '{print $NF}'
}
skip_unless_node_side() {
	local b
	for b in tidald tidal-launch tidal-train; do
		[ -x "${BUILD_ABS:-/nonexistent}/$b" ] || {
			echo "$TEST_NAME: skipped: $BUILD/$b not built"
			echo "$TEST_NAME: 0 passed, 0 failed"; exit 0; }
	done
}

# start_tidald NODE: its agent, 1 s heartbeats, checkpoints in
# $T/ckpt/NODE, sockets under $T/tidal-run, log $T/log/tidald-NODE.log and
# pid in $T/run/tidald-NODE.pid (kill_node reads it); TIDALD_ARGS adds
# options (--metrics ...).
# dead PID: exited, and every thread of it too, so that what it held open
# (a listening socket) is closed: the leader of a killed process shows Z
# while its other threads may still be exiting.
dead() {
	[ -e "/proc/$1" ] || return 0
	awk '$3 == "Z" { z = 1 } END { exit !z }' "/proc/$1/stat" 2>/dev/null &&
		[ "$(ls "/proc/$1/task" 2>/dev/null | wc -l)" -le 1 ]
}
start_tidald() {
	"$BUILD_ABS/tidald" -D -N "$1" --listen 127.0.0.1:0 --run-dir "$T/tidal-run" \
		--ckpt-dir "$T/ckpt/$1" --heartbeat 1 ${TIDALD_ARGS:-} \
		>>"$T/log/tidald-$1.log" 2>&1 &
	echo $! >"$T/run/tidald-$1.pid"
	disown
}
# skip_unless_python WHAT: exit 0 with a line unless python3 (which WHAT
# needs) is installed; called before cluster_up.
skip_unless_python() {
	command -v python3 >/dev/null && return 0
	say "skipped: python3 ($1) not installed"
	say "0 passed, 0 failed"
	exit 0
}
# The agents' cluster: Policy=elastic-edf with 1 s cycles, resizes only
# through tidald (ResizeSignal=none, CheckpointTimeout=120), rejected jobs
# cancelled, and a tidald on every node.
agents_cluster_up() {
	cluster_up "Policy=elastic-edf
CycleInterval=1
ResizeSignal=none
CheckpointTimeout=120
RejectAction=cancel"
	check "4 agents up" start_agents
}
agents_up() { # every node's agent registered and UP
	[ "$("$TIDALCTL" -o show nodes 2>/dev/null | grep -c 'Agent=UP')" -eq \
		"$(echo $NODES | wc -w)" ]
}
start_agents() { # a tidald on every node; RET 0 once all are UP
	local n
	for n in $NODES; do start_tidald "$n"; done
	wait_for 30 agents_up
}

# elastic_sleeper LOG [NODES]: an elastic job's batch script (for --wrap)
# that writes "start nodes=N" to LOG at each start and "checkpoint" on
# USR1 (the resize signal), then sleeps until it is cancelled, or, on a run
# over NODES nodes, exits 3 s in.
elastic_sleeper() {
	printf '%s\n' "trap 'echo checkpoint >>$1' USR1" \
		"echo \"start nodes=\$SLURM_JOB_NUM_NODES\" >>$1" \
		${2:+"if [ \"\$SLURM_JOB_NUM_NODES\" = $2 ]; then sleep 3; exit 0; fi"} \
		'while :; do sleep 1 & wait $!; done'
}

# train_script FILE TRAIN_ARGS...: a batch script running tidal-launch
# (sockets under $T/tidal-run, as start_tidald's) over tidal-train
# TRAIN_ARGS.
train_script() {
	local f=$1; shift
	printf '#!/bin/bash\nexec "%s/tidal-launch" --run-dir "%s/tidal-run" -- \\\n\t"%s/tidal-train" %s\n' \
		"$BUILD_ABS" "$T" "$BUILD_ABS" "$*" >"$f"
}

# fetch_on NODE JOB: NODE's tidald's reply to "fetch" (python3 speaks the
# local socket's JSON line).
fetch_on() {
	python3 - "$T/tidal-run/$1/tidald.sock" "$2" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(60)
s.connect(sys.argv[1])
s.sendall(json.dumps({"v": 1, "op": "fetch", "job": int(sys.argv[2])}).encode() + b"\n")
print(s.makefile().readline().strip())
PY
}
