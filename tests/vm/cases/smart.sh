#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 7.2
#
# SMART critical warning bit 4 (volatile memory backup failed) raised at run
# time through QEMU's monitor: the sidecar puts the namespace in write back.
. /vwc/guest/lib.sh
plan 6

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10
nvme-vwc-sync watch -v -v >/tmp/watch.log 2>&1 &
pid=$!
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }
wait_for "initial: write through" 10 wt
info "AEC (feature 0Bh) after the sidecar armed it: $(nvme get-feature /dev/$c --feature-id=0xb 2>&1 | tail -n 1)"

host "qom-set /machine/peripheral/nv0 smart_critical_warning 16"
t0=$(/usr/bin/date +%s%N)
wait_for "critical warning bit 4: write back" 15 wb && info "reaction time $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms"
wait_for "the sidecar saw the NVME_AEN uevent" 10 grep -q "NVME_AEN=" /tmp/watch.log
out=$(nvme-vwc-sync audit 2>&1)
case $out in *"backup FAILED"*) pass "audit reports the backup failure" ;; *) fail "audit reports the backup failure" "$out" ;; esac
check_cmd "sync keeps write back while bit 4 is set" sh -c "nvme vwc-sync $c >/dev/null && [ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write back' ]"

host "qom-set /machine/peripheral/nv0 smart_critical_warning 0"
sleep 2
nvme vwc-sync "$c" >/dev/null 2>&1
wait_for "warning cleared and re-synced: write through" 10 wt
kill -TERM "$pid"; wait "$pid"
finish
