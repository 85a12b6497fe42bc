#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A bootable Debian system image for the full-system tests, cached:
#
#   mkimage.sh SUITE [FLAVOUR]   (bookworm = Debian 12, trixie = Debian 13;
#                                 FLAVOUR cloud (default) or generic)
#
# mmdebstrap (minbase) with the suite's own kernel (cloud: NVMe built in;
# generic: NVMe a module, loaded from the initramfs, for root on NVMe; the
# root file system is found by its label either way), initramfs-tools,
# systemd as PID 1, systemd-udevd, journald, nvme-cli and e2fsprogs, from the
# system's Debian sources (derived as scripts/chroot.sh does; no host name is
# written anywhere). The image holds no package of this project: the tests
# install the .deb files at first boot from a second disk. It holds one
# small unit, vwc-test.service, which at every boot mounts the disk labelled
# VWCTEST (if any) on /vwc and runs /vwc/test.sh with its output on the
# serial console (serial-getty@ttyS0 is masked: it flushes the tty).
# To keep TCG boots short: the first-boot update services are done at build
# time (systemd-update-done), and update-initramfs is off in the image (the
# tests boot the initramfs made here, copied out; regenerating it on every
# udev trigger costs minutes under TCG).
#
# Output, in $VWC_CACHE_DIR/images/SUITE[-generic] (default
# /var/cache/nvme-vwc-sync):
#   root.raw (ext4, label root, 2 GiB sparse), vmlinuz, initrd.img,
#   inputs (what it was made from; the image is made again when this
#   script or the package list changes, or VWC_IMAGE_REFRESH=1), build.log.
# Prints the directory on stdout; progress on stderr.
set -euo pipefail

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}
suite=${1:?usage: mkimage.sh SUITE [cloud|generic]}
flavour=${2:-cloud}
case $suite in
bookworm | trixie) ;;
*) echo "mkimage: unknown suite '$suite' (bookworm, trixie)" >&2; exit 2 ;;
esac
case $flavour in
cloud) kernel=linux-image-cloud-amd64 name=$suite ;;
generic) kernel=linux-image-amd64 name=$suite-generic ;;
*) echo "mkimage: unknown flavour '$flavour' (cloud, generic)" >&2; exit 2 ;;
esac

log() { echo "mkimage: $*" >&2; }
die() { log "error: $*"; exit 1; }

PKGS=(systemd-sysv udev kmod initramfs-tools "$kernel"
	nvme-cli e2fsprogs mount procps util-linux
	# what nvme-vwc-sync depends on, so that apt-get install ./x.deb
	# works without a network
	libnvme1 libjson-c5 libudev1 libtracefs1 libtraceevent1)

dir=$CACHE/images/$name
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9

inputs=$(printf 'suite %s\npackages %s\nscript %s\n' "$suite" "${PKGS[*]}" \
	"$(sha256sum <"$0" | cut -d' ' -f1)")
if [ -s "$dir/root.raw" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ] &&
	[ "$(cat "$dir/inputs" 2>/dev/null)" = "$inputs" ] && [ -z "${VWC_IMAGE_REFRESH:-}" ]; then
	log "$name: cached ($dir)"
	echo "$dir"
	exit 0
fi

command -v mmdebstrap >/dev/null || {
	log "installing mmdebstrap"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >&2
}
command -v mke2fs >/dev/null || die "mke2fs missing (e2fsprogs)"

tmp=$(mktemp -d "$CACHE/images/.$name.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ "$suite" = bookworm ]; then
	grep -v '^#' "$SYS_SOURCES" >"$tmp/sources"
else
	awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 { print }' "$SYS_SOURCES" |
		grep -v '^#' | sed "s/^Suites:.*/Suites: $suite/" >"$tmp/sources"
fi

# The test runner, run at every boot after multi-user.target.
cat >"$tmp/vwc-test.service" <<'EOF'
[Unit]
Description=nvme-vwc-sync system test runner (disk labelled VWCTEST)
After=multi-user.target
ConditionPathExists=/dev/disk/by-label/VWCTEST

[Service]
Type=oneshot
ExecStart=/usr/local/sbin/vwc-test-runner
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
TTYReset=no
TTYVHangup=no

[Install]
WantedBy=multi-user.target
EOF
cat >"$tmp/vwc-test-runner" <<'EOF'
#!/bin/sh
# Mount the test disk and run its script; power off if it fails to run.
mkdir -p /vwc
mount LABEL=VWCTEST /vwc || { echo "VWC-ERROR: cannot mount the test disk"; systemctl poweroff; exit 1; }
[ -x /vwc/test.sh ] || { echo "VWC-ERROR: no /vwc/test.sh"; systemctl poweroff; exit 1; }
exec /vwc/test.sh
EOF

t0=$SECONDS
log "$name: mmdebstrap (${#PKGS[@]} packages)"
mmdebstrap --variant=minbase --mode=root --format=directory \
	--aptopt='Acquire::Check-Valid-Until "false"' \
	--aptopt='APT::Install-Recommends "false"' \
	--include="$(IFS=,; echo "${PKGS[*]}")" \
	--customize-hook="copy-in $tmp/vwc-test.service /etc/systemd/system" \
	--customize-hook="copy-in $tmp/vwc-test-runner /usr/local/sbin" \
	--customize-hook='chmod 755 "$1/usr/local/sbin/vwc-test-runner"' \
	--customize-hook='echo vwc-'"$suite"' >"$1/etc/hostname"' \
	--customize-hook='printf "LABEL=root / ext4 rw,errors=remount-ro 0 1\n" >"$1/etc/fstab"' \
	--customize-hook='chroot "$1" systemctl enable vwc-test.service' \
	--customize-hook='chroot "$1" systemctl mask serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-timesyncd.service' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='rm -f "$1"/etc/apt/sources.list.d/*' \
	--customize-hook='sed -i "s/^update_initramfs=.*/update_initramfs=no/" "$1/etc/initramfs-tools/update-initramfs.conf"' \
	--customize-hook='[ ! -x "$1/usr/lib/systemd/systemd-update-done" ] || chroot "$1" /usr/lib/systemd/systemd-update-done' \
	"$suite" "$tmp/root" "$tmp/sources" >"$tmp/build.log" 2>&1 ||
	{ tail -n 30 "$tmp/build.log" >&2; die "$name: mmdebstrap failed"; }
# The apt lists only served the build; the guest has no network.
rm -rf "$tmp/root/var/lib/apt/lists/"* "$tmp/root/var/cache/apt/"*.bin

vmlinuz=$(ls "$tmp"/root/boot/vmlinuz-* | sort -V | tail -n 1)
initrd=$(ls "$tmp"/root/boot/initrd.img-* | sort -V | tail -n 1)
[ -s "$vmlinuz" ] && [ -s "$initrd" ] || die "$suite: no kernel or initramfs in /boot"
cp "$vmlinuz" "$tmp/vmlinuz"
cp "$initrd" "$tmp/initrd.img"
basename "$vmlinuz" | sed 's/^vmlinuz-//' >"$tmp/kernel-version"

rm -f "$tmp/root.raw"
truncate -s 2G "$tmp/root.raw"
mke2fs -q -t ext4 -L root -d "$tmp/root" "$tmp/root.raw" >>"$tmp/build.log" 2>&1 ||
	die "$suite: mke2fs failed"
rm -rf "$tmp/root"
echo "$inputs" >"$tmp/inputs"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
log "$name: made in $((SECONDS - t0)) s (kernel $(cat "$dir/kernel-version"), $(du -sh --apparent-size "$dir/root.raw" | cut -f1) disk, $(du -sh "$dir/root.raw" | cut -f1) used)"
echo "$dir"
