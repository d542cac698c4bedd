# tests/node/lib.sh - what the tidal-train scripts share: ok/bad/check/
# finish, the skip when tidal-train (or jq) is missing, and a work
# directory $W removed at exit with the processes in PIDS.  Set NAME
# (and BUILD) before sourcing; $T is the trainer.
#
# GPL-2.0-or-later.
BUILD=${BUILD:-build}
T=$BUILD/tidal-train
PASSED=0 FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
check() { local what=$1; shift; if "$@"; then ok "$what"; else bad "$what"; fi; }
finish() { echo "$NAME: $PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; exit $?; }

if [ ! -x "$T" ]; then
	echo "skip - $T is not built (needs libgloo-dev)"
	finish
fi
command -v jq >/dev/null || { echo "skip - jq is not installed"; finish; }

W=$(mktemp -d "/tmp/tidal-$NAME.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done; rm -rf "$W"; }
trap cleanup EXIT
