# scripts/cache.sh - what the scripts that fetch and build into Tidal's
# cache share (scripts/slurm-src.sh, scripts/slurm-build.sh).  Sourced;
# the caller sets PROG first.
#
# Cache: ${TIDAL_CACHE:-/var/cache/tidal}, outside the repository.
#
# GPL-2.0-or-later.

log() {
	printf '%s: %s\n' "$PROG" "$*" >&2
}

die() {
	printf '%s: error: %s\n' "$PROG" "$*" >&2
	exit 1
}

# OUT: CACHE, the cache directory (absolute; not created), or die if it
# lies inside the repository.
cache_dir() {
	local repo
	repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
	CACHE=$(realpath -m -- "${TIDAL_CACHE:-/var/cache/tidal}")
	case "$CACHE/" in
	"$repo"/*) die "cache $CACHE is inside the repository $repo; set TIDAL_CACHE to a directory outside it" ;;
	esac
}

# Create CACHE if need be, check it is writable, and take the lock NAME
# there on fd 9 (held until exit): one builder at a time, a second waits.
cache_lock() {
	local name=$1
	mkdir -p "$CACHE" 2>/dev/null ||
		die "cannot create $CACHE; run as root or set TIDAL_CACHE to a writable directory outside the tree"
	[[ -w "$CACHE" ]] || die "$CACHE is not writable; run as root or set TIDAL_CACHE"
	exec 9>"$CACHE/.$name.lock"
	if ! flock -n 9; then
		log "waiting for another $PROG run to finish"
		flock 9
	fi
}
