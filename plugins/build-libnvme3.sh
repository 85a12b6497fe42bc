#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-libnvme3.sh - libnvme3 from an nvme-cli 3.x tree, for the core
#
# Run by meson.build at configure time when -Dnvme_cli_source names an
# nvme-cli 3.x tree and the core is to use that tree's libnvme3 (no
# libnvme3 installed, or -Dlibnvme=auto). It can be run by hand.
#
# Usage: build-libnvme3.sh SOURCE WORK [MESON_SETUP_ARGS...]
#
#	SOURCE	unpacked nvme-cli 3.x tree (its libnvme/ is libnvme3); never
#		written to
#	WORK	scratch directory: WORK/build (nvme-cli's meson with only
#		libnvme enabled), WORK/prefix (what it installs: headers,
#		static libnvme3.a, lib/pkgconfig/libnvme3.pc)
#
# libnvme3 is built static, so nvme-vwc-sync links it in and needs no
# libnvme3 at run time (the nvme binary of plugins/build-nvme-cli.sh does
# the same). Prints WORK/prefix on stdout, progress on stderr. Done again
# only when the tree, this script or the arguments change.

set -eu

prog=build-libnvme3
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { msg "error: $*"; exit 1; }

[ $# -ge 2 ] || die "usage: build-libnvme3.sh SOURCE WORK [MESON_SETUP_ARGS...]"
src=$1 work=$2
shift 2
[ -f "$src/meson.build" ] && [ -f "$src/libnvme/meson.build" ] ||
	die "$src is not an nvme-cli 3.x tree (no libnvme/meson.build)"
mkdir -p "$work"
src=$(cd "$src" && pwd -P)
work=$(cd "$work" && pwd -P)
prefix=$work/prefix
meson=${MESON:-meson}
ninja=${NINJA:-ninja}

stamp="source=$src
fetched=$(cat "$src/.vwc-fetched" 2>/dev/null || cksum < "$src/meson.build")
script=$(cksum < "$0")
cc=${CC:-}
args=$*"
if [ -f "$prefix/lib/pkgconfig/libnvme3.pc" ] &&
   [ "$(cat "$work/stamp" 2>/dev/null)" = "$stamp" ]; then
	printf '%s\n' "$prefix"
	exit 0
fi

rm -rf "$work/build" "$prefix" "$work/stamp"
msg "building libnvme3 from $src into $prefix (log: $work/build.log)"
if ! { "$meson" setup --wrap-mode=nodownload "$work/build" "$src" \
	-Dnvme=disabled -Dlibnvme=enabled -Dplugins=[] -Dtests=false \
	-Dexamples=false -Dpython=disabled -Ddocs=false \
	-Dnvmf-autoconnect=disabled -Ddefault_library=static \
	--prefix="$prefix" --libdir=lib "$@" &&
	"$ninja" -C "$work/build" install; } >"$work/build.log" 2>&1; then
	tail -n 20 "$work/build.log" >&2
	die "libnvme3 from $src did not build (log: $work/build.log)"
fi
[ -f "$prefix/lib/pkgconfig/libnvme3.pc" ] ||
	die "libnvme3 built but no $prefix/lib/pkgconfig/libnvme3.pc (nvme-cli 3.x layout changed?)"
rm -rf "$work/build"
printf '%s\n' "$stamp" >"$work/stamp"
printf '%s\n' "$prefix"
