# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# when: [ "$MODE" = full ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# A rebind cut short by SIGKILL: the path unit's service binds it again;
# quirks then puts the dynamic ID back for the upgrade (needs 43-dynid).

plan 8
# --- a rebind cut short by SIGKILL: the path unit binds it again ---------------
# The sidecar stopped, so that the binder can only be the path unit's
# service. restore on VWC0 (it removes the dynamic ID, then rebinds),
# SIGKILLed as soon as the PCI core removed the function's driver link,
# which it does at the start of the unbind: the process dies inside its
# unbind write. The record it wrote before (/run/nvme-vwc-sync/unbound)
# starts nvme-vwc-sync-rebind-guard.service, which binds VWC0 again.
# quirks then puts the dynamic ID back for the upgrade below.
check_eq "path unit: nvme-vwc-sync-rebind-guard.path enabled and waiting" \
	"$(systemctl is-enabled nvme-vwc-sync-rebind-guard.path) $(systemctl is-active nvme-vwc-sync-rebind-guard.path)" "enabled active"
systemctl stop nvme-vwc-sync.service
a0=$(addr_of "$c0")
nvme-vwc-sync restore "/dev/$n0" >"$OUT/restore-killed.log" 2>&1 &
rp=$!
/vwc/bin/kill-when-gone "/sys/bus/pci/devices/$a0/driver" "$rp" >"$OUT/kill-when-gone.log" 2>&1
wait "$rp"
rc=$?
info "restore killed: exit $rc, $(cat "$OUT/kill-when-gone.log"), record: $(cat "/run/nvme-vwc-sync/unbound/$a0" 2>/dev/null | tr '\n' ' ')"
check_eq "SIGKILL in the rebind: restore killed (exit 137)" "$rc" 137
vwc0_back() { c=$(ctrl VWC0) && n=$(ns VWC0) && [ -e "/sys/block/$n/queue/write_zeroes_max_bytes" ]; }
wait_for "SIGKILL in the rebind: VWC0 bound again within 15 s (the path unit's service)" 15 vwc0_back
c0=$(ctrl VWC0) n0=$(ns VWC0)
journalctl -b -u nvme-vwc-sync-rebind-guard.service --no-pager -o cat >"$OUT/rebind-guard.log" 2>&1
grep -q "$a0: bound again to nvme" "$OUT/rebind-guard.log" && pass "SIGKILL in the rebind: rebind-guard.service bound it (journal)" ||
	fail "SIGKILL in the rebind: rebind-guard.service bound it" "$(tail -n 5 "$OUT/rebind-guard.log" | tr '\n' '|')"
check_eq "SIGKILL in the rebind: no record left" "$(ls /run/nvme-vwc-sync/unbound 2>/dev/null | wc -l)" 0
check_eq "SIGKILL in the rebind: rebind-guard.service ended well" "$(systemctl show -P Result nvme-vwc-sync-rebind-guard.service)" success
systemctl start nvme-vwc-sync.service
NVME_VWC_SYNC_MODULES_DIR=$t7 nvme-vwc-sync quirks "/dev/$c0" >"$OUT/quirks-again.log" 2>&1
wait_for - 20 ns VWC0
c0=$(ctrl VWC0) n0=$(ns VWC0)
wait_for "after the killed rebind: quirks again, VWC0 ($n0) write through again" 20 is_wt "$n0"
check_eq "after the killed rebind: Write Zeroes off on VWC0 again" "$(wz "$n0")" 0
before=$(records)
info "records before the upgrade: $(echo "$before" | tr '\n' ' ')"
# bound: every NVMe controller, its PCI function and the driver's link
bound() { for c in /sys/class/nvme/nvme*; do printf '%s=%s:%s ' "${c##*/}" "$(addr_of "${c##*/}")" "$(test -e "/sys/bus/pci/drivers/nvme/$(addr_of "${c##*/}")" && echo bound)"; done; }
probes() { journalctl -k -b --no-pager -o cat | grep -c 'nvme nvme[0-9]*: pci function'; }
bound0=$(bound) probes0=$(probes)
info "dynamic ID set up and checked in $(($(now_ms) - tq)) ms"
