#!/bin/sh
# vm: ctrl wc=off size=128
# vm: quirks
# kernels: 7.2-generic
#
# Crucial T700/T705 slow Write Zeroes on sid's modular kernel:
# QEMU's PCI ID is added to the quirk database through an admin hwdb file;
# `nvme vwc quirks` applies what the kernel allows (run time and a merged
# modprobe.d snippet, keeping the admin's quirks= from /usr/lib and /run
# modprobe.d as libkmod reads them); a module reload then shows
# disable_write_zeroes active and write_zeroes_max_bytes 0, with the
# merged value as the module parameter; a later file that overrides ours
# is reported; restore undoes it all.
. /vwc/guest/lib.sh
plan 28

modprobe() { ln -sf /usr/bin/kmod /tmp/modprobe; /tmp/modprobe "$@"; }
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
q=/sys/block/$ns/queue
# an installed system's namespace: GPT, two partitions; the zeroing runs on
# the second, as a user's would
printf 'label: gpt\nsize=16MiB\n,\n' | /usr/sbin/sfdisk -q "/dev/$ns" >/tmp/sf.out 2>&1 || info "sfdisk: $(cat /tmp/sf.out)"
fact wait_for "GPT: two partitions on $ns" 10 test -e "/sys/block/$ns/${ns}p2"
part=${ns}p2
partnode() { [ -b "/dev/$part" ] || mknod "/dev/$part" b $(tr : ' ' <"/sys/block/$ns/$part/dev"); }
partnode
fact check_eq "nvme is a module" "$(cat /sys/module/nvme/initstate 2>/dev/null)" live
fact check_cmd "kernel has the nvme quirks parameter" test -e /sys/module/nvme/parameters/quirks
info "before: write_zeroes_max_bytes=$(cat $q/write_zeroes_max_bytes) unmap=$(cat $q/write_zeroes_unmap_max_bytes 2>/dev/null) quirks=$(cat /sys/class/nvme/$c/quirks | tr '\n' ,)"
zero_ms() {
	_t0=$(/usr/bin/date +%s%N)
	/usr/sbin/blkdiscard --zeroout --step 1M --length 32M "/dev/$part" || return 1
	echo $((($(/usr/bin/date +%s%N) - _t0) / 1000000))
}
before_ms=$(zero_ms)
wzb=$(cat $q/write_zeroes_max_bytes)
if [ "$wzb" != 0 ]; then fact pass "before: Write Zeroes offload in use ($wzb)"; else fact fail "before: offload" "$wzb"; fi

nvme-vwc-sync audit -o json >/tmp/a0.json
check_eq "no quirk match before the admin entry" "$(jq -r ".controllers[] | select(.name==\"$c\") | .quirks_hwdb | length" /tmp/a0.json)" 0

# the admin's own entry, as the hwdb header documents
mkdir -p /etc/udev/hwdb.d
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
check_cmd "systemd-hwdb update" systemd-hwdb update
nvme vwc audit >/tmp/a1.out 2>&1
grep -q "quirk database: disable_write_zeroes; kernel: NOT active" /tmp/a1.out && pass "audit: match, kernel quirk not active" || fail "audit before" "$(cat /tmp/a1.out)"

# The admin's own quirks are kept (merged), read as modprobe reads them
# (libkmod): a vendor snippet in /usr/lib/modprobe.d (reached through
# /lib -> usr/lib, as on Debian), then the admin's in /run/modprobe.d,
# which sorts later and wins.
fact check_eq "/lib is the usr/lib link (merged /usr)" "$(readlink /lib)" usr/lib
mkdir -p /etc/modprobe.d /run/modprobe.d /usr/lib/modprobe.d
printf 'options nvme quirks=1234:5678:no_apst\n' >/usr/lib/modprobe.d/40-vendor.conf
nvme vwc quirks --dry-run >/tmp/q0.out 2>&1
check_eq "quirks --dry-run writes nothing" "$(ls /etc/modprobe.d | tr '\n' ' ')" ""
grep -q "options nvme quirks=1234:5678:no_apst-1b36:0010:disable_write_zeroes (dry run)" /tmp/q0.out &&
	pass "dry run merges the /usr/lib/modprobe.d value" || fail "dry run merge" "$(cat /tmp/q0.out)"
printf '# the admin\noptions nvme quirks="8086:5845:bogus_nid"\n' >/run/modprobe.d/50-admin.conf
nvme vwc quirks >/tmp/q1.out 2>&1; rc=$?
check_eq "quirks: exit 0" "$rc" 0
info "quirks said: $(tr '\n' '|' </tmp/q1.out)"
check_eq "run time: write_zeroes_unmap_max_bytes 0" "$(cat $q/write_zeroes_unmap_max_bytes)" 0
check_eq "modprobe.d snippet merges the admin's /run quirk (last wins)" "$(sed -n 's/^options nvme quirks=//p' /etc/modprobe.d/zz-nvme-vwc-sync.conf)" "8086:5845:bogus_nid-1b36:0010:disable_write_zeroes"
nvme vwc quirks >/tmp/q2.out 2>&1
grep -q "already up to date" /tmp/q2.out && pass "quirks: idempotent re-run" || fail "idempotent" "$(cat /tmp/q2.out)"

# module reload (same as the reboot the snippet is for)
rmmod nvme && pass "rmmod nvme" || fail "rmmod nvme" "busy?"
check_cmd "modprobe nvme (kmod: /etc, /run, /lib modprobe.d)" modprobe nvme
fact wait_for "namespace back" 20 test -e "/sys/block/$ns"
fact wait_for "partitions back" 20 test -e "/sys/block/$ns/$part"
partnode
check_eq "module parameter holds the merged quirks" "$(cat /sys/module/nvme/parameters/quirks)" "8086:5845:bogus_nid-1b36:0010:disable_write_zeroes"
grep -qx disable_write_zeroes "/sys/class/nvme/$c/quirks" && pass "kernel quirk disable_write_zeroes active" || fail "kernel quirk active" "$(cat /sys/class/nvme/$c/quirks | tr '\n' ,)"
check_eq "write_zeroes_max_bytes now 0" "$(cat $q/write_zeroes_max_bytes)" 0
after_ms=$(zero_ms)
echo "BENCH: blkdiscard --zeroout --step 1M --length 32M on QEMU: offload ${before_ms} ms, disabled ${after_ms} ms (emulated drive: the T700's 10x is firmware behaviour, not reproducible here)"
nvme vwc audit >/tmp/a2.out 2>&1
grep -q "kernel: active" /tmp/a2.out && pass "audit: quirk active after reload" || fail "audit after" "$(cat /tmp/a2.out)"
nvme-vwc-sync audit -o prometheus | grep -q "^nvme_vwc_quirk_kernel_active{controller=\"$c\",quirk=\"disable_write_zeroes\"} 1" && pass "prometheus: quirk active 1" || fail "prometheus quirk" "$(nvme-vwc-sync audit -o prometheus | grep quirk)"

# a file sorting after ours overrides it: quirks says so and fails
printf 'options nvme quirks=abcd:0001:no_apst\n' >/run/modprobe.d/zzz-late.conf
nvme vwc quirks >/tmp/q3.out 2>&1; rc=$?
check_eq "overridden snippet: exit 1" "$rc" 1
grep -q "modprobe would pass nvme quirks=abcd:0001:no_apst" /tmp/q3.out && pass "override named" || fail "override message" "$(cat /tmp/q3.out)"
rm /run/modprobe.d/zzz-late.conf

# restore removes the snippet (and only ours)
nvme vwc restore --all >/tmp/r.out 2>&1; rc=$?
check_eq "restore: exit 0" "$rc" 0
check_eq "restore: snippet removed" "$(ls /etc/modprobe.d | tr '\n' ' ')" ""
check_cmd "restore: the admin's files kept" test -e /run/modprobe.d/50-admin.conf -a -e /usr/lib/modprobe.d/40-vendor.conf
info "restore said: $(tr '\n' '|' </tmp/r.out)"
finish
