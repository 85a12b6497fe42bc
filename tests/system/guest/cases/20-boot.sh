# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# Boot 2: what the boot did (modes at multi-user.target, the reason lines
# and who wrote them; with root on NVMe, what the initramfs did), and the
# udev rules alone.

# --- boot 2: what boot did -------------------------------------------------
mu=$(systemctl show -P ActiveEnterTimestampMonotonic multi-user.target)
# 4 checks here, 3 of udev's rules alone; the nvmeroot branch's in it
plan 7
check_eq "boot: WCE-off drive write through at multi-user.target" "$(wcache "$n0")" "write through"
check_eq "boot: WCE-on drive write back" "$(wcache "$n1")" "write back"
# The reason line of each change at boot. systemd-udevd runs the packaged
# rules at coldplug; the service, started in parallel, makes its own first
# pass: whichever takes the writers' lock first makes the change (on a busy
# TCG host either may win), the other finds nothing to do. Runs under udevd
# log through syslog, the service through its stdout stream (not
# _SYSTEMD_UNIT: journald 252 often cannot tell the cgroup of a process that
# has already exited). With root on a listed drive (nvmeroot), the
# initramfs rebinds the listed controllers and syncs the namespaces it
# re-created: its lines are in the kernel log (/dev/kmsg).
# boot_line NS: who changed NS at boot, and the line's time (us) or fail.
boot_line() {
	local ns=$1 line who t
	line=$(journalctl -b --no-pager -o short-monotonic _TRANSPORT=syslog SYSLOG_IDENTIFIER=nvme-vwc-sync |
		grep -m1 "$ns: write back -> write through")
	who="udev rules"
	if [ -z "$line" ]; then
		line=$(journalctl -b --no-pager -o short-monotonic -u nvme-vwc-sync.service |
			grep -m1 "$ns: write back -> write through")
		who="the service's first pass"
	fi
	if [ -z "$line" ] && [ "$MODE" = nvmeroot ]; then
		line=$(journalctl -b -k --no-pager -o short-monotonic SYSLOG_IDENTIFIER=nvme-vwc-sync |
			grep -m1 "initramfs: $ns: write back -> write through")
		who="the initramfs (after its rebind)"
	fi
	if [ -z "$line" ]; then
		fail "boot: journal holds the reason line for $ns" \
			"$(journalctl -b --no-pager -o short-monotonic | grep -i 'vwc' | tail -n 5 | tr '\n' ' ')"
		return 1
	fi
	pass "boot: journal holds the reason line for $ns"
	info "boot: $ns changed by $who: $line"
	t=$(echo "$line" | sed -n 's/^\[ *\([0-9]*\)\.\([0-9]*\)\].*/\1\2/p')
	if [ -n "$t" ] && [ "$((10#$t))" -lt "$mu" ]; then
		pass "boot: $ns changed before multi-user.target"
	else
		fail "boot: $ns changed before multi-user.target" "line at ${t:-?} us, target at $mu us"
	fi
}
boot_line "$n0"
if [ "$MODE" = nvmeroot ]; then
	plan 10
	check_eq "boot: root drive (WCE off) write through" "$(wcache "$nr")" "write through"
	boot_line "$nr"
	# Root on a listed drive: the initramfs disabled Write
	# Zeroes (PCI dynamic ID and a rebind) before the root mount.
	info "boot 2: write_zeroes_max_bytes $(wz_all)"
	check_eq "boot: root drive Write Zeroes disabled from the start (write_zeroes_max_bytes)" "$(wz "$nr")" 0
	check_eq "boot: Write Zeroes disabled on every listed drive" "$(wz_not 0)" ""
	check_eq "boot: dynamic ID recorded (from the initramfs, kept in /run)" \
		"$(sed -n 1p /run/nvme-vwc-sync/dynid/* 2>/dev/null)" "1b36 0010 1af4 1100 0 0 200"
	journalctl -b -k --no-pager -o short-monotonic >"$OUT/kernel-2.txt"
	cr=$(ctrl VWCROOT)
	raddr=$(basename "$(readlink -f "/sys/class/nvme/$cr/device")")
	probes=$(grep -c "nvme $cr: pci function $raddr" "$OUT/kernel-2.txt")
	info "boot 2: root controller $cr ($raddr) probed $probes time(s); initramfs lines: $(grep -c 'nvme-vwc-sync.*initramfs:' "$OUT/kernel-2.txt")"
	info "boot 2: $(grep -m1 "nvme-vwc-sync.*initramfs: $cr (.*Write Zeroes disabled" "$OUT/kernel-2.txt")"
	# what the initramfs said about the root drive: done, or why not
	# (a refusal names the cause, e.g. a partition it thinks in use)
	if grep -q "nvme-vwc-sync.*initramfs: $cr (.*Write Zeroes disabled" "$OUT/kernel-2.txt"; then
		pass "boot: the initramfs disabled Write Zeroes on the root drive's controller $cr"
	else
		why=$(grep -E "nvme-vwc-sync.*initramfs: .*($cr |$nr)" "$OUT/kernel-2.txt")
		[ -n "$why" ] || why=$(grep 'nvme-vwc-sync.*initramfs:' "$OUT/kernel-2.txt")
		fail "boot: the initramfs disabled Write Zeroes on the root drive's controller $cr" \
			"$(echo "$why" | sed 's/^\[[^]]*\] *//' | head -n 4 | tr '\n' ' ')"
	fi
	check "boot: root controller rebound in the initramfs (probed twice)" test "$probes" -ge 2
	if [ "$LAYOUT" = lvm ]; then
		# one check for each of the fixture's two logical volumes, and one
		plan 3
		# lvm2's udev rule activated the VG first: the script took
		# root and swap down for the rebind and brought exactly them back
		vg=vwc-${VERSION_CODENAME}-vg
		for lv in root swap_1; do
			check_eq "boot: the initramfs deactivated $vg/$lv for the rebind and activated it again" \
				"$(grep -c "initramfs: deactivating logical volume $vg/$lv " "$OUT/kernel-2.txt")/$(grep -c "initramfs: logical volume $vg/$lv active again" "$OUT/kernel-2.txt")" 1/1
		done
		check_eq "boot: no logical volume left to the script's last line" \
			"$(grep -Ec 'activated again by the script|left inactive' "$OUT/kernel-2.txt")" 0
	fi
	# monotonic seconds of the first line matching $1 in the kernel log
	klog_t() { grep -m1 "$1" "$OUT/kernel-2.txt" | sed -n 's/^\[ *\([0-9.]*\)\].*/\1/p'; }
	t_wz=$(klog_t "nvme-vwc-sync.*initramfs: $cr (.*Write Zeroes disabled")
	t_root=$(klog_t "EXT4-fs ($(mnt_dev /)): mounted")
	check "boot: the journal has the initramfs's line, before the root mount" \
		awk -v a="${t_wz:-x}" -v b="${t_root:-x}" 'BEGIN { exit !(a != "x" && b != "x" && a + 0 < b + 0) }'
	check_no_new_failed "boot: the system boots normally (no unit failed that had not before install)"
fi
# The rules alone, deterministic: the service stopped, the namespace put
# back to the kernel's choice, a coldplug-style add event for it.
udev_lines() { journalctl -b --no-pager -o cat _TRANSPORT=syslog SYSLOG_IDENTIFIER=nvme-vwc-sync | grep -c "$n0: write back -> write through"; }
systemctl stop nvme-vwc-sync.service
before_lines=$(udev_lines)
echo "write back" >"/sys/block/$n0/queue/write_cache"
udevadm trigger --action=add --settle "/sys/block/$n0"
wait_for "udev rules alone (add event, service stopped): write through" 10 is_wt "$n0"
more_lines() { [ "$(udev_lines)" -gt "$before_lines" ]; }
wait_for "udev rules alone: a new reason line through syslog" 5 more_lines
systemctl start nvme-vwc-sync.service
check "boot: audit says in sync (exit 0)" nvme-vwc-sync audit
