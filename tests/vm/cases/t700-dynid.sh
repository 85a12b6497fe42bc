#!/bin/sh
# vm: ctrl wc=on
# vm: ctrl wc=on intel
# vm: rootport
# vm: spare
# kernels: 6.1 6.12 7.2 7.2-generic 6.1-generic 6.12-generic
# timeout: 400
#
# Seed 003 (Crucial T700/T705: slow Write Zeroes) on every kernel, at run
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
	pass "image: /lib is still the link to usr/lib, udev rules behind it ($(ls /lib/udev/rules.d | wc -l))" ||
	fail "image: /lib" "$(ls -ld /lib; ls /lib/udev/rules.d 2>&1 | head -n 3)"
[ "$wz0" != 0 ] && pass "before: Write Zeroes enabled on the listed drive ($wz0)" || fail "before: Write Zeroes enabled" "$wz0"

mkdir -p /etc/udev/hwdb.d
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/61-nvme-vwc-sync-local.hwdb
check_cmd "systemd-hwdb update" systemd-hwdb update

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
	[ "${n% *}" -gt 0 ] && pass "before: blkdiscard --zeroout sends Write Zeroes (${n% *} commands)" || fail "before: Write Zeroes sent" "$n"
else
	skip "tracepoint" "no nvme_setup_cmd tracepoint"
fi

MODS=
if [ ! -e "/sys/class/nvme/$lst/quirks" ]; then
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
	mkmods() {
		_m=$1/lib/modules/1.0
		shift
		mkdir -p "$_m"
		: >"$_m/modules.order"
		echo kernel/drivers/nvme/host/nvme.ko >"$_m/modules.builtin"
		for _p; do printf 'nvme.alias=%s\0' "$_p"; done >"$_m/modules.builtin.modinfo"
		ln -sf /usr/bin/kmod /tmp/depmod
		/tmp/depmod -b "${_m%/lib/modules/1.0}" 1.0
	}
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
		pass "stand-in $MODS: depmod's files, nvme's class entry without QEMU's ID"
	else
		fail "stand-in $MODS" "$(ls "$MODS" 2>&1 | tr '\n' ' ')"
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
grep -q "$ns is open by pid $sp (sleep)" /tmp/q.out && pass "open: message names the process" || fail "open message" "$(cat /tmp/q.out)"
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
	grep -qx disable_write_zeroes "/sys/class/nvme/$lst/quirks" && pass "kernel quirks show disable_write_zeroes" || fail "quirks attribute" "$(kq "$lst")"
	grep -qx bogus_nid "/sys/class/nvme/$lst/quirks" && pass "the table's bogus_nid kept" || fail "bogus_nid kept" "$(kq "$lst")"
fi
check_eq "dynamic ID recorded" "$(cat /run/nvme-vwc-sync/dynid/1b36_0010_1af4_1100 2>&1)" "$(if [ -n "$MODS" ]; then echo '1b36 0010 1af4 1100 0 0 200'; else echo '1b36 0010 1af4 1100 0 0 40200'; fi)"
check_eq "unlisted controller never rebound (diskseq)" "$(seq "$uns")" "$us0"
if [ -d $T/events/nvme/nvme_setup_cmd ]; then
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
	grep -qx disable_write_zeroes "/sys/class/nvme/$lst/quirks" && fail "restore: quirk gone" "$(kq "$lst")" || pass "restore: kernel quirks without disable_write_zeroes (dynamic ID removed)"
fi
# removed from the driver: a manual rebind keeps Write Zeroes
echo "$addr" >/sys/bus/pci/drivers/nvme/unbind && echo "$addr" >/sys/bus/pci/drivers/nvme/bind
wait_for - 20 test -e "/sys/block/$ns/queue/write_zeroes_max_bytes"
check_eq "restore: a manual rebind still has Write Zeroes (no dynamic ID left)" "$(wz "$ns")" "$wz0"
check_eq "unlisted controller still never rebound" "$(seq "$uns")" "$us0"

# a PCI function not bound yet (as at hotplug before the driver binds): the
# dynamic ID binds it with the quirk from the start, no rebind. The value is
# known without a controller only where the table says the ID is absent.
if [ -n "$MODS" ]; then
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
start_udev
check_eq "coldplug: restored controller left alone until the next boot" "$(wz "$ns") $(seq "$ns")" "$wz0 $s2"
check_eq "coldplug: unlisted controller never rebound" "$(seq "$uns")" "$us0"

# hotplug: a listed drive comes up with Write Zeroes off by itself
host "drive_add 0 if=none,id=hp0,file={dir}/spare0.img,format=raw"
sleep 1
host "device_add nvme,id=nvhp,serial=VWCHP,drive=hp0,bus=rp0"
wait_for "hot-add: controller appears" 30 ctrl_by_serial VWCHP
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

# the initramfs-tools init-premount script, as the initramfs runs it before
# the root file system is mounted: every listed controller, no argument
pm=$(ls /usr/local/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync /usr/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync 2>/dev/null | head -n 1)
if [ -n "$pm" ]; then
	sh "$pm" >/tmp/pm.out 2>&1; rc=$?
	check_eq "init-premount script: exit 0" "$rc" 0
	info "init-premount script said: $(tr '\n' '|' </tmp/pm.out)"
	hp=$(ctrl_by_serial VWCHP); hpns=$(ns_of "$hp")
	check_eq "init-premount script: Write Zeroes off on both listed drives" "$(wz "$ns") $(wz "$hpns")" "0 0" ||
		info "after the script: $($tool quirks --dry-run 2>&1 | tr '\n' '|')"
	check_eq "init-premount script: unlisted controller never rebound" "$(seq "$uns")" "$us0"
	$tool restore --all >/tmp/r.out 2>&1
	check_eq "restore --all after the script" "$(wz "$ns") $(wz "$(ns_of "$(ctrl_by_serial VWCHP)")")" "$wz0 $wz0"
else
	fail "init-premount script" "not installed"
fi
finish
