#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 6.1 6.12 7.2
#
# The sidecar: raw Set Features 06h from another tool, controller reset,
# namespace rescan, another writer's write through set back at a close;
# idle CPU, descriptors, clean stop. Each check of the
# sidecar's idle CPU and descriptors first proves it is still the process
# started here (a dead one reads as 0 ticks and 0 descriptors), the 50
# toggles are counted, and the clean stop needs a sidecar alive at SIGTERM.
. /vwc/guest/lib.sh
plan 17

off=$(ctrl_by_serial VWC0)
on=$(ctrl_by_serial VWC1)
ns=$(ns_of "$off")
nson=$(ns_of "$on")
mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10

sidecar_start /tmp/watch.log -v -v
pid=$SC_PID
wait_for "watch: initial sync puts WCE-off namespace in write through" 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"
check_eq "watch: WCE-on namespace stays write back" "$(wc "$nson")" "write back"

wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }

nvme set-feature "/dev/$off" --feature-id=6 --value=1 >/dev/null 2>&1
wait_for "raw set-feature WCE=1: write back" 5 wb
nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
wait_for "raw set-feature WCE=0: write through" 5 wt

# through the namespace's generic node too (QEMU refuses the namespace's own
# NSID for this controller-wide feature: 0x410f; the broadcast NSID works)
out=$(nvme set-feature "/dev/ng${ns#nvme}" --namespace-id=0xffffffff --feature-id=6 --value=1 2>&1)
info "set-feature via /dev/ng${ns#nvme}: $out"
wait_for "raw set-feature via /dev/ng node: write back" 5 wb
nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
wait_for "back to write through" 5 wt

echo 1 >"/sys/class/nvme/$off/reset_controller"
wait_for - 20 ctrl_live "$off"
sleep 6
check_eq "after reset_controller: write through (WCE $(get_wce "$off"))" "$(wc "$ns")" "write through"
echo 1 >"/sys/class/nvme/$off/rescan_controller"
sleep 6
check_eq "after rescan_controller: write through" "$(wc "$ns")" "write through"

# another writer (root) puts the namespace of the controller whose cache is
# on in write through: no uevent comes; the next close of one of its nodes
# (any tool's) sets it back, not the safety net's round a minute later
# (with the kernel-side detection, a close's check reads the modes too)
echo "write through" >"/sys/block/$nson/queue/write_cache"
nvme id-ctrl "/dev/$on" >/dev/null 2>&1
wait_for "another writer's write through under a cache that is on: write back at the next close of a node" 5 \
	sh -c "[ \"\$(cat /sys/block/$nson/queue/write_cache)\" = 'write back' ]"

# quiet: until the sidecar's log (-v -v: every step) has not grown for 3 s:
# the rescan's re-checks (0.3, 1.5, 5 s) and the release of an idle
# descriptor 1 s after its last use are over; at most 30 s
quiet() { log_quiet /tmp/watch.log 30 || :; }

# idle: no CPU, and descriptors stable over many events
quiet
sidecar_alive "watch: sidecar alive before the idle checks"
fds0=$(proc_fds "$pid")
t0=$(proc_cpu "$pid")
sleep 15
t1=$(proc_cpu "$pid")
sidecar_alive "watch: sidecar alive after 15 s idle"
info "sidecar CPU ticks over 15 s idle: $((t1 - t0)) (clock ticks of $(getconf CLK_TCK 2>/dev/null || echo 100) Hz)"
check_eq "idle: no CPU time over 15 s" "$((t1 - t0))" 0
i=0 followed=0
while [ $i -lt 25 ]; do
	nvme set-feature "/dev/$off" --feature-id=6 --value=1 >/dev/null 2>&1
	wait_for - 5 wb && followed=$((followed + 1))
	nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
	wait_for - 5 wt && followed=$((followed + 1))
	i=$((i + 1))
done
check_eq "50 toggles: each followed within 5 s" "$followed" 50
# let the last events' evaluations end (each holds the lock file open)
# and the controller's descriptor be let go as before
quiet
sidecar_alive "watch: sidecar alive after 50 toggles"
fds1=$(proc_fds "$pid")
info "sidecar fds before/after 50 toggles: $fds0/$fds1; RSS $(awk '/VmRSS/ { print $2 }' /proc/$pid/status) kB"
check_eq "no descriptor leak over 50 toggles" "$fds1" "$fds0"
check_eq "after 50 toggles: write through" "$(wc "$ns")" "write through"

sidecar_stop "SIGTERM: clean exit 0"
info "watch log tail: $(tail -n 3 /tmp/watch.log | tr '\n' '|')"
finish
