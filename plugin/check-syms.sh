#!/bin/sh
# check-syms.sh SO HOST - fail if SO has an undefined symbol that neither
# HOST (the program that dlopens it, e.g. /usr/sbin/slurmctld), nor a
# library HOST loads, nor a library SO itself needs defines.  Plugins are
# loaded with lazy binding, so a misspelt slurmctld function would
# otherwise pass the build and fail in the middle of a scheduling cycle.
#
# GPL-2.0-or-later.
set -eu
so=$1 host=$2
[ -x "$host" ] || { echo "check-syms: $host not found; skipping the check" >&2; exit 0; }
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
libs() { ldd "$1" | awk '/=> \//{print $3} /^\t\/[^ ]+ \(/{print $1}'; }
for f in "$host" $(libs "$host") $(libs "$so"); do
	nm -D --defined-only "$f" 2>/dev/null
done | awk '{print $NF}' | sed 's/@.*//' | sort -u >"$tmp/defined"
nm -D --undefined-only "$so" | awk '$1 == "U" {print $2}' | sed 's/@.*//' |
	sort -u >"$tmp/undefined"
missing=$(comm -23 "$tmp/undefined" "$tmp/defined")
if [ -n "$missing" ]; then
	echo "check-syms: $so: undefined symbols that $host does not provide:" >&2
	echo "$missing" | sed 's/^/  /' >&2
	exit 1
fi
echo "check-syms: $so: all $(wc -l <"$tmp/undefined") undefined symbols resolve in $host"
