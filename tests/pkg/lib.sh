# tests/pkg/lib.sh - what the package and install scripts share: ok, bad,
# finish, skip, and $here (the tree's top).  Set NAME (and BUILD) before
# sourcing.
#
# GPL-2.0-or-later.
BUILD=${BUILD:-build}
PASSED=0 FAILED=0
ok() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
bad() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
finish() { echo "$NAME: $PASSED passed, $FAILED failed"; [ "$FAILED" -eq 0 ]; exit $?; }
skip() { echo "skip - $*"; finish; }
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
