#!/bin/bash
# test_het.sh - heterogeneous jobs and sched/tidal.
#
# Slurm 22.05's slurmctld takes a heterogeneous job (sbatch/salloc/srun
# with ':') only while SchedulerType=sched/backfill: under any other sched
# plugin it refuses the submission itself ("Requested operation not
# supported on this system"; its log says "rejected as sched/backfill is
# not configured").  So the heterogeneous jobs sched/tidal meets are those
# submitted before a site switched from backfill: they must not wait for
# ever.  This test:
#
#   backfill     sbatch -N1 --gpus=2 : -N1 --gpus=1    both components run,
#                                                      on two nodes; srun of
#                                                      a het job runs
#                6 more het jobs submitted held (-H), then slurmctld restarts
#                under sched/tidal
#   tidal        a new het job (sbatch, srun) is refused, as Slurm does
#   fifo,        release -N1 --gpus=2 : -N1 --gpus=1   both components run,
#   tiresias,                                          on two nodes, with
#   elastic-edf                                        their GPUs; the
#                                                      script sees
#                                                      SLURM_HET_SIZE=2 and
#                                                      completes
#                release -N1 --gpus=6 : -N1 --gpus=2   waits whole (no
#                while n1 and n2 have 4 free GPUs      component alone)
#                each                                  until n1 is free,
#                                                      then both run
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"

# The states of het job $1's components, in offset order, one word each.
comp_states() {
	scontrol -o show job "$1" 2>/dev/null |
		sed -n 's/.*HetJobOffset=\([0-9]*\) .*JobState=\([A-Z]*\) .*/\1 \2/p' |
		sort -n | cut -d' ' -f2 | tr '\n' ' '
}
comp_nodes() {
	scontrol -o show job "$1" 2>/dev/null | grep -o ' NodeList=[^ ]*' | cut -d= -f2 | tr '\n' ' '
}
# GPUs a running job (or het component, ID+OFFSET) holds, from the GPU
# indices scontrol -d shows.
gpus_held() {
	scontrol -d -o show job "$1" 2>/dev/null | grep -o 'IDX:[0-9,-]*' |
		cut -d: -f2 | tr ',' '\n' |
		awk -F- 'NF { n += (NF == 2 ? $2 - $1 + 1 : 1) } END { print n + 0 }'
}
all_run() { [ "$(comp_states "$1")" = "RUNNING RUNNING " ]; }
all_done() { [ "$(comp_states "$1")" = "COMPLETED COMPLETED " ]; }
# Whether some, not all, of het job $1's components run.
partial() {
	local s
	s=$(comp_states "$1")
	[[ $s == *RUNNING* && $s == *PENDING* ]]
}

# sbatch_het ARGS... : a het job running het.sh; prints its id.
sbatch_het() {
	sbatch --parsable -D "$T/out" -o "$T/out/%j.out" "$@" | cut -d';' -f1
}

# fits LABEL JOB: het job JOB (-N1 --gpus=2 : -N1 --gpus=1) runs whole.
fits() {
	local s=$1 a=$2 out g0 g1
	check "$s: het job $a: both components run" wait_for 60 all_run "$a"
	say "$s: het job $a: $(comp_states "$a")on $(comp_nodes "$a")"
	# shellcheck disable=SC2046
	set -- $(comp_nodes "$a")
	check "$s: het job $a: its components are on two nodes" \
		test -n "${2:-}" -a "${1:-}" != "${2:-}"
	g0=$(gpus_held "${a}+0") g1=$(gpus_held "${a}+1")
	check "$s: het job $a: component 0 holds 2 GPUs (holds $g0)" test "$g0" = 2
	check "$s: het job $a: component 1 holds 1 GPU (holds $g1)" test "$g1" = 1
	check "$s: het job $a: completes" wait_for 30 all_done "$a"
	out=$(cat "$T/out/$a.out" 2>/dev/null)
	say "$s: het job $a printed: $out"
	check "$s: het job $a: its script saw SLURM_HET_SIZE=2" \
		grep -q 'het_size=2 nodes0=n[1-4] nodes1=n[1-4]' "$T/out/$a.out"
}

# blocked LABEL JOB: held het job JOB (-N1 --gpus=6 : -N1 --gpus=2) is
# released while no node has 6 free GPUs (8 free in all): it waits whole,
# then runs whole once n1 is free.
blocked() {
	local s=$1 b=$2 c p1 p2 p3
	p1=$(submit -t 2 -w n1 --gpus=4 --wrap 'sleep 300')
	p2=$(submit -t 2 -w n2 --gpus=4 --wrap 'sleep 300')
	p3=$(submit -t 2 -N2 -w n3,n4 --gpus-per-node=8 --wrap 'sleep 300')
	blockers_run() { for j in $p1 $p2 $p3; do is_state "$j" RUNNING || return 1; done; }
	check "$s: the blocking jobs run" wait_for 30 blockers_run
	scontrol release "$b"
	c=0
	for _ in $(seq 16); do
		partial "$b" && c=$((c + 1))
		sleep 0.5
	done
	say "$s: het job $b while n1 and n2 have 4 free GPUs each: $(comp_states "$b")$(squeue -h -j "$b" -o '%i:%r' | tr '\n' ' ')"
	check "$s: het job $b: no component ran (partial starts seen: $c)" \
		test "$c" -eq 0 -a "$(comp_states "$b")" = "PENDING PENDING "
	scancel "$p1"
	c=0
	for _ in $(seq 120); do
		all_run "$b" && break
		partial "$b" && c=$((c + 1))
		sleep 0.5
	done
	check "$s: het job $b: both components run once n1 is free" all_run "$b"
	check "$s: het job $b: no component started alone meanwhile (partial: $c)" test "$c" -eq 0
	say "$s: het job $b: $(comp_states "$b")on $(comp_nodes "$b")"
	check "$s: het job $b: completes" wait_for 30 all_done "$b"
	scancel "$p2" "$p3" 2>/dev/null
	wait_for 30 no_jobs_active
}

SCHED_TYPE=sched/backfill SCHED_PARAMS="SchedulerParameters=bf_interval=1" \
	cluster_up "Policy=fifo
CycleInterval=1"
cat >"$T/out/het.sh" <<'XEOF'
#!/bin/bash
echo "het_size=$SLURM_HET_SIZE nodes0=$SLURM_JOB_NODELIST_HET_GROUP_0 nodes1=$SLURM_JOB_NODELIST_HET_GROUP_1"
sleep "${1:-3}"
XEOF
chmod +x "$T/out/het.sh"

fits backfill "$(sbatch_het -t 1 -N1 --gpus=2 : -N1 --gpus=1 "$T/out/het.sh" 6)"
out=$(cd "$T/out" && timeout 60 srun -t 1 -N1 -n1 : -N1 -n1 hostname 2>&1)
check "backfill: srun of a het job runs one task per component" \
	test "$(echo "$out" | grep -c "^$(hostname -s)$")" -eq 2

declare -A fit wait
for p in fifo tiresias elastic-edf; do
	fit[$p]=$(sbatch_het -H -t 1 -N1 --gpus=2 : -N1 --gpus=1 "$T/out/het.sh" 6)
	wait[$p]=$(sbatch_het -H -t 1 -N1 --gpus=6 : -N1 --gpus=2 "$T/out/het.sh" 2)
done
say "held under backfill: ${fit[*]} ${wait[*]}"

# The site switches to sched/tidal: slurmctld restarts with the queue.
kill_pidfile "$T/run/slurmctld.pid"
sed -i -e 's|^SchedulerType=.*|SchedulerType=sched/tidal|' \
	-e 's|^SchedulerParameters=.*|SchedulerParameters=defer,sched_interval=-1|' \
	"$SLURM_CONF"
start_slurmctld || { say "slurmctld did not restart"; dump_logs; exit 1; }
check "slurmctld answers under sched/tidal" wait_for 60 scontrol ping
check "the held het jobs are still there" \
	test "$(comp_states "${fit[fifo]}")" = "PENDING PENDING "

out=$(sbatch -D "$T/out" -t 1 -N1 : -N1 "$T/out/het.sh" 2>&1)
check "tidal: a new het job is refused by slurmctld, as under any sched plugin but backfill ($out)" \
	grep -q "not supported" <<<"$out"
check "tidal: slurmctld's log says why" \
	grep -q "rejected as sched/backfill is not configured" "$T/log/slurmctld.log"

for p in fifo tiresias elastic-edf; do
	set_tidal_conf "Policy=$p
CycleInterval=1"
	scontrol release "${fit[$p]}"
	fits "$p" "${fit[$p]}"
	blocked "$p" "${wait[$p]}"
done
finish
