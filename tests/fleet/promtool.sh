#!/bin/bash
# Fetch promtool without installing the prometheus package (which would set
# up and start a service): `apt-get download prometheus` with a private apt
# state, `dpkg-deb -x`, keep usr/bin/promtool. Cached and idempotent.
#   $VWC_CACHE_DIR/promtool/promtool     (+ version: the package version)
#   $VWC_CACHE_DIR/promtool/apt/         (private sources, lists, archives)
# The sources are the system's own (/etc/apt/sources.list.d/debian.sources),
# read at run time. Needs network on the first call only.
# Usage: promtool.sh             prints the promtool path (last line)
# Environment: VWC_CACHE_DIR (default /var/cache/nvme-vwc-sync),
#   VWC_PROMTOOL_REFRESH=1 fetches again.
set -euo pipefail

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
DEST=$CACHE/promtool
SYS_SOURCES=/etc/apt/sources.list.d/debian.sources

log() { echo "promtool: $*" >&2; }
die() { log "error: $*"; exit 1; }

if [ -z "${VWC_PROMTOOL_REFRESH:-}" ] && [ -x "$DEST/promtool" ] &&
	"$DEST/promtool" --version >/dev/null 2>&1; then
	echo "$DEST/promtool"
	exit 0
fi

for t in apt-get dpkg-deb; do
	command -v "$t" >/dev/null || die "$t is needed"
done
[ -r "$SYS_SOURCES" ] || die "$SYS_SOURCES not found (deb822 sources expected)"

apt=$DEST/apt
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial"
grep -v '^#' "$SYS_SOURCES" >"$apt/debian.sources"
APT_OPTS=(-o "Dir::Etc::sourcelist=$apt/debian.sources" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
	-o APT::Sandbox::User=root -q)
if [ ! -e "$apt/updated" ] || [ -n "${VWC_PROMTOOL_REFRESH:-}" ]; then
	log "apt-get update (private state in $apt)"
	apt-get "${APT_OPTS[@]}" update >/dev/null || die "apt-get update failed"
	touch "$apt/updated"
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
log "downloading the prometheus package (not installing it)"
(cd "$tmp" && apt-get "${APT_OPTS[@]}" download prometheus >/dev/null) ||
	die "apt-get download prometheus failed"
deb=$(find "$tmp" -maxdepth 1 -name 'prometheus_*.deb' | head -n 1)
[ -n "$deb" ] || die "no prometheus_*.deb downloaded"
dpkg-deb -x "$deb" "$tmp/root"
[ -x "$tmp/root/usr/bin/promtool" ] || die "$(basename "$deb") has no usr/bin/promtool"
"$tmp/root/usr/bin/promtool" --version >/dev/null 2>&1 || die "the extracted promtool does not run"
# replace atomically: a concurrent caller sees the old or the new binary
cp "$tmp/root/usr/bin/promtool" "$DEST/promtool.new"
mv -f "$DEST/promtool.new" "$DEST/promtool"
dpkg-deb -f "$deb" Version >"$DEST/version"
log "$(cat "$DEST/version"): $DEST/promtool"
echo "$DEST/promtool"
