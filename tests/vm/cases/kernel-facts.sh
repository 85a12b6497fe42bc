#!/bin/sh
# shellcheck disable=SC1091,SC2012 # lib.sh lives in the guest; ls of sysfs names
# Kernel facts the project depends on; needs nothing from the project.
# Controller VWC0 has its volatile write cache disabled (WCE=0), VWC1 enabled
# (and, as every guest's last plain controller, no quirks from the driver).
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 6.1 6.12 7.2
# timeout: 240
. /vwc/guest/lib.sh
facts_case
plan 18

info "kernel $(uname -r)"
wait_for controllers-present 30 test -c /dev/nvme0 -a -c /dev/nvme1
check_cmd dev-nvme0-exists test -c /dev/nvme0
check_cmd dev-nvme1-exists test -c /dev/nvme1

c0=$(ctrl_by_serial VWC0) || c0=nvme0
c1=$(ctrl_by_serial VWC1) || c1=nvme1
info "serial VWC0 is $c0, VWC1 is $c1"
wait_for namespaces-present 30 sh -c "ls /sys/class/nvme/$c0/ | grep -q n1 && ls /sys/class/nvme/$c1/ | grep -q n1"
n0=$(ns_of "$c0")
n1=$(ns_of "$c1")
info "namespaces: $c0 -> $n0, $c1 -> $n1"
wait_for block-devices 10 test -b "/dev/$n0" -a -b "/dev/$n1"

# Volatile Write Cache feature, long options only.
check_eq "get-feature-6-VWC0-is-0" "$(get_wce "$c0")" 0
check_eq "get-feature-6-VWC1-is-1" "$(get_wce "$c1")" 1
info "$c0 get-feature: $(nvme get-feature "/dev/$c0" --feature-id=6 2>&1)"
info "$c0 id-ctrl vwc: $(nvme id-ctrl "/dev/$c0" 2>&1 | grep -E '^vwc ')"

# The bug: the kernel shows write back even where WCE is off.
check_eq "initial-write-back-VWC0-wce0" "$(wc "$n0")" "write back"
check_eq "initial-write-back-VWC1-wce1" "$(wc "$n1")" "write back"
info "$n0 queue/fua=$(cat "/sys/block/$n0/queue/fua")"

# label: VWCn, stable across boots (controller names follow probe order)
label() { if [ "$1" = "$n0" ]; then echo VWC0; else echo VWC1; fi; }
for n in "$n0" "$n1"; do
	l=$(label "$n")
	set_wc "$n" "write through" && check_eq "writable-write-through-$l" "$(wc "$n")" "write through"
	set_wc "$n" "write back" && check_eq "writable-write-back-$l" "$(wc "$n")" "write back"
done

# Flush requests (stat field 16) per O_DIRECT|O_DSYNC write.
for n in "$n0" "$n1"; do
	l=$(label "$n")
	set_wc "$n" "write back"
	d=$(flushes_for "$n" 10)
	info "$n write back: $d flushes for 10 dsync writes"
	if [ "$d" -ge 10 ] && [ "$d" -le 22 ]; then pass "flushes-write-back-$l"; else fail "flushes-write-back-$l" "$d flushes for 10 writes"; fi
	set_wc "$n" "write through"
	d=$(flushes_for "$n" 10)
	info "$n write through: $d flushes for 10 dsync writes"
	check_eq "flushes-write-through-$l" "$d" 0
	set_wc "$n" "write back"
done

info "ls /sys/class/nvme/$c0/: $(ls "/sys/class/nvme/$c0/" | tr '\n' ' ')"
[ -e "/sys/class/nvme/$c0/quirks" ] && info "$c0 quirks: $(tr '\n' ' ' <"/sys/class/nvme/$c0/quirks")"
# the test bed's default fixture: the last plain controller (VWC1) is one
# the driver holds no quirks for (tests/vm/run-vm.sh)
if [ -e "/sys/class/nvme/$c1/quirks" ]; then
	check_eq "fixture: $c1 (last controller) holds no quirks" "$(cat "/sys/class/nvme/$c1/quirks")" none
else
	check_cmd "fixture: the kernel command line asks init for VWC1 without quirks" grep -q 'vwc.noquirks=VWC1' /proc/cmdline
fi

# Resets, rescans and Set Features: what happens to write_cache, which
# uevents the kernel sends. Facts only (VWC-INFO).
uevents_start
# observe LABEL CTRL NS ACTION...: set write through, run ACTION, report.
observe() {
	label=$1 c=$2 n=$3
	shift 3
	set_wc "$n" "write through"
	m=$(uevents_mark)
	"$@"
	sleep 1
	wait_for - 20 ctrl_live "$c" || info "$label: $c not live: $(cat "/sys/class/nvme/$c/state")"
	sleep 1
	info "$label: write_cache 'write through' -> '$(wc "$n")'; WCE now $(get_wce "$c")"
	ev=$(uevents_since "$m")
	if [ -n "$ev" ]; then
		echo "$ev" | while read -r line; do info "$label: uevent $line"; done
	else
		info "$label: no uevent"
	fi
	set_wc "$n" "write back"
}
reset() { echo 1 >"/sys/class/nvme/$1/reset_controller"; }
rescan() { echo 1 >"/sys/class/nvme/$1/rescan_controller"; }
setwce() { nvme set-feature "/dev/$1" --feature-id=6 --value="$2" >/dev/null; }

observe "reset_controller $c0 (WCE=0)" "$c0" "$n0" reset "$c0"
observe "reset_controller $c1 (WCE=1)" "$c1" "$n1" reset "$c1"
observe "rescan_controller $c0 (WCE=0)" "$c0" "$n0" rescan "$c0"
observe "rescan_controller $c1 (WCE=1)" "$c1" "$n1" rescan "$c1"
observe "set-feature WCE=1 on $c0" "$c0" "$n0" setwce "$c0" 1
observe "reset_controller $c0 after set-feature WCE=1" "$c0" "$n0" reset "$c0"
observe "set-feature WCE=0 on $c0" "$c0" "$n0" setwce "$c0" 0
m=$(uevents_mark)
set_wc "$n0" "write through"
set_wc "$n0" "write back"
sleep 1
info "writing queue/write_cache: $(uevents_since "$m" | command wc -l) uevents"

finish
