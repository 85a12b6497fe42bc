#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The initramfs's init-premount script (initramfs-tools; dracut's hook runs
# the same file) after the tool, run by klibc's shell with klibc's tools
# only, as an initramfs without busybox has them (no sed, no grep): the
# logical volumes the tool deactivated and did not report active again are
# activated by the script, each exactly once and only those; one it cannot
# activate is named on the console; a controller left unbound is named.
# Fakes: the tool (its output and its end: an exit status, or SIGKILL),
# lvm, udevadm, /proc/cmdline, /sys/bus/pci and /dev/kmsg (files under a
# temporary directory). TAP.
# Usage: test-premount.sh PREMOUNT
SRC=${1:?usage: test-premount.sh PREMOUNT}
KSH=/usr/lib/klibc/bin/sh
if [ ! -x "$KSH" ]; then
	echo "1..0 # SKIP klibc's shell missing (Debian package klibc-utils)"
	exit 0
fi
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# t NAME COMMAND..., tap_done; a failure shows $T/out: what the last run
# of the script printed, called lvm with and wrote to the kernel log
# shellcheck source=../lib/tap.sh
. "$(dirname "$0")/../lib/tap.sh"

# The script with its system paths moved under $T
mkdir -p "$T/bin" "$T/sys/bus/pci/drivers/nvme" "$T/sys/bus/pci/devices"
sed -e "s|/[a-z/]*sbin/nvme-vwc-sync|$T/bin/nvme-vwc-sync|g" \
	-e "s|/proc/cmdline|$T/cmdline|g" -e "s|/sys/bus/pci|$T/sys/bus/pci|g" \
	-e "s|>/dev/kmsg|>>$T/kmsg|g" "$SRC" >"$T/premount"
moved() { # no line but a comment names a system path the fakes stand in for
	! grep -v '^ *#' "$T/premount" | grep -v "$T" |
		grep -E '/sys/|/proc/|/dev/kmsg|sbin/nvme-vwc-sync' >"$T/out"
}
t "every system path of the script moved under the test's directory" moved
echo "BOOT_IMAGE=/vmlinuz root=/dev/mapper/vg0-root ro quiet" >"$T/cmdline"

# The tool: prints $T/tool.out, then ends as $T/tool.end says (a status,
# or kill: SIGKILL to itself); "unbind" first removes the driver link of
# 0000:01:00.0, as a rebind killed between its unbind and its bind leaves it
cat >"$T/bin/nvme-vwc-sync" <<F
#!$KSH
[ ! -e "$T/unbind" ] || rm -f "$T/sys/bus/pci/devices/0000:01:00.0/driver"
cat "$T/tool.out" >&2
read -r end <"$T/tool.end"
[ "\$end" != kill ] || kill -9 \$\$
exit "\$end"
F
cat >"$T/bin/lvm" <<F
#!$KSH
echo "\$*" >>"$T/lvm.log"
[ ! -e "$T/lvm.fail" ]
F
printf '#!%s\nexit 0\n' "$KSH" >"$T/bin/udevadm"
chmod 755 "$T/bin/"*

# run: the script, as the initramfs runs it (klibc's sh, klibc's tools
# and the fakes on PATH); its status in $T/rc, stderr in $T/err
run() {
	rm -f "$T/lvm.log" "$T/kmsg"
	: >"$T/kmsg"
	PATH=/usr/lib/klibc/bin:$T/bin "$KSH" "$T/premount" >/dev/null 2>"$T/err"
	echo $? >"$T/rc"
	for _f in err lvm.log kmsg; do
		[ ! -s "$T/$_f" ] || sed "s|^|$_f: |" "$T/$_f"
	done >"$T/out"
}
tool() { # END LINE...: the tool's output and end
	echo "$1" >"$T/tool.end"
	shift
	printf '%s\n' "$@" >"$T/tool.out"
}
deact() { echo "nvme-vwc-sync: deactivating logical volume $1 (dm-$2) for the rebind"; }
again() { echo "nvme-vwc-sync: logical volume $1 active again"; }
has() { grep -qF -- "$2" "$T/$1"; }
hasnt() { ! grep -qF -- "$2" "$T/$1"; }
lvm_calls() { tr '\n' ';' 2>/dev/null <"$T/lvm.log"; }
eq() { [ "$1" = "$2" ] || { echo "got '$1', expected '$2'" >>"$T/out"; return 1; }; }

# 1. killed after two deactivations, one of them reported active again
tool kill "nvme-vwc-sync: 0000:01:00.0: Write Zeroes disabled" \
	"$(deact vg0/root 0)" "$(deact vg0/swap 1)" "$(again vg0/swap)"
run
t "tool killed: the script exits 0" eq "$(cat "$T/rc")" 0
t "tool killed: lvm activates vg0/root, once, and nothing else" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/root;"
t "tool killed: the kernel log says the script activated vg0/root" \
	has kmsg "nvme-vwc-sync: initramfs: logical volume vg0/root activated again by the script"
t "tool killed: the tool's lines go to the kernel log" \
	has kmsg "<5>nvme-vwc-sync: initramfs: deactivating logical volume vg0/root"
t "tool killed, every volume active: nothing LEFT INACTIVE" hasnt err "LEFT INACTIVE"

# 2. the same, and lvm cannot activate it
: >"$T/lvm.fail"
run
rm -f "$T/lvm.fail"
t "lvm fails: the console names vg0/root LEFT INACTIVE" \
	has err "LVM logical volume(s) vg0/root LEFT INACTIVE"
t "lvm fails: the console shows the tool's output" has err "deactivating logical volume vg0/swap"
t "lvm fails: the kernel log says left inactive (critical)" \
	has kmsg "<2>nvme-vwc-sync: initramfs: logical volume(s) vg0/root left inactive"

# 3. the tool ended well: everything it deactivated is active again
tool 0 "$(deact vg0/root 0)" "$(again vg0/root)"
run
t "tool done: lvm never called" eq "$(lvm_calls)" ""
t "tool done: the console says nothing" eq "$(cat "$T/err")" ""

# 4. names a pattern would misread: dots, plus and hyphens; a name that
# is the start of another's ("vg0/ro" deactivated, only "vg0/root" back)
tool kill "$(deact vg.a-1/lv+x 2)" "$(deact vg0/ro 3)" "$(deact vg0/root 4)" "$(again vg0/root)"
run
t "odd names: each deactivated and not back activated, exactly" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/ro;lvchange -ay --sysinit vg.a-1/lv+x;"

# 5. a controller bound before and unbound after the tool: bound again
# (the bind file here binds nothing) or named on the console
mkdir -p "$T/sys/bus/pci/devices/0000:01:00.0"
ln -s ../../../bus/pci/drivers/nvme "$T/sys/bus/pci/devices/0000:01:00.0/driver"
: >"$T/unbind"
tool kill "nvme-vwc-sync: 0000:01:00.0: unbinding"
run
t "controller left unbound: the script tried to bind it" \
	eq "$(cat "$T/sys/bus/pci/drivers/nvme/bind" 2>/dev/null)" "0000:01:00.0"
t "controller left unbound: the console names it" \
	has err "NVMe controller(s) 0000:01:00.0 LEFT UNBOUND"
t "controller left unbound: the kernel log says so (critical)" \
	has kmsg "<2>nvme-vwc-sync: initramfs: controller(s) 0000:01:00.0 left unbound"

# 6. nvme-vwc-sync.quirks=0: the tool never runs
echo "root=/dev/sda1 nvme-vwc-sync.quirks=0" >"$T/cmdline"
tool kill "$(deact vg0/root 0)"
rm -f "$T/unbind"
run
t "nvme-vwc-sync.quirks=0: nothing done" eq "$(cat "$T/rc"):$(lvm_calls):$(cat "$T/err")" "0::"

# 7. a volume on two listed controllers: deactivated for the first, active
# again, deactivated for the second, then the tool is killed: the one
# "active again" line must not hide the second deactivation
echo "BOOT_IMAGE=/vmlinuz root=/dev/mapper/vg0-root ro" >"$T/cmdline"
tool kill "$(deact vg0/root 0)" "$(again vg0/root)" "nvme-vwc-sync: 0000:02:00.0: unbinding" "$(deact vg0/root 0)"
run
t "volume down twice, back once: activated again" eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/root;"

# 8. an lvm that reads standard input (a prompt) must not eat the lines of
# the tool's output that name the next volumes
cat >"$T/bin/lvm" <<F
#!$KSH
echo "\$*" >>"$T/lvm.log"
if read -r ans; then echo "lvm read: \$ans" >>"$T/lvm.log"; fi
true
F
chmod 755 "$T/bin/lvm"
tool kill "$(deact vg0/root 0)" "$(deact vg0/home 1)"
run
t "lvm reading its input: every volume activated, lvm reads nothing" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/home;lvchange -ay --sysinit vg0/root;"

# 9. stacked: vg1/lv sits on vg0/pv (a volume that is a physical volume of
# another group); the tool deactivates the top first, then the one under
# it, and is killed; lvm cannot activate vg1/lv before vg0/pv is back
cat >"$T/bin/lvm" <<F
#!$KSH
echo "\$*" >>"$T/lvm.log"
case "\$*" in
*vg0/pv) : >"$T/pv.up" ;;
*vg1/lv) [ -e "$T/pv.up" ] ;;
esac
F
rm -f "$T/pv.up"
tool kill "$(deact vg1/lv 5)" "$(deact vg0/pv 6)"
run
t "stacked volumes: the one beneath first, then the one on top" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/pv;lvchange -ay --sysinit vg1/lv;"
t "stacked volumes: none left inactive" hasnt err "LEFT INACTIVE"

# 10. udevadm settle times out (udev busy with another controller): lvm
# is tried all the same, and settle is waited for once, not per volume
printf '#!%s\necho settle >>"%s/settle.log"\nexit 1\n' "$KSH" "$T" >"$T/bin/udevadm"
rm -f "$T/settle.log"
tool kill "$(deact vg0/root 0)" "$(deact vg0/home 1)"
run
t "settle timed out: lvm activates both volumes" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/home;lvchange -ay --sysinit vg0/root;"
t "settle timed out: settled once for the volumes, once at the end" \
	eq "$(tr '\n' ';' <"$T/settle.log")" "settle;settle;"
# 11. lvm fails on the first try (the physical volume not yet known to
# udev, the settle having timed out): tried once more after a second
# settle, and not named LEFT INACTIVE when that works
cat >"$T/bin/lvm" <<F
#!$KSH
echo "\$*" >>"$T/lvm.log"
n=0
while read -r l; do n=\$((n + 1)); done <"$T/settle.log"
[ "\$n" -ge 2 ]
F
rm -f "$T/settle.log"
tool kill "$(deact vg0/root 0)" "$(deact vg0/home 1)"
run
t "lvm fails before a second settle: both tried again after it, in the same order" \
	eq "$(lvm_calls)" "lvchange -ay --sysinit vg0/home;lvchange -ay --sysinit vg0/root;lvchange -ay --sysinit vg0/home;lvchange -ay --sysinit vg0/root;"
t "lvm fails before a second settle: settled for the volumes, for the retry, at the end" \
	eq "$(tr '\n' ';' <"$T/settle.log")" "settle;settle;settle;"
t "lvm fails before a second settle: none left inactive" hasnt err "LEFT INACTIVE"
# and a volume lvm never activates: tried twice, then named
: >"$T/lvm.fail"
cat >"$T/bin/lvm" <<F
#!$KSH
echo "\$*" >>"$T/lvm.log"
[ ! -e "$T/lvm.fail" ]
F
rm -f "$T/settle.log"
tool kill "$(deact vg0/root 0)"
run
rm -f "$T/lvm.fail"
t "lvm never activates it: tried twice, then LEFT INACTIVE" \
	eq "$(lvm_calls):$(grep -c 'LEFT INACTIVE' "$T/err")" "lvchange -ay --sysinit vg0/root;lvchange -ay --sysinit vg0/root;:1"
tap_done
