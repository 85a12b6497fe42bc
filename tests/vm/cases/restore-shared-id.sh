#!/bin/sh
# vm: ctrl wc=on whole
# vm: ctrl wc=on whole
# vm: quirks
# kernels: 7.2
# timeout: 480
#
# Two drives share one PCI ID (QEMU's 1b36:0010, listed through an admin
# hwdb file), so `quirks` adds one dynamic ID for both and `restore`
# removes it once. What restore says about the second of them must be
# true, with the driver_data the ID had:
#  1. the second drive (in namespace order) is mounted: the first is
#     rebound without the ID; the second is refused, and the message says
#     the ID is removed already (not "left in place"), with its
#     driver_data (it printed an uninitialised value).
#  2. the first drive is mounted: it is refused ("left in place", true
#     then); the second's removal says the first, in use, was left bound
#     and runs with that driver_data until it is bound again.
# 7.2 only: with QEMU's own table entry, 6.1 refuses the dynamic ID (see
# t700-dynid.sh).
. /vwc/guest/lib.sh
# hwdb 1; each apply 3; the first restore 7, the second 5
plan 19

D=/run/nvme-vwc-sync
wz() { cat "/sys/block/$1/queue/write_zeroes_max_bytes"; }
kq() { tr '\n' , <"/sys/class/nvme/$1/quirks" 2>/dev/null; }
# the namespaces of both drives, in the order restore visits them
nss() { for s in VWC0 VWC1; do ns_of "$(ctrl_by_serial "$s")"; done | sort; }
addr_of_ns() { basename "$(readlink -f "/sys/block/$1/device/device")"; }

mkdir -p /etc/udev/hwdb.d /mnt/t
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
check_cmd "systemd-hwdb update" systemd-hwdb update

# quirks on both; the record's driver_data is what restore must name
apply() {
	nvme-vwc-sync quirks >/tmp/q.out 2>&1
	check_eq "$1: quirks exits 0" "$?" 0
	set -- $(nss)
	check_eq "$1 and $2: Write Zeroes off on both (one dynamic ID)" "$(wz "$1")/$(wz "$2")" 0/0
	rec=$(cat "$D"/dynid/* 2>/dev/null | head -n 1)
	val=$(echo "$rec" | awk '{ print $7 }')
	check_eq "one dynamic ID recorded for the two" "$(ls "$D/dynid" | command wc -l)" 1
	info "record: $rec (driver_data 0x$val); quirks: $(kq "$(ctrl_by_serial VWC0)") / $(kq "$(ctrl_by_serial VWC1)")"
}

# mount_ns NS: an ext2 on the whole namespace, mounted on /mnt/t
mount_ns() { mke2fs -q -F "/dev/$1" >/dev/null 2>&1 && mount "/dev/$1" /mnt/t; }

apply "1"
set -- $(nss)
first=$1 second=$2
if mount_ns "$second"; then
	nvme-vwc-sync restore --all >/tmp/r.out 2>&1
	rc=$?
	info "restore, $second mounted: $(tr '\n' '|' </tmp/r.out)"
	check_eq "1: restore exits 1 (one drive in use)" "$rc" 1
	check_eq "1: $first rebound without the ID: Write Zeroes back" "$(wz "$first")" 524288
	check_eq "1: $second, mounted, not rebound: Write Zeroes still off" "$(wz "$second")" 0
	check_eq "1: no dynamic ID record left" "$(ls "$D/dynid" 2>/dev/null)" ""
	l=$(grep "not rebinding" /tmp/r.out)
	case $l in
	*"left in place"*) fail "1: $second's message does not claim the ID was left in place" "$l" ;;
	*"removed already"*) pass "1: $second's message says the ID is removed already" ;;
	*) fail "1: $second's message says the ID is removed already" "$l" ;;
	esac
	case $l in
	*"driver_data 0x$val)"*) pass "1: $second's message names the ID's driver_data 0x$val" ;;
	*) fail "1: $second's message names the ID's driver_data 0x$val" "$l" ;;
	esac
	case $l in
	*"is mounted on /mnt/t"*) pass "1: and why: mounted" ;;
	*) fail "1: and why: mounted" "$l" ;;
	esac
	umount /mnt/t
else
	fail "1: mount $second" "no ext2 in this kernel?"
fi

apply "2"
set -- $(nss)
first=$1 second=$2
if mount_ns "$first"; then
	nvme-vwc-sync restore --all >/tmp/r.out 2>&1
	rc=$?
	info "restore, $first mounted: $(tr '\n' '|' </tmp/r.out)"
	check_eq "2: restore exits 1 (one drive in use)" "$rc" 1
	check_eq "2: $first, mounted, not rebound: Write Zeroes still off" "$(wz "$first")" 0
	check_eq "2: $second rebound without the ID: Write Zeroes back" "$(wz "$second")" 524288
	grep -q "left in place, not rebinding: $first is mounted on /mnt/t" /tmp/r.out &&
		pass "2: $first: the ID left in place, not rebound (true when said)" ||
		fail "2: $first: the ID left in place, not rebound" "$(cat /tmp/r.out)"
	a=$(addr_of_ns "$first")
	grep -q "remove dynamic ID .*driver_data 0x$val), unbind and bind; $a, in use, was left bound: it runs with driver_data 0x$val until it is bound again" /tmp/r.out &&
		pass "2: $second's removal says $first ($a) runs with driver_data 0x$val until it is bound again" ||
		fail "2: $second's removal names the drive left bound" "$(grep 'remove dynamic ID' /tmp/r.out)"
	umount /mnt/t
else
	fail "2: mount $first" "no ext2 in this kernel?"
fi
finish
