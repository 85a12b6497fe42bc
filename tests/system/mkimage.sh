#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A bootable Debian system image for the full-system tests, cached:
#
#   mkimage.sh SUITE [FLAVOUR [LAYOUT]]
#       SUITE    bookworm = Debian 12, trixie = Debian 13
#       FLAVOUR  cloud (default), generic, or dracut (the generic kernel
#                with dracut, Debian 13's, as the initramfs generator in
#                place of initramfs-tools)
#       LAYOUT   whole (default): root.raw is a bare ext4 file system
#                (label root, no partition table);
#                gpt: a disk as Debian's installer lays it out with "guided -
#                use entire disk", all files in one partition: GPT, 1 an EFI
#                system partition (vfat, /boot/efi), 2 the ext4 root, 3 swap,
#                every one named by UUID in /etc/fstab;
#                lvm: as its "guided - use entire disk and set up LVM": GPT,
#                1 the EFI system partition, 2 an ext4 /boot, 3 an LVM
#                physical volume whose VG (HOSTNAME-vg) holds the LVs root
#                (ext4) and swap_1; lvm2 in the image.
#
# mmdebstrap (minbase) with the suite's own kernel (cloud: NVMe built in;
# generic: NVMe a module, loaded from the initramfs, for root on NVMe),
# initramfs-tools (dracut: dracut, its initramfs made with --no-hostonly,
# as Debian's kernel hook makes it; no host-only guess in a chroot),
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
# udev trigger costs minutes under TCG; dracut has no such switch).
#
# The partitioned layouts hold no boot loader: the tests boot the kernel and
# initramfs copied out here with QEMU's -kernel and -initrd (no UEFI
# firmware), with the root= the installer's boot loader would pass (the
# file cmdline); the ESP is there, formatted and mounted, and empty. The
# file systems are made from the tree with mke2fs -d and mkfs.vfat into
# partition images, written into the disk image at the offsets sfdisk gave.
# The LVM metadata needs a block device: a loop device over the PV's image
# (losetup, as root), LVM's commands run with device-mapper left alone
# (--driverloaded n: the LVs are never activated on the build host), and
# the LVs' contents written at their extents' offsets.
#
# Output, in $VWC_CACHE_DIR/images/SUITE[-generic][-LAYOUT] (default
# /var/cache/nvme-vwc-sync):
#   root.raw (whole: the ext4 file system, 2 GiB sparse; gpt, lvm: the
#   disk, 3 GiB sparse), cmdline (the kernel's root= and ro/rw), vmlinuz,
#   initrd.img, layout.txt (the partitions and UUIDs, for the log), inputs
#   (what it was made from; the image is made again when this script, the
#   package list or the layout changes, or VWC_IMAGE_REFRESH=1), build.log.
# Prints the directory on stdout; progress on stderr.
set -euo pipefail

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}
suite=${1:?usage: mkimage.sh SUITE [cloud|generic|dracut [whole|gpt|lvm]]}
flavour=${2:-cloud}
layout=${3:-whole}
case $suite in
bookworm | trixie) ;;
*) echo "mkimage: unknown suite '$suite' (bookworm, trixie)" >&2; exit 2 ;;
esac
case $flavour in
cloud) kernel=linux-image-cloud-amd64 name=$suite ;;
generic) kernel=linux-image-amd64 name=$suite-generic ;;
dracut) kernel=linux-image-amd64 name=$suite-dracut ;;
*) echo "mkimage: unknown flavour '$flavour' (cloud, generic, dracut)" >&2; exit 2 ;;
esac
initgen=initramfs-tools
[ "$flavour" != dracut ] || initgen=dracut
case $layout in
whole) ;;
gpt | lvm) name=$name-$layout ;;
*) echo "mkimage: unknown layout '$layout' (whole, gpt, lvm)" >&2; exit 2 ;;
esac

log() { echo "mkimage: $*" >&2; }
die() { log "error: $*"; exit 1; }

PKGS=(systemd-sysv udev kmod "$initgen" "$kernel"
	nvme-cli e2fsprogs mount procps util-linux
	# what nvme-vwc-sync depends on, so that apt-get install ./x.deb
	# works without a network
	libnvme1 libjson-c5 libudev1 libtracefs1 libtraceevent1 libbpf1)
# fsck.vfat for the ESP's fstab line (the installer has it too); lvm2
# (with its initramfs hook) for root on LVM
[ "$layout" = whole ] || PKGS+=(dosfstools)
[ "$layout" != lvm ] || PKGS+=(lvm2)
# unattended-upgrades for the plain suite's nvme-cli update check
# (guest/cases/55-aptup.sh; its boot-time shutdown helper masked, for time)
[ "$layout" != whole ] || PKGS+=(unattended-upgrades)

dir=$CACHE/images/$name
mkdir -p "$dir"
exec 9>"$dir.lock"
flock 9

inputs=$(printf 'suite %s\nlayout %s\npackages %s\nscript %s\n' "$suite" "$layout" "${PKGS[*]}" \
	"$(sha256sum <"$0" | cut -d' ' -f1)")
if [ -s "$dir/root.raw" ] && [ -s "$dir/vmlinuz" ] && [ -s "$dir/initrd.img" ] && [ -s "$dir/cmdline" ] &&
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
if [ "$layout" != whole ]; then
	for t in sfdisk mkfs.vfat mkswap losetup; do
		command -v "$t" >/dev/null || die "$t missing (fdisk, dosfstools, util-linux, mount)"
	done
	[ "$layout" != lvm ] || command -v lvm >/dev/null || die "lvm missing (lvm2)"
fi

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

# put FILE START: write the partition image FILE into the disk at START
# (sectors of 512 bytes, MiB-aligned), keeping both sparse
put() { dd if="$1" of="$tmp/root.raw" bs=1M seek=$(($2 / 2048)) conv=notrunc,sparse status=none; }
# part N: "START SIZE" (sectors) of partition N of the disk
part() { sfdisk -d "$tmp/root.raw" | sed -n "s|^$tmp/root.raw$1 : start= *\([0-9]*\), size= *\([0-9]*\),.*|\1 \2|p"; }
# mkpart N FILE: an empty image FILE the size of partition N; prints START
mkpart() {
	local ps
	ps=$(part "$1")
	[ -n "$ps" ] || { echo "no partition $1"; return 1; }
	rm -f "$2"
	truncate -s $((${ps#* } * 512)) "$2"
	echo "${ps% *}"
}
# make_disk: $tmp/root.raw, the whole disk, from the tree $tmp/root
make_disk() {
	local p=$tmp/parts s_esp s_root s_swap s_boot s_pv loop ext pe0 lvcfg free
	mkdir -p "$p"
	truncate -s 3G "$tmp/root.raw"
	if [ "$layout" = gpt ]; then
		# 64 MiB ESP, the root, 512 MiB swap at the end (the
		# installer's order; its sizes scale with the disk and RAM)
		printf 'label: gpt\nsize=64MiB, type=U\nsize=2494MiB, type=L\ntype=S\n' |
			sfdisk -q "$tmp/root.raw" || return 1
	else
		printf 'label: gpt\nsize=64MiB, type=U\nsize=256MiB, type=L\ntype=E6D6D379-F507-44C2-A23C-238F2A3DF928\n' |
			sfdisk -q "$tmp/root.raw" || return 1
	fi
	sfdisk -d "$tmp/root.raw"
	s_esp=$(mkpart 1 "$p/esp") || return 1
	mkfs.vfat -F 32 -s 1 -i "$esp_id" "$p/esp" || return 1
	put "$p/esp" "$s_esp" || return 1
	if [ "$layout" = gpt ]; then
		s_root=$(mkpart 2 "$p/root") && s_swap=$(mkpart 3 "$p/swap") || return 1
		mke2fs -q -t ext4 -U "$root_uuid" -d "$tmp/root" "$p/root" || return 1
		mkswap -U "$swap_uuid" "$p/swap" || return 1
		put "$p/root" "$s_root" && put "$p/swap" "$s_swap" || return 1
		return 0
	fi
	# lvm: /boot on its own partition, the rest in the VG
	mkdir -p "$p/boot"
	mv "$tmp/root/boot"/* "$p/boot/"
	s_boot=$(mkpart 2 "$p/bootfs") && s_pv=$(mkpart 3 "$p/pv") || return 1
	mke2fs -q -t ext4 -U "$boot_uuid" -d "$p/boot" "$p/bootfs" || return 1
	put "$p/bootfs" "$s_boot" || return 1
	loop=$(losetup -f --show "$p/pv") || return 1
	# only this loop device; no backups of the metadata on this host;
	# device-mapper left alone
	# (4 MiB extents: lvm's default, given)
	lvcfg="devices { filter = [ \"a|^$loop\$|\", \"r|.*|\" ] } backup { backup = 0 archive = 0 }"
	l() { LVM_SUPPRESS_FD_WARNINGS=1 lvm "$@" --driverloaded n --config "$lvcfg"; }
	if ! { l pvcreate -ff -y "$loop" && l vgcreate -s 4M "$vg" "$loop" &&
		free=$(l vgs --noheadings -o vg_free_count "$vg") &&
		l lvcreate -an -Zn -y -l $((free - 512 / 4)) -n root "$vg" &&
		l lvcreate -an -Zn -y -l 100%FREE -n swap_1 "$vg" &&
		l lvs -o lv_name,lv_size,seg_pe_ranges "$vg" &&
		l lvs --noheadings -o lv_name,seg_pe_ranges "$vg" >"$p/lvs" &&
		l pvs --noheadings --units b --nosuffix -o pe_start,vg_extent_size "$loop" >"$p/pvs"; }; then
		losetup -d "$loop"
		return 1
	fi
	losetup -d "$loop"
	read -r pe0 ext <"$p/pvs"
	# lvput LV FORMAT...: format LV's image, write it at its extents
	lvput() {
		local lv=$1 r a b
		shift
		r=$(awk -v lv="$lv" '$1 == lv { print $2 }' "$p/lvs")
		case $r in *:*-*) ;; *) echo "$lv: not one linear segment ($r)"; return 1 ;; esac
		r=${r#*:}
		a=${r%-*} b=${r#*-}
		rm -f "$p/lv"
		truncate -s $(((b - a + 1) * ext)) "$p/lv"
		"$@" "$p/lv" || return 1
		dd if="$p/lv" of="$p/pv" bs=1M seek=$(((pe0 + a * ext) / 1048576)) conv=notrunc,sparse status=none
	}
	lvput root mke2fs -q -t ext4 -U "$root_uuid" -d "$tmp/root" &&
		lvput swap_1 mkswap -U "$swap_uuid" && put "$p/pv" "$s_pv"
}

# What the installer writes: /etc/fstab by UUID (LVs by their mapper
# path), the swap as the resume device, the root= of its boot loader.
uuid() { cat /proc/sys/kernel/random/uuid; }
vg=vwc-$suite-vg
mapper=${vg//-/--} # device-mapper doubles the dashes of VG and LV names
root_uuid=$(uuid) swap_uuid=$(uuid) boot_uuid=$(uuid)
esp_id=$(uuid | tr -d - | cut -c1-8 | tr a-f A-F)
esp_uuid=${esp_id:0:4}-${esp_id:4:4}
case $layout in
whole)
	printf 'LABEL=root / ext4 rw,errors=remount-ro 0 1\n' >"$tmp/fstab"
	echo "root=LABEL=root rw" >"$tmp/cmdline"
	;;
gpt)
	cat >"$tmp/fstab" <<EOF
# <file system> <mount point>   <type>  <options>       <dump>  <pass>
# / was on /dev/nvme0n1p2 during installation
UUID=$root_uuid /               ext4    errors=remount-ro 0       1
# /boot/efi was on /dev/nvme0n1p1 during installation
UUID=$esp_uuid  /boot/efi       vfat    umask=0077      0       1
# swap was on /dev/nvme0n1p3 during installation
UUID=$swap_uuid none            swap    sw              0       0
EOF
	echo "RESUME=UUID=$swap_uuid" >"$tmp/resume"
	echo "root=UUID=$root_uuid ro" >"$tmp/cmdline"
	;;
lvm)
	cat >"$tmp/fstab" <<EOF
# <file system> <mount point>   <type>  <options>       <dump>  <pass>
/dev/mapper/$mapper-root /               ext4    errors=remount-ro 0       1
# /boot was on /dev/nvme0n1p2 during installation
UUID=$boot_uuid /boot           ext4    defaults        0       2
# /boot/efi was on /dev/nvme0n1p1 during installation
UUID=$esp_uuid  /boot/efi       vfat    umask=0077      0       1
/dev/mapper/$mapper-swap_1 none            swap    sw              0       0
EOF
	echo "RESUME=/dev/mapper/$mapper-swap_1" >"$tmp/resume"
	echo "root=/dev/mapper/$mapper-root ro" >"$tmp/cmdline"
	;;
esac
hooks=()
if [ "$initgen" = dracut ]; then
	# dracut: the initramfs again, once everything is installed, generic
	# (--no-hostonly: nothing of the build host's devices); no resume
	# device (dracut takes it from resume= on the command line)
	hooks=(--customize-hook='for v in "$1"/lib/modules/*; do chroot "$1" dracut -q --force --no-hostonly "/boot/initrd.img-${v##*/}" "${v##*/}"; done')
elif [ "$layout" != whole ]; then
	# the initramfs again, now that fstab and the resume device are
	# known (the kernel's was made before them)
	hooks=(--customize-hook="copy-in $tmp/resume /etc/initramfs-tools/conf.d"
		--customize-hook='for v in "$1"/lib/modules/*; do chroot "$1" mkinitramfs -o "/boot/initrd.img-${v##*/}" "${v##*/}"; done')
fi
[ "$layout" = whole ] || hooks+=(--customize-hook='mkdir -p "$1/boot/efi"')

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
	--customize-hook="copy-in $tmp/fstab /etc" \
	"${hooks[@]}" \
	--customize-hook='chroot "$1" systemctl enable vwc-test.service' \
	--customize-hook='chroot "$1" systemctl mask serial-getty@ttyS0.service getty@tty1.service apt-daily.timer apt-daily-upgrade.timer unattended-upgrades.service e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-timesyncd.service' \
	--customize-hook='chroot "$1" passwd -d root' \
	--customize-hook='rm -f "$1"/etc/apt/sources.list.d/*' \
	--customize-hook='[ ! -f "$1/etc/initramfs-tools/update-initramfs.conf" ] || sed -i "s/^update_initramfs=.*/update_initramfs=no/" "$1/etc/initramfs-tools/update-initramfs.conf"' \
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
if [ "$layout" = whole ]; then
	truncate -s 2G "$tmp/root.raw"
	mke2fs -q -t ext4 -L root -d "$tmp/root" "$tmp/root.raw" >>"$tmp/build.log" 2>&1 ||
		die "$suite: mke2fs failed"
else
	make_disk >>"$tmp/build.log" 2>&1 || { tail -n 30 "$tmp/build.log" >&2; die "$name: making the disk failed"; }
fi
rm -rf "$tmp/root" "$tmp/parts"
echo "$inputs" >"$tmp/inputs"
rm -rf "$dir"
mv "$tmp" "$dir"
trap - EXIT
{ cat "$dir/cmdline"; [ "$layout" = whole ] || sfdisk -d "$dir/root.raw"; cat "$dir/fstab"; } >"$dir/layout.txt"
log "$name: made in $((SECONDS - t0)) s (kernel $(cat "$dir/kernel-version"), $(du -sh --apparent-size "$dir/root.raw" | cut -f1) disk, $(du -sh "$dir/root.raw" | cut -f1) used)"
echo "$dir"
