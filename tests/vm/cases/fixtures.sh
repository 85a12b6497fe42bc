#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=off whole
# vm: ctrl wc=off noquirks
# kernels: 7.2 6.1-generic
#
# The test bed's own fixtures, as every guest gets them (tests/vm/run-vm.sh,
# tests/vm/mkinitramfs.sh), and the tool on them: namespaces with a GPT
# partition table by default ("whole" leaves one blank), a controller the
# driver holds no quirks for ("noquirks"), tracefs and debugfs mounted as
# systemd mounts them, and unprivileged users. sync then treats a
# partitioned namespace like a whole one.
. /vwc/guest/lib.sh
# the checks of the fixtures are facts; the tool's on them, product
plan 11

c0=$(ctrl_by_serial VWC0)
c1=$(ctrl_by_serial VWC1)
c2=$(ctrl_by_serial VWC2)
n0=$(ns_of "$c0")
n1=$(ns_of "$c1")
n2=$(ns_of "$c2")
info "controllers $c0 $c1 $c2, namespaces $n0 $n1 $n2"
fact wait_for "GPT by default: ${n0}p1 and ${n0}p2" 10 test -e "/sys/block/$n0/${n0}p2"
fact check_eq "GPT partition names" "$(cat /sys/block/$n0/${n0}p1/uevent /sys/block/$n0/${n0}p2/uevent | sed -n 's/^PARTNAME=//p' | tr '\n' ' ')" "vwc-a vwc-b "
fact check_eq "whole: no partition on $n1" "$(ls -d /sys/block/$n1/${n1}p* 2>/dev/null)" ""

if [ -e "/sys/class/nvme/$c0/quirks" ]; then
	plan 2
	fact check_eq "noquirks: $c2 holds none" "$(cat /sys/class/nvme/$c2/quirks)" none
	q0=$(cat /sys/class/nvme/$c0/quirks | tr '\n' ' ')
	if [ -n "$q0" ] && [ "$q0" != "none " ]; then
		fact pass "the table's quirks stay on $c0 ($q0)"
	else
		fact fail "the table's quirks stay on $c0" "quirks '$q0'"
	fi
else
	info "no quirks attribute on $(uname -r)"
fi

fact check_eq "tracefs at /sys/kernel/tracing, nosuid,nodev,noexec" \
	"$(awk '$2 == "/sys/kernel/tracing" { print $3, ($4 ~ /nosuid/ && $4 ~ /nodev/ && $4 ~ /noexec/) }' /proc/mounts)" "tracefs 1"
fact check_eq "debugfs at /sys/kernel/debug" "$(awk '$2 == "/sys/kernel/debug" { print $3 }' /proc/mounts)" debugfs
fact check_eq "users nobody and vwcuser" "$(id -u nobody) $(id -u vwcuser)" "65534 1000"
fact check_eq "as_user runs commands as vwcuser and nobody" "$(as_user vwcuser id -u) $(as_user nobody id -g)" "1000 65534"

# the tool on a partitioned namespace, a whole one and a quirk-free one
check_cmd "sync --all" nvme-vwc-sync sync --all
for n in "$n0" "$n1" "$n2"; do
	check_eq "$n: write through (WCE=0)" "$(wc "$n")" "write through"
done
finish
