# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# apt-get remove: every namespace back to the kernel's choice; with root
# on NVMe, the quirk undone where the drive is free, and off to boot 3.

plan 5
# --- remove: every namespace back to the kernel's choice ------------------------
rm -f /etc/udev/rules.d/70-nvme-vwc-sync-off.rules
udevadm control --reload
info "before remove: $(for b in /sys/block/nvme*n*; do printf '%s=%s ' "${b##*/}" "$(wcache "${b##*/}")"; done)"
# The T700 stand-in goes first: the initramfs rebuilt on removal is then
# exactly what the package leaves.
[ "$MODE" != nvmeroot ] || rm -rf /etc/initramfs-tools/scripts/init-top/vwc-t700 /etc/initramfs-tools/hooks/vwc-t700 \
	/usr/lib/dracut/modules.d/97vwc-t700
if apt-get remove -y nvme-vwc-sync >"$OUT/remove.log" 2>&1; then
	pass "apt-get remove nvme-vwc-sync"
else
	fail "apt-get remove nvme-vwc-sync" "$(tail -n 5 "$OUT/remove.log" | tr '\n' ' ')"
fi
bad=''
for b in /sys/block/nvme*n*; do
	is_wb "${b##*/}" || bad="$bad ${b##*/}=$(wcache "${b##*/}")"
done
check_eq "remove: every namespace back to write back (the kernel's choice)" "${bad# }" ""
check "remove: service stopped" sh -c '! systemctl is-active --quiet nvme-vwc-sync.service'
check "remove: no modprobe.d snippet" test ! -e /etc/modprobe.d/zz-nvme-vwc-sync.conf
check "remove: prerm's udev opt-out for the removal gone" test ! -e /run/udev/rules.d/70-nvme-vwc-sync-removing.rules

if [ "$MODE" = nvmeroot ]; then
	# Every quirk mitigation undone: the drives not in use are rebound
	# without the dynamic ID; the root drive, mounted, is not rebound
	# (never rebind a disk in use): prerm says so and its Write Zeroes
	# stays off until the next boot, whose initramfs has no hook of ours.
	info "after remove: write_zeroes_max_bytes $(wz_all)"
	plan 7
	grep 'nvme-vwc-sync' "$OUT/remove.log" | while IFS= read -r l; do info "remove: $l"; done
	check_eq "remove: drives not in use rebound without the dynamic ID: Write Zeroes back" "$(wz "$n0")/$(wz "$n1")" 524288/524288
	check_eq "remove: dynamic ID removed (no record left)" "$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null)" ""
	# (partitioned: it names the first of its partitions in use: the
	# ESP, the root, the swap or the LVM PV)
	check "remove: the root drive, in use, is not rebound and prerm says why" \
		grep -Eq "not rebinding: $nr(p[0-9]+)? is (mounted on /|in use as swap|an LVM physical volume)" "$OUT/remove.log"
	check_eq "remove: root drive keeps Write Zeroes off until the next boot" "$(wz "$nr")" 0
	list_initrd
	check_eq "remove: the initramfs rebuilt without our hook or tool" "$(in_initrd 'nvme-vwc-sync')" 0
	check_eq "remove: ... and without the test's stand-in" "$(in_initrd 'vwc-t700')" 0
	save_initrd 3
	echo 3 >/vwc/state
	journalctl -b --no-pager -o short-monotonic >"$OUT/journal-2.txt" 2>&1
	info "powering off for boot 3"
	sync
	systemctl start poweroff.target --job-mode=replace-irreversibly --no-block
	exit 0
fi
