#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Root file system on a listed NVMe drive, in a booted Debian 13 system
# (generic kernel, initramfs-tools, systemd), under QEMU (TCG):
#
#   test-root-on-nvme.sh DESTDIR     DESTDIR: `meson install` of this tree
#                                    configured with --prefix=/usr
#
# The image (mmdebstrap, cached in $VWC_CACHE_DIR/t700-root/) gets DESTDIR,
# an admin hwdb entry listing QEMU's 1b36:0010 and a unit that records what
# the booted system sees, then powers off. Two boots, each from a fresh copy
# of the root file system:
#   real:  the initramfs as update-initramfs makes it. Debian 13's 6.12 does
#          not show a controller's quirks and its nvme table lists QEMU's ID
#          (bogus_nid): the init-premount script must refuse, naming the
#          table entry, and the system boot normally (Write Zeroes on).
#   t700:  the same plus a test-only init-top script pointing the table
#          lookup at a modules.alias without QEMU's ID, as a T700's case is:
#          the controller must be rebound before the root mount, and the
#          booted system have write_zeroes_max_bytes 0 and the dynamic ID.
# Last line: "root-on-nvme: N passed, N failed".
set -uo pipefail

DESTDIR_IN=${1:?usage: test-root-on-nvme.sh DESTDIR}
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/t700-root
SYS_SOURCES=/etc/apt/sources.list.d/debian.sources
TIMEOUT=${VWC_ROOT_TIMEOUT:-900}
passed=0 failed=0
pass() { echo "root-on-nvme: PASS $1"; passed=$((passed + 1)); }
fail() { echo "root-on-nvme: FAIL $1: $2"; failed=$((failed + 1)); }
log() { echo "root-on-nvme: $*" >&2; }
die() { fail setup "$1"; echo "root-on-nvme: $passed passed, $failed failed"; exit 1; }

[ -x "$DESTDIR_IN/usr/sbin/nvme-vwc-sync" ] ||
	die "$DESTDIR_IN/usr/sbin/nvme-vwc-sync missing (configure with --prefix=/usr)"
need=()
for p in mmdebstrap qemu-system-x86 e2fsprogs initramfs-tools-core udev; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		die "cannot install ${need[*]}"
fi
mkdir -p "$CACHE"
work=$(mktemp -d "${TMPDIR:-/tmp}/vwc-root.XXXXXX")
trap 'umount -R "$work/rootfs/proc" "$work/rootfs/sys" "$work/rootfs/dev" 2>/dev/null; rm -rf "$work"' EXIT

# --- base system, cached ---
base=$CACHE/trixie-base.tar
if [ ! -s "$base" ]; then
	awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 { print }' "$SYS_SOURCES" |
		grep -v '^#' | sed "s/^Suites:.*/Suites: trixie/" >"$work/trixie.sources"
	log "mmdebstrap trixie (once)"
	mmdebstrap --variant=minbase \
		--include=systemd-sysv,udev,kmod,initramfs-tools,linux-image-amd64,e2fsprogs,nvme-cli,procps \
		trixie "$base.part.tar" "$work/trixie.sources" >"$CACHE/mmdebstrap.log" 2>&1 ||
		die "mmdebstrap failed, see $CACHE/mmdebstrap.log"
	mv "$base.part.tar" "$base"
fi

# --- the system under test ---
R=$work/rootfs
mkdir -p "$R"
tar -C "$R" -xf "$base" || die "cannot unpack $base"
tar -C "$DESTDIR_IN" -c . | tar -C "$R" -x --keep-directory-symlink || die "cannot copy $DESTDIR_IN"
mkdir -p "$R/etc/udev/hwdb.d"
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' \
	>"$R/etc/udev/hwdb.d/61-nvme-vwc-sync-local.hwdb"
echo "LABEL=root / ext4 defaults 0 1" >"$R/etc/fstab"
cat >"$R/usr/local/bin/vwc-root-probe" <<'PROBE'
#!/bin/sh
{
echo "root=$(findmnt -n -o SOURCE /)"
for n in /sys/block/nvme*n*; do echo "wz $(basename "$n") $(cat "$n/queue/write_zeroes_max_bytes")"; done
echo "dynid=$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null)"
echo "state=$(systemctl is-system-running)"
} >/var/log/vwc-root-probe 2>&1
sync
systemctl poweroff
PROBE
chmod 755 "$R/usr/local/bin/vwc-root-probe"
cat >"$R/etc/systemd/system/vwc-root-probe.service" <<'UNIT'
[Unit]
Description=nvme-vwc-sync root-on-NVMe probe
After=multi-user.target
[Service]
Type=oneshot
ExecStart=/usr/local/bin/vwc-root-probe
[Install]
WantedBy=multi-user.target
UNIT
mount -t proc proc "$R/proc" && mount --bind /dev "$R/dev" && mount -t sysfs sys "$R/sys" ||
	die "cannot mount /proc, /dev, /sys in the image"
chroot "$R" systemd-hwdb update || die "systemd-hwdb update failed in the image"
chroot "$R" systemctl enable vwc-root-probe.service >/dev/null 2>&1
chroot "$R" systemctl mask serial-getty@ttyS0.service >/dev/null 2>&1
chroot "$R" update-initramfs -u -k all >"$work/initramfs-real.log" 2>&1 ||
	die "update-initramfs failed: $(tail -n 3 "$work/initramfs-real.log")"
cp "$R"/boot/initrd.img-* "$work/initrd-real"
# test only: the T700's case (ID absent from the nvme table)
mkdir -p "$R/etc/initramfs-tools/scripts/init-top" "$R/etc/initramfs-tools/hooks"
printf '#!/bin/sh\ncase "$1" in prereqs) exit 0 ;; esac\necho "export NVME_VWC_SYNC_MODULES_DIR=/vwc-t700" >>/conf/param.conf\n' \
	>"$R/etc/initramfs-tools/scripts/init-top/vwc-t700"
printf '#!/bin/sh\ncase "$1" in prereqs) exit 0 ;; esac\nmkdir -p "$DESTDIR/vwc-t700"\necho "alias pci:v*d*sv*sd*bc01sc08i02* nvme" >"$DESTDIR/vwc-t700/modules.alias"\n' \
	>"$R/etc/initramfs-tools/hooks/vwc-t700"
chmod 755 "$R/etc/initramfs-tools/scripts/init-top/vwc-t700" "$R/etc/initramfs-tools/hooks/vwc-t700"
chroot "$R" update-initramfs -u -k all >"$work/initramfs-t700.log" 2>&1 ||
	die "update-initramfs failed: $(tail -n 3 "$work/initramfs-t700.log")"
cp "$R"/boot/initrd.img-* "$work/initrd-t700"
rm -f "$R/etc/initramfs-tools/scripts/init-top/vwc-t700" "$R/etc/initramfs-tools/hooks/vwc-t700"
umount "$R/proc" "$R/dev" "$R/sys"
cp "$R"/boot/vmlinuz-* "$work/vmlinuz"
if unmkinitramfs "$work/initrd-real" "$work/ird" 2>/dev/null &&
	[ -x "$work/ird/main/usr/sbin/nvme-vwc-sync" ] &&
	[ -x "$work/ird/main/scripts/init-premount/nvme-vwc-sync" ]; then
	pass "initramfs holds the tool and the init-premount script"
else
	fail "initramfs contents" "tool or init-premount script missing"
fi
if systemd-hwdb query --root="$work/ird/main" pci:v00001B36d00000010sv00001AF4sd00001100bc01sc08i02 2>/dev/null |
	grep -q NVME_VWC_SYNC_QUIRKS=disable_write_zeroes; then
	pass "initramfs hwdb lists the admin's entry"
else
	fail "initramfs hwdb" "no NVME_VWC_SYNC_QUIRKS for 1b36:0010"
fi

# boot VARIANT: one boot from a fresh root image; results in $work/VARIANT.*
boot() {
	local v=$1
	rm -f "$work/$v.img"
	truncate -s 2G "$work/$v.img"
	mke2fs -q -t ext4 -L root -d "$R" "$work/$v.img"
	log "$v: booting (TCG)"
	timeout "$TIMEOUT" qemu-system-x86_64 -accel tcg,thread=single -machine q35 \
		-cpu max,-cx16 -m 1024 -smp 2 -nographic -no-reboot -nic none \
		-kernel "$work/vmlinuz" -initrd "$work/initrd-$v" \
		-append "console=ttyS0 root=LABEL=root rw panic=-1" \
		-drive "file=$work/$v.img,if=none,id=d0,format=raw" \
		-device nvme,serial=ROOT0,drive=d0 -serial "file:$work/$v.log" \
		-monitor none >/dev/null 2>&1
	debugfs -R "cat /var/log/vwc-root-probe" "$work/$v.img" 2>/dev/null >"$work/$v.probe"
	cp "$work/$v.log" "$CACHE/$v.serial.log"
	sed "s/^/root-on-nvme: [$v] /" "$work/$v.probe"
}

boot real
grep -aq "is in this kernel's nvme table" "$work/real.log" &&
	pass "real: the initramfs refuses, naming the table entry" ||
	fail "real: refusal" "$(grep -a nvme-vwc-sync "$work/real.log" | head -n 3)"
grep -q '^root=/dev/nvme0n1$' "$work/real.probe" && pass "real: boots with root on nvme0n1" ||
	fail "real: root" "$(head -n 1 "$work/real.probe")"
grep -q '^wz nvme0n1 524288$' "$work/real.probe" && pass "real: Write Zeroes left on" ||
	fail "real: Write Zeroes" "$(grep '^wz' "$work/real.probe")"

boot t700
premount=$(grep -an "Running /scripts/init-premount" "$work/t700.log" | head -n 1 | cut -d: -f1)
rootmount=$(grep -an "EXT4-fs (nvme0n1): mounted" "$work/t700.log" | head -n 1 | cut -d: -f1)
probes=$(grep -ac "nvme nvme0: pci function" "$work/t700.log")
[ "$probes" -ge 2 ] && [ -n "$premount" ] && [ -n "$rootmount" ] && [ "$premount" -lt "$rootmount" ] &&
	pass "t700: controller rebound in init-premount, before the root mount" ||
	fail "t700: rebind before root" "probes $probes, premount line ${premount:-?}, root mount line ${rootmount:-?}"
grep -q '^root=/dev/nvme0n1$' "$work/t700.probe" && pass "t700: boots with root on nvme0n1" ||
	fail "t700: root" "$(head -n 1 "$work/t700.probe")"
grep -q '^wz nvme0n1 0$' "$work/t700.probe" && pass "t700: Write Zeroes disabled from the start" ||
	fail "t700: Write Zeroes" "$(grep '^wz' "$work/t700.probe")"
grep -q '^dynid=1b36 0010 1af4 1100 0 0 200$' "$work/t700.probe" && pass "t700: dynamic ID recorded in /run" ||
	fail "t700: dynamic ID" "$(grep '^dynid' "$work/t700.probe")"
echo "root-on-nvme: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
