# tests/emu/lib.sh - helpers for the emulator tier: run tidal-emu on a job
# file and grep its per-cycle output.  Sourced by tests/emu/test_*.sh.
#
# GPL-2.0-or-later.
BUILD=${BUILD:-build}
EMU="$BUILD/tidal-emu"
JOBS="$(dirname "$0")/jobs"
TEST_NAME=$(basename "$0" .sh)
PASSED=0
FAILED=0
if [ ! -x "$EMU" ]; then
	echo "$TEST_NAME: skipped: $EMU not built (no configured Slurm source tree?)"
	exit 0
fi
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
# emu JOBFILE: run it, keep the output in $OUT
emu() {
	OUT=$("$EMU" "$JOBS/$1" 2>&1) || { fail "$1: tidal-emu failed"; echo "$OUT"; }
}
# after CYCLE: the block printed after cycle CYCLE
after() { echo "$OUT" | awk -v c="-- cycle $1" '$0 == c { on = 1; next } /^-- cycle/ { on = 0 } on'; }
# expect CYCLE REGEX DESCRIPTION
expect() {
	if after "$1" | grep -Eq -- "$2"; then pass "$3"; else
		fail "$3 (cycle $1: no line matches '$2')"; after "$1"; fi
}
finish() {
	echo "$TEST_NAME: $PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ]
}
