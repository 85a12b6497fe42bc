# SPDX-License-Identifier: GPL-2.0-or-later
# boot: 2
# Sourced by test.sh (the scenario's driver), in its order: it shares the
# driver's shell (variables, helpers of lib.sh and tests/lib/guest.sh).
#
# Reinstalled in the same boot: applies again; removed and purged.

# --- reinstall in the same boot: applies again ------------------------------
# (7 checks here, 3 in purge_checks)
plan 10
# prerm's restore --all marked every namespace "handed back to the kernel
# until the next boot"; the removal takes the marks with it, so the
# package installed again syncs as a fresh install does.
check_eq "remove: restore's marks gone with the package" \
	"$(find /run/nvme-vwc-sync/restored /run/nvme-vwc-sync/dynid-restored -type f 2>/dev/null)" ""
# the removal takes a dynamic ID back with a rebind: the controller can
# come back under another name (its old instance still held a moment)
wait_for - 20 ns VWC0
n0=$(ns VWC0)
check_eq "remove: WCE-off drive back to write back before the reinstall" "$(wcache "$n0")" "write back"
again=$(ls /vwc/debs/v2/nvme-vwc-sync_*.deb 2>/dev/null | head -n 1)
[ -n "$again" ] || again=$(ls /vwc/debs/v1/nvme-vwc-sync_*.deb | head -n 1)
cp "$again" /tmp/
if apt-get install -y --no-install-recommends /tmp/"$(basename "$again")" >"$OUT/reinstall.log" 2>&1; then
	pass "reinstall in the same boot: apt-get install $(basename "$again")"
else
	fail "reinstall in the same boot: apt-get install" "$(tail -n 5 "$OUT/reinstall.log" | tr '\n' ' ')"
fi
rm -f /tmp/*.deb
wait_for "reinstall in the same boot: WCE-off drive write through again" 30 is_wt "$n0"
check_eq "reinstall in the same boot: WCE-on drive write back" "$(wcache "$n1")" "write back"
if apt-get remove -y nvme-vwc-sync >"$OUT/remove-2.log" 2>&1; then
	pass "remove after the reinstall"
else
	fail "remove after the reinstall" "$(tail -n 5 "$OUT/remove-2.log" | tr '\n' ' ')"
fi
wait_for - 20 ns VWC0
n0=$(ns VWC0)
check_eq "remove after the reinstall: WCE-off drive write back (the kernel's choice)" "$(wcache "$n0")" "write back"
purge_checks
finish
