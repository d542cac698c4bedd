#!/usr/bin/env bash
# tests/run-unit.sh BIN... - run CMocka test binaries, then one closing line.
set -uo pipefail
pass=0 fail=0
for t in "$@"; do
	out=$("$t" 2>&1); rc=$?
	echo "$out" | grep -E '^\[  (PASSED|FAILED) \]|^\[  ERROR   \]|FAILED|ERROR' | sed "s|^|$(basename "$t"): |"
	p=$(echo "$out" | awk '/^\[  PASSED  \] [0-9]+ test/ {print $4}')
	f=$(echo "$out" | awk '/^\[  FAILED  \] [0-9]+ test/ {print $4}')
	pass=$((pass + ${p:-0}))
	fail=$((fail + ${f:-0}))
	if [ $rc -ne 0 ] && [ -z "${f}" ]; then fail=$((fail + 1)); echo "$(basename "$t"): exited $rc"; fi
done
echo "check-unit: $pass passed, $fail failed"
[ $fail -eq 0 ]
