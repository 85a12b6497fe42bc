#!/bin/sh
# vm: ctrl wc=off
# kernels: 7.2-generic
# timeout: 420
#
# The sidecar starts before nvme_core is loaded (a generic kernel,
# nvme a module; fabrics-only hosts load it late). Its start line says it
# falls back; once `modprobe nvme` brings the controller (and with it the
# nvme_core's symbols and events), it attaches its kprobes and 10 of 10 WCE=1 toggles
# through a held descriptor are caught within 1 s.
. /vwc/guest/lib.sh
ROUNDS=${VWC_HELDFD_ROUNDS:-10}

mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
start_udev || fail "kwatch-late: udevd" "systemd-udevd did not start"
modprobe -r nvme 2>/dev/null
# and whatever else the overlay loaded on nvme_core (nvmet on 7.x)
for h in $(ls /sys/module/nvme_core/holders 2>/dev/null); do
	modprobe -r "$h" 2>/dev/null || rmmod "$h" 2>/dev/null
done
info "kwatch-late: nvme_core holders left: $(ls /sys/module/nvme_core/holders 2>/dev/null | tr '\n' ' ')"
modprobe -r nvme_core 2>/dev/null
if [ -d /sys/kernel/tracing/events/nvme ] || [ -d /sys/module/nvme_core ]; then
	plan 1
	skip "kwatch-late: sidecar before nvme_core" "nvme_core stays loaded (built in?) on $(uname -r)"
	finish
	exit 0
fi
plan 5
fact pass "kwatch-late: nvme and nvme_core unloaded"

nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
wpid=$!
wait_for - 20 grep -q 'watching .*Set Features detection' /tmp/watch.log
line=$(grep 'watching .*Set Features detection' /tmp/watch.log | head -n 1)
info "kwatch-late: start line before modprobe: $line"
case $line in
*fallback*) pass "kwatch-late: start line says it falls back without nvme_core" ;;
*) fail "kwatch-late: start line says it falls back without nvme_core" "$line" ;;
esac

modprobe nvme || fail "kwatch-late: modprobe nvme" "failed"
wait_for - 20 sh -c 'ls /sys/class/nvme/ 2>/dev/null | grep -q nvme'
c=$(ctrl_by_serial VWC0)
wait_for - 20 ctrl_live "$c"
ns=$(ns_of "$c")
wt() { [ "$(cat /sys/block/$ns/queue/write_cache 2>/dev/null)" = "write through" ]; }
wait_for "kwatch-late: after modprobe the WCE-off namespace goes write through" 20 wt
wait_for "kwatch-late: the kernel events attached after modprobe" 20 \
	grep -q 'attached late' /tmp/watch.log
info "kwatch-late: $(grep 'attached late' /tmp/watch.log | head -n 1)"
sleep 2
wce-toggle -n "$ROUNDS" -d 100 -s "$ns" -t 2000 "/dev/$c" >/tmp/late.out 2>&1
info "kwatch-late ioctl, attached after modprobe: WCE=1 -> write back $(wct_summary /tmp/late.out)"
if wct_all_within /tmp/late.out "$ROUNDS" 1000; then
	pass "kwatch-late: $ROUNDS/$ROUNDS held-descriptor toggles caught within 1 s after a late modprobe"
else
	fail "kwatch-late: $ROUNDS/$ROUNDS toggles within 1 s after a late modprobe" "$(wct_summary /tmp/late.out)"
fi
kill -TERM "$wpid"
wait "$wpid"
info "sidecar log: $(grep -v '^ ' /tmp/watch.log | tail -n 3 | tr '\n' '|')"
finish
