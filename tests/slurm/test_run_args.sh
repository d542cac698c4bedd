#!/bin/bash
# test_run_args.sh - tests/slurm/run.sh refuses bad arguments with exit
# status 2 and a message naming the argument, the value and the rule, and
# reports saved results without a cluster (--report).
#
# GPL-2.0-or-later.
cd "$(dirname "$0")/../.." || exit 1
RUN=tests/slurm/run.sh
PASSED=0 FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   - $*"; }
fail() { FAILED=$((FAILED + 1)); echo "FAIL - $*"; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

refused() { # refused PATTERN ARGS...: exit 2, message matching PATTERN
	local pattern=$1 out rc
	shift
	out=$("$RUN" "$@" 2>&1 >/dev/null)
	rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$pattern" <<<"$out"; then
		pass "$* is refused: $out"
	else
		fail "$* (exit $rc): $out"
	fi
}
refused "unknown argument '--bogus'" --bogus
refused "--timeout 0: must be a whole number of seconds, at least 1" --timeout 0
refused "--timeout 5m: must be a whole number" --timeout 5m
refused "--sched 'Fifo!': a scheduler is backfill or a Tidal policy name" --sched 'Fifo!'
refused "--list /nonexistent: cannot read it" --list /nonexistent
printf '# nothing\n' >"$tmp/empty.list"
refused "names no test" --list "$tmp/empty.list"
refused "--report needs --logs DIR" --report
refused "--no-report needs --logs DIR" --no-report
refused "--report and --no-report: one or the other" --report --no-report --logs "$tmp"
refused "usage:" --list

# --report: the table of saved results, differences last.
printf 'test1.1\ntest1.2\ntest28.1\n' >"$tmp/three.list"
mkdir -p "$tmp/logs"
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 skip 0\n' >"$tmp/logs/backfill.results"
printf 'test1.1 pass 1\ntest1.2 fail 3\ntest28.1 skip 0\ntotal - 8\n' >"$tmp/logs/fifo.results"
# reported RC PATTERN WHAT: --report of $tmp/logs exits RC, saying PATTERN.
reported() {
	local want=$1 pattern=$2 what=$3 out rc
	out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
	rc=$?
	if [ "$rc" -eq "$want" ] && grep -q -- "$pattern" <<<"$out"; then
		pass "$what"
	else
		fail "$what (exit $rc): $out"
	fi
}
reported 1 'test1.2 fifo: fail, backfill passes it' \
	"--report names the difference and exits 1"
reported 1 '1 differences not deliberate' "--report counts it"
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 skip 0\ntotal - 8\n' >"$tmp/logs/fifo.results"
reported 0 '^  none$' "--report with no difference exits 0"
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 fail 8\n' >"$tmp/logs/fifo.results"
reported 1 'test28.1 fifo: fail, backfill passes it' \
	"--report counts a failure where backfill skipped (after its subtests passed)"
printf 'test1.1 flaky 1\ntest1.2 pass 2\ntest28.1 skip 0\n' >"$tmp/logs/fifo.results"
reported 0 'test1.1 fifo: failed once, passed on the second try' \
	"--report shows a test that passed on its second try, and exits 0"
rm "$tmp/logs/backfill.results"
reported 1 'no backfill results' \
	"--report without backfill's results exits 1 and says so"
echo "test_run_args: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
