#!/bin/bash
# Install every Debian package the build, the unit tests and the VM tests need,
# or, given PACKAGE arguments, just those (the host-side suites use that).
# Idempotent: when everything is already installed it returns at once.
# Usage: deps.sh [PACKAGE...]
set -euo pipefail

PKGS=(
	# build
	build-essential meson ninja-build pkg-config
	libnvme-dev libudev-dev libjson-c-dev
	# libkmod: modprobe.d and the module index as modprobe reads them;
	# libmount: mountinfo and swaps
	libkmod-dev libmount-dev
	# libtracefs: find or mount tracefs; libtraceevent: the nvme events'
	# formats (the sidecar's kernel-side detection); libbpf: the kernel's
	# BTF, which names an io_uring command's controller
	libtracefs-dev libtraceevent-dev libbpf-dev
	# nvme-cli 2.3 built with the plugin: zlib; libnvme-mi.pc needs dbus-1;
	# its source comes through apt-get source (dpkg-source)
	zlib1g-dev libdbus-1-dev dpkg-dev
	# man pages (asciidoctor) and their render test (man)
	asciidoctor man-db
	# klibc's shell and tools: the init-premount script run as an
	# initramfs without busybox runs it (tests/unit/test-premount.sh)
	klibc-utils
	# tools used by tests, the guest image and the demo (zstd, xz, lz4 and
	# readelf: the guest kernels uncompressed for QEMU, tests/lib/qemu.sh)
	nvme-cli fio udev kmod jq cpio gzip xz-utils zstd lz4 binutils file
	# LVM in the guest (quirks refuses to rebind a physical volume)
	lvm2
	# GPT partition tables in the guest (sfdisk: T700 cases on partitioned
	# namespaces)
	fdisk
	# the models of the writers' protocol (tests/model): SPIN; pan is
	# compiled with gcc
	spin
	# signals and delays injected at one syscall of a guest command (the
	# rebind cases: a signal or SIGKILL while the unbind write is in progress)
	strace
	# the VM harness
	qemu-system-x86 qemu-utils busybox-static socat
	# guest kernels are fetched with apt-get download / dpkg-deb
	apt dpkg ca-certificates
	# the wzsl fixture (tests/vm/fixture-wzsl.sh): 7.2's nvme modules are
	# rebuilt in a sid chroot (6.1's on the host, with build-essential)
	mmdebstrap
)

[ "$#" -eq 0 ] || PKGS=("$@")
missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed; then
		missing+=("$p")
	fi
done
if [ "${#missing[@]}" -eq 0 ]; then
	[ "$#" -gt 0 ] || echo "deps: all ${#PKGS[@]} packages present"
	exit 0
fi

echo "deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
	echo "deps: need root to install packages" >&2
	exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
