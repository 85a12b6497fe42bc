# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 3
# when: [ "$MODE" = nvmeroot ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# Boot 3 (root on NVMe): after removal, from the initramfs rebuilt then;
# then purge.

plan 9
# --- boot 3 (nvmeroot): after removal, from the initramfs rebuilt then
info "boot 3: write_zeroes_max_bytes $(wz_all)"
check_eq "after remove, boot 3: root drive Write Zeroes back (the kernel's choice)" "$(wz "$nr")" 524288
check_eq "after remove, boot 3: Write Zeroes on on every drive" "$(wz_not 524288)" ""
check_eq "after remove, boot 3: no dynamic ID recorded" "$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null)" ""
check_eq "after remove, boot 3: the initramfs did nothing of ours" \
	"$(journalctl -b -k --no-pager -o short-monotonic | grep -c 'nvme-vwc-sync')" 0
check_eq "after remove, boot 3: root drive write back (the kernel's choice)" "$(wcache "$nr")" "write back"
check_no_new_failed "after remove, boot 3: no unit failed that had not before install"
# The initramfs is proven; purge activates the trigger again: off
# again for time, as in the images.
# (dracut: its kernel hook's INITRD=No, through apt and dpkg)
if [ "$GEN" = dracut ]; then export INITRD=No; else
	sed -i 's/^update_initramfs=.*/update_initramfs=no/' /etc/initramfs-tools/update-initramfs.conf
fi
purge_checks
finish
