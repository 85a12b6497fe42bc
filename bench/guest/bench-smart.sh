#!/bin/sh
# vm: ctrl wc=off
#
# SMART critical warning bit 4 raised through the QEMU monitor,
# with the sidecar running, timed step by step on the guest's monotonic
# clock over N rounds:
#   ask   -> kernel: the guest asks the host (serial line, the harness,
#                    QEMU's monitor, QEMU's AER, the kernel's AEN work);
#                    ends at the kernel's uevent (udevadm monitor KERNEL[])
#   kernel -> udev : udevd's rules for that event (UDEV[])
#   kernel -> wb   : from the kernel's uevent to write back (our part)
# wc-when samples write_cache every 200 us.
. /vwc/guest/lib.sh
N=${VWC_BENCH_ROUNDS:-10}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10
nvme-vwc-sync watch -v -v >/tmp/watch.log 2>&1 &
pid=$!
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"
sleep 1
: >/tmp/rows
i=0
while [ $i -lt "$N" ]; do
	udevadm monitor --kernel --udev --property --subsystem-match=nvme >/tmp/mon 2>&1 &
	mpid=$!
	sleep 0.5
	wc-when "$ns" back 10000 >/tmp/when &
	wpid=$!
	sleep 0.05
	host "qom-set /machine/peripheral/nv0 smart_critical_warning 16"
	wait "$wpid"
	sleep 1
	kill "$mpid" 2>/dev/null; wait "$mpid" 2>/dev/null
	start=$(sed -n 's/^WCW start=//p' /tmp/when)
	flip=$(sed -n 's/^WCW flip=//p' /tmp/when)
	# KERNEL[t] / UDEV[t] of the first event block carrying NVME_AEN
	k=$(awk '/^KERNEL\[/ { t = $1 } /^NVME_AEN=/ && t { sub(/^KERNEL\[/, "", t); sub(/\].*/, "", t); print t; exit }' /tmp/mon)
	u=$(awk '/^UDEV *\[/ { t = $0 } /^NVME_AEN=/ && t { sub(/^UDEV *\[/, "", t); sub(/\].*/, "", t); print t; exit }' /tmp/mon)
	if [ -n "$start" ] && [ -n "$flip" ] && [ -n "$k" ] && [ -n "$u" ]; then
		awk -v s="$start" -v f="$flip" -v k="$k" -v u="$u" 'BEGIN {
			printf "%.1f %.1f %.1f %.1f\n", (k - s) * 1000, (u - k) * 1000, (f - k) * 1000, (f - s) * 1000 }' >>/tmp/rows
	else
		info "round $i incomplete: start=$start flip=$flip kernel=$k udev=$u"
	fi
	host "qom-set /machine/peripheral/nv0 smart_critical_warning 0"
	sleep 0.5
	nvme-vwc-sync sync "$c" >/dev/null 2>&1
	wait_for - 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"
	sleep 0.5
	i=$((i + 1))
done
kill -TERM "$pid"; wait "$pid"
n=$(command wc -l </tmp/rows)
echo "BENCH: SMART critical warning bit 4 -> write back, $n of $N rounds, ms on the guest's CLOCK_MONOTONIC"
echo "BENCH: sidecar: $(grep -c 'kernel uevent' /tmp/watch.log) kernel-group uevents seen; $(grep stopping /tmp/watch.log)"
for col in 1 2 3 4; do
	case $col in
	1) what="ask -> kernel uevent (harness, QEMU, kernel AEN)" ;;
	2) what="kernel uevent -> udev event (udevd's rules)" ;;
	3) what="kernel uevent -> write back (the sidecar)" ;;
	4) what="ask -> write back (total)" ;;
	esac
	sort -n -k"$col","$col" /tmp/rows | awk -v c="$col" -v w="$what" '{ v[NR] = $c } END {
		if (!NR) exit; printf "BENCH: %-52s p50 %7.1f  min %7.1f  max %7.1f\n", w, v[int((NR + 1) / 2)], v[1], v[NR] }'
done
[ "$n" -gt 0 ] && pass "smart timing rows" || fail "smart timing rows" "none complete"
finish
