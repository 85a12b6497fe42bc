#!/bin/sh
# vm: ctrl wc=on size=512
# timeout: 1200
#
# Benchmark (not a test): the measure of the kernel quirk proposal that
# disables Write Zeroes on the Crucial T700/T705, on the T700 stand-in. QEMU's controller is made quirk-free (a dynamic ID with the
# class-wide entry's driver_data 0, then a rebind: /sys/class/nvme/nvmeX/
# quirks reads "none", as a T700's does on 7.x) and listed in the quirk
# database by an admin hwdb file. `blkdiscard --zeroout` of 320 MiB on a
# GPT partition, before and after `nvme-vwc-sync quirks`, timed, with the
# Write Zeroes commands counted at the nvme_setup_cmd tracepoint and the
# written sectors from the partition's stat. Under QEMU/TCG the times
# measure the emulator: QEMU answers Write Zeroes without touching the
# image, so here the offload is the fast path; on a T700 (the proposal: 5 s
# with Write Zeroes, 0.5 s without, on 350 MB) its firmware is the slow
# one. What this shows on any machine is the mechanism: after the quirk no
# Write Zeroes command reaches the drive and the kernel writes the zeroes.
# Lines for the bench runner start with "BENCH:".
. /vwc/guest/lib.sh

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
addr=$(basename "$(readlink -f /sys/class/nvme/$c/device)")
echo "1b36 0010 1af4 1100 0 0 0" >/sys/bus/pci/drivers/nvme/new_id
echo "$addr" >/sys/bus/pci/drivers/nvme/unbind
echo "$addr" >/sys/bus/pci/drivers/nvme/bind
wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
c=$(ctrl_by_serial VWC0); ns=$(ns_of "$c")
printf 'label: gpt\nsize=400MiB\n' | /usr/sbin/sfdisk -q "/dev/$ns" >/dev/null 2>&1
wait_for - 10 test -e "/sys/block/$ns/${ns}p1"
p=${ns}p1
[ -b "/dev/$p" ] || mknod "/dev/$p" b $(tr : ' ' <"/sys/block/$ns/$p/dev")
mkdir -p /etc/udev/hwdb.d
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
systemd-hwdb update

T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
LEN=320M
measure() { # LABEL
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 'opcode == 8 && qid != 0' >$T/events/nvme/nvme_setup_cmd/filter
	echo 1 >$T/events/nvme/nvme_setup_cmd/enable
	echo 1 >$T/tracing_on
	_w0=$(awk '{ print $7 }' "/sys/block/$ns/$p/stat")
	_t0=$(/usr/bin/date +%s%N)
	/usr/sbin/blkdiscard --zeroout --length $LEN "/dev/$p"
	_rc=$?
	_ms=$((($(/usr/bin/date +%s%N) - _t0) / 1000000))
	echo 0 >$T/tracing_on
	echo 0 >$T/events/nvme/nvme_setup_cmd/enable
	_w1=$(awk '{ print $7 }' "/sys/block/$ns/$p/stat")
	_n=$(grep -c nvme_setup_cmd $T/trace)
	printf 'BENCH: %-28s | %6s | %8d | %10d | %s\n' "$1" "$(cat /sys/block/$ns/queue/write_zeroes_max_bytes)" "$_ms" "$_n" "$((_w1 - _w0))"
	[ "$_rc" = 0 ] || echo "BENCH: blkdiscard failed ($_rc)"
}
echo "BENCH: blkdiscard --zeroout --length $LEN /dev/$p (GPT partition of $ns), QEMU/TCG, kernel $(uname -r)"
echo "BENCH: controller quirks before: $(tr '\n' ' ' </sys/class/nvme/$c/quirks 2>/dev/null || echo '(no quirks attribute)')"
echo "BENCH: step                         | wz_max |     ms   | WZ cmds    | sectors written"
measure "before (Write Zeroes on)"
measure "before, again"
nvme-vwc-sync quirks "$c" >/tmp/q.out 2>&1
echo "BENCH: nvme-vwc-sync quirks $c: exit $?; $(grep -E 'dynamic ID|disabled' /tmp/q.out | tr -s ' ' | tr '\n' ';')"
c=$(ctrl_by_serial VWC0); ns=$(ns_of "$c")
wait_for - 10 test -e "/sys/block/$ns/$p"
[ -b "/dev/$p" ] || mknod "/dev/$p" b $(tr : ' ' <"/sys/block/$ns/$p/dev")
echo "BENCH: controller quirks after: $(tr '\n' ' ' </sys/class/nvme/$c/quirks 2>/dev/null || echo '(no quirks attribute)')"
measure "after (quirk applied)"
measure "after, again"
finish
