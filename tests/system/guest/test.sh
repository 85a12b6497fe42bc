#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Runs inside a booted Debian system (systemd as PID 1), started at every
# boot by vwc-test.service from the disk labelled VWCTEST, mounted on /vwc:
#   /vwc/test.sh       this file        /vwc/debs/v1/*.deb   the packages
#   /vwc/cases/        the scenario's cases, which this file runs (below)
#   /vwc/debs/v2/*.deb the next version (upgrade)
#   /vwc/repo          a local apt repository with a higher nvme-cli, and
#   /vwc/src           what rebuild-nvme-cli-vwc reads of a source tree
#                      (cases/55-aptup.sh, plain suite)
#   /vwc/out/          logs written here (the host reads them back)
#   /vwc/state         which boot this is (the script powers off after
#                      boot 1; tests/system/run.sh boots the machine again)
#   /vwc/boot/initrd-for-boot-N.img   the guest's own initramfs (nvmeroot:
#                      update-initramfs rebuilt it), which run.sh boots next
# Machine (tests/system/run.sh): controller nv0 serial VWC0 with WCE=0,
# nv1 serial VWC1 with WCE=1, an empty pcie-root-port rp0 and a spare image
# for hot-add.
# Mode nvmeroot (root on an NVMe drive, serial VWCROOT, generic kernel, laid
# out as Debian's installer does it: /vwc/layout says gpt (GPT, an EFI system
# partition on /boot/efi, ext4 root, swap) or lvm (the same with /boot on
# partition 2 and root and swap as LVs of a VG on partition 3); every boot
# checks the layout and the swap) boots three times: boot 1 lists QEMU's 1b36:0010 in an admin hwdb file, puts in
# a test-only stand-in for a T700 (below), turns update-initramfs back on
# (Debian's default; the images have it off for time; MODULES=dep, also for
# time) and installs; boot 2
# runs from the initramfs the package's trigger rebuilt (Write Zeroes off
# on every drive before the root mount), then removes the package; boot 3
# runs from the initramfs rebuilt on removal (Write Zeroes back), then purges.
# /vwc/initramfs says which generator the image has: initramfs-tools, or
# dracut (trixie-nvmeroot-dracut: the same checks through the package's
# dracut module; the stand-in below is then a dracut module, dracut_setup).
# The stand-in: Debian 13's 6.12 nvme table lists QEMU's 1b36:0010 (the real
# path refuses, checked in boot 1); a T700 is absent from it. An init-top
# script and a hook point the initramfs's table lookup at a module index
# (NVME_VWC_SYNC_MODULES_DIR; depmod's .bin files, which libkmod reads) whose
# nvme has only the class-wide NVMe alias and so no entry for QEMU's ID, as
# it would be for a T700.
# Output protocol on the serial console, one line each:
#   VWC-TEST: PASS|FAIL|SKIP <suite>: <name>[: <detail>]
#   VWC-INFO: <text>    VWC-HOST: <QEMU monitor command>    VWC-TEST: DONE
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive SYSTEMD_PAGER= SYSTEMD_COLORS=0
OUT=/vwc/out
mkdir -p "$OUT"
. /etc/os-release
SUITE=${VERSION_CODENAME:-unknown}
phase=$(cat /vwc/state 2>/dev/null || echo 1)
MODE=$(cat /vwc/mode 2>/dev/null || echo full) # full | nvmeroot
LAYOUT=$(cat /vwc/layout 2>/dev/null || echo whole) # whole | gpt | lvm
GEN=$(cat /vwc/initramfs 2>/dev/null || echo initramfs-tools) # | dracut
[ "$GEN" != dracut ] || LSINITRD=lsinitrd
[ "$MODE" = full ] || SUITE=$SUITE-$MODE
[ "$LAYOUT" != lvm ] || SUITE=$SUITE-lvm
[ "$GEN" != dracut ] || SUITE=$SUITE-dracut
exec > >(tee -a "$OUT/console-$phase.log") 2>&1

# The checks shared with the busybox guests (tests/lib/guest.sh): pass
# fail skip info finish host check_eq check_cmd wait_for.
VWC_TEST_PREFIX="$SUITE: " VWC_HOST_PAUSE=0.5
. /vwc/lib/guest.sh
# the scenario's helpers (check, ctrl, ns, wcache, finish, purge_checks ...)
# shellcheck source=lib.sh
. /vwc/lib.sh

info "boot $phase: $PRETTY_NAME, kernel $(uname -r), $(systemctl --version | head -n 1)"
info "boot $phase: multi-user.target after $(($(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target) / 1000)) ms (kernel start = 0)"
systemd-analyze blame --no-pager >"$OUT/blame-$phase.txt" 2>&1
c0=$(ctrl VWC0) c1=$(ctrl VWC1) n0=$(ns VWC0) n1=$(ns VWC1)
info "VWC0 = $c0 ($n0, WCE off), VWC1 = $c1 ($n1, WCE on)"
[ -n "$n0" ] && [ -n "$n1" ] || { fail "boot $phase: both NVMe drives present" "VWC0=$n0 VWC1=$n1"; finish; }
if [ "$MODE" = nvmeroot ]; then
	nr=$(ns VWCROOT)
	info "root: $(findmnt -n -o SOURCE /) on VWCROOT = ${nr:-?} (WCE off)"
	plan 2
	check_eq "boot $phase: / is on the NVMe drive VWCROOT" "$(root_disk)" "$nr"
	check "boot $phase: nvme is a module (loaded from the initramfs)" test -e /sys/module/nvme/initstate
	[ "$LAYOUT" = whole ] || layout_checks "$nr"
fi

# The scenario's cases (tests/system/guest/cases/NN-name.sh), in the
# order of their names: each whose "# boot: N" is this boot and whose
# "# when: CONDITION" (a shell test over MODE, LAYOUT, GEN; none: always)
# holds is sourced into this shell, so that a later case sees what an
# earlier one set up (the dynamic ID for the upgrade, the hot-added
# drive). The last case of a boot powers off for the next (install,
# remove with root on NVMe) or ends the test with finish.
for f in /vwc/cases/[0-9]*.sh; do
	[ "$(sed -n 's/^# boot: *//p' "$f" | head -n 1)" = "$phase" ] || continue
	when=$(sed -n 's/^# when: *//p' "$f" | head -n 1)
	[ -z "$when" ] || eval "$when" || continue
	# shellcheck disable=SC1090
	. "$f"
done
fail "boot $phase" "unexpected boot, or no case ended it (the test boots twice, nvmeroot three times)"
finish
