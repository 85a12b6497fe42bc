#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 6.1 7.2
# timeout: 400
#
# An idle hour at a faster clock: the sidecar with a 1 s safety net for
# 60 s (60 rounds, the default 60 s interval's hour). Its CPU time stays
# small and the drives' error-log entry counts do not move: the safety
# net sends only Get Features 06h, which succeeds.
. /vwc/guest/lib.sh

errs() { nvme smart-log "/dev/$1" -o json | jq '.num_err_log_entries'; }
off=$(ctrl_by_serial VWC0); on=$(ctrl_by_serial VWC1)
nvme-vwc-sync watch --interval=1 >/tmp/watch.log 2>&1 &
pid=$!
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$(ns_of "$off")/queue/write_cache)\" = 'write through' ]"
# idle from here: after the start's tail (the re-checks of controllers it
# has just seen, 0.3 to 5 s; under TCG, the kernel patching its text for the
# kprobes makes QEMU translate the guest's code again for a few seconds)
sleep 8
e0=$(errs "$off"); e1=$(errs "$on")
t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
sleep 60
t1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
info "sidecar CPU over 60 safety-net rounds: $((t1 - t0)) ticks ($(( (t1 - t0) * 10 )) ms at 100 Hz, under TCG)"
info "error-log entries: $off $e0 -> $(errs "$off"), $on $e1 -> $(errs "$on")"
check_eq "error-log entries flat on the WCE-off drive" "$(errs "$off")" "$e0"
check_eq "error-log entries flat on the WCE-on drive" "$(errs "$on")" "$e1"
[ $((t1 - t0)) -lt 300 ] && pass "sidecar CPU under 3 s over 60 rounds (emulated)" || fail "sidecar CPU" "$((t1 - t0)) ticks"
check_eq "still write through" "$(wc "$(ns_of "$off")")" "write through"
# the safety net catches what no event reports: a hand-made change
set_wc "$(ns_of "$off")" "write back"
wait_for "safety net restores write through within 3 s" 3 sh -c "[ \"\$(cat /sys/block/$(ns_of "$off")/queue/write_cache)\" = 'write through' ]"
kill -TERM $pid; wait $pid
finish
