#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 6.1 6.12 7.2
#
# The whole path end to end: `nvme vwc-sync` on a WCE-off and a WCE-on controller,
# --dry-run, every device-name form, flush counts before and after, JSON,
# and every bad input leaving every setting as it was.
. /vwc/guest/lib.sh
# (compat-core.sh sources this file after its own checks and plan)
plan 50

NVME=nvme
off=$(ctrl_by_serial VWC0)
on=$(ctrl_by_serial VWC1)
nsoff=$(ns_of "$off")
nson=$(ns_of "$on")
info "WCE-off controller $off ($nsoff), WCE-on controller $on ($nson)"

# N times: one 4 KiB direct write then fsync(); prints the flush requests
# the kernel counted meanwhile.
fsync_flushes() {
	_f0=$(flushes "$1")
	_i=0
	while [ "$_i" -lt "$2" ]; do
		dd if=/dev/zero of="/dev/$1" bs=4k count=1 oflag=direct conv=fsync status=none || { echo dd-failed; return 1; }
		_i=$((_i + 1))
	done
	echo $(($(flushes "$1") - _f0))
}

# snapshot of every namespace's write_cache, to prove "nothing changed"
snap() { for b in /sys/block/nvme*n*; do echo "${b##*/}=$(cat "$b/queue/write_cache")"; done; }

check_eq "kernel: WCE off reported" "$(get_wce "$off")" 0
check_eq "kernel: WCE on reported" "$(get_wce "$on")" 1
check_eq "kernel: WCE-off namespace starts write back (the bug)" "$(wc "$nsoff")" "write back"
check_eq "flushes: one per fsync before sync (WCE off)" "$(fsync_flushes "$nsoff" 40)" 40

# --dry-run changes nothing and says what would change
before=$(snap)
out=$($NVME vwc-sync --dry-run "/dev/$off" 2>&1); rc=$?
check_eq "dry-run: exit 0" "$rc" 0
check_eq "dry-run: write_cache untouched" "$(snap)" "$before"
case $out in *would-change*) pass "dry-run: reports would-change" ;; *) fail "dry-run: reports would-change" "$out" ;; esac
check_eq "dry-run: leaves no record" "$(ls /run/nvme-vwc-sync/changed 2>/dev/null | tr '\n' ' ')" ""

# the sync itself, timed
t0=$(/usr/bin/date +%s%N)
$NVME vwc-sync "/dev/$off" >/tmp/sync.out 2>&1; rc=$?
t1=$(/usr/bin/date +%s%N)
info "nvme vwc-sync /dev/$off took $(((t1 - t0) / 1000)) us (wall, under TCG)"
check_eq "sync WCE-off controller: exit 0" "$rc" 0
check_eq "sync WCE-off controller: namespace write through" "$(wc "$nsoff")" "write through"
check_eq "sync WCE-off controller: other controller untouched" "$(wc "$nson")" "write back"
check_eq "flushes: none after sync (WCE off)" "$(fsync_flushes "$nsoff" 40)" 0

check_cmd "sync WCE-on controller: exit 0" $NVME vwc-sync "/dev/$on"
check_eq "sync WCE-on controller: stays write back" "$(wc "$nson")" "write back"
check_eq "flushes: still one per fsync on WCE-on drive" "$(fsync_flushes "$nson" 40)" 40

# idempotent: a second run changes nothing
out=$($NVME vwc-sync -o json "/dev/$off" 2>&1)
case $out in *'"action": "unchanged"'*) pass "second sync: unchanged" ;; *) fail "second sync: unchanged" "$out" ;; esac

# udevd with the documented opt-out: the rules must leave the drive alone,
# and the /dev/disk/by-id links appear for the name-form checks below
printf 'ENV{NVME_VWC_SYNC}="0"\n' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
set_wc "$nsoff" "write back"
start_udev
udev_marker_start
m0=$(udev_marks add "$off")
udevadm trigger --action=add "/sys/class/nvme/$off" && udevadm settle --timeout=10
fact check_eq "udev opt-out: udevd ran the rules for the add event (marker rule)" "$(($(udev_marks add "$off") - m0))" 1
check_eq "udev opt-out (ENV{NVME_VWC_SYNC}=0) honoured" "$(wc "$nsoff")" "write back"
# the positive case: the same event without the opt-out is acted on
rm /etc/udev/rules.d/70-nvme-vwc-sync-off.rules
udevadm control --reload
udevadm trigger --action=add "/sys/class/nvme/$off" && udevadm settle --timeout=10
check_eq "udev without the opt-out: the same add event puts it in write through" "$(wc "$nsoff")" "write through"
printf 'ENV{NVME_VWC_SYNC}="0"\n' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
udevadm control --reload
set_wc "$nsoff" "write back"

# every name an admin types for the same thing; reset to write back first
for dev in "/dev/$off" "$off" "/dev/$nsoff" "$nsoff" "/dev/ng${nsoff#nvme}" \
	   "/dev/disk/by-id/nvme-QEMU_NVMe_Ctrl_VWC0" ; do
	[ -e "$dev" ] || [ "${dev#/}" = "$dev" ] || { skip "name form $dev" "no such node in this guest"; continue; }
	set_wc "$nsoff" "write back"
	$NVME vwc-sync "$dev" >/dev/null 2>&1; rc=$?
	check_eq "name form $dev: exit 0 and write through" "$rc $(wc "$nsoff")" "0 write through"
done
check_cmd "standalone binary, --all" nvme-vwc-sync sync --all
check_cmd "standalone binary, no verb" nvme-vwc-sync "/dev/$off"
check_cmd "nvme vwc sync form" $NVME vwc sync "$off"

# JSON report, checked field by field with jq where the image has it
set_wc "$nsoff" "write back"
json=$($NVME vwc-sync -o json 2>/dev/null)
if command -v jq >/dev/null 2>&1; then
	plan 5
	check_eq "json: controller wce disabled" "$(echo "$json" | jq -r ".controllers[] | select(.name==\"$off\") | .wce")" disabled
	check_eq "json: controller wce enabled" "$(echo "$json" | jq -r ".controllers[] | select(.name==\"$on\") | .wce")" enabled
	check_eq "json: vwc_present" "$(echo "$json" | jq -r ".controllers[] | select(.name==\"$off\") | .vwc_present")" true
	check_eq "json: pci_id" "$(echo "$json" | jq -r ".controllers[] | select(.name==\"$off\") | .pci_id")" 1b36:0010
	check_eq "json: namespace before/after/action" "$(echo "$json" | jq -r ".namespaces[] | select(.name==\"$nsoff\") | [.write_cache_before, .write_cache_after, .action] | join(\",\")")" "write back,write through,changed"
	check_eq "json: no errors" "$(echo "$json" | jq '.errors | length')" 0
else
	plan 1
	case $json in *'"wce": "disabled"'*'"wce": "enabled"'*) pass "json: wce fields" ;; *) fail "json: wce fields" "$json" ;; esac
fi

# bad input: a clear error naming the device, non-zero exit, nothing changed
set_wc "$nsoff" "write back"
ln -sf /tmp/loopA /tmp/loopB; ln -sf /tmp/loopB /tmp/loopA
before=$(snap)
for bad in /dev/null /dev/zero /nonexistent /tmp/loopA /tmp "${nsoff}p1" nvme9 nvme0c0n1 ng0 ""; do
	err=$($NVME vwc-sync "$bad" 2>&1 >/dev/null); rc=$?
	want=${bad:-empty device name}
	if [ "$rc" -ne 0 ] && printf '%s' "$err" | grep -qF -- "$want"; then
		pass "bad input '$bad': exit $rc, error names it"
	else
		fail "bad input '$bad'" "rc=$rc err=$err"
	fi
	info "bad input '$bad' -> $(echo "$err" | head -n 1)"
done
check_eq "bad input: nothing changed" "$(snap)" "$before"
err=$(/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups nvme-vwc-sync sync "/dev/$off" 2>&1); rc=$?
info "non-root -> $err"
case "$rc:$err" in 1:*"$off"*ermission*) pass "non-root: exit 1, names device and cause" ;; *) fail "non-root" "rc=$rc $err" ;; esac
check_eq "non-root: nothing changed" "$(snap)" "$before"

# a bad name next to a good one: the good one is still handled
$NVME vwc-sync /dev/null "/dev/$off" >/dev/null 2>&1; rc=$?
check_eq "mixed bad+good: exit 1, good device synced" "$rc $(wc "$nsoff")" "1 write through"

# raw WCE toggle: the kernel alone does not react (why the sidecar exists)
$NVME set-feature "/dev/$off" --feature-id=6 --value=1 >/dev/null 2>&1
sleep 1
check_eq "kernel ignores Set Features 06h (still write through, WCE now 1)" "$(wc "$nsoff") $(get_wce "$off")" "write through 1"
check_cmd "re-sync after WCE=1: exit 0" $NVME vwc-sync "/dev/$off"
check_eq "re-sync after WCE=1: write back" "$(wc "$nsoff")" "write back"
$NVME set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1

# audit: drift then in sync
nvme-vwc-sync audit >/tmp/audit.out 2>&1; rc=$?
check_eq "audit: exit 3 on drift" "$rc" 3
grep -q DRIFT /tmp/audit.out && pass "audit: table shows DRIFT" || fail "audit: table shows DRIFT" "$(cat /tmp/audit.out)"
$NVME vwc-sync --all >/dev/null 2>&1
nvme-vwc-sync audit >/dev/null 2>&1; rc=$?
check_eq "audit: exit 0 in sync" "$rc" 0
nvme-vwc-sync audit -o prometheus >/tmp/prom.out 2>&1
grep -q "^nvme_vwc_cache_enabled{controller=\"$off\"} 0" /tmp/prom.out && pass "audit: prometheus cache_enabled 0" || fail "audit: prometheus" "$(head -c 600 /tmp/prom.out)"
finish
