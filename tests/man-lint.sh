#!/usr/bin/env bash
# tests/man-lint.sh PAGE... - every man page renders without a groff warning
# (-ww: "can't break line" and the like) and holds no control character
# but tab and newline (a stray form feed renders as a blank).  One line per
# page, then a closing count.
#
# GPL-2.0-or-later.
set -uo pipefail
pass=0 fail=0
for p in "$@"; do
	warn=$(groff -man -ww -z -Tutf8 "$p" 2>&1)
	ctl=$(LC_ALL=C grep -n '[[:cntrl:]]' "$p" | LC_ALL=C grep -v $'^[0-9]*:[^\x01-\x08\x0b-\x1f\x7f]*$' | head -3)
	if [ -z "$warn" ] && [ -z "$ctl" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL - $p: ${warn:+groff: $warn}${ctl:+ control character on line ${ctl%%:*}}"
	fi
done
echo "man-lint: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
