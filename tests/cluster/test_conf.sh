#!/bin/bash
# test_conf.sh - a tidal.conf with mistakes never silently changes what
# runs (live cluster, 4 nodes):
#
#   scontrol reconfigure with   Policy=optimus (replay-only), Polcy=srtf (a
#                               typo), a line without '=': each named in
#                               slurmctld's log, and the configuration in
#                               force stays (fifo); jobs still start
#   CtlPort changed             tidalctl answers on the new port after
#                               scontrol reconfigure, no restart
#   slurmctld started with      Policy=gandiva: it does not start, and its
#                               log says why
#
# GPL-2.0-or-later.
. "$(dirname "$0")/lib.sh"
cluster_up "Policy=fifo
CycleInterval=1"
log=$T/log/slurmctld.log
in_force() { "$TIDALCTL" -o show policy 2>/dev/null | grep -q "Policy=$1 "; }
check "fifo in force" wait_for 10 in_force fifo

logged() { grep -qF -- "$1" "$log"; }
set_tidal_conf "Policy=optimus"
check "Policy=optimus: slurmctld says it runs only in tidal-sim's pollux preset" \
	wait_for 10 logged "Policy=optimus: runs only inside tidal-sim's pollux preset, not in slurmctld"
check "... and keeps fifo in force" wait_for 10 \
	eval 'logged "keeping the configuration in force (Policy=fifo)" && in_force fifo'

set_tidal_conf "Polcy=srtf"
check "Polcy=srtf: an unknown key, with the nearest known one" \
	wait_for 10 logged "Polcy=srtf: unknown key (did you mean Policy?)"
check "... and fifo stays, not the default of a file without Policy" \
	wait_for 10 in_force fifo

set_tidal_conf "Policy=srtf
Policy srtf"
check "a line without '=' is one error naming the line" \
	wait_for 10 logged "tidal.conf:2: 'Policy srtf' is not Key=Value"
check "... and nothing of that file is used: fifo stays" \
	wait_for 10 in_force fifo

j=$(submit -N1 --gpus=1 --wrap 'sleep 300')
check "jobs still start under the configuration in force" wait_state 30 "$j" RUNNING

set_tidal_conf "Policy=srtf
CycleInterval=abc"
check "a bad value: named, with the default used" \
	wait_for 10 logged "CycleInterval=abc: must be a number in [0.1, 3600]; using the default 2"
check "... and the rest of the file is used: srtf" wait_for 10 in_force srtf

old=$PORT_TIDALCTL
PORT_TIDALCTL=$((PORT_CTL + 7))
set_tidal_conf "Policy=srtf"
# Slurm 24.11's reconfigure starts a new slurmctld, which opens the new port.
check "CtlPort changed by scontrol reconfigure: slurmctld says so" \
	wait_for 10 eval 'logged "CtlPort changed from $old to $PORT_TIDALCTL" ||
		logged "tidalctl listens on port $PORT_TIDALCTL"'
check "... and tidalctl answers on the new port" wait_for 10 in_force srtf

# A restart with a policy slurmctld cannot run: it stops, saying why.
scancel "$j"
wait_for 20 no_jobs_active
stop_slurmctld
tidal_conf "Policy=gandiva"
start_slurmctld
check "slurmctld with Policy=gandiva does not start" wait_for 30 eval '! ctld_running'
check "... and its log says why" \
	logged "Policy=gandiva: runs only inside tidal-sim's elasticflow preset, not in slurmctld"
tidal_conf "Policy=fifo"
start_slurmctld && wait_for 60 scontrol ping
check "with tidal.conf fixed, it starts again" wait_for 10 in_force fifo
finish
