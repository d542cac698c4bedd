# tests/node/munge.sh - a private munged for the node scripts that need
# MUNGE (test_agent.sh, test_launch.sh); sourced.
#
# start_munged DIR: a fresh key in DIR/mkey (not readable by others), the
# socket in DIR/munge (open to all, for tests that run as nobody), the pid
# in DIR/munged.pid, the log in DIR/munged.log; sets SOCK to the socket.
# RET munged's status.
#
# GPL-2.0-or-later.
start_munged() {
	mkdir -p "$1/munge" "$1/mkey"
	chmod 755 "$1/munge"
	chmod 700 "$1/mkey"
	dd if=/dev/urandom of="$1/mkey/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$1/mkey/munge.key"
	SOCK=$1/munge/munge.socket
	munged --force --socket="$SOCK" --key-file="$1/mkey/munge.key" \
		--pid-file="$1/munged.pid" --log-file="$1/munged.log" \
		--seed-file="$1/mkey/seed"
}
