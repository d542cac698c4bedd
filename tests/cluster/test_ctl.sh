#!/bin/bash
# test_ctl.sh - tidalctl against a live sched/tidal: records, -o, --json,
# explain, and admin actions refused to a non-admin (MUNGE says who).
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
json_ok() { # the reply is one JSON object with ok, version 1, 2 records
	if command -v python3 >/dev/null; then
		python3 -c 'import json, sys
r = json.loads(sys.stdin.read())
assert r["ok"] and r["version"] == 1 and len(r["records"]) == 2'
	else
		grep -q '^{"version":1,"ok":true,"records":\[{"JobId"'
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
finish
