#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 6.12 7.2
#
# set-cache ordering, restore (only what the tool changed), configuration
# overrides and the refusal to force write through.
. /vwc/guest/lib.sh
plan 22

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")

# set-cache on: block layer to write back BEFORE WCE=1
nvme vwc-sync "$c" >/dev/null 2>&1
check_eq "start: write through" "$(wc "$ns")" "write through"
nvme vwc set-cache on "/dev/$c" -v -v >/tmp/on.out 2>&1; rc=$?
check_eq "set-cache on: exit 0" "$rc" 0
check_eq "set-cache on: WCE=1 and write back" "$(get_wce "$c") $(wc "$ns")" "1 write back"
order=$(grep -n -e ": write through -> write back:" -e "WCE set to 1" /tmp/on.out | cut -d: -f1 | tr '\n' ' ')
info "set-cache on log order (line numbers: block layer, then WCE): $order"
set -- $order
if [ "$#" -eq 2 ] && [ "$1" -lt "$2" ]; then pass "set-cache on: write back before WCE=1"; else fail "set-cache on: order" "$(cat /tmp/on.out)"; fi

nvme vwc set-cache off "/dev/$c" -v -v >/tmp/off.out 2>&1; rc=$?
check_eq "set-cache off: exit 0" "$rc" 0
check_eq "set-cache off: WCE=0 and write through" "$(get_wce "$c") $(wc "$ns")" "0 write through"
order=$(grep -n -e "WCE set to 0" -e ": write back -> write through:" /tmp/off.out | cut -d: -f1 | tr '\n' ' ')
set -- $order
if [ "$#" -eq 2 ] && [ "$1" -lt "$2" ]; then pass "set-cache off: WCE=0 before write through"; else fail "set-cache off: order" "$(cat /tmp/off.out)"; fi
nvme vwc set-cache maybe "/dev/$c" >/dev/null 2>&1; rc=$?
check_eq "set-cache bad argument: usage exit 2" "$rc" 2

# restore: back to the kernel's own choice, record removed
out=$(nvme vwc restore --all 2>&1); rc=$?
check_eq "restore: exit 0" "$rc" 0
check_eq "restore: back to write back (kernel's choice)" "$(wc "$ns")" "write back"
check_eq "restore: records removed" "$(ls /run/nvme-vwc-sync/changed 2>/dev/null | tr '\n' ' ')" ""
info "restore said: $out"

# a setting changed by hand in between is left alone and reported
nvme vwc-sync "$c" >/dev/null 2>&1
set_wc "$ns" "write back"
set_wc "$ns" "write through"
set_wc "$ns" "write back"
out=$(nvme vwc restore "$c" 2>&1)
case $out in *"left alone"*) pass "restore: hand-made change reported" ;; *) fail "restore: hand-made change" "$out" ;; esac
check_eq "restore: hand-made value kept" "$(wc "$ns")" "write back"
out=$(nvme vwc restore --dry-run --all 2>&1)
check_eq "restore --dry-run with nothing recorded: silent" "$out" ""

# configuration: forced write back, ignore, and refusal of write-through
printf 'device serial=VWC0 write-cache=write-back\n' >/tmp/wb.conf
nvme vwc-sync --config=/tmp/wb.conf "$c" >/dev/null 2>&1
check_eq "config write-back override keeps write back" "$(wc "$ns")" "write back"
printf 'device serial=VWC0 write-cache=ignore\n' >/tmp/ign.conf
set_wc "$ns" "write back"
nvme vwc-sync --config=/tmp/ign.conf -o json "$c" >/tmp/ign.out 2>&1
check_eq "config ignore: untouched" "$(wc "$ns")" "write back"
grep -q '"action": "skipped"' /tmp/ign.out && pass "config ignore: reported skipped" || fail "config ignore" "$(cat /tmp/ign.out)"
printf '# plp drive\ndevice serial=VWC0 write-cache=write-through\n' >/tmp/wt.conf
err=$(nvme vwc-sync --config=/tmp/wt.conf "$c" 2>&1); rc=$?
case "$rc:$err" in 1:*/tmp/wt.conf:2:*refused*set-cache\ off*) pass "config write-through refused with file:line and the safe path" ;; *) fail "config write-through refusal" "rc=$rc $err" ;; esac
check_eq "refused config: nothing applied" "$(wc "$ns")" "write back"

# restore reads the configuration: a node this tool moved from
# write through to write back because the admin forces write back is not
# put back in write through, though the drive reports WCE=0
nvme-vwc-sync restore --all >/dev/null 2>&1
set_wc "$ns" "write through"
nvme-vwc-sync sync --config=/tmp/wb.conf "$c" >/dev/null 2>&1
check_eq "restore+config: forced write back recorded over write through" \
	"$(get_wce "$c") $(wc "$ns") $(sed -n 's/^original=//p' /run/nvme-vwc-sync/changed/$ns 2>/dev/null)" \
	"0 write back write through"
out=$(nvme-vwc-sync restore --config=/tmp/wb.conf "$c" 2>&1); rc=$?
check_eq "restore+config: forced write back kept (exit $rc: $out)" "$(wc "$ns")" "write back"
# without the override the same record does go back to write through
set_wc "$ns" "write through"
nvme-vwc-sync sync --config=/tmp/wb.conf "$c" >/dev/null 2>&1
out=$(nvme-vwc-sync restore "$c" 2>&1)
check_eq "restore without config: back to the kernel's write through ($out)" "$(wc "$ns")" "write through"
finish
