#!/bin/sh
# vm: ctrl wc=on whole
# vm: ctrl wc=on intel whole
# vm: rootport
# vm: spare
# vm: quirks
# kernels: 6.1 7.2 6.1-generic 7.2-generic
# timeout: 400
#
# Crucial T700/T705 slow Write Zeroes on Debian 12's 6.1 and on 7.2,
# nvme built in (cloud) and a module (generic; 6.12 adds nothing to those
# two axes and left the default list for time), at run
# time: `quirks` adds a PCI dynamic ID on the nvme driver whose driver_data
# is the device's quirks | NVME_QUIRK_DISABLE_WRITE_ZEROES, then unbinds and
# binds the controller. QEMU's 1b36:0010 is listed through an admin hwdb
# file; the Intel-ID controller beside it (8086:5845) is not listed.
# Shown: refusal while mounted, swap, an LVM physical volume or open
# (message names the holder, exit 1,
# nothing changed); Write Zeroes commands counted at the nvme_setup_cmd
# tracepoint before and after; the unlisted controller never rebound;
# restore; udev coldplug leaving a restored controller alone; a hot-added
# listed drive coming up with Write Zeroes off through the PCI add rule.
#
# 6.1 and 6.12 show no quirks attribute, and QEMU's ID is in their nvme
# table (bogus_nid): the tool must refuse. To exercise the mechanism there,
# NVME_VWC_SYNC_MODULES_DIR points the table lookup (libkmod) at a module
# directory whose index lists only nvme's class-wide entry, standing in for a T700 that the
# table does not list (the dynamic ID then drops bogus_nid: harmless for
# one QEMU controller). Cloud kernels (nvme built in): made here by kmod's
# depmod. Generic kernels (nvme a module): their own module directory lists
# QEMU's ID (the refusal is checked there, with no override); the stand-in
# is /usr/lib/vwc-test/t700-modules/<release> from tests/vm/kernels.sh,
# depmod's files for an nvme.ko with QEMU's alias taken out.
. /vwc/guest/lib.sh
. /vwc/guest/t700-lib.sh
# the plan: 50 checks on every kernel, and those of each branch a kernel
# fact decides (quirks attribute, nvme a module, the tracepoint, the
# stand-in module directory, the init-premount script), in the branch
plan 50

tool=nvme-vwc-sync
lst=$(ctrl_by_serial VWC0)
unl=$(ctrl_by_serial VWC1)
ns=$(ns_of "$lst")
uns=$(ns_of "$unl")
q=/sys/block/$ns/queue
addr=$(basename "$(readlink -f /sys/class/nvme/$lst/device)")
seq() { cat "/sys/block/$1/diskseq" 2>/dev/null || echo "?"; }
kq() { tr '\n' , <"/sys/class/nvme/$1/quirks" 2>/dev/null || echo "(no quirks attribute)"; }
wz() { cat "/sys/block/$1/queue/write_zeroes_max_bytes"; }
info "kernel $(uname -r): listed $lst ($addr, $ns) wz=$(wz "$ns") quirks=$(kq "$lst"); unlisted $unl ($uns) wz=$(wz "$uns") quirks=$(kq "$unl")"
wz0=$(wz "$ns")
# the kernel's module overlay (tests/vm/kernels.sh) must leave the image's
# /lib -> usr/lib link, and udev's rules behind it, in place
[ -L /lib ] && [ -e /lib/udev/rules.d/50-udev-default.rules ] &&
	fact pass "image: /lib is still the link to usr/lib, udev rules behind it ($(ls /lib/udev/rules.d | wc -l))" ||
	fact fail "image: /lib" "$(ls -ld /lib; ls /lib/udev/rules.d 2>&1 | head -n 3)"
[ "$wz0" != 0 ] && fact pass "before: Write Zeroes enabled on the listed drive ($wz0)" || fact fail "before: Write Zeroes enabled" "$wz0"

check_cmd "systemd-hwdb update" t700_hwdb

# Write Zeroes commands reach the drive? Count them at the tracepoint.
T=/sys/kernel/tracing
mount -t tracefs nodev $T 2>/dev/null
wzcmds() { # DEV: Write Zeroes (opcode 8) I/O commands during a 32 MiB zeroout
	echo 0 >$T/tracing_on
	echo >$T/trace
	echo 'opcode == 8 && qid != 0' >$T/events/nvme/nvme_setup_cmd/filter
	echo 1 >$T/events/nvme/nvme_setup_cmd/enable
	echo 1 >$T/tracing_on
	_s0=$(awk '{ print $5, $7 }' "/sys/block/$1/stat")
	_t0=$(/usr/bin/date +%s%N)
	/usr/sbin/blkdiscard -f --zeroout --step 1M --length 32M "/dev/$1" || { echo "blkdiscard failed" >&2; echo -1; return; }
	_ms=$((($(/usr/bin/date +%s%N) - _t0) / 1000000))
	echo 0 >$T/tracing_on
	echo 0 >$T/events/nvme/nvme_setup_cmd/enable
	_s1=$(awk '{ print $5, $7 }' "/sys/block/$1/stat")
	_n=$(grep -c nvme_setup_cmd $T/trace)
	info "$1: blkdiscard --zeroout 32M in ${_ms} ms; Write Zeroes commands $_n; stat write I/Os and sectors $_s0 -> $_s1" >&2
	echo "$_n ${_s1#* }"
}
if [ -d $T/events/nvme/nvme_setup_cmd ]; then
	n=$(wzcmds "$ns")
	[ "${n% *}" -gt 0 ] && fact pass "before: blkdiscard --zeroout sends Write Zeroes (${n% *} commands)" || fact fail "before: Write Zeroes sent" "$n"
else
	skip "tracepoint" "no nvme_setup_cmd tracepoint"
fi

MODS=
if [ ! -e "/sys/class/nvme/$lst/quirks" ]; then
	plan 6
	# no quirks attribute: the tool must refuse, and say why. Generic
	# kernels (nvme a module) have the table in their own module
	# directory: the "no lists" case is then an empty one.
	kmoddir=/lib/modules/$(uname -r)
	generic=
	if grep -q ' nvme$' "$kmoddir/modules.alias" 2>/dev/null; then
		generic=1
		mkdir -p /tmp/mods-none
		info "nvme is a module: $(grep -c ' nvme$' "$kmoddir/modules.alias") nvme aliases in $kmoddir/modules.alias, QEMU's: $(grep -i 'v00001B36d00000010' "$kmoddir/modules.alias" | tr '\n' ' ')"
	fi
	NVME_VWC_SYNC_MODULES_DIR=${generic:+/tmp/mods-none} $tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	check_eq "no quirks attribute, no module lists: exit 1" "$rc" 1
	grep -q "does not show a controller's quirks" /tmp/q.out && pass "refusal says the table cannot be known" || fail "refusal message" "$(cat /tmp/q.out)"
	# mkmods DIR PATTERN...: a module directory whose index (depmod's,
	# read through libkmod) gives the built-in nvme these aliases
	mkmods() { t700_mkmods "$@"; }
	if [ -n "$generic" ]; then
		# the kernel's own directory (no override), and kernels.sh's
		# depmod files for an nvme.ko without QEMU's alias
		listed=
		MODS=/usr/lib/vwc-test/t700-modules/$(uname -r)
	else
		mkmods /tmp/mods-listed 'pci:v00001B36d00000010sv*sd*bc*sc*i*' 'pci:v*d*sv*sd*bc01sc08i02*'
		listed=/tmp/mods-listed/lib/modules/1.0
		mkmods /tmp/mods 'pci:v*d*sv*sd*bc01sc08i02*'
		MODS=/tmp/mods/lib/modules/1.0
	fi
	NVME_VWC_SYNC_MODULES_DIR=$listed $tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	check_eq "ID in the driver's table (${listed:-$kmoddir}), quirks unknown: exit 1" "$rc" 1
	grep -q "is in this kernel's nvme table" /tmp/q.out && pass "refusal names the table entry" || fail "refusal message" "$(cat /tmp/q.out)"
	info "refusal said: $(tr '\n' '|' </tmp/q.out)"
	check_eq "refusals changed nothing" "$(wz "$ns")" "$wz0"
	if [ -s "$MODS/modules.alias.bin" ] && [ -s "$MODS/modules.builtin.alias.bin" ] &&
		! grep -qi 'v00001B36d00000010' "$MODS/modules.alias" "$MODS/modules.builtin.modinfo" &&
		grep -q 'bc01sc08i02' "$MODS/modules.alias" "$MODS/modules.builtin.modinfo"; then
		fact pass "stand-in $MODS: depmod's files, nvme's class entry without QEMU's ID"
	else
		fact fail "stand-in $MODS" "$(ls "$MODS" 2>&1 | tr '\n' ' ')"
	fi
	export NVME_VWC_SYNC_MODULES_DIR=$MODS
	info "from here: NVME_VWC_SYNC_MODULES_DIR=$MODS (QEMU's ID not in the table, as a T700)"
fi

# refusal: mounted (where the kernel has ext2/ext4 built in)
s0=$(seq "$ns")
mke2fs -q "/dev/$ns" >/dev/null 2>&1
mkdir -p /mnt/t
if mount "/dev/$ns" /mnt/t 2>/dev/null; then
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	check_eq "mounted: exit 1" "$rc" 1
	grep -q "$ns is mounted on /mnt/t" /tmp/q.out && pass "mounted: message names the mount" || fail "mounted message" "$(cat /tmp/q.out)"
	umount /mnt/t
else
	skip "mounted" "no ext2/ext4 in this kernel ($(grep -c . /proc/filesystems) file systems)"
fi
# refusal: swap
mkswap "/dev/$ns" >/dev/null 2>&1 && swapon "/dev/$ns"
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
swapoff "/dev/$ns"
check_eq "swap: exit 1" "$rc" 1
grep -q "$ns is in use as swap" /tmp/q.out && pass "swap: message names it" || fail "swap message" "$(cat /tmp/q.out)"
# refusal: an LVM physical volume with an active logical volume
LVM=lvmc
lvmc() { _c=$1; shift; lvm "$_c" --config 'activation{udev_sync=0 udev_rules=0} devices{obtain_device_list_from_udev=0}' "$@"; }
mkdir -p /run/lock/lvm /run/lvm
if [ -x /usr/sbin/lvm ] && [ -e /sys/module/dm_mod ] &&
	$LVM pvcreate -ff -y "/dev/$ns" >/tmp/lvm.out 2>&1 &&
	$LVM vgcreate t700vg "/dev/$ns" >>/tmp/lvm.out 2>&1 &&
	$LVM lvcreate -y -L 8M -n t700lv t700vg >>/tmp/lvm.out 2>&1; then
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	check_eq "LVM PV: exit 1" "$rc" 1
	grep -q "$ns is an LVM physical volume in use by logical volume t700vg-t700lv" /tmp/q.out && pass "LVM PV: message names the logical volume" || fail "LVM message" "$(cat /tmp/q.out)"
	# --deactivate-lvm (the initramfs's way): a logical volume in use
	# still refuses, by name, and stays active
	lvd=/dev/mapper/t700vg-t700lv
	lvk=
	for d in /sys/block/dm-*; do
		[ "$(cat "$d/dm/name" 2>/dev/null)" = t700vg-t700lv ] && lvk=${d##*/}
	done
	mkswap "$lvd" >/dev/null 2>&1 && swapon "$lvd"
	$tool quirks --deactivate-lvm "$lst" >/tmp/q.out 2>&1; rc=$?
	swapoff "$lvd"
	check_eq "LVM PV, --deactivate-lvm, swap on the LV: exit 1" "$rc" 1
	grep -q "logical volume t700vg/t700lv: $lvk is in use as swap" /tmp/q.out && pass "LVM PV, --deactivate-lvm: swap LV named" || fail "swap LV message" "$(cat /tmp/q.out)"
	sleep 60 <"$lvd" &
	sp=$!
	sleep 0.3
	$tool quirks --deactivate-lvm "$lst" >/tmp/q.out 2>&1; rc=$?
	kill $sp; wait $sp 2>/dev/null
	check_eq "LVM PV, --deactivate-lvm, LV open by a process: exit 1" "$rc" 1
	grep -q "logical volume t700vg/t700lv: process $sp (sleep) holds $lvk" /tmp/q.out && pass "LVM PV, --deactivate-lvm: the LV's opener named" || fail "open LV message" "$(cat /tmp/q.out)"
	check_cmd "LVM PV, --deactivate-lvm refused: the LV still active" test -n "$lvk" -a -e "/sys/block/$lvk/dm"
	$LVM vgchange -an t700vg >/dev/null 2>&1
	$LVM vgremove -ff -y t700vg >/dev/null 2>&1
	$LVM pvremove -ff -y "/dev/$ns" >/dev/null 2>&1
	check_eq "LVM removed: no holder left" "$(ls /sys/block/$ns/holders | wc -l)" 0
else
	fail "LVM PV" "cannot set up LVM (lvm $(test -x /usr/sbin/lvm && echo present || echo missing), dm_mod $(test -e /sys/module/dm_mod && echo loaded || echo missing)): $(tail -n 3 /tmp/lvm.out 2>/dev/null | tr '\n' ' ')"
fi
# refusal: open by a process
sleep 60 <"/dev/$ns" &
sp=$!
sleep 0.3
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
kill $sp; wait $sp 2>/dev/null
check_eq "open: exit 1" "$rc" 1
grep -q "process $sp (sleep) holds $ns (through /dev/$ns)" /tmp/q.out && pass "open: message names the process" || fail "open message" "$(cat /tmp/q.out)"
check_eq "refusals: nothing changed (write_zeroes_max_bytes, diskseq)" "$(wz "$ns") $(seq "$ns")" "$wz0 $s0"
check_eq "refusals: no dynamic ID recorded" "$(ls /run/nvme-vwc-sync/dynid 2>/dev/null | wc -l)" 0

# apply
us0=$(seq "$uns")
$tool quirks --dry-run "$lst" >/tmp/q.out 2>&1
check_eq "dry run changes nothing" "$(wz "$ns") $(seq "$ns")" "$wz0 $s0"
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
info "quirks said: $(tr '\n' '|' </tmp/q.out)"
check_eq "quirks: exit 0" "$rc" 0
check_eq "Write Zeroes disabled at run time (write_zeroes_max_bytes)" "$(wz "$ns")" 0
[ "$(seq "$ns")" != "$s0" ] && pass "listed controller rebound (diskseq $s0 -> $(seq "$ns"))" || fail "rebound" "diskseq $(seq "$ns")"
if [ -e "/sys/class/nvme/$lst/quirks" ]; then
	plan 2
	grep -qx disable_write_zeroes "/sys/class/nvme/$lst/quirks" && pass "kernel quirks show disable_write_zeroes" || fail "quirks attribute" "$(kq "$lst")"
	grep -qx bogus_nid "/sys/class/nvme/$lst/quirks" && pass "the table's bogus_nid kept" || fail "bogus_nid kept" "$(kq "$lst")"
fi
check_eq "dynamic ID recorded" "$(head -n 1 /run/nvme-vwc-sync/dynid/1b36_0010_1af4_1100 2>&1)" "$(if [ -n "$MODS" ]; then echo '1b36 0010 1af4 1100 0 0 200'; else echo '1b36 0010 1af4 1100 0 0 40200'; fi)"
check_eq "unlisted controller never rebound (diskseq)" "$(seq "$uns")" "$us0"
if [ -d $T/events/nvme/nvme_setup_cmd ]; then
	plan 1
	n=$(wzcmds "$ns")
	check_eq "after: blkdiscard --zeroout sends no Write Zeroes, writes 32 MiB of zeroes (commands, sectors)" "$n" "0 65536"
fi
echo x | $DD of="/dev/$ns" bs=4k count=1 conv=sync oflag=direct status=none && pass "I/O works after the rebind" || fail "I/O after" "dd failed"
s1=$(seq "$ns")
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
check_eq "quirks again: exit 0, nothing rebound" "$rc $(seq "$ns")" "0 $s1"
grep -q "already" /tmp/q.out && pass "quirks again says it is already done" || fail "idempotent message" "$(cat /tmp/q.out)"

# restore
$tool restore "$lst" >/tmp/r.out 2>&1; rc=$?
info "restore said: $(tr '\n' '|' </tmp/r.out)"
check_eq "restore: exit 0" "$rc" 0
check_eq "restore: Write Zeroes back" "$(wz "$ns")" "$wz0"
[ "$(seq "$ns")" != "$s1" ] && pass "restore rebound the controller" || fail "restore rebind" "diskseq"
check_eq "restore: dynamic ID record gone" "$(ls /run/nvme-vwc-sync/dynid 2>/dev/null | wc -l)" 0
if [ -e "/sys/class/nvme/$lst/quirks" ]; then
	plan 1
	grep -qx disable_write_zeroes "/sys/class/nvme/$lst/quirks" && fail "restore: quirk gone" "$(kq "$lst")" || pass "restore: kernel quirks without disable_write_zeroes (dynamic ID removed)"
fi
# removed from the driver: a manual rebind keeps Write Zeroes
echo "$addr" >/sys/bus/pci/drivers/nvme/unbind && echo "$addr" >/sys/bus/pci/drivers/nvme/bind
wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
check_eq "restore: a manual rebind still has Write Zeroes (no dynamic ID left)" "$(wz "$ns")" "$wz0"
check_eq "unlisted controller still never rebound" "$(seq "$uns")" "$us0"

# A partitioned namespace, as every installed system has one: GPT, three
# partitions. Each kind of user is refused by name; free, quirks applies.
kmodprobe() { ln -sf /usr/bin/kmod /tmp/modprobe; /tmp/modprobe -q "$@" 2>/dev/null; }
printf 'label: gpt\nsize=8MiB\nsize=8MiB\nsize=8MiB\n' | /usr/sbin/sfdisk -q "/dev/$ns" >/tmp/sf.out 2>&1
wait_for "GPT: three partitions" 10 test -e "/sys/block/$ns/${ns}p3"
udevadm settle --timeout=10 2>/dev/null
p1=${ns}p1; p2=${ns}p2; p3=${ns}p3
[ -b /dev/$p3 ] || for p in $p1 $p2 $p3; do mknod "/dev/$p" b $(tr : ' ' </sys/block/$ns/$p/dev); done
refused() { # NAME PATTERN: quirks refuses, naming the user
	$tool quirks "$lst" >/tmp/q.out 2>&1; _rc=$?
	if [ "$_rc" = 1 ] && grep -q "$2" /tmp/q.out; then
		pass "partitioned: $1 refused by name ($(grep -o "$2[^;]*" /tmp/q.out | head -n 1))"
	else
		fail "partitioned: $1 refused by name" "rc $_rc: $(cat /tmp/q.out)"
	fi
}
ps0=$(seq "$ns")
# The kinds of user, each refused by name, where nvme is a module (the
# generic kernels, which also have loop and nvmet); the cloud kernels run
# the partitioned apply and restore only.
nvmemod=$([ -e /sys/module/nvme/initstate ] && echo 1)
if [ -n "$nvmemod" ]; then
	plan 6
	kmodprobe ext4
	mke2fs -q "/dev/$p1" >/dev/null 2>&1
	mkdir -p /srv
	if mount "/dev/$p1" /srv 2>/dev/null; then
		refused "mounted partition" "$p1 is mounted on /srv"
		umount /srv
	else
		skip "partitioned: mounted partition" "no ext2/ext4 in this kernel"
	fi
	mkswap "/dev/$p2" >/dev/null 2>&1 && swapon "/dev/$p2"
	refused "swap partition" "$p2 is in use as swap"
	swapoff "/dev/$p2"
	kmodprobe loop
	lo=$(losetup -f 2>/dev/null)
	[ -n "$lo" ] && [ ! -b "$lo" ] && mknod "$lo" b 7 "${lo#/dev/loop}"
	if [ ! -e /sys/module/loop ]; then
		skip "partitioned: loop device" "no loop driver in $(uname -r) (cloud kernels: not among the guest's modules)"
	elif losetup "$lo" "/dev/$p3" 2>/dev/null; then
		refused "loop device over a partition" "$p3 backs $lo"
		losetup -d "$lo"
	else
		fail "partitioned: loop device" "cannot set up a loop device ($lo)"
	fi
	# a second node for the partition, made with mknod (as a container's /dev)
	mknod /tmp/alt-node b $(tr : ' ' </sys/block/$ns/$p1/dev)
	sleep 60 </tmp/alt-node &
	sp=$!
	sleep 0.3
	refused "a process through a second device node" "process $sp (sleep) holds $p1 (through /tmp/alt-node)"
	kill $sp; wait $sp 2>/dev/null
	# the namespace's generic character device
	ng=ng${ns#nvme}
	if [ -e "/sys/class/nvme-generic/$ng/dev" ]; then
		[ -c "/dev/$ng" ] || mknod "/dev/$ng" c $(tr : ' ' </sys/class/nvme-generic/$ng/dev)
		sleep 60 <"/dev/$ng" &
		sp=$!
		sleep 0.3
		refused "an open generic device" "process $sp (sleep) holds $ng"
		kill $sp; wait $sp 2>/dev/null
	else
		skip "partitioned: generic device" "no /sys/class/nvme-generic/$ng"
	fi
	# an nvmet export of the namespace (generic kernels: nvmet is a module)
	if kmodprobe nvmet && { mount -t configfs none /sys/kernel/config 2>/dev/null; test -d /sys/kernel/config/nvmet; }; then
		S=/sys/kernel/config/nvmet/subsystems/vwc-t700
		mkdir -p $S/namespaces/1
		echo "/dev/$ns" >$S/namespaces/1/device_path
		if echo 1 >$S/namespaces/1/enable 2>/dev/null; then
			refused "an nvmet export" "$ns is exported by nvmet subsystem vwc-t700 (namespace 1)"
			echo 0 >$S/namespaces/1/enable
		else
			fail "partitioned: nvmet export" "cannot enable the nvmet namespace"
		fi
		rmdir $S/namespaces/1 $S
	else
		skip "partitioned: nvmet export" "no nvmet module in $(uname -r)"
	fi
fi
check_eq "partitioned refusals: nothing changed (write_zeroes_max_bytes, diskseq)" "$(wz "$ns") $(seq "$ns")" "$wz0 $ps0"
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
info "partitioned: quirks said: $(tr '\n' '|' </tmp/q.out)"
check_eq "partitioned namespace, nothing in use: quirks exit 0" "$rc" 0
check_eq "partitioned: Write Zeroes disabled" "$(wz "$ns")" 0
wait_for - 10 test -e "/sys/block/$ns/$p3"
check_cmd "partitioned: the partitions are back after the rebind" test -e "/sys/block/$ns/$p3"
$tool restore "$lst" >/tmp/r.out 2>&1; rc=$?
check_eq "partitioned: restore exit 0, Write Zeroes back" "$rc $(wz "$ns")" "0 $wz0"
$DD if=/dev/zero of="/dev/$ns" bs=64k count=16 oflag=direct status=none

# A controller the driver holds no quirks for (a T700 on 7.x reads
# "none"): a dynamic ID with the class-wide entry's driver_data 0 for
# QEMU's controller, then a rebind.
if [ -e "/sys/class/nvme/$lst/quirks" ]; then
	plan 5
	echo "1b36 0010 1af4 1100 0 0 0" >/sys/bus/pci/drivers/nvme/new_id
	echo "$addr" >/sys/bus/pci/drivers/nvme/unbind && echo "$addr" >/sys/bus/pci/drivers/nvme/bind
	wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
	lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
	check_eq "quirk-free controller: the kernel's quirks read 'none'" "$(kq "$lst")" "none,"
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	info "quirk-free: quirks said: $(tr '\n' '|' </tmp/q.out)"
	check_eq "quirk-free controller (7.x 'none'): quirks exit 0" "$rc" 0
	check_eq "quirk-free: Write Zeroes disabled, kernel quirks disable_write_zeroes only" "$(wz "$ns") $(kq "$lst")" "0 disable_write_zeroes,"
	check_eq "quirk-free: driver_data 0x200, the class entry's 0 plus the quirk" "$(head -n 1 /run/nvme-vwc-sync/dynid/1b36_0010_1af4_1100 2>&1)" "1b36 0010 1af4 1100 0 0 200"
	$tool restore "$lst" >/tmp/r.out 2>&1; rc=$?
	check_eq "quirk-free: restore exit 0, Write Zeroes back" "$rc $(wz "$ns")" "0 $wz0"
fi

if [ -n "$nvmemod" ]; then
	plan 5
	# an admin's driver_override naming another driver: a rebind would not
	# come back to nvme, so none is made
	echo pci-stub >/sys/bus/pci/devices/$addr/driver_override
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	echo >/sys/bus/pci/devices/$addr/driver_override
	check_eq "driver_override names another driver: exit 1, not rebound" "$rc $(wz "$ns")" "1 $wz0"
	grep -q "its driver_override names pci-stub" /tmp/q.out && pass "driver_override refusal named" || fail "driver_override refusal" "$(cat /tmp/q.out)"

	# A bind that fails: the nvme driver's bind file masked by /dev/full
	# (every write ENOSPC). The tool retries, then the PCI core's drivers_probe
	# binds it: the controller ends bound, with the dynamic ID.
	if mount -o bind /dev/full /sys/bus/pci/drivers/nvme/bind; then
		$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
		umount /sys/bus/pci/drivers/nvme/bind
		info "forced bind failure: quirks said: $(tr '\n' '|' </tmp/q.out)"
		grep -q "bind to nvme failed (No space left on device), attempt 1 of 5" /tmp/q.out &&
			pass "forced bind failure: the failure is reported and retried" || fail "forced bind failure: retried" "$(cat /tmp/q.out)"
		wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
		lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
		check_eq "forced bind failure: exit 0, the controller ends bound to nvme, Write Zeroes off" "$rc $(basename "$(readlink /sys/bus/pci/devices/$addr/driver)") $(wz "$ns")" "0 nvme 0"
		$tool restore "$lst" >/tmp/r.out 2>&1
		check_eq "forced bind failure: restore" "$(wz "$ns")" "$wz0"
	else
		fail "forced bind failure" "cannot mask the bind file"
	fi
fi
# a PCI function not bound yet (as at hotplug before the driver binds): the
# dynamic ID binds it with the quirk from the start, no rebind. The value is
# known without a controller only where the table says the ID is absent.
if [ -n "$MODS" ]; then
	plan 4
	echo "$addr" >/sys/bus/pci/drivers/nvme/unbind
	wait_for - 10 sh -c "! test -e /sys/bus/pci/devices/$addr/driver"
	$tool quirks "$addr" >/tmp/q.out 2>&1; rc=$?
	info "quirks $addr said: $(tr '\n' '|' </tmp/q.out)"
	check_eq "unbound PCI function: exit 0" "$rc" 0
	grep -q "not bound: dynamic ID" /tmp/q.out && pass "unbound PCI function: bound through the dynamic ID" || fail "unbound path" "$(cat /tmp/q.out)"
	lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
	check_eq "unbound PCI function: Write Zeroes off from the first bind" "$(wz "$ns")" 0
	$tool restore "$lst" >/tmp/r.out 2>&1; rc=$?
	check_eq "restore after the unbound path" "$rc $(wz "$ns")" "0 $wz0"
fi

# udev: coldplug leaves the restored controller alone for this boot
if [ -n "$MODS" ]; then
	mkdir -p /etc/udev/rules.d
	echo "ENV{NVME_VWC_SYNC_MODULES_DIR}=\"$MODS\"" >/etc/udev/rules.d/00-t700-modules-dir.rules
fi
s2=$(seq "$ns")
udev_marker_start
start_udev
# (not passed by rules that never ran: the test's marker rule ran for it)
fact check_eq "coldplug: udevd ran the rules for $lst's add event" "$(udev_marks add "$lst")" 1
check_eq "coldplug: restored controller left alone until the next boot" "$(wz "$ns") $(seq "$ns")" "$wz0 $s2"
check_eq "coldplug: unlisted controller never rebound" "$(seq "$uns")" "$us0"

# hotplug: a listed drive comes up with Write Zeroes off by itself
host "drive_add 0 if=none,id=hp0,file={dir}/spare0.img,format=raw"
sleep 1
host "device_add nvme,id=nvhp,serial=VWCHP,drive=hp0,bus=rp0"
fact wait_for "hot-add: controller appears" 30 ctrl_by_serial VWCHP
hp=$(ctrl_by_serial VWCHP)
wait_for - 20 ns_of "$hp"
udevadm settle --timeout=60
hp=$(ctrl_by_serial VWCHP)
hpns=$(ns_of "$hp")
wait_for - 10 test -e "/sys/block/$hpns/queue/write_zeroes_max_bytes"
check_eq "hot-add: Write Zeroes off with no manual command" "$(wz "$hpns")" 0
info "hot-added $hp ($hpns) quirks=$(kq "$hp")"
check_eq "hot-add: the restored controller still alone" "$(wz "$ns")" "$wz0"
check_eq "hot-add: unlisted controller never rebound" "$(seq "$uns")" "$us0"
$tool restore --all >/tmp/r.out 2>&1; rc=$?
info "restore --all said: $(tr '\n' '|' </tmp/r.out)"
check_eq "restore --all: exit 0" "$rc" 0
hp=$(ctrl_by_serial VWCHP); hpns=$(ns_of "$hp")
check_eq "restore --all: hot-added drive has Write Zeroes back" "$(wz "$hpns")" "$wz0"
if [ -n "$nvmemod" ]; then
	plan 7
	# The hot-added drive is a twin (same IDs): the admin unbinds it (for vfio,
	# SPDK). new_id for the listed one must not bind it, nor a replayed add.
	hpaddr=$(basename "$(readlink -f /sys/class/nvme/$hp/device)")
	echo "$hpaddr" >/sys/bus/pci/drivers/nvme/unbind
	udevadm settle --timeout=30
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	check_eq "twin left unbound: quirks on the listed drive exit 0, Write Zeroes off" "$rc $(wz "$ns")" "0 0" ||
		info "twin left unbound: quirks said: $(tr '\n' '|' </tmp/q.out)"
	check_cmd "twin left unbound: new_id did not bind it" test ! -e "/sys/bus/pci/devices/$hpaddr/driver"
	check_eq "twin: its driver_override is clear again" "$(cat /sys/bus/pci/devices/$hpaddr/driver_override)" "(null)"
	m0=$(udev_marks add "$hpaddr")
	udevadm trigger --action=add "/sys/bus/pci/devices/$hpaddr"
	udevadm settle --timeout=60
	fact check_eq "twin: udevd ran the rules for the replayed add" "$(($(udev_marks add "$hpaddr") - m0))" 1
	check_cmd "twin: udevadm trigger --action=add leaves it unbound" test ! -e "/sys/bus/pci/devices/$hpaddr/driver"
	$tool restore "$lst" >/tmp/r.out 2>&1
	echo "$hpaddr" >/sys/bus/pci/drivers/nvme/bind
	hp_back() { _c=$(ctrl_by_serial VWCHP) && ns_of "$_c" >/dev/null; }
	fact wait_for "twin bound again by hand" 20 hp_back
	udevadm settle --timeout=60
	$tool restore --all >/tmp/r.out 2>&1
	hp=$(ctrl_by_serial VWCHP); hpns=$(ns_of "$hp"); lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
	check_eq "twin: both listed drives have Write Zeroes back" "$(wz "$ns") $(wz "$hpns")" "$wz0 $wz0"
fi

# the initramfs-tools init-premount script, as the initramfs runs it before
# the root file system is mounted: every listed controller, no argument
pm=$(ls /usr/local/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync /usr/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync 2>/dev/null | head -n 1)
if [ -n "$pm" ]; then
	plan 4
	sh "$pm" >/tmp/pm.out 2>&1; rc=$?
	check_eq "init-premount script: exit 0" "$rc" 0
	info "init-premount script said: $(tr '\n' '|' </tmp/pm.out)"
	hp=$(ctrl_by_serial VWCHP); hpns=$(ns_of "$hp")
	check_eq "init-premount script: Write Zeroes off on both listed drives" "$(wz "$ns") $(wz "$hpns")" "0 0" ||
		info "after the script: $($tool quirks --dry-run 2>&1 | tr '\n' '|')"
	check_eq "init-premount script: unlisted controller never rebound" "$(seq "$uns")" "$us0"
	$tool restore --all >/tmp/r.out 2>&1
	check_eq "restore --all after the script" "$(wz "$ns") $(wz "$(ns_of "$(ctrl_by_serial VWCHP)")")" "$wz0 $wz0"
	if [ -n "$nvmemod" ]; then
		plan 3
		# The initramfs when the kernel refuses every bind (bind and
		# drivers_probe masked): the script names the controllers left
		# unbound, and never says "booting on".
		paddrs="$addr $(basename "$(readlink -f "/sys/class/nvme/$(ctrl_by_serial VWCHP)/device")")"
		mount -o bind /dev/full /sys/bus/pci/drivers/nvme/bind
		mount -o bind /dev/full /sys/bus/pci/drivers_probe
		sh "$pm" >/tmp/pm2.out 2>&1; rc=$?
		umount /sys/bus/pci/drivers_probe
		umount /sys/bus/pci/drivers/nvme/bind
		info "init-premount script, no bind possible: exit $rc: $(grep -v '^  ' /tmp/pm2.out | tr '\n' '|')"
		if grep -q "LEFT UNBOUND after the Write Zeroes rebind" /tmp/pm2.out && ! grep -q "booting on" /tmp/pm2.out; then
			pass "init-premount script, no bind possible: it names the controllers left unbound, no 'booting on'"
		else
			fail "init-premount script, no bind possible" "$(cat /tmp/pm2.out)"
		fi
		for a in $paddrs; do
			[ -e "/sys/bus/pci/devices/$a/driver" ] || echo "$a" >/sys/bus/pci/drivers/nvme/bind
		done
		hp_back() { _c=$(ctrl_by_serial VWCHP) && ns_of "$_c" >/dev/null; }
		vwc0_back() { _c=$(ctrl_by_serial VWC0) && ns_of "$_c" >/dev/null; }
		wait_for - 20 hp_back
		wait_for "init-premount script, no bind possible: bound again by hand" 20 vwc0_back
		udevadm settle --timeout=60
		$tool restore --all >/tmp/r.out 2>&1
		lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
		check_eq "init-premount script, no bind possible: afterwards Write Zeroes back on both" "$(wz "$ns") $(wz "$(ns_of "$(ctrl_by_serial VWCHP)")")" "$wz0 $wz0"
	fi
else
	plan 1
	fail "init-premount script" "not installed"
fi
# Module reload with a record present (nvme a module): the dynamic ID goes
# with the driver. udev is running: its rule runs quirks on the controller's
# add event, which must find the record stale and add the ID again, with
# one rebind and no unbind/rebind loop.
if [ -e /sys/module/nvme/initstate ]; then
	plan 6
	$tool quirks "$lst" >/tmp/q.out 2>&1
	info "reload: quirks before said: $(tr '\n' '|' </tmp/q.out)"
	# the snippet would apply the quirk by itself after the reload (the
	# rule's run on the rebind's add event writes it again: settle first)
	udevadm settle --timeout=60
	rm -f /etc/modprobe.d/zz-nvme-vwc-sync.conf
	rec=/run/nvme-vwc-sync/dynid/1b36_0010_1af4_1100
	ino0=$(sed -n 's/^driver-inode //p' $rec)
	check_eq "reload: record names the driver's inode" "$ino0" "$(stat -c %i /sys/bus/pci/drivers/nvme)"
	rmmod nvme && kmodprobe nvme
	vwc0_back() { _c=$(ctrl_by_serial VWC0) && ns_of "$_c" >/dev/null; }
	wait_for "reload: controller back" 30 vwc0_back
	udevadm settle --timeout=90
	lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
	wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
	sleep 2
	udevadm settle --timeout=90
	lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst")
	s1=$(seq "$ns")
	info "reload: module quirks=$(cat /sys/module/nvme/parameters/quirks 2>/dev/null) kernel quirks=$(kq "$lst") record=$(tr '\n' '|' <$rec 2>&1) modprobe.d=$(ls /etc/modprobe.d /run/modprobe.d 2>/dev/null | tr '\n' ' ')"
	check_eq "reload: udev's rule found the record stale and added the dynamic ID again (Write Zeroes off)" "$(wz "$ns")" 0
	check_eq "reload: the record is the new driver's" "$(sed -n 's/^driver-inode //p' $rec)" "$(stat -c %i /sys/bus/pci/drivers/nvme)"
	sleep 3
	check_eq "reload: no unbind/rebind loop (diskseq $s1, 3 s later the same)" "$(seq "$ns")" "$s1"
	$tool restore "$lst" >/tmp/r.out 2>&1
	info "reload: restore said: $(tr '\n' '|' </tmp/r.out)"
	check_eq "reload: restore" "$(wz "$ns")" "$wz0"
fi
finish
