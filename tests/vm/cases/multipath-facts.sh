#!/bin/sh
# Multipath sysfs layout facts: two controllers of one subsystem sharing
# namespace 1. QEMU derives WCE per controller from its namespaces, so the
# shared namespace has write-cache=off and controller VWC1 also has a private
# namespace (nsid 2) with write-cache=on: WCE reads 0 on nv0, 1 on nv1.
# Both controllers have serial VWC0; cntlid 0 and 1.
# vm: subsys name=s0 ctrls=2 wc=off,on
# kernels: 6.1 6.12 7.2
# timeout: 240
. /vwc/guest/lib.sh

info "kernel $(uname -r)"
wait_for controllers-present 30 test -c /dev/nvme0 -a -c /dev/nvme1
c0=$(ctrl_by_serial VWC0 0) || c0=nvme0
c1=$(ctrl_by_serial VWC0 1) || c1=nvme1
info "cntlid 0 is $c0 (WCE off), cntlid 1 is $c1 (WCE on)"
wait_for namespaces-present 30 sh -c "ls /sys/class/nvme/$c0/ | grep -q 'n1$' && ls /sys/class/nvme/$c1/ | grep -q 'n1$'"
sleep 1

info "multipath module parameter: $(cat /sys/module/nvme_core/parameters/multipath 2>/dev/null || echo absent)"
for c in "$c0" "$c1"; do
	d=/sys/class/nvme/$c
	info "$c: serial=$(tr -d ' ' <"$d/serial") cntlid=$(cat "$d/cntlid") subsysnqn=$(cat "$d/subsysnqn") WCE=$(get_wce "$c")"
	info "$c: ls: $(ls "$d" | tr '\n' ' ')"
done
for s in /sys/class/nvme-subsystem/*; do
	[ -e "$s" ] || continue
	info "${s##*/}: ls: $(ls "$s" | tr '\n' ' ')"
	info "${s##*/}: iopolicy=$(cat "$s/iopolicy" 2>/dev/null)"
done
info "ls /sys/block: $(ls /sys/block | tr '\n' ' ')"
info "ls /sys/class/block: $(ls /sys/class/block | tr '\n' ' ')"
info "ls /dev/nvme*: $(ls /dev/nvme* | tr '\n' ' ')"

for b in /sys/class/block/nvme*; do
	n=${b##*/}
	q=absent
	[ -e "$b/queue/write_cache" ] && q="'$(cat "$b/queue/write_cache")'"
	mp=-
	[ -d "$b/multipath" ] && mp=$(ls "$b/multipath" | tr '\n' ' ')
	info "$n: hidden=$(cat "$b/hidden" 2>/dev/null || echo -) /dev/$n=$([ -e "/dev/$n" ] && echo yes || echo no) write_cache=$q multipath=[$mp] ana_state=$(cat "$b/ana_state" 2>/dev/null || echo -) device=$(readlink "$b/device" | sed 's|.*/||')"
done

# Which write_cache matters, where flushes are counted. The head is nvmeXn1;
# its paths nvmeXcYn1 (if any).
head=$(ls /sys/block | grep -E '^nvme[0-9]+n1$' | head -n 1)
paths=$(ls /sys/class/block | grep -E '^nvme[0-9]+c[0-9]+n1$' | tr '\n' ' ')
info "head=$head paths=[$paths]"
stats() {
	for p in $head $paths; do printf '%s=%s ' "$p" "$(flushes "$p")"; done
}
wcs() {
	for p in $head $paths; do
		[ -e "/sys/class/block/$p/queue/write_cache" ] && printf "%s='%s' " "$p" "$(cat "/sys/class/block/$p/queue/write_cache")"
	done
}
if [ -n "$head" ]; then
	info "write_cache: $(wcs)"
	info "flushes before: $(stats)"
	dsync_writes "$head" 10
	info "flushes after 10 dsync writes to $head (write back): $(stats)"
	set_wc "$head" "write through"
	info "after head write through: $(wcs)"
	dsync_writes "$head" 10
	info "flushes after 10 dsync writes to $head (head write through): $(stats)"
	set_wc "$head" "write back"
	for p in $paths; do
		if echo "write through" >"/sys/class/block/$p/queue/write_cache" 2>/dev/null; then
			info "path $p write_cache writable: $(wcs)"
			dsync_writes "$head" 10
			info "flushes after 10 dsync writes to $head (path $p write through): $(stats)"
			echo "write back" >"/sys/class/block/$p/queue/write_cache"
		else
			info "path $p write_cache not writable"
		fi
	done
	set_wc "$head" "write through"
	echo 1 >"/sys/class/nvme/$c1/reset_controller"
	sleep 1
	wait_for - 20 ctrl_live "$c1"
	sleep 1
	info "after reset_controller $c1 with head write through: $(wcs)"
	for p in $paths; do echo "write through" >"/sys/class/block/$p/queue/write_cache"; done
	echo 1 >"/sys/class/nvme/$c0/rescan_controller"
	sleep 2
	info "after rescan_controller $c0 with head and paths write through: $(wcs)"
	echo 1 >"/sys/class/nvme/$c0/reset_controller"
	sleep 1
	wait_for - 20 ctrl_live "$c0"
	sleep 1
	info "after reset_controller $c0 with head and paths write through: $(wcs)"
	pass multipath-facts-collected
else
	fail multipath-head "no nvmeXn1 block device"
fi

finish
