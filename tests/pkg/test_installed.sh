#!/usr/bin/env bash
# tests/pkg/test_installed.sh - the Debian packages installed on this
# machine, and cluster-tier scripts run against the installed files rather
# than the build tree: slurmctld loads sched_tidal.so from Slurm's own
# PluginDir, sbatch the packaged spank_tidal.so, and tidalctl, tidald,
# tidal-launch and tidal-train are those under /usr.  The packages are
# purged at the end, whatever happened.
#
# Uses the packages of tests/pkg/test_deb.sh ($BUILD/deb, or DEB_DIR);
# builds them if there are none.  Skipped without root, and on a machine
# where a tidal package is already installed (it is not this test's to
# replace).  The cluster scripts: tidalctl (test_ctl), the agents
# (test_agent, with tidalctl check), a preemption through tidald's
# checkpoint (test_agent_preempt), elastic jobs with sbatch's options,
# resized end to end (test_e2e), and the metrics of the installed plugin
# and tidald scraped by prometheus (test_metrics);
# INSTALLED_TESTS="test_ctl ..." names others (tests/cluster/).
#
# GPL-2.0-or-later.
set -uo pipefail
NAME=test_installed
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || skip "not root: installing packages needs root"
pkgs="tidal-slurmctld tidal-spank tidal-node tidal-tools"
for p in $pkgs; do
	st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null)
	[[ $st != i* ]] || skip "$p is installed already; this test installs and purges its own"
done
version=$(dpkg-parsechangelog -l "$here/debian/changelog" -S Version)
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
plugindir=/usr/lib/$multiarch/slurm-wlm
out=$(realpath -m "${DEB_DIR:-$here/$BUILD/deb}") # apt-get install takes paths, not names
debs=()
for p in $pkgs; do debs+=("$out/${p}_${version}_${arch}.deb"); done
if ! ls "${debs[@]}" >/dev/null 2>&1; then
	"$here/scripts/deb.sh" "$out" >/dev/null || { bad "scripts/deb.sh failed ($out/build.log)"; finish; }
fi
for f in "$plugindir/sched_tidal.so" "$plugindir/spank_tidal.so" /usr/sbin/tidald; do
	[ ! -e "$f" ] || skip "$f exists but no tidal package holds it: not this test's to replace"
done

W=$(mktemp -d /tmp/tidal-test-installed.XXXXXX)
purge() {
	DEBIAN_FRONTEND=noninteractive dpkg --purge $pkgs >"$W/purge.log" 2>&1 ||
		cat "$W/purge.log"
	rm -rf "$W"
}
trap purge EXIT

if DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"${debs[@]}" </dev/null >"$W/install.log" 2>&1; then
	ok "apt-get install of the four packages"
else
	bad "apt-get install failed: $(tail -5 "$W/install.log")"
	finish
fi
for p in $pkgs; do
	v=$(dpkg-query -W -f='${Status} ${Version}' "$p")
	if [ "$v" = "install ok installed $version" ]; then ok "$p: $v"; else bad "$p: $v"; fi
done
for f in "$plugindir/sched_tidal.so" "$plugindir/spank_tidal.so" \
	/usr/sbin/tidald /usr/bin/tidalctl /usr/bin/tidal-sim /etc/default/tidald; do
	owner=$(dpkg -S "$f" 2>/dev/null | cut -d: -f1)
	if [ -n "$owner" ]; then ok "$f belongs to $owner"; else bad "$f: no package holds it"; fi
done
v=$(tidalctl --version 2>&1)
[ "$(command -v tidalctl)" = /usr/bin/tidalctl ] && [ "$v" = "tidalctl $version" ] &&
	ok "tidalctl on PATH is the installed one: $v" || bad "tidalctl: $(command -v tidalctl): $v"
printf '%s\n' id,submit,gpus,duration 1,0,4,3600 2,10,8,60 3,20,16,600 >"$W/trace.csv"
v=$(tidal-sim --cluster "$here/conf/slurm.conf" --trace "$W/trace.csv" \
	--policy fifo --quiet --json - 2>&1)
if [ "$(jq -r '.policies.fifo.jobs' <<<"$v" 2>/dev/null)" = 3 ]; then
	ok "the installed tidal-sim replays a trace on conf/slurm.conf"
else
	bad "the installed tidal-sim: $(head -c 300 <<<"$v")"
fi

# The cluster tier against the installed files: a "build" of links to
# them, and Slurm's own PluginDir as the plugins' directory.
links=$W/installed
mkdir -p "$links"
chmod 755 "$W" # the scripts run tidalctl as nobody too
for f in /usr/bin/tidalctl /usr/bin/tidal-sim /usr/sbin/tidald \
	/usr/bin/tidal-launch /usr/bin/tidal-train /usr/sbin/tidal-topo; do
	ln -s "$f" "$links/$(basename "$f")"
done
for t in ${INSTALLED_TESTS:-test_ctl test_agent test_agent_preempt test_e2e test_metrics}; do
	log=$W/$t.log
	BUILD=$links PLUGIN_BUILD=$plugindir bash "$here/tests/cluster/$t.sh" >"$log" 2>&1
	rc=$?
	counts=$(grep -E "^$t: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
	if [ $rc -eq 0 ] && [ -n "$counts" ] && ! grep -q 'skipped' <<<"$counts$(tail -3 "$log")"; then
		ok "tests/cluster/$t.sh on the installed files: $counts"
	else
		bad "tests/cluster/$t.sh on the installed files (rc $rc): ${counts:-no result}"
		grep -E '^FAIL|skipped' "$log" | head -10
	fi
done
finish
