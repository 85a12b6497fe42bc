# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# when: [ "$MODE" = full ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# From here the udev rule is opted out: the service alone. A drive
# hot-added through the QEMU monitor is put in write through by it.

# The udev rule's own runs off from here: what follows is the service alone.
echo 'ENV{NVME_VWC_SYNC}="0"' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
# a rule of the test's own, after the project's and not behind its
# opt-out: it marks every nvme block event udevd ran the rules for, so
# that "udev's own run did not do it" is not passed by rules that never ran
mkdir -p /run/udev/rules.d
echo 'SUBSYSTEM=="block", KERNEL=="nvme*", RUN+="/bin/sh -c '\''echo $env{ACTION} $kernel >>/run/udev/vwc-test-marker'\''"' \
	>/run/udev/rules.d/99-vwc-test-marker.rules
udevadm control --reload

# --- hot-add through the QEMU monitor -----------------------------------------
host "drive_add 0 if=none,id=hp0,file={dir}/spare0.img,format=raw"
t0=$(now_ms)
host "device_add nvme,id=nvhp,serial=VWCHP,drive=hp0,bus=rp0,write-cache=off"
plan 5
if wait_for "hot-add: controller appears" 30 ns VWCHP; then
	nh=$(ns VWCHP)
	if wait_for "hot-add: the service puts it in write through (udev rule off)" 15 is_wt "$nh"; then
		info "hot-add: write through $(($(now_ms) - t0)) ms after device_add"
	fi
	sleep 0.5
	check "hot-add: the service's journal names it" \
		sh -c "journalctl -b --no-pager -o cat -u nvme-vwc-sync.service | grep -q '$nh: write back -> write through'"
	udevadm settle --timeout=20
	fact check_eq "hot-add: udevd ran the rules for $nh's add event (the test's marker rule)" \
		"$(grep -c "^add $nh\$" /run/udev/vwc-test-marker 2>/dev/null)" 1
	udevline=$(journalctl -b --no-pager -o cat _TRANSPORT=syslog SYSLOG_IDENTIFIER=nvme-vwc-sync | grep -c "$nh:")
	check_eq "hot-add: udev's own run did not do it (opt-out honoured)" "$udevline" 0
fi
