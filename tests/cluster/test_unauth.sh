#!/bin/bash
# test_unauth.sh - a local user who is not root or SlurmUser (nobody)
# sends well-formed but unauthorised requests, and malformed ones, to every
# port and socket Tidal listens on in a live cluster:
#
#   sched/tidal's CtlPort   the node ops (node_register, node_heartbeat,
#                           node_ack, ckpt_where), set policy; a request
#                           that is not JSON, a wire version it does not
#                           speak, an unknown op, a forged MUNGE
#                           credential, a lone line
#   tidald's peer port      ckpt_stat, ckpt_get (nobody's credential), a
#                           forged credential, a lone line
#   tidald's local socket   fetch from a named peer, fetch of root's
#                           job (J, which trains and checkpoints), a
#                           line that is not a request
#
# Each is refused with a reply that says why, slurmctld's or tidald's log
# has one line for it, and nothing changes: the policy, the agents (none
# registered again, addresses as they were), J's recorded checkpoint,
# every other checkpoint directory.  (tidal-launch's control socket
# answers only its own uid, and its rendezvous store only its job's, by
# MUNGE: tests/node/test_launch.sh, sections 4 and 9.)
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
skip_unless_node_side
skip_unless_python "the local socket's client"
id nobody >/dev/null 2>&1 || { say "skipped: no user nobody"; finish; exit; }
agents_cluster_up
log=$T/log/slurmctld.log
train_script "$T/out/train.sh" --iters 100000000 --ckpt-every 50 --log-every 100
j=$(submit -N1 --gpus=1 "$T/out/train.sh")
check "root's job J ($j) runs" wait_state 30 "$j" RUNNING
node=$(job_nodes "$j")
recorded() { "$TIDALCTL" -o show job "$j" 2>/dev/null | grep -o 'Checkpoint=step [0-9]*'; }
check "J checkpoints and the plugin records it" wait_for 60 eval '[ -n "$(recorded)" ]'

as_nobody() { runuser -u nobody -- "$@"; }
cred() { as_nobody munge -S "$T/munge/munge.socket" -n </dev/null; }
# tcp PORT LINE...: the LINEs to 127.0.0.1:PORT as nobody; the reply.
tcp() {
	local port=$1; shift
	as_nobody bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1; shift
		printf "%s\n" "$@" >&3; timeout 10 cat <&3' tcp "$port" "$@"
}
# unix SOCKET LINE: LINE to a Unix socket as nobody; the reply.
unix() {
	as_nobody python3 - "$1" "$2" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
print(s.makefile().readline().strip())
PY
}
# What must not change: the policy, the agents, the checkpoint
# directories but J's own (it trains on), the registrations so far.
snapshot() {
	"$TIDALCTL" -o show policy | grep -o 'Policy=[^ ]*'
	"$TIDALCTL" -o show nodes | sed 's/HeartbeatAge=[^ ]* //; s/CkptFree=[^ ]* //'
	(cd "$T/ckpt" && find . | grep -v "^\./$node/$j/" | sort)
	grep -c "registered (" "$log"
}
# The plugin's view of the nodes is its last cycle's: wait for a cycle
# that saw J running (a checkpoint can be recorded before it).
j_on_node() { "$TIDALCTL" -o show nodes | grep "^NodeName=$node " | grep -q "Jobs=$j:1 "; }
check "the plugin's view shows J on $node" wait_for 20 j_on_node
before=$(snapshot)
ctl_refusals() { grep -c "tidalctl port: refused" "$log"; }
# refused NAME REPLY WANT LOG_BEFORE LOG_COUNT: REPLY says WANT and one
# more refusal line is in the log (LOG_COUNT, a command).
refused() {
	local name=$1 reply=$2 want=$3 n0=$4 count=$5
	grep -q '"ok":false' <<<"$reply" && grep -q -- "$want" <<<"$reply" ||
		{ echo "   reply: $reply"; return 1; }
	wait_for 10 eval "[ \"\$($count)\" -gt $n0 ]" ||
		{ echo "   no log line for: $name"; return 1; }
}

# ---- sched/tidal's CtlPort
P=$PORT_TIDALCTL
ctl_case() { # ctl_case NAME WANT CRED REQUEST
	local n0; n0=$(ctl_refusals)
	check "CtlPort: $1 refused and logged" \
		refused "$1" "$(tcp "$P" "$3" "$4")" "$2" "$n0" ctl_refusals
}
ctl_case node_register "is for node agents" "$(cred)" \
	'{"version":1,"op":"node_register","node":"'"$node"'","addr":"127.0.0.1:9","heartbeat":1}'
ctl_case node_heartbeat "is for node agents" "$(cred)" \
	'{"version":1,"op":"node_heartbeat","node":"'"$node"'"}'
ctl_case node_ack "is for node agents" "$(cred)" \
	'{"version":1,"op":"node_ack","node":"'"$node"'","id":1,"ok":true,"job":'"$j"',"step":99999,"path":"/tmp/x"}'
ctl_case ckpt_where "is for node agents" "$(cred)" \
	'{"version":1,"op":"ckpt_where","node":"'"$node"'","job":'"$j"'}'
ctl_case "set policy" "needs root or SlurmUser" "$(cred)" \
	'{"version":1,"op":"set","what":"policy","policy":"sjf"}'
ctl_case "a request that is not JSON" "not a JSON object" "$(cred)" 'DROP TABLE jobs'
ctl_case "wire version 7" "wire version 7 not supported" "$(cred)" \
	'{"version":7,"op":"show","what":"jobs"}'
ctl_case "an unknown op" "unknown op" "$(cred)" '{"version":1,"op":"cancel","id":1}'
ctl_case "a forged credential" "MUNGE credential rejected" \
	"MUNGE:AwQDAACforgedforgedforgedforged==:" '{"version":1,"op":"set","what":"policy","policy":"sjf"}'
n0=$(ctl_refusals)
check "CtlPort: a lone line refused and logged" \
	refused "a lone line" "$(tcp "$P" "$(cred)")" "expected a MUNGE credential line" "$n0" ctl_refusals
check "CtlPort: nobody may still read (show policy)" \
	eval "as_nobody '$TIDALCTL' show policy | grep -q Policy=elastic-edf"

# ---- tidald's peer port and local socket, on J's node
tlog=$T/log/tidald-$node.log
peer_port=$(sed -n 's/.* and 127\.0\.0\.1:\([0-9]*\) (peers).*/\1/p' "$tlog" | tail -1)
check "tidald on $node: peer port known ($peer_port)" test -n "$peer_port"
tidald_lines() { grep -c "refused" "$tlog"; }
peer_case() { # peer_case NAME WANT CRED REQUEST
	local n0; n0=$(tidald_lines)
	check "tidald peer port: $1 refused and logged" \
		refused "$1" "$(tcp "$peer_port" "$3" "$4")" "$2" "$n0" tidald_lines
}
peer_case ckpt_stat "need root or SlurmUser" "$(cred)" '{"v":1,"op":"ckpt_stat","job":'"$j"'}'
peer_case ckpt_get "need root or SlurmUser" "$(cred)" '{"v":1,"op":"ckpt_get","job":'"$j"',"step":1}'
peer_case "a forged credential" "MUNGE credential rejected" "MUNGE:AwQDAACforgedforgedforgedforged==:" \
	'{"v":1,"op":"ckpt_stat","job":'"$j"'}'
n0=$(tidald_lines)
check "tidald peer port: a lone line refused and logged" \
	refused "a lone line" "$(tcp "$peer_port" '{"v":1,"op":"ckpt_stat","job":1}')" \
	"expected a MUNGE credential line" "$n0" tidald_lines
sock=$T/tidal-run/$node/tidald.sock
local_case() { # local_case NAME WANT REQUEST
	local n0; n0=$(tidald_lines)
	check "tidald local socket: $1 refused and logged" \
		refused "$1" "$(unix "$sock" "$3")" "$2" "$n0" tidald_lines
}
local_case "fetch from a named peer" "is for root" \
	'{"v":1,"op":"fetch","job":'"$j"',"peer":"127.0.0.1:'"$peer_port"'","step":1}'
local_case "fetch of root's job" "is not yours" '{"v":1,"op":"fetch","job":'"$j"'}'
local_case "a line that is not a request" "not a JSON object" 'rm -rf /'
check "tidald local socket: nobody may still say hello" \
	grep -q '"ok":true' < <(unix "$sock" '{"v":1,"op":"hello"}')

# ---- nothing changed (after a cycle that would have saved a change)
sleep 2
after=$(snapshot)
check "nothing changed: policy, agents, checkpoint directories" \
	test "$before" = "$after"
[ "$before" = "$after" ] || diff <(echo "$before") <(echo "$after") | head -20
forged() { grep -E "^ckpt $j .*(99999|/tmp/x)" "$T/state/tidal_state" || recorded | grep 99999; }
check "J's recorded checkpoint is its own, not the forged ack's (step 99999, /tmp/x)" \
	eval '[ -z "$(forged)" ]' 
check "J still runs" is_state "$j" RUNNING
check "slurmctld still answers" eval 'scontrol ping >/dev/null'
grep -E "tidalctl port: refused" "$log" | tail -3 | sed 's/^/   /'
grep "refused" "$tlog" | tail -3 | sed 's/^/   /'
scancel "$j"
finish
