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
refused "usage:" --list

# --report: the table of saved results, differences last.
printf 'test1.1\ntest1.2\ntest28.1\n' >"$tmp/three.list"
mkdir -p "$tmp/logs"
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 skip 0\n' >"$tmp/logs/backfill.results"
printf 'test1.1 pass 1\ntest1.2 fail 3\ntest28.1 skip 0\ntotal - 8\n' >"$tmp/logs/fifo.results"
out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'test1.2 fifo: fail, backfill passes it' <<<"$out" &&
	grep -q '1 differences not deliberate' <<<"$out"; then
	pass "--report names the difference and exits 1"
else
	fail "--report (exit $rc): $out"
fi
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 skip 0\ntotal - 8\n' >"$tmp/logs/fifo.results"
out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -qx '  none' <<<"$out"; then
	pass "--report with no difference exits 0"
else
	fail "--report, no difference (exit $rc): $out"
fi
printf 'test1.1 pass 1\ntest1.2 pass 2\ntest28.1 fail 8\ntotal - 8\n' >"$tmp/logs/fifo.results"
out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'test28.1 fifo: fail, backfill passes it' <<<"$out"; then
	pass "--report counts a failure where backfill skipped (after its subtests passed)"
else
	fail "--report, skip then fail (exit $rc): $out"
fi
printf 'test1.1 flaky 1\ntest1.2 pass 2\ntest28.1 skip 0\n' >"$tmp/logs/fifo.results"
out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
rc=$?
if [ "$rc" -eq 0 ] && grep -q 'test1.1 fifo: failed once, passed on the second try' <<<"$out"; then
	pass "--report shows a test that passed on its second try, and exits 0"
else
	fail "--report, flaky (exit $rc): $out"
fi
rm "$tmp/logs/backfill.results"
out=$("$RUN" --report --logs "$tmp/logs" --list "$tmp/three.list" 2>&1)
rc=$?
if [ "$rc" -eq 1 ] && grep -q 'no backfill results' <<<"$out"; then
	pass "--report without backfill's results exits 1 and says so"
else
	fail "--report, no backfill (exit $rc): $out"
fi
echo "test_run_args: $PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
