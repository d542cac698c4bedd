#!/bin/bash
# test_ctl.sh - tidalctl against a live sched/tidal: records, -o, --json,
# explain, and admin actions refused to a non-admin (MUNGE says who); times
# and numbers as scontrol prints them, the parameters in force, the exit
# status, and what it says of a configuration or a peer that is wrong.
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
# The shipped example, with FIFO and a fast cycle on top (later keys win).
cluster_up "$(cat "$(dirname "$0")/../../conf/tidal.conf")
Policy=fifo
CycleInterval=1"
[ -x "$TIDALCTL" ] || { fail "tidalctl not built"; finish; exit; }

a=$(submit -N3 --gpus-per-node=8 --wrap 'sleep 300')
b=$(submit -N2 --gpus-per-node=8 --wrap 'sleep 300')
wait_state 30 "$a" RUNNING
wait_for 20 reason_has "$b" TidalHold
# tidalctl shows the last cycle's snapshot, taken before its starts: wait
# for a cycle that saw A running.
wait_for 20 eval "'$TIDALCTL' -o show job $a | grep -q State=RUNNING"

out=$("$TIDALCTL" show jobs); echo "$out"
check "show jobs: a record per job" \
	test "$(echo "$out" | grep -c '^JobId=')" -eq 2
check "show jobs: B held with the policy's reason" \
	grep -q "Reason=fifo: .*needs 16 GPUs, 8 free" <<<"$out"
check "show job: one record" \
	test "$("$TIDALCTL" -o show job "$b" | grep -c "^JobId=$b ")" -eq 1
check "-o: one line per record" \
	test "$("$TIDALCTL" -o show jobs | wc -l)" -eq 2
json_ok() { # the reply is one JSON object with ok, "v":1, 2 records
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
assert r["ok"] and r["v"] == 1 and len(r["records"]) == 2'
	else
		grep -q '^{"v":1,"ok":true,"records":\[{"JobId"'
	fi
}
check "--json parses, 2 records" json_ok < <("$TIDALCTL" --json show jobs)
out=$("$TIDALCTL" explain "$a"); echo "$out"
check "explain: placement of the running job" grep -q "Placement=n" <<<"$out"
out=$("$TIDALCTL" -o show nodes); echo "$out"
check "show nodes: a record per node" test "$(echo "$out" | grep -c '^NodeName=n')" -eq 4
check "show nodes: A holds n1's 8 GPUs" \
	grep -Eq "^NodeName=n1 State=UP GPUs=8 AllocGPUs=8 OtherGPUs=0 FreeGPUs=0 Switch=s1 Jobs=$a:8" <<<"$out"
check "show nodes: n4 is free" grep -q "^NodeName=n4 .*FreeGPUs=8 .*Jobs=None" <<<"$out"
check "show nodes: non-admins see others' jobs counted, not named" \
	grep -q "Jobs=1 other" < <(runuser -u nobody -- "$TIDALCTL" -o show nodes)
check "show policy: fifo" grep -q "Policy=fifo" < <("$TIDALCTL" show policy)
check "conf/tidal.conf's parameters are in force" \
	grep -q "tiresias.thresholds=3600,36000" < <("$TIDALCTL" show policy)
check "conf/tidal.conf gave no configuration error" \
	bash -c "! grep 'error: sched/tidal' '$T/log/slurmctld.log'"

out=$(runuser -u nobody -- "$TIDALCTL" set policy sjf 2>&1); echo "$out"
check "non-admin may not change the policy" \
	grep -q "changing the policy needs root or SlurmUser" <<<"$out"
check "non-admin sees none of root's jobs (PrivateData=jobs)" \
	grep -q "No jobs under Tidal" < <(runuser -u nobody -- "$TIDALCTL" show jobs)
check "root may change the policy" "$TIDALCTL" set policy sjf
check "show policy: sjf" grep -q "Policy=sjf" < <("$TIDALCTL" show policy)
out=$(printf 'garbage\n{"version":1,"op":"show","what":"jobs"}\n' |
	timeout 5 bash -c "exec 3<>/dev/tcp/127.0.0.1/$PORT_TIDALCTL; cat >&3; cat <&3")
check "a forged credential is rejected" grep -q "MUNGE credential rejected" <<<"$out"

# ---- records: scontrol's times, short numbers, None for what is not known
out=$("$TIDALCTL" show job "$a"); echo "$out"
date_re='[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}'
check "show job: Submit is a date, as scontrol prints it" \
	grep -Eq "(^| )Submit=$date_re( |$)" <<<"$out"
has_all() { # has_all TEXT WORD...: TEXT holds every WORD
	local text=$1 w; shift
	for w; do grep -qF -- "$w" <<<"$text" || return 1; done
}
check "show job: no deadline, no --train-iters: Deadline, Iterations None" \
	has_all "$out" "Deadline=None" "Iterations=None"
out=$("$TIDALCTL" show policy); echo "$out"
check "show policy: LastCycle is a date" grep -Eq "LastCycle=$date_re( |$)" <<<"$out"
check "show policy: DecideMs to three decimals at most" \
	grep -Eq "DecideMs=[0-9]+(\.[0-9]{1,3}|e-[0-9]+)?( |$)" <<<"$out"
check "--json: DecideMs a short number" \
	grep -Eq '"DecideMs":[0-9.e-]{1,12}[,}]' < <("$TIDALCTL" --json show policy)
check "--json: no deadline is null" \
	grep -qF '"Deadline":null' < <("$TIDALCTL" --json show job "$a")

# ---- show policy: what is in force, not what tidal.conf says
set_tidal_conf "Policy=fifo
CycleInterval=abc
Tiresias.Thresholds=3600,36000"
wait_for 20 eval "'$TIDALCTL' show policy | grep -q Rejected=cycleinterval=abc"
out=$("$TIDALCTL" -o show policy); echo "$out"
check "a rejected CycleInterval=abc: the 2 s in force is shown" \
	grep -q "CycleInterval=2 .*Parameters=.*cycleinterval=2[,\ ]" <<<"$out"
check "and the rejected value apart" grep -q "Rejected=cycleinterval=abc" <<<"$out"
out=$("$TIDALCTL" -o show config); echo "$out"
conf_re="$(printf '%s' "$T/etc/tidal.conf" | sed 's/[.[\*^$]/\\&/g')"
check "show config: Policy from tidal.conf's line 1" \
	grep -q "^Key=Policy Value=fifo Source=$conf_re:1 Rejected=None Read=yes" <<<"$out"
check "show config: CycleInterval=abc rejected, the default 2 in force" \
	grep -q "^Key=CycleInterval Value=2 Source=$conf_re:2 Rejected=abc Read=yes" <<<"$out"
check "show config: CheckpointTimeout not set, its default 30" \
	grep -q "^Key=CheckpointTimeout Value=30 Source=default Rejected=None Read=yes" <<<"$out"
check "show config: Tiresias.Thresholds, which fifo does not read" \
	grep -q "^Key=Tiresias.Thresholds Value=3600,36000 Source=$conf_re:3 Rejected=None Read=no (Policy=fifo does not read it)" <<<"$out"

# ---- exit status: 2 for usage errors, 1 for the rest (tidalctl(1))
fails() { # fails RC MESSAGE COMMAND...: exits RC, MESSAGE on stderr
	local want_rc=$1 want=$2 out rc; shift 2
	out=$("$@" 2>&1 >/dev/null); rc=$?
	echo "   rc=$rc: $(head -2 <<<"$out" | tr '\n' ' ')"
	[ "$rc" -eq "$want_rc" ] && grep -qF -- "$want" <<<"$out"
}
check "usage: show foo exits 2" fails 2 "show: 'foo' is not one of jobs, job ID, nodes, policy, config, decisions" "$TIDALCTL" show foo
check "usage: show alone exits 2" fails 2 "show what?" "$TIDALCTL" show
check "usage: show job abc exits 2" fails 2 "show job: 'abc' is not a job id" "$TIDALCTL" show job abc
check "usage: explain without a job exits 2" fails 2 "explain: which job?" "$TIDALCTL" explain
check "usage: an extra word exits 2" fails 2 "show jobs: unexpected 'now'" "$TIDALCTL" show jobs now
check "usage: an unknown option exits 2" fails 2 "unknown option '--bogus'" "$TIDALCTL" --bogus show jobs
check "usage: an unknown command exits 2" fails 2 "'frob' is not a command" "$TIDALCTL" frob
check "the plugin's refusal exits 1" fails 1 "job 999999 is not pending or running under Tidal" "$TIDALCTL" show job 999999

# ---- the configuration: no guessing, ports checked
check "SLURM_CONF naming no file: an error, not localhost" \
	fails 1 "SLURM_CONF=$T/none/slurm.conf: No such file or directory" \
	env SLURM_CONF="$T/none/slurm.conf" "$TIDALCTL" show jobs
if [ ! -e /etc/slurm/slurm.conf ]; then
	check "SLURM_CONF unset, no /etc/slurm/slurm.conf: an error" \
		fails 1 "SLURM_CONF is not set and /etc/slurm/slurm.conf cannot be read" \
		env -u SLURM_CONF "$TIDALCTL" show jobs
fi
mkdir -p "$T/alt"
alt_conf() { # alt_conf CTLPORT: $T/alt/{slurm,tidal}.conf, MessageTimeout=1
	printf 'SlurmctldHost=%s(127.0.0.1)\nAuthInfo=socket=%s\nMessageTimeout=1\n' \
		"$(hostname -s)" "$T/munge/munge.socket" >"$T/alt/slurm.conf"
	printf 'CtlPort=%s\n' "$1" >"$T/alt/tidal.conf"
}
alt_ctl() { SLURM_CONF="$T/alt/slurm.conf" "$TIDALCTL" "$@"; }
alt_conf 0
check "CtlPort=0: the port is off, says the file" \
	fails 1 "$T/alt/tidal.conf: CtlPort=0: sched/tidal's tidalctl port is off; CtlPort must be a port number in 1-65535" alt_ctl show jobs
alt_conf 99999
check "CtlPort=99999: out of range, names file, key, value and range" \
	fails 1 "$T/alt/tidal.conf: CtlPort=99999: must be a port number in 1-65535" alt_ctl show jobs

# ---- peers that are not sched/tidal, told apart
alt_conf "$PORT_CTL"
check "slurmctld's port: closed without a reply, CtlPort named" \
	fails 1 "127.0.0.1:$PORT_CTL closed the connection without a reply" alt_ctl show jobs
alt_conf $((PORT_CTL + 6))
check "a port where nothing listens: refused" \
	fails 1 "127.0.0.1:$((PORT_CTL + 6)) refused the connection: nothing listens there" alt_ctl show jobs
serve() { # serve PORT REPLY|-: one connection; "-": say nothing for 10 s
	python3 - "$1" "$2" <<'PY' &
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(1)
c, _ = s.accept()
c.recv(65536)
if sys.argv[2] == "-":
    time.sleep(10)
else:
    c.sendall(sys.argv[2].encode())
c.close()
PY
	wait_for 10 eval "ss -Htln 'sport = :$1' | grep -q ."
}
listening_done() { ! ss -Htln "sport = :$1" | grep -q .; }
p=$((PORT_CTL + 7))
serve "$p" $'HTTP/1.1 400 Bad Request\r\n\r\n'
alt_conf "$p"
check "a peer in another protocol: its reply quoted, not sched/tidal's JSON" \
	fails 1 "127.0.0.1:$p replied \"HTTP/1.1 400 Bad Request" alt_ctl show jobs
wait_for 10 listening_done "$p"
serve "$p" -
check "a silent peer: no reply within three MessageTimeouts" \
	fails 1 "127.0.0.1:$p accepted the connection but sent no reply within 3 s" alt_ctl show jobs
wait_for 15 listening_done "$p"
finish
