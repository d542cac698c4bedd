#!/bin/bash
# test_faults.sh - the fault matrix on a live cluster (4 nodes x 4 fake
# GPUs, Policy=elastic-edf, tidald on every node):
#
#   R  12 GPUs, rigid      n1..n3
#   E  --elastic-gpus=2-4  tidal-launch + tidal-train (CPU/Gloo, one rank
#                          per GPU), 4 GPUs on n4 (call it H), a
#                          checkpoint every 20 steps
#
# Each cell kills one component with SIGKILL at one moment, brings it back
# as an administrator (or slurmd's supervisor) would, and checks:
#
#   no job lost            E and R still there, E running again
#   <= 1 interval lost     if E restarted, it resumed from a step at least
#                          the newest complete checkpoint at the kill
#   not started twice      never two tidal-launch of one job on one node
#   no GPU in two jobs     never one GPU index in two jobs' SLURM_JOB_GPUS
#                          on one node (fault_watch.py samples both, 3/s)
#   slurmctld alive        the one this test started last still answers
#
# components   slurmctld, tidald (H's), tidal-launch (E's, on H), one
#              trainer rank (E's rank 1), munged, node (H: slurmd, tidald
#              and every job process there; then back, as after a reboot
#              with its local disk)
# moments      train  while E trains
#              ckpt   while E's checkpoint is being written (its
#                     .ckpt-tmp-* file exists)
#              ack    after H's tidald acked a checkpoint_stop and before
#                     E restarts: D (2 GPUs, a deadline) makes E shrink;
#                     D is cancelled after the cell and E grows back.
#                     E's launcher and ranks exit on the checkpoint_stop,
#                     so for those two the restart's own are killed, as
#                     soon as they appear
#
# FAULTS="slurmctld:train node:ack ..." runs only those cells;
# FAULT_LOGS=DIR keeps a failed cell's logs in DIR/COMPONENT-MOMENT.  A
# table of the cells ends the output.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
GPUS_PER_NODE=4
skip_unless_node_side
skip_unless_python "the watcher"
agents_cluster_up
log=$T/log/slurmctld.log
every=20

r=$(submit -N3 --gpus-per-node=4 --wrap 'sleep 3600')
check "R ($r, 12 GPUs) starts" wait_state 30 "$r" RUNNING
cat >"$T/out/elastic.sh" <<EOF
#!/bin/bash
exec "$BUILD_ABS/tidal-launch" --run-dir "$T/tidal-run" --restart-budget 100 -- \
	"$BUILD_ABS/tidal-train" --iters 100000000 --hidden 1024 \
	--ckpt-every $every --log-every 10
EOF
# Appended to across requeues: every generation's lines stay.
submit_e() { submit --open-mode=append -N1 --elastic-gpus=2-4 --gpus=2 --train-iters=100000000 "$T/out/elastic.sh"; }
e=$(submit_e)
check "E ($e, elastic 2-4) runs on 4 GPUs" wait_for 60 has_gpus "$e" 4
h=$(job_nodes "$e")
dir=$T/ckpt/$h/$e
out=$T/out/$e.out
# E's newest complete checkpoint on the node it runs on (on H while it
# is pending): a resize may restart it on any node with room.
newest_done() {
	local n; n=$(job_nodes "$e")
	ls "$T/ckpt/${n:-$h}/$e" 2>/dev/null | sed -n 's/^ckpt-0*\([0-9][0-9]*\)\.done$/\1/p' | sort -n | tail -1
}
check "E checkpoints on $h" wait_for 60 eval '[ -n "$(newest_done)" ]'

touch "$T/watch.out"
python3 "$(dirname "$0")/fault_watch.py" "$T/watch.stop" "$T/watch.out" &
watcher=$!

# ---- recovery, as an administrator would
restart_slurmctld() {
	start_slurmctld || return 1
	wait_for 60 eval 'scontrol ping >/dev/null'
}
restart_munge() {
	munged --force --socket="$T/munge/munge.socket" \
		--key-file="$T/munge-key/munge.key" --pid-file="$T/run/munged.pid" \
		--log-file="$T/log/munged.log" --seed-file="$T/munge-key/seed"
}
restart_node() { # slurmd and tidald back, the node resumed
	start_slurmd "$1" || return 1
	start_tidald "$1"
	wait_for 30 eval "sinfo -h -n $1 -o %t | grep -qE '^(down|idle|mix|alloc)'"
	scontrol update nodename="$1" state=resume 2>/dev/null
	wait_for 30 agents_up
}
# slurmctld sends nothing: no RPC queued for retry, no agent running.
agents_idle() {
	sdiag 2>/dev/null | awk '/^Agent queue size:/ { q = $4 } /^Agent count:/ { c = $3 }
		END { exit !(q == "0" && c == "0") }'
}
pids_of() { # pids_of COMM JOB: that job's processes named COMM, in this
	# cluster only (another test cluster on the machine has a job 2 too)
	local p env
	for p in $(pgrep -x "$1"); do
		env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null)
		grep -qx "SLURM_JOB_ID=$2" <<<"$env" &&
			grep -qx "SLURM_CONF=$SLURM_CONF" <<<"$env" && echo "$p"
	done
}
rank1() { # E's rank 1 trainers
	local q
	for q in $(pids_of tidal-train "$e"); do
		tr '\0' '\n' <"/proc/$q/environ" 2>/dev/null | grep -qx 'TIDAL_RANK=1' && echo "$q"
	done
}
# At the ack, E's launcher and ranks have exited (checkpoint_stop): the
# restart's own come next.  new_one OLD PIDS...: the first pid of PIDS
# not in OLD (a space-separated list).
new_one() {
	local old=" $1 " p; shift
	for p in "$@"; do [[ $old == *" $p "* ]] || { echo "$p"; return 0; }; done
	return 1
}
restart_launch() { new_one "$old_launch" $(pids_of tidal-launch "$e"); }
restart_rank1() { new_one "$old_rank1" $(rank1); }
kill_one() { # kill_one COMPONENT: SIGKILL it; RET its description
	local p
	if [ "$when" = ack ]; then # the restart's, as soon as it is there
		case $1 in
		tidal-launch) wait_for 120 restart_launch >/dev/null
			p=$(restart_launch)
			if [ -n "$p" ]; then kill -9 "$p"; echo "the restart's tidal-launch ($p)"
			else echo "nothing: no restart's tidal-launch seen"; fi
			return ;;
		trainer) wait_for 120 restart_rank1 >/dev/null
			p=$(restart_rank1)
			if [ -n "$p" ]; then kill -9 "$p"; echo "the restart's rank 1 ($p)"
			else echo "nothing: no restart's rank 1 seen"; fi
			return ;;
		esac
	fi
	case $1 in
	slurmctld) p=$(cat "$T/run/slurmctld.pid"); kill -9 "$p"
		wait_for 10 eval "! kill -0 $p"; echo "slurmctld ($p)" ;;
	tidald) p=$(cat "$T/run/tidald-$h.pid"); kill -9 "$p"
		wait_for 10 dead "$p"
		echo "tidald on $h ($p)" ;;
	tidal-launch) p=$(pids_of tidal-launch "$e" | head -1)
		if [ -n "$p" ]; then kill -9 "$p"; echo "E's tidal-launch ($p)"
		else echo "nothing: E's tidal-launch had exited"; fi ;;
	trainer) p=$(rank1 | head -1)
		if [ -n "$p" ]; then kill -9 "$p"; echo "E's rank 1 ($p)"
		else echo "nothing: E's rank 1 had exited"; fi ;;
	munged) p=$(cat "$T/run/munged.pid"); kill -9 "$p"
		wait_for 10 eval "! kill -0 $p"; echo "munged ($p)" ;;
	node) echo "node $h ($(kill_node "$h") processes)"
		scontrol update nodename="$h" state=down reason="killed by $TEST_NAME" ;;
	esac
}
recover() { # recover COMPONENT
	case $1 in
	slurmctld) restart_slurmctld ;;
	tidald) start_tidald "$h"; wait_for 30 agents_up ;;
	munged) sleep 3; restart_munge ;;
	node) restart_node "$h"
		# Slurm delays a job requeued for a node failure by the
		# credential lifetime, so that what it still sends the node
		# about the old run (the kill, retried while slurmd was away)
		# cannot reach a new one.  The administrator who starts it at
		# once waits for those messages to be out first:
		wait_for 30 eval '[ "$(job_state "$e")" = PENDING ]' &&
			wait_for 60 agents_idle &&
			scontrol update JobId="$e" StartTime=now ;;
	esac
}

starts() { grep -c "generation [0-9]*: world" "$out"; }
last_resume() { # the step E's newest generation resumed from (0: fresh)
	grep -o "generation [0-9]*: world [0-9]*, ranks 0-[0-9]* here, \(resuming from step [0-9]*\|starting fresh\)" "$out" |
		tail -1 | sed -n 's/.*resuming from step \([0-9]*\)/\1/p;s/.*starting fresh/0/p'
}
# E trains at STEPS past FROM: a checkpoint newer than FROM is complete.
trains_past() { [ "$(newest_done)" -gt "$1" ] 2>/dev/null; }
# D, if any, cancelled and E back at 4 GPUs on H, training.
alive() { job_state "$1" | grep -qE '^(PENDING|CONFIGURING|RUNNING|REQUEUED|REQUEUE_HOLD|REQUEUE_FED|RESIZING|SUSPENDED)$'; }
# kept JOB: alive, or on its way back: a job the policy preempts (requeues)
# shows COMPLETING until its epilog is done, longer on a loaded machine;
# lost only if it is not back within a minute.
kept() {
	alive "$1" ||
		{ is_state "$1" COMPLETING && wait_for 60 alive "$1"; }
}
baseline() {
	if ! alive "$e"; then # lost by the cell before: a new E
		# Once it has ended, the plugin may still requeue it (killed,
		# with a checkpoint); cancel that too, so only one E runs.
		wait_for 60 eval '! job_state "$e" | grep -q COMPLETING'
		sleep 3
		scancel "$e" 2>/dev/null; e=$(submit_e); out=$T/out/$e.out
		say "E lost; submitted it again as $e"
	fi
	[ -n "$d" ] && scancel "$d" && d=
	wait_for 120 has_gpus "$e" 4 || return 1
	h=$(job_nodes "$e") dir=$T/ckpt/$h/$e
	local s; s=$(newest_done); wait_for 90 trains_past "${s:-0}"
}

# A checkpoint being written: its temporary file exists (polled every
# 10 ms, for up to 60 s).
writing() {
	local i
	for ((i = 0; i < 6000; i++)); do
		compgen -G "$dir/.ckpt-tmp-*" >/dev/null && return 0
		sleep 0.01
	done
	return 1
}

# After a failure: E's last lines, slurmctld's lines about it, and the
# logs kept in $FAULT_LOGS/COMPONENT-MOMENT if set.
e_lines() {
	tail -n 5 "$out" | sed 's/^/   /'
	scontrol show job "$e" 2>/dev/null | grep -E 'JobState|Reason|ExitCode' | sed 's/^/   /'
	grep -E "JobId=$e\b|JobId=$e |$e\.batch" "$log" | tail -n 25 | sed 's/^/   /'
	[ -n "${FAULT_LOGS:-}" ] && mkdir -p "$FAULT_LOGS" &&
		cp -r "$T/log" "$FAULT_LOGS/$what-$when"
}

# stale_launch WATCH_LINE: a "shared NODE GPU jobs ..." line one of whose
# jobs is a launch slurmctld had given up on: the batch launch it sent to
# the node just before the node died, retried when the node came back
# although the job had been requeued since, and killed by slurmd at once
# ("CANCELLED ... DUE TO NODE FAILURE", within a second).  Seen on 22.05
# and 24.11 when the node comes back within seconds, as here; no
# scheduler gave that GPU to two jobs.
stale_launch() {
	local node j
	node=$(sed -n 's/.*shared \([^ ]*\) .*/\1/p' <<<"$1")
	[ -n "$node" ] || return 1
	for j in $(grep -o '[0-9][0-9]* (' <<<"$1" | tr -d ' ('); do
		grep -q "JOB $j ON $node CANCELLED AT .* DUE TO NODE FAILURE" \
			"$T/log/slurmd-$node.log" 2>/dev/null && return 0
	done
	return 1
}

d=
TABLE=
cell() { # cell COMPONENT MOMENT
	local what=$1 when=$2 c s k0 st0 lost ok=1 note= before after
	c="$what at $when"
	baseline || { fail "$c: E did not come back to 4 GPUs training"; show_queue
		e_lines; TABLE+=$(printf '\n%-13s %-6s %s' "$what" "$when" "E not at baseline"); return; }
	k0=$(grep -c "tidald checkpointed it at step" "$log")
	st0=$(starts)
	before=$(wc -l <"$T/watch.out")
	case $when in
	train) sleep "0.$((RANDOM % 10))" ;;
	ckpt) writing || note="no write seen" ;;
	ack) old_launch=$(pids_of tidal-launch "$e" | tr '\n' ' ')
		old_rank1=$(rank1 | tr '\n' ' ')
		d=$(submit -N1 --gpus=2 --deadline=now+2hours -t 30 --wrap 'sleep 3600')
		acked() { [ "$(grep -c "tidald checkpointed it at step" "$log")" -gt "$k0" ]; }
		wait_for 120 acked || note="no ack seen" ;;
	esac
	s=$(newest_done)
	[ "$when" = ack ] && s=$(grep -o "resize JobId=$e: tidald checkpointed it at step [0-9]*" "$log" | tail -1 | awk '{print $NF}')
	local killed; killed=$(kill_one "$what")
	say "$c: killed $killed; newest complete checkpoint: step $s"
	case $killed in nothing*) note="${note:+$note; }$killed" ;; esac
	recover "$what" || note="${note:+$note; }recovery failed"
	# A job that ends now is requeued within a cycle: judge after that,
	# not on a checkpoint its dying trainer still finished.
	sleep 3
	# Back to training: either the same run went on or a new generation
	# started and got past the checkpoint it resumed from.
	# A run that is ending still shows RUNNING, and its orphaned ranks
	# may still write a checkpoint: back means a launcher of E is up on
	# H and a checkpoint newer than the one it resumed from is complete.
	back() {
		local from=$s
		[ "$(starts)" -gt "$st0" ] && from=$(last_resume)
		[ "${from:-0}" -ge "${s:-0}" ] || from=$s
		is_state "$e" RUNNING && [ -n "$(pids_of tidal-launch "$e")" ] &&
			trains_past "$from"
	}
	if ! wait_for 180 back; then
		ok=0; note="${note:+$note; }E not training again: $(job_state "$e") $(job_reason "$e")"
	fi
	local resumed=same
	if [ "$(starts)" -gt "$st0" ]; then
		resumed=$(last_resume)
		[ "${resumed:-0}" -ge "${s:-0}" ] || { ok=0; note="${note:+$note; }resumed from $resumed < $s"; }
	fi
	kept "$r" || { ok=0; note="${note:+$note; }R lost ($(job_state "$r"))"; }
	kept "$e" || { ok=0; note="${note:+$note; }E lost ($(job_state "$e"))"; }
	scontrol ping >/dev/null 2>&1 || { ok=0; note="${note:+$note; }slurmctld down"; }
	after=$(wc -l <"$T/watch.out")
	local bad stale
	bad=$(sed -n "$((before + 1)),\$p" "$T/watch.out" | while read -r l; do
		stale_launch "$l" || echo "$l"; done | head -n 1)
	stale=$(sed -n "$((before + 1)),\$p" "$T/watch.out" | while read -r l; do
		stale_launch "$l" && echo "$l"; done | head -n 1)
	[ -z "$bad" ] || { ok=0; note="${note:+$note; }$bad"; }
	[ -z "$stale" ] ||
		note="${note:+$note; }Slurm's stale launch, killed by Slurm: $stale"
	if [ $ok = 1 ]; then pass "$c: E back (resumed: $resumed, newest at kill: $s), nothing twice, no GPU given to two jobs"
	else fail "$c: $note"; show_queue; e_lines; fi
	TABLE+=$(printf '\n%-13s %-6s %-4s %-6s %-7s %s' "$what" "$when" "$([ $ok = 1 ] && echo ok || echo FAIL)" "${s:-?}" "$resumed" "$note")
}

cells=${FAULTS:-$(for w in slurmctld tidald tidal-launch trainer munged node; do
	for m in train ckpt ack; do echo "$w:$m"; done; done)}
for x in $cells; do cell "${x%%:*}" "${x##*:}"; done

touch "$T/watch.stop"; wait "$watcher"
check "slurmctld's log has no fatal error" eval "! grep -E '\] fatal:|Segmentation|Assertion' '$log'"
echo
printf '%-13s %-6s %-4s %-6s %-7s %s' component moment ok ckpt resumed note
echo "$TABLE"
echo
scancel "$e" "$r" $d
finish
