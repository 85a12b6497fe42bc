#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The initramfs's hwdb helper (initramfs-tools' hook and dracut's module run
# it): the initramfs's copy of the system's hwdb.bin is kept when the
# system's file was compiled after every source and folder last changed,
# and compiled again from every source otherwise (a source changed, a
# package's file added with its package's older time, a copy that is not
# the system's file, a file dated in the future); a compile honours
# systemd-hwdb's precedence (/etc's file of a name wins, a link to
# /dev/null masks it); an initramfs without one gets the quirk database
# alone; a merged /usr (lib -> usr/lib) is compiled once; a compile that
# fails is said, exit 1, and leaves the file as it was. The system's
# files are under a temporary root (the helper's SYSROOT); systemd-hwdb is
# the real one, behind a shim that counts the compiles (and fails on
# demand). TAP.
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
printf '#!/bin/sh\necho "$*" >>"%s/compiles"\n[ ! -e "%s/fail" ] || { echo "no space left" >&2; exit 1; }\nexec "%s" "$@"\n' \
	"$T" "$T" "$REAL" >"$T/shim/systemd-hwdb"
chmod 755 "$T/shim/systemd-hwdb"
T700=pci:v0000C0A9d00005419sv0000C0A9sd00005419bc01sc08i02
SYSKEY=usb:v1D6Bp0002
# the helper keeps to its paths: the package's udev folder is one of
# /usr/lib/udev and /lib/udev, both read under SYSROOT
udevdir=$(sed -n 's|.*"$root/usr/lib/udev/hwdb.d" "$root\(/[^"]*\)/hwdb.d".*|\1|p' "$HELPER")
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
has() { # FILE MODALIAS PROPERTY [VALUE]: the compiled FILE answers MODALIAS
	# with PROPERTY (set to VALUE)
	rm -rf "$T/q"
	mkdir -p "$T/q/etc/udev"
	cp "$1" "$T/q/etc/udev/hwdb.bin"
	"$REAL" query --root="$T/q" "$2" >"$T/out" 2>&1
	if [ $# -ge 4 ]; then grep -qx "$3=$4" "$T/out"; else grep -q "^$3=" "$T/out"; fi
}
QUIRK="$T700 NVME_VWC_SYNC_QUIRKS disable_write_zeroes"

# 1. the system's file is current and the initramfs has it: kept
sysroot current ours
run
t "current: exits 0" [ "$rc" -eq 0 ]
t "current: the system's hwdb.bin kept, nothing compiled" compiles 0
t "current: the copy is still the system's file" cmp -s "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"

# 2. a source changed after the system's file was compiled
sysroot changed ours
printf '\nusb:v1234p5678*\n ID_MODEL_FROM_DATABASE=Edited\n' >>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
run
t "a source changed: exits 0, compiled again, once" sh -c '[ "$1" -eq 0 ] && [ "$(wc -l <"$2")" -eq 1 ]' _ "$rc" "$T/compiles"
t "a source changed: the change is in it" has "$D/usr/lib/udev/hwdb.bin" usb:v1234p5678 ID_MODEL_FROM_DATABASE Edited
# shellcheck disable=SC2086 # QUIRK: modalias, property, value
t "a source changed: and the quirk database" has "$D/usr/lib/udev/hwdb.bin" $QUIRK

# 3. the package just installed: its file has the package's (old) time, the
# system's hwdb.bin does not have it yet; the folder changed
sysroot added
cp "$OURS" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
touch -t "$OLD" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
run
t "file added with an older time: exits 0, compiled again, once" sh -c '[ "$1" -eq 0 ] && [ "$(wc -l <"$2")" -eq 1 ]' _ "$rc" "$T/compiles"
# shellcheck disable=SC2086
t "file added with an older time: the quirk database" has "$D/usr/lib/udev/hwdb.bin" $QUIRK
t "file added with an older time: the system's entries" has "$D/usr/lib/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE

# 4. the initramfs's copy is not the system's file
sysroot other ours
printf 'not a hwdb' >"$D/usr/lib/udev/hwdb.bin"
run
t "a copy that differs: exits 0, compiled again" sh -c '[ "$1" -eq 0 ] && [ "$(wc -l <"$2")" -eq 1 ]' _ "$rc" "$T/compiles"
# shellcheck disable=SC2086
t "a copy that differs: the quirk database" has "$D/usr/lib/udev/hwdb.bin" $QUIRK

# 5. the system's file dated in the future (a clock set back since): not
# taken as current
sysroot future
cp "$OURS" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb"
touch -t "$OLD" "$R$udevdir/hwdb.d/61-nvme-vwc-sync.hwdb" "$R$udevdir/hwdb.d"
touch -d '+3 hours' "$R/usr/lib/udev/hwdb.bin"
cp -p "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"
run
t "dated in the future: compiled again" compiles 1
# shellcheck disable=SC2086
t "dated in the future: the quirk database" has "$D/usr/lib/udev/hwdb.bin" $QUIRK

# 6. no hwdb.bin in the initramfs: the quirk database alone
sysroot none ours
rm "$D/usr/lib/udev/hwdb.bin"
run
t "no hwdb.bin: exits 0, one compiled" sh -c '[ "$1" -eq 0 ] && [ "$(wc -l <"$2")" -eq 1 ]' _ "$rc" "$T/compiles"
# shellcheck disable=SC2086
t "no hwdb.bin: /etc/udev/hwdb.bin has the quirk database" has "$D/etc/udev/hwdb.bin" $QUIRK
t "no hwdb.bin: ... and nothing of the system's (nothing to shadow)" \
	not has "$D/etc/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE

# 7. an admin's file of the package's name in /etc, without the property:
# it wins over the package's, in the quirk database alone too
sysroot override ours
rm "$D/usr/lib/udev/hwdb.bin"
printf '# emptied by the admin\n' >"$R/etc/udev/hwdb.d/61-nvme-vwc-sync.hwdb"
run
t "/etc's file of the package's name wins: exits 0" [ "$rc" -eq 0 ]
t "/etc's file of the package's name wins: no quirk in the initramfs" \
	not has "$D/etc/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS

# 8. the package's name masked (a link to /dev/null in /etc), stale
sysroot masked ours
ln -s /dev/null "$R/etc/udev/hwdb.d/61-nvme-vwc-sync.hwdb"
run
t "masked by a link to /dev/null: compiled again" compiles 1
t "masked by a link to /dev/null: no quirk in the initramfs" \
	not has "$D/usr/lib/udev/hwdb.bin" "$T700" NVME_VWC_SYNC_QUIRKS
t "masked by a link to /dev/null: the system's entries still" has "$D/usr/lib/udev/hwdb.bin" "$SYSKEY" ID_VENDOR_FROM_DATABASE

# 9. merged /usr: lib is usr/lib, one file, compiled once
sysroot merged ours
ln -s usr/lib "$D/lib"
echo '# an admin edit' >>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
run
t "merged /usr, stale: compiled once, not for each name" compiles 1

# 10. an initramfs with the system's file in /etc and /usr: each kept or
# compiled on its own
sysroot both ours
mkdir -p "$R/etc/udev" "$D/etc/udev"
cp -p "$R/usr/lib/udev/hwdb.bin" "$R/etc/udev/hwdb.bin"
touch -t 199901010000 "$R/etc/udev/hwdb.bin"
cp -p "$R/etc/udev/hwdb.bin" "$D/etc/udev/hwdb.bin"
run
t "/etc's older than the sources, /usr's current: /etc's alone compiled" compiles 1
t "... /usr's still the system's file" cmp -s "$R/usr/lib/udev/hwdb.bin" "$D/usr/lib/udev/hwdb.bin"

# 11. systemd-hwdb fails: said, exit 1, the file as it was, nothing left
sysroot failing ours
echo '# an admin edit' >>"$R/usr/lib/udev/hwdb.d/20-usb-vendor-model.hwdb"
cp "$D/usr/lib/udev/hwdb.bin" "$T/before"
: >"$T/fail"
run
rm -f "$T/fail"
t "systemd-hwdb fails: exit 1" [ "$rc" -eq 1 ]
t "systemd-hwdb fails: says so, with its message" \
	sh -c 'grep -q "could not compile" "$1" && grep -q "no space left" "$1"' _ "$T/out"
t "systemd-hwdb fails: the initramfs's file as it was" cmp -s "$T/before" "$D/usr/lib/udev/hwdb.bin"
t "systemd-hwdb fails: nothing else left in the initramfs" \
	sh -c '[ "$(find "$1" -type f | wc -l)" -eq 1 ]' _ "$D"
tap_done
