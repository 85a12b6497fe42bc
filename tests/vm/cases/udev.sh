#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# vm: ctrl wc=off intel
# vm: rootport
# vm: spare
# kernels: 6.1 6.12 7.2
#
# No manual command: udevd with the project's rules brings three drives up
# in the right mode at coldplug, and a controller hot-added through the
# QEMU monitor too. The idle check proves the sidecar alive first; the
# checks that udev's runs leave a drive alone prove that udevd ran the rules
# for those very events (a marker rule of the test's own, and udevadm test
# for the project's RUN).
. /vwc/guest/lib.sh
plan 26

off=$(ctrl_by_serial VWC0); on=$(ctrl_by_serial VWC1); intel=$(ctrl_by_serial VWC2)
fact check_eq "before udev: WCE-off drive in write back (the kernel's choice)" "$(wc "$(ns_of "$off")")" "write back"
check_cmd "rules installed" test -f /lib/udev/rules.d/71-nvme-vwc-sync.rules
t0=$(/usr/bin/date +%s%N)
start_udev
udev_marker_start
info "coldplug trigger + settle took $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms"
check_eq "coldplug: WCE-off drive write through" "$(wc "$(ns_of "$off")")" "write through"
check_eq "coldplug: WCE-on drive write back" "$(wc "$(ns_of "$on")")" "write back"
check_eq "coldplug: WCE-off drive behind the Intel ID write through" "$(wc "$(ns_of "$intel")")" "write through"
fact check_eq "Intel ID seen" "$(cat /sys/class/nvme/$intel/device/vendor):$(cat /sys/class/nvme/$intel/device/device)" "0x8086:0x5845"

# the sidecar runs through the hot add and remove below
sidecar_start /tmp/watch.log -v -v
wpid=$SC_PID
sleep 1

host "drive_add 0 if=none,id=hp0,file={dir}/spare0.img,format=raw"
sleep 1
host "device_add nvme,id=nvhp,serial=VWCHP,drive=hp0,bus=rp0,write-cache=off"
fact wait_for "hot-add: controller appears" 30 ctrl_by_serial VWCHP
hp=$(ctrl_by_serial VWCHP)
wait_for - 20 ns_of "$hp"
hpns=$(ns_of "$hp")
udevadm settle --timeout=20
wait_for "hot-add: its namespace goes write through by itself" 10 sh -c "[ \"\$(cat /sys/block/$hpns/queue/write_cache)\" = 'write through' ]"
info "hot-added $hp ($hpns) WCE=$(get_wce "$hp") write_cache=$(wc "$hpns")"

# the sidecar holds the hot-added controller's descriptor (opened
# again until live), so its own probes raise no close events: it is idle
# afterwards, and SMART critical warning events are armed (0Bh bits 0-7).
sidecar_alive "hot-add: sidecar alive before the idle check"
t0=$(proc_cpu "$wpid")
sleep 10
t1=$(proc_cpu "$wpid")
info "hot-add: sidecar CPU over the 10 s after it: $((t1 - t0)) ticks; $(grep -c "$hp" /tmp/watch.log) log lines name $hp"
[ $((t1 - t0)) -lt 100 ] && pass "hot-add: sidecar idle afterwards (under 1 s of CPU in 10 s, TCG)" ||
	fail "hot-add: sidecar idle afterwards" "$((t1 - t0)) ticks in 10 s"
aec=$(nvme get-feature "/dev/$hp" --feature-id=0xb 2>&1 | sed -n 's/.*Current value: *\(0x\)\{0,1\}\([0-9a-fA-F]*\).*/\2/p')
[ -n "$aec" ] && [ $((0x$aec & 0xff)) -eq 255 ] &&
	pass "hot-add: SMART critical warning events armed on $hp (0Bh=0x$aec)" ||
	fail "hot-add: SMART critical warning events armed on $hp" "0Bh='$aec'"

# the device disappears while the tool runs on it, again and again: every
# run ends with 0 or 1 (never a crash) and a failure names the device
: >/tmp/runs
touch /tmp/looping
(while [ -e /tmp/looping ]; do
	nvme-vwc-sync sync "$hp" >/dev/null 2>>/tmp/errs; echo $? >>/tmp/runs
done) &
lp=$!
sleep 1
host "device_del nvhp"
hp_gone() { ! ctrl_by_serial VWCHP >/dev/null; }
wait_for "hot-remove: controller gone" 30 hp_gone
sleep 1
rm -f /tmp/looping
wait $lp
info "runs around the removal: $(sort /tmp/runs | uniq -c | tr '\n' ' '); errors: $(sort -u /tmp/errs | head -n 3 | tr '\n' '|')"
check_eq "hot-remove mid-run: every exit status 0 or 1" "$(grep -cv '^[01]$' /tmp/runs)" 0
grep -q "^1$" /tmp/runs && pass "hot-remove mid-run: runs after removal fail" || fail "hot-remove: failing runs" "$(cat /tmp/runs | tr '\n' ' ')"
grep -q "$hp" /tmp/errs && pass "hot-remove mid-run: errors name the device" || fail "hot-remove: error names" "$(head -n 3 /tmp/errs)"
check_eq "hot-remove: other drives untouched" "$(wc "$(ns_of "$off")") $(wc "$(ns_of "$on")")" "write through write back"

wait_for "sidecar: started watching the hot-added controller" 10 grep -q "$hp: watching" /tmp/watch.log
# "removed" from the controller's remove uevent, or "gone" from a rescan
# that no longer finds it, whichever comes first
wait_for "sidecar: noticed it gone" 10 grep -qE "$hp: (gone|removed)" /tmp/watch.log
sidecar_alive "sidecar: still running after add and remove"
sidecar_stop "sidecar: clean exit after add and remove"

# a change event (what a reset or an AEN produces) re-applies too
set_wc "$(ns_of "$off")" "write back"
udevadm trigger --action=change "/sys/class/nvme/$off" && udevadm settle --timeout=10
check_eq "controller change event: write through again" "$(wc "$(ns_of "$off")")" "write through"

# what restore handed back stays with the kernel's choice under udev's runs
# (--keep-restored in the rules) until an explicit sync takes it back
offns=$(ns_of "$off")
nvme-vwc-sync restore --all >/dev/null 2>&1
check_eq "restore: WCE-off drive back to write back" "$(wc "$offns")" "write back"
m0=$(udev_marks change "$off") m1=$(udev_marks add "$offns")
udevadm trigger --action=change "/sys/class/nvme/$off" && udevadm trigger --action=add "/sys/block/$offns" &&
	udevadm settle --timeout=10
q=no
udev_queues change "/sys/class/nvme/$off" "nvme-vwc-sync sync --quiet --keep-restored $off" &&
	udev_queues add "/sys/block/$offns" "nvme-vwc-sync sync --quiet --keep-restored $offns" && q=yes
check_eq "after restore: udevd ran the rules for both events, the project's sync among them" \
	"change $(($(udev_marks change "$off") - m0)), add $(($(udev_marks add "$offns") - m1)), queued $q" "change 1, add 1, queued yes"
check_eq "after restore: udev's change and add runs leave it write back" "$(wc "$offns")" "write back"
nvme-vwc-sync sync --quiet "$off"
check_eq "explicit sync after restore: write through" "$(wc "$offns")" "write through"
set_wc "$offns" "write back"
udevadm trigger --action=change "/sys/class/nvme/$off" && udevadm settle --timeout=10
check_eq "after that sync: udev's runs apply write through again" "$(wc "$offns")" "write through"
finish
