#!/bin/bash
# The stock nvme host modules beside a -patched kernel's, for the benchmark
# aside (bench/guest/bench-aside.sh): one boot measures the patched kernel
# and the stock one, switching between them with rmmod and insmod.
#
# A -patched tag (tests/vm/kernels.sh) is the generic kernel of the same
# release as its stock tag, with drivers/nvme/host rebuilt with the kernel
# patches; both overlays put nvme-core.ko and nvme.ko at the same path,
# usr/lib/modules/<release>/kernel/drivers/nvme/host/. This fixture takes
# the stock tag's two files (its modules.cpio.gz, as Debian ships them,
# decompressed) and puts them under another directory,
#   usr/lib/vwc-test/stock-modules/<release>/{nvme-core,nvme}.ko
# so the guest has both sets (the patched ones where /init loads them).
# The modules they need (nvme-auth, nvme-keyring ...) are the kernel's own,
# in the tag's overlay already, and the same for both.
#
# Output, cached: $VWC_CACHE_DIR/fixtures/stock/<release>/modules.cpio.gz,
# appended by run-vm.sh ("# vm: fixture stock").
# Usage: fixture-stock.sh [TAG...]  (default: 7.2-generic-patched
#   6.1-generic-patched; a stock tag names itself)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
[ "$#" -gt 0 ] || set -- 7.2-generic-patched 6.1-generic-patched

log() { echo "fixture-stock: $*" >&2; }
die() { log "error: $*"; exit 1; }

for tag in "$@"; do
	stock=${tag%-patched}
	bash "$HERE/kernels.sh" "$stock" >/dev/null
	ver=$(cat "$CACHE/kernels/$stock/version")
	if [ -e "$CACHE/kernels/$tag/version" ] &&
		[ "$(cat "$CACHE/kernels/$tag/version")" != "$ver" ]; then
		die "$tag is $(cat "$CACHE/kernels/$tag/version"), $stock is $ver"
	fi
	out=$CACHE/fixtures/stock/$ver
	src=$CACHE/kernels/$stock/modules.cpio.gz
	# remade when the stock overlay is newer
	if [ -s "$out/modules.cpio.gz" ] && [ "$out/modules.cpio.gz" -nt "$src" ]; then
		log "$ver: cached"
		continue
	fi
	tmp=$(mktemp -d)
	(cd "$tmp" && gzip -dc "$src" | cpio -id --quiet \
		"usr/lib/modules/$ver/kernel/drivers/nvme/host/nvme-core.ko" \
		"usr/lib/modules/$ver/kernel/drivers/nvme/host/nvme.ko")
	h=$tmp/usr/lib/modules/$ver/kernel/drivers/nvme/host
	[ -s "$h/nvme-core.ko" ] && [ -s "$h/nvme.ko" ] ||
		die "$stock: no nvme-core.ko and nvme.ko in its overlay"
	mkdir -p "$tmp/ov/usr/lib/vwc-test/stock-modules/$ver"
	mv "$h/nvme-core.ko" "$h/nvme.ko" "$tmp/ov/usr/lib/vwc-test/stock-modules/$ver/"
	mkdir -p "$out"
	(cd "$tmp/ov" && find . -print0 | cpio --null -o -H newc --quiet) |
		gzip -9 >"$out/modules.cpio.gz.new"
	mv "$out/modules.cpio.gz.new" "$out/modules.cpio.gz"
	rm -rf "$tmp"
	log "$ver: stock nvme-core.ko and nvme.ko of $stock under usr/lib/vwc-test/stock-modules/$ver"
done
