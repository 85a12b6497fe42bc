# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# when: [ "$MODE" = full ]
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# A PCI dynamic ID live (the T700 stand-in), kept for the upgrade.

plan 6
# --- a PCI dynamic ID live for the upgrade ------------------------------------
# QEMU's 1b36:0010 listed by the admin (as nvmeroot does) and the T700
# stand-in (a module index without QEMU's ID: 6.12's and 6.1's nvme table
# list it, so the real path refuses; see the top of this file): quirks on
# VWC0 alone adds the dynamic ID, rebinds VWC0 (Write Zeroes off) and
# leaves VWC1 bound as it was.
tq=$(now_ms)
t700_standin
addr_of() { basename "$(readlink -f "/sys/class/nvme/$1/device")"; }
a1=$(addr_of "$c1")
NVME_VWC_SYNC_MODULES_DIR=$t7 nvme-vwc-sync quirks "/dev/$c0" >"$OUT/quirks-live.log" 2>&1
rc=$?
info "quirks /dev/$c0: exit $rc: $(tr '\n' ' ' <"$OUT/quirks-live.log")"
check_eq "dynamic ID: quirks on VWC0 exits 0" "$rc" 0
wait_for "dynamic ID: VWC0's namespace back" 20 ns VWC0
c0=$(ctrl VWC0) n0=$(ns VWC0)
wait_for "dynamic ID: VWC0 ($n0) write through again (the service)" 20 is_wt "$n0"
check_eq "dynamic ID: Write Zeroes off on VWC0 ($n0), on on VWC1 ($n1)" "$(wz "$n0")/$(wz "$n1")" 0/524288
dynid=$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null | sed -n 1p)
check_eq "dynamic ID: recorded under /run" "$dynid" "1b36 0010 1af4 1100 0 0 200"
check_eq "dynamic ID: VWC1 not rebound (same controller, same PCI function)" "$c1 $(addr_of "$c1")" "$c1 $a1"
