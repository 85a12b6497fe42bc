#!/bin/bash
# The README demo: build and install into build/destdir, boot a VM with one
# drive whose volatile write cache is off and one whose cache is on, and show
# the kernel's write_cache and flush counts before and after `nvme vwc-sync`.
# Environment: VWC_DEMO_KERNEL (6.1, 6.12 or 7.2; default 7.2),
# VWC_MESON_OPTS (extra meson setup options).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=$PWD/build
KERNEL=${VWC_DEMO_KERNEL:-7.2}

bash scripts/deps.sh >&2
bash tests/vm/kernels.sh "$KERNEL"
# shellcheck disable=SC2206 # word splitting intended
opts=(${VWC_MESON_OPTS:-})
# the nvme binary with the vwc plugin, built from Debian's nvme-cli source
opts+=("-Dnvme_cli_source=$(bash scripts/fetch-nvme-cli.sh)")
if [ -f "$BUILD/build.ninja" ]; then
	meson setup --reconfigure "$BUILD" "${opts[@]}" >/dev/null
else
	meson setup "$BUILD" "${opts[@]}" >/dev/null
fi
meson compile -C "$BUILD" >/dev/null
rm -rf "$BUILD/destdir"
DESTDIR=$BUILD/destdir meson install -C "$BUILD" --quiet >/dev/null
mkdir -p "$BUILD/demo"
bash tests/vm/mkinitramfs.sh "$BUILD/demo/initramfs.cpio" "$BUILD/destdir"
echo "demo: booting Linux $KERNEL under QEMU (software emulation, about 10 s)" >&2
bash tests/vm/run-vm.sh -f -k "$KERNEL" -i "$BUILD/demo/initramfs.cpio" \
	-l "$BUILD/demo/serial.log" tests/vm/guest/demo.sh |
	grep -v '^VWC-\(INIT\|TEST: DONE\|RUN\)'
