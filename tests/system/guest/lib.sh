# SPDX-License-Identifier: GPL-2.0-or-later
# shellcheck shell=bash disable=SC2154 # OUT, phase ...: the scenario's
#
# The booted-system scenario's helpers (tests/system/guest/test.sh sources
# this file as /vwc/lib.sh, after tests/lib/guest.sh): the drives by
# serial, write_cache and Write Zeroes, the initramfs, failed units and
# Debian's boot race, the service, the layout checks of root on NVMe,
# finish, and the purge checks. They read the scenario's OUT, phase,
# SUITE, MODE, LAYOUT and GEN.

check() { check_cmd "$@"; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }

# ctrl SERIAL: controller name;  ns SERIAL: its namespace block device
ctrl() {
	local c
	for c in /sys/class/nvme/nvme*; do
		[ "$(tr -d ' ' <"$c/serial" 2>/dev/null)" = "$1" ] && { echo "${c##*/}"; return 0; }
	done
	return 1
}
ns() {
	local b
	for b in /sys/block/nvme*n*; do
		[ "$(tr -d ' ' <"$b/device/serial" 2>/dev/null)" = "$1" ] && { echo "${b##*/}"; return 0; }
	done
	return 1
}
wcache() { cat "/sys/block/$1/queue/write_cache" 2>/dev/null; }
wz() { cat "/sys/block/$1/queue/write_zeroes_max_bytes" 2>/dev/null; }
# wz_all: NAME=write_zeroes_max_bytes of every NVMe namespace
wz_all() { for b in /sys/block/nvme*n*; do printf '%s=%s ' "${b##*/}" "$(wz "${b##*/}")"; done; }
# wz_not VALUE: the drives whose write_zeroes_max_bytes is not VALUE ("" if none)
wz_not() {
	local b out=''
	for b in /sys/block/nvme*n*; do
		[ "$(wz "${b##*/}")" = "$1" ] || out="$out ${b##*/}=$(wz "${b##*/}")"
	done
	echo "${out# }"
}
# the initramfs the next boot runs (tests/system/run.sh reads it back)
save_initrd() {
	rm -rf /vwc/boot
	mkdir -p /vwc/boot
	cp "/boot/initrd.img-$(uname -r)" "/vwc/boot/initrd-for-boot-$1.img" &&
		info "initramfs for boot $1: $(stat -c %s "/boot/initrd.img-$(uname -r)") bytes"
}
# list_initrd: the current initramfs's file list (slow under TCG: once);
# in_initrd RE: how many of its paths match RE
list_initrd() {
	if [ "$GEN" = dracut ]; then
		# the listing's paths only (not its header of dracut modules)
		lsinitrd "/boot/initrd.img-$(uname -r)" >"$OUT/lsinitrd-$phase.txt" 2>&1
		awk 'NF >= 9 { print $9 }' "$OUT/lsinitrd-$phase.txt" >"$OUT/initrd-list-$phase.txt"
	else
		lsinitramfs "/boot/initrd.img-$(uname -r)" >"$OUT/initrd-list-$phase.txt" 2>&1
	fi
	check "boot $phase: ${LSINITRD:-lsinitramfs} lists the current initramfs (it holds nvme.ko)" \
		grep -q '/nvme/host/nvme\.ko' "$OUT/initrd-list-$phase.txt"
}
in_initrd() { grep -c "$1" "$OUT/initrd-list-$phase.txt"; }
# dracut_setup T7: for GEN=dracut, boot 1: the T700 stand-in as a dracut
# module (its pre-trigger hook, sourced before ours in the same shell,
# exports the variable), host-only images (the modules this machine needs,
# as MODULES=dep for initramfs-tools: for time) with the test disk's
# driver (virtio), else the test runner starts before udev in the root
# loads it and finds no disk; not compressed, also for time (gzip -9 took
# 50 of 116 s of a dracut run in this image's tree, on the host). dracut's
# trigger rebuilds the initramfs whenever a package activates
# update-initramfs: nothing to turn on.
dracut_setup() {
	local m=/usr/lib/dracut/modules.d/97vwc-t700
	mkdir -p "$m"
	printf '#!/bin/bash\ncheck() { return 0; }\ndepends() { return 0; }\ninstall() {\n\tlocal f\n\tfor f in %s/modules.*; do inst_simple "$f" "/vwc-t700/${f##*/}"; done\n\tinst_hook pre-trigger 10 "$moddir/vwc-t700.sh"\n}\n' \
		"$1" >"$m/module-setup.sh"
	printf '#!/bin/sh\nexport NVME_VWC_SYNC_MODULES_DIR=/vwc-t700\n' >"$m/vwc-t700.sh"
	chmod 755 "$m/module-setup.sh" "$m/vwc-t700.sh"
	mkdir -p /etc/dracut.conf.d
	printf 'hostonly="yes"\nadd_drivers+=" virtio_pci virtio_blk "\ncompress="cat"\n' >/etc/dracut.conf.d/90-vwc-test.conf
}
# t700_standin: QEMU's controller listed by the admin (hwdb), as the VM
# tests do, and the T700 stand-in (see the top of this file): depmod
# builds, in $t7, the index of a built-in nvme with only the class-wide
# alias, so the tool's table lookup finds no entry for QEMU's ID.
t700_standin() {
	mkdir -p /etc/udev/hwdb.d
	printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' \
		>/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
	# compiled where the system keeps it, as the man page says (Debian:
	# /usr/lib/udev/hwdb.bin; one in /etc would hide its later updates)
	if [ -e /etc/udev/hwdb.bin ]; then systemd-hwdb update; else systemd-hwdb update --usr; fi
	t7=/root/vwc-t700/lib/modules/$(uname -r)
	mkdir -p "$t7"
	echo kernel/drivers/nvme/host/nvme.ko >"$t7/modules.builtin"
	: >"$t7/modules.order"
	printf 'nvme.alias=pci:v*d*sv*sd*bc01sc08i02*\0' >"$t7/modules.builtin.modinfo"
	depmod -b /root/vwc-t700 "$(uname -r)"
}
failed_units() { systemctl list-units --state=failed --plain --no-legend --no-pager | awk '{ print $1 }' | tr '\n' ' '; }
# unit_why UNIT: its result, status and journal (INFO lines)
unit_why() {
	info "failed unit $1: $(systemctl show -P Result,ExecMainStatus "$1" | tr '\n' ' ')"
	journalctl -b --no-pager -o short-monotonic -u "$1" | tail -n 15 |
		while IFS= read -r _l; do info "  $1: $_l"; done
}
# new_failed_units PHASE_FILE: the names of the units failed now and not
# in PHASE_FILE (the boot before install). A unit that failed before
# install and not now is no news.
new_failed_units() {
	for _u in $(failed_units); do
		case " $(cat "$1") " in *" $_u "*) continue ;; esac
		printf '%s ' "$_u"
	done
}
# debian_race UNIT: UNIT failed from a Debian 13 boot race, not
# from us. lvm2-monitor.service (DefaultDependencies=no) is not ordered
# against systemd's run-lock.mount (tmpfs on /run/lock, also
# DefaultDependencies=no): when the mount lands between lvm's creation
# of /run/lock/lvm and its lock file's open, vgchange --monitor fails with
# "/run/lock/lvm/V_<vg>:aux: open failed: No such file or directory".
# Seen before install as well as after, in any boot (often, under TCG).
debian_race() {
	[ "$1" = lvm2-monitor.service ] &&
		journalctl -b --no-pager -o cat -u "$1" | grep -q '/run/lock/lvm/.*open failed: No such file or directory'
}
# race_restart UNIT: debian_race's UNIT started again once booted (INFO)
race_restart() {
	if systemctl restart "$1" >/dev/null 2>&1; then
		info "$1: restarted once booted: $(systemctl is-active "$1")"
	else
		info "$1: restart once booted failed too: $(journalctl -b --no-pager -o cat -u "$1" | tail -n 3 | tr '\n' ' ')"
	fi
}
# check_no_new_failed NAME: NAME passes when no unit failed that had not
# before install; each one that did is explained (unit_why). A failure
# of debian_race's is said and not counted.
check_no_new_failed() {
	local nf=
	for _u in $(new_failed_units "$OUT/failed-units-1.txt"); do
		unit_why "$_u"
		if debian_race "$_u"; then
			info "$_u: Debian 13's lvm2-monitor/run-lock.mount race (the lock directory mounted over), not counted"
			race_restart "$_u"
			continue
		fi
		nf="$nf$_u "
	done
	check_eq "$1" "$nf" ""
}
is_wt() { [ "$(wcache "$1")" = "write through" ]; }
is_wb() { [ "$(wcache "$1")" = "write back" ]; }
svc() { systemctl show -P "$1" nvme-vwc-sync.service; }
# (the sidecar's pid file, watch/PID, goes with its process: not a record)
records() { find /run/nvme-vwc-sync -type f -not -path '/run/nvme-vwc-sync/watch/*' 2>/dev/null | sort; }
# the kernel's name of a block device node or tag (UUID=...), e.g. dm-0
kname() { basename "$(readlink -f "$(findfs "$1" 2>/dev/null || echo "$1")")"; }
# root_disk: the disk under / (through partitions and LVs)
root_disk() { lsblk -snr -o NAME,TYPE "$(findmnt -n -o SOURCE /)" | awk '$2 == "disk" { print $1; exit }'; }
# fstab_dev TARGET: the kernel name of what /etc/fstab mounts on TARGET
fstab_dev() { kname "$(findmnt --fstab -n -o SOURCE --mountpoint "$1")"; }
# mnt_dev TARGET: the kernel name of what is mounted on TARGET
mnt_dev() { kname "$(findmnt -n -o SOURCE --mountpoint "$1")"; }

# layout_checks: the disk is laid out as the installer does it, what
# /etc/fstab names is what is mounted, the swap is on.
layout_checks() {
	local d=$1 p=$1p vgp=/dev/mapper/vwc--${VERSION_CODENAME}--vg
	lsblk -o NAME,TYPE,SIZE,FSTYPE,PARTTYPENAME,MOUNTPOINT "/dev/$d" >"$OUT/lsblk-$phase.txt" 2>&1 ||
		lsblk -o NAME,TYPE,SIZE,FSTYPE,MOUNTPOINT "/dev/$d" >"$OUT/lsblk-$phase.txt" 2>&1
	info "boot $phase: layout: $(tr -s ' ' <"$OUT/lsblk-$phase.txt" | tr '\n' ';')"
	info "boot $phase: swap: $(swapon --show=NAME,SIZE --noheadings | tr -s ' ' | tr '\n' ';')"
	plan 4
	check_eq "boot $phase: layout: $d has a GPT" "$(lsblk -ndo PTTYPE "/dev/$d")" gpt
	check_eq "boot $phase: layout: ${p}1 is an EFI system partition (vfat)" \
		"$(lsblk -ndo PARTTYPE,FSTYPE "/dev/${p}1" | tr -s ' ' | tr A-F a-f)" "c12a7328-f81f-11d2-ba4b-00a0c93ec93b vfat"
	check_eq "boot $phase: layout: the ESP on /boot/efi, as fstab says (by UUID)" \
		"$(mnt_dev /boot/efi)/$(fstab_dev /boot/efi)" "${p}1/${p}1"
	check_eq "boot $phase: layout: / as fstab and the kernel command line say" \
		"$(mnt_dev /)/$(fstab_dev /)" "$(kname "$(sed -n 's/.*root=\([^ ]*\).*/\1/p' /proc/cmdline)")/$(mnt_dev /)"
	if [ "$LAYOUT" = gpt ]; then
		plan 3
		check_eq "boot $phase: layout: / is ${p}2 (ext4)" "$(mnt_dev /)/$(findmnt -n -o FSTYPE /)" "${p}2/ext4"
		check_eq "boot $phase: layout: swap is ${p}3, on (fstab by UUID)" \
			"$(swapon --show=NAME --noheadings | xargs -n1 basename | tr '\n' ' ')" "${p}3 "
		check "boot $phase: layout: fstab names /, /boot/efi and swap by UUID" \
			test "$(grep -c '^UUID=' /etc/fstab)" -eq 3
	else
		plan 4
		check_eq "boot $phase: layout: /boot is ${p}2 (ext4)" "$(mnt_dev /boot)/$(findmnt -n -o FSTYPE /boot)" "${p}2/ext4"
		check_eq "boot $phase: layout: ${p}3 is an LVM physical volume" "$(lsblk -ndo FSTYPE "/dev/${p}3")" LVM2_member
		check_eq "boot $phase: layout: / is the LV root of the VG on ${p}3 (ext4)" \
			"$(mnt_dev /)/$(lsblk -nro NAME,TYPE "/dev/${p}3" | awk '$2 == "lvm"' | wc -l)/$(findmnt -n -o FSTYPE /)" "$(kname "$vgp-root")/2/ext4"
		check_eq "boot $phase: layout: swap is the LV swap_1, on" \
			"$(swapon --show=NAME --noheadings | xargs -n1 basename | tr '\n' ' ')" "$(kname "$vgp-swap_1") "
	fi
}

finish() {
	journalctl -b --no-pager -o short-monotonic >"$OUT/journal-$phase.txt" 2>&1
	echo "VWC-TEST: DONE"
	sync
	# (systemctl poweroff/reboot first ask logind, absent here, and say so)
	systemctl start poweroff.target --job-mode=replace-irreversibly --no-block
	exit 0
}

# --- purge: nothing of ours left ---------------------------------------------
purge_checks() {
	local left st
	# The admin's own quirk file (t700_standin's) is not the package's: a
	# purge leaves it, and the admin removes it, as the man page's
	# UNINSTALLING says (its hwdb compile left out: purge is the
	# scenario's last step)
	rm -f /etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
	if apt-get purge -y nvme-vwc-sync >"$OUT/purge.log" 2>&1; then
		pass "apt-get purge nvme-vwc-sync"
	else
		fail "apt-get purge nvme-vwc-sync" "$(tail -n 5 "$OUT/purge.log" | tr '\n' ' ')"
	fi
	left=$( (find / /boot /boot/efi -xdev -path /vwc -prune -o \( -iname '*nvme-vwc*' -o -iname '*vwc-sync*' \) -print
		find /run /etc -iname '*nvme-vwc*') 2>/dev/null | sort -u | tr '\n' ' ')
	check_eq "purge: no file of ours left" "${left% }" ""
	st=$(dpkg-query -W -f='${db:Status-Status}' nvme-vwc-sync 2>/dev/null)
	check_eq "purge: dpkg forgot it" "${st:-not-installed}" "not-installed"
}
