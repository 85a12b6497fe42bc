#!/bin/sh
# vm: ctrl wc=on whole
# vm: quirks
# vm: fixture wzsl
# kernels: 6.1-generic 7.2-generic
# timeout: 400
#
# A kernel that ignores disable_write_zeroes: one without "nvme: respect
# NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set", with a controller that
# reports a Write Zeroes Size Limit (WZSL). Every Debian kernel of the
# test bed carries that fix and QEMU 7.2 reports WZSL 0, so the guest runs
# the fixture of tests/vm/fixture-wzsl.sh: Debian's own 6.1 nvme host
# modules rebuilt with the line as it was before the fix and a parameter
# nvme_core.vwc_test_wzsl (5: 128 KiB) standing in for the WZSL QEMU does
# not report.
#
# QEMU's ID is listed through an admin hwdb file and the nvme table
# stand-in of t700-dynid.sh. `quirks` adds its dynamic ID and rebinds; the
# kernel ignores the quirk (write_zeroes_max_bytes stays 131072): the
# command must say so and why (by what the kernel shows: the fix's title,
# WZSL, no kernel version), remove its dynamic ID, bind the controller
# again without it, leave no record of either, and exit 1; audit shows it
# (JSON and text); a run as udev makes it (--keep-restored) then leaves the
# controller alone. Then, in the same boot, the controller reports WZSL 0
# (the parameter at 0, read at the next probe): the same command disables
# Write Zeroes, exits 0 and audit no longer shows it. Where the kernel has
# the quirks attribute (7.x), audit also sees the quirk ignored from that
# attribute alone, before any record.
. /vwc/guest/lib.sh
. /vwc/guest/t700-lib.sh
# fixture 3; set-up 1; the run 9; audit 3; udev's run 4; WZSL 0: 4
plan 24

tool=nvme-vwc-sync
RUN=/run/nvme-vwc-sync
DRV=/sys/bus/pci/drivers/nvme
PARAM=/sys/module/nvme_core/parameters/vwc_test_wzsl
lst=$(ctrl_by_serial VWC0)
ns=$(ns_of "$lst")
addr=$(basename "$(readlink -f "/sys/class/nvme/$lst/device")")
ids="$(sed 's/^0x//' "/sys/bus/pci/devices/$addr/vendor") $(sed 's/^0x//' "/sys/bus/pci/devices/$addr/device") $(sed 's/^0x//' "/sys/bus/pci/devices/$addr/subsystem_vendor") $(sed 's/^0x//' "/sys/bus/pci/devices/$addr/subsystem_device")"
wz() { cat "/sys/block/$1/queue/write_zeroes_max_bytes" 2>/dev/null || echo none; }
dseq() { cat "/sys/block/$1/diskseq" 2>/dev/null || echo "?"; }
back() {
	_c=$(ctrl_by_serial VWC0) && ctrl_live "$_c" && _n=$(ns_of "$_c") &&
		[ -e "/sys/block/$_n/queue/write_zeroes_max_bytes" ]
}
cur() { lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst"); }
# no dynamic ID for the controller's IDs: remove_id answers ENODEV (one
# that was there is gone after, and the check fails)
no_dynid() { ! echo "$ids 0 0" >$DRV/remove_id 2>/dev/null; }
ctl_json() { jq -c ".controllers[] | select(.name==\"$lst\") | .write_zeroes_quirk_ignored" "$1"; }
info "kernel $(uname -r): $lst ($addr, $ids) $ns wz=$(wz "$ns") vwc_test_wzsl=$(cat $PARAM 2>/dev/null)"

# --- the fixture: a kernel without the fix, a controller reporting WZSL ---
fact check_eq "fixture: nvme_core runs the rebuilt module, WZSL 5 for QEMU's controller" \
	"$(cat $PARAM 2>/dev/null)" 5
fact check_eq "fixture: Write Zeroes limited by WZSL (2^5 pages of 4 KiB), not the 512 KiB transfer limit" \
	"$(wz "$ns")" 131072
wz0=$(wz "$ns")
t700_setup "$lst" >/tmp/setup.out 2>&1 && pass "quirk database and table stand-in set up" ||
	fail "quirk database and table stand-in" "$(cat /tmp/setup.out)"
# the kernel ignores the quirk: shown by the same rebind by hand
echo "$ids 0 0 200" >$DRV/new_id && echo "$addr" >$DRV/unbind && echo "$addr" >$DRV/bind
wait_for - 30 back
cur
fact check_eq "fixture: bound with driver_data 0x200 by hand, Write Zeroes stays $wz0 (the quirk ignored)" \
	"$(wz "$ns")" "$wz0"
if [ -e "/sys/class/nvme/$lst/quirks" ]; then
	# 7.x: the kernel shows the quirk active; audit sees it with no record,
	# and quirks does not take the kernel's quirk as done (no dynamic ID
	# of its own to undo: no rebind)
	plan 4
	$tool audit -o json >/tmp/al.json 2>/dev/null
	check_cmd "audit (quirks attribute): the kernel lists disable_write_zeroes, Write Zeroes on: shown with no record" \
		sh -c "jq -r '.controllers[] | select(.name==\"$lst\") | .write_zeroes_quirk_ignored' /tmp/al.json | grep -q 'kernel quirks: disable_write_zeroes.*lacks that fix'"
	sh0=$(dseq "$ns")
	$tool quirks "$lst" >/tmp/qh.out 2>&1
	rc=$?
	info "quirks (the quirk already the kernel's): $(tr '\n' ' ' </tmp/qh.out)"
	check_eq "quirk already in force, ignored: quirks exits 1, not 'nothing to do'" "$rc" 1
	check_cmd "quirk already in force, ignored: says so, nothing of its own to undo" \
		sh -c "grep -q 'the kernel ignores disable_write_zeroes' /tmp/qh.out && grep -q 'nothing of this tool.s to undo' /tmp/qh.out"
	check_eq "quirk already in force, ignored: no rebind (diskseq $sh0)" "$(dseq "$ns")" "$sh0"
fi
echo "$ids 0 0" >$DRV/remove_id
echo "$addr" >$DRV/unbind && echo "$addr" >$DRV/bind
wait_for - 30 back
cur

# --- quirks on that kernel ---
s0=$(dseq "$ns")
$tool quirks "$lst" >/tmp/q.out 2>&1
rc=$?
info "quirks: $(tr '\n' ' ' </tmp/q.out)"
check_eq "quirks: exit status 1 where the kernel ignores the quirk" "$rc" 1
check_cmd "quirks: says the kernel ignores disable_write_zeroes" \
	grep -q "the kernel ignores disable_write_zeroes" /tmp/q.out
check_cmd "quirks: says why: the controller reports WZSL, the kernel lacks the fix (its title)" \
	grep -q 'reports a WZSL (131072 bytes) and this kernel lacks that fix' /tmp/q.out
check_cmd "quirks: names the fix by its title" \
	grep -qF '"nvme: respect NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set"' /tmp/q.out
check_cmd "quirks: does not report Write Zeroes disabled" \
	sh -c '! grep -q "Write Zeroes disabled" /tmp/q.out'
cur
check_cmd "after: $addr bound to nvme, live, its namespace back" back
check_eq "after: Write Zeroes as before ($wz0)" "$(wz "$ns")" "$wz0"
check_cmd "after: no dynamic ID on the nvme driver for $ids (remove_id: none)" no_dynid
check_eq "after: no record of a dynamic ID or an unbind" \
	"$(find "$RUN/dynid" "$RUN/unbound" -type f 2>/dev/null | wc -l)" 0
info "diskseq $s0 -> $(dseq "$ns") (two rebinds: the quirk's, the undo)"

# --- audit shows it ---
$tool audit -o json >/tmp/a.json 2>/tmp/a.err
check_cmd "audit -o json: write_zeroes_quirk_ignored names WZSL and the fix" \
	sh -c "jq -r '.controllers[] | select(.name==\"$lst\") | .write_zeroes_quirk_ignored' /tmp/a.json | grep -q 'WZSL.*lacks that fix'"
check_eq "audit -o json: the other fields still there (quirks_hwdb lists the quirk)" \
	"$(jq -r ".controllers[] | select(.name==\"$lst\") | .quirks_hwdb[]" /tmp/a.json)" disable_write_zeroes
$tool audit >/tmp/a.txt 2>&1
check_cmd "audit: a line says the kernel ignores the quirk" \
	grep -q "$lst: Write Zeroes quirk IGNORED by the kernel: the kernel ignores disable_write_zeroes" /tmp/a.txt

# --- udev's run: left alone, no rebind at every event ---
s1=$(dseq "$ns")
$tool quirks --keep-restored --verbose "$lst" >/tmp/k.out 2>&1
rc=$?
info "quirks --keep-restored: $(tr '\n' ' ' </tmp/k.out)"
check_eq "udev's run: exit 0, nothing tried" "$rc" 0
check_eq "udev's run: no rebind (diskseq $s1)" "$(dseq "$ns")" "$s1"
check_cmd "udev's run: says why it leaves it alone" grep -q "left alone (found by quirks in this boot" /tmp/k.out
check_cmd "udev's run: no further step for it (no run-time setting, no persistence)" \
	sh -c '! grep -q "write_zeroes_max_bytes 131072 (Write Zeroes offload\|^persistent:" /tmp/k.out'

# --- the same controller reporting WZSL 0: the quirk works ---
echo 0 >$PARAM
$tool quirks "$lst" >/tmp/q0.out 2>&1
rc=$?
info "quirks (WZSL 0): $(tr '\n' ' ' </tmp/q0.out)"
cur
check_eq "WZSL 0: quirks exits 0" "$rc" 0
check_eq "WZSL 0: Write Zeroes off" "$(wz "$ns")" 0
$tool audit -o json >/tmp/a0.json 2>/dev/null
check_eq "WZSL 0: audit's write_zeroes_quirk_ignored is null" "$(ctl_json /tmp/a0.json)" null
check_eq "WZSL 0: the record is gone" "$(find "$RUN/wz-ignored" -type f 2>/dev/null | wc -l)" 0
finish
