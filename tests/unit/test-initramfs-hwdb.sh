#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The initramfs's hwdb helper (initramfs-tools' hook and dracut's module run
# it): the initramfs's copy of the system's hwdb.bin is kept when the
# system's file was compiled after every source and folder last changed,
# and compiled again from every source otherwise (a source changed, a
# package's file added with its package's older time, a copy that is not
# the system's file); an initramfs without one gets the quirk database
# alone; a merged /usr (lib -> usr/lib) is compiled once. The system's
# files are under a temporary root (the helper's SYSROOT); systemd-hwdb is
# the real one, behind a shim that counts the compiles. TAP.
# Usage: test-initramfs-hwdb.sh HELPER QUIRK-HWDB
HELPER=${1:?usage: test-initramfs-hwdb.sh HELPER QUIRK-HWDB}
OURS=${2:?usage: test-initramfs-hwdb.sh HELPER QUIRK-HWDB}
REAL=$(command -v systemd-hwdb)
if [ -z "$REAL" ]; then
	echo "1..0 # SKIP systemd-hwdb missing (Debian package udev)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# shellcheck source=../lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

mkdir -p "$T/shim"
printf '#!/bin/sh\necho "$*" >>"%s/compiles"\nexec "%s" "$@"\n' "$T" "$REAL" >"$T/shim/systemd-hwdb"
chmod 755 "$T/shim/systemd-hwdb"
T700=pci:v0000C0A9d00005419sv0000C0A9sd00005419bc01sc08i02
SYSKEY=usb:v1D6Bp0002
# the helper keeps to its paths: the package's udev folder is one of
# /usr/lib/udev and /lib/udev, both read under SYSROOT
udevdir=$(sed -n 's|^srcdirs="$root\(/[^ ]*\)/hwdb.d .*|\1|p' "$HELPER")
[ -n "$udevdir" ] || { echo "Bail out! no hwdb folder found in $HELPER"; exit 1; }
OLD=200001010000 NEWER=200001020000

# sysroot NAME [ours]: the system's sources (one entry of its own, and the
# quirk database with "ours"), dated OLD, and its hwdb.bin compiled from
# them, dated NEWER; a fresh initramfs tree holding a copy (cp -p)
sysroot() {
	R=$T/$1/sys D=$T/$1/dest
	mkdir -p "$R/usr/lib/udev/hwdb.d" "$R/etc/udev/hwdb.d" "$R$udevdir/hwdb.d" \
		"$D/usr/lib/udev" "$T/$1/c/etc/udev/hwdb.d"
	printf '%s*\n ID_VENDOR_FROM_DATABASE=Linux Foundation\n' "$SYSKEY" \
		>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
	[ "${2:-}" != ours ] || cp "$OURS" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
	cp "$R/usr/lib/udev/hwdb.d/"*.hwdb "$R$udevdir/hwdb.d/"*.hwdb "$T/$1/c/etc/udev/hwdb.d/" 2>/dev/null
	"$REAL" update --root="$T/$1/c"
	cp "$T/$1/c/etc/udev/hwdb.bin" "$R/usr/lib/udev/hwdb.bin"
	touch -t "$OLD" "$R/usr/lib/udev/hwdb.d" "$R/usr/lib/udev/hwdb.d/"* "$R/etc/udev/hwdb.d" \
		"$R$udevdir/hwdb.d" "$R$udevdir/hwdb.d/"* 2>/dev/null
	touch -t "$NEWER" "$R/usr/lib/udev/hwdb.bin"
	cp -p "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"
}
run() { # the helper on $D, counting compiles
	: >"$T/compiles"
	PATH=$T/shim:$PATH sh "$HELPER" "$D" "$R" >"$T/out" 2>&1
	rc=$?
}
not() { ! "$@"; }
compiles() { [ "$(wc -l <"$T/compiles")" -eq "$1" ]; }
has() { # FILE MODALIAS PROPERTY: the compiled FILE answers MODALIAS with it
	rm -rf "$T/q"
	mkdir -p "$T/q/etc/udev"
	cp "$1" "$T/q/etc/udev/hwdb.bin"
	"$REAL" query --root="$T/q" "$2" >"$T/out" 2>&1
	grep -q "^$3=" "$T/out"
}

# 1. the system's file is current and the initramfs has it: kept
sysroot current ours
run
t "current: exits 0" [ "$rc" -eq 0 ]
t "current: the system's hwdb.bin kept, nothing compiled" compiles 0
t "current: the copy is still the system's file" cmp -s "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"
t "current: ... which has the quirk database" has "$D/usr/lib/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS

# 2. a source changed after the system's file was compiled
sysroot changed ours
echo '# an admin edit' >>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
run
t "a source changed: compiled again, once" compiles 1
t "a source changed: the system's entries" has "$D/usr/lib/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE
t "a source changed: and the quirk database" has "$D/usr/lib/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS

# 3. the package just installed: its file has the package's (old) time, the
# system's hwdb.bin does not have it yet; the folder changed
sysroot added
cp "$OURS" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
touch -t "$OLD" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
run
t "file added with an older time: compiled again, once" compiles 1
t "file added with an older time: the quirk database" has "$D/usr/lib/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS
t "file added with an older time: the system's entries" has "$D/usr/lib/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE

# 4. the initramfs's copy is not the system's file
sysroot other ours
printf 'not a hwdb' >"$D/usr/lib/udev/hwdb.bin"
run
t "a copy that differs: compiled again" compiles 1
t "a copy that differs: the quirk database" has "$D/usr/lib/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS

# 5. no hwdb.bin in the initramfs: the quirk database alone
sysroot none ours
rm "$D/usr/lib/udev/hwdb.bin"
run
t "no hwdb.bin: one compiled" compiles 1
t "no hwdb.bin: /etc/udev/hwdb.bin has the quirk database" has "$D/etc/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS
t "no hwdb.bin: ... and nothing of the system's (nothing to shadow)" \
	not has "$D/etc/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE

# 6. merged /usr: lib is usr/lib, one file, compiled once
sysroot merged ours
ln -s usr/lib "$D/lib"
echo '# an admin edit' >>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
run
t "merged /usr, stale: compiled once, not for each name" compiles 1

# 7. an initramfs with the system's file in /etc and /usr: each kept or
# compiled on its own
sysroot both ours
mkdir -p "$R/etc/udev" "$D/etc/udev"
cp -p "$R/usr/lib/udev/hwdb.bin" "$R/etc/udev/hwdb.bin"
touch -t 199901010000 "$R/etc/udev/hwdb.bin"
cp -p "$R/etc/udev/hwdb.bin" "$D/etc/udev/hwdb.bin"
run
t "/etc's older than the sources, /usr's current: /etc's alone compiled" compiles 1
t "... /usr's still the system's file" cmp -s "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"
tap_done
