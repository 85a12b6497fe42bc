#!/bin/bash
# What one of the sidecar's topology scans costs on a real sysfs under
# TCG: bench/host/scan-cost.c built against build-bench (the tree as it
# is) and, with BASE, against that commit's own tree and its own
# scan-cost.c, both put in the guest of bench/guest/bench-scan-fabrics.sh,
# which runs them one after the other, twice, over the same 1,024
# namespaces (the VM case fabrics-1024's shape: 128 controllers, two
# paths each), side by side in one boot.
# Usage: bench/host/scan-guest.sh [BASE]   (a commit; the result is
# printed, bench/run.sh -s is not used: copy what is to be kept)
set -euo pipefail
cd "$(dirname "$0")/../.."
BASE=${1:-}
work=$(mktemp -d)
trap 'rm -rf "$work"; [ -z "$BASE" ] || git worktree remove --force "$work-base" 2>/dev/null || true' EXIT
# shellcheck source=bench/host/lib-scan.sh
. bench/host/lib-scan.sh
[ -f build-bench/build.ninja ] || { echo "scan-guest: no build-bench (bash bench/run.sh makes it)" >&2; exit 1; }
meson compile -C build-bench >/dev/null
DESTDIR=$work/dest meson install -C build-bench --quiet >/dev/null
mkdir -p "$work/dest/usr/local/bin"
build_cost . build-bench "$work/dest/usr/local/bin/vwc-scan-cost"
if [ -n "$BASE" ]; then
	base_build "$BASE" "$work-base"
	build_cost "$work-base" "$work-base/build" "$work/dest/usr/local/bin/vwc-scan-cost-base"
fi
echo "# bench/host/scan-guest.sh $BASE: vwc-scan-cost at $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src bench/host || echo ' with changes')${BASE:+, vwc-scan-cost-base at $(git rev-parse --short "$BASE")}"
VWC_DESTDIR=$work/dest bash bench/run.sh -k 7.2-generic-io scan-fabrics
