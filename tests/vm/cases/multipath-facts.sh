#!/bin/sh
# shellcheck disable=SC1091,SC2012 # lib.sh lives in the guest; ls of sysfs names
# Multipath sysfs layout facts: two controllers of one subsystem sharing
# namespace 1. QEMU derives WCE per controller from its namespaces, so the
# shared namespace has write-cache=off and controller VWC1 also has a private
# namespace (nsid 2) with write-cache=on: WCE reads 0 on nv0, 1 on nv1.
# Both controllers have serial VWC0; cntlid 0 and 1.
# vm: subsys name=s0 ctrls=2 wc=off,on
# kernels: 6.1 6.12 7.2
# timeout: 240
. /vwc/guest/lib.sh
facts_case
plan 5

info "kernel $(uname -r)"
wait_for controllers-present 30 test -c /dev/nvme0 -a -c /dev/nvme1
c0=$(ctrl_by_serial VWC0 0) || c0=nvme0
c1=$(ctrl_by_serial VWC0 1) || c1=nvme1
info "cntlid 0 is $c0 (WCE off), cntlid 1 is $c1 (WCE on)"
# Disk names are nvme<subsys>c<ctrl>n<head instance>: the last number counts
# heads in discovery order, it is not the NSID. Find them by their nsid file.
paths_of() { # NSID: hidden per-controller disks of that namespace
	for _p in /sys/class/nvme/nvme*/nvme*c*n*; do
		[ "$(cat "$_p/nsid" 2>/dev/null)" = "$1" ] && echo "${_p##*/}"
	done
}
head_of() { # NSID: the visible disk of that namespace
	for _b in /sys/block/nvme*n*; do
		case ${_b##*/} in *c*) continue ;; esac
		[ "$(cat "$_b/nsid" 2>/dev/null)" = "$1" ] && echo "${_b##*/}" && return 0
	done
	return 1
}
wait_for namespaces-present 30 sh -c "[ \$(ls -d /sys/class/nvme/nvme*/nvme*c*n* | command wc -l) -ge 3 ]"
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
	info "$n: nsid=$(cat "$b/nsid" 2>/dev/null || echo -) hidden=$(cat "$b/hidden" 2>/dev/null || echo -) /dev/$n=$([ -e "/dev/$n" ] && echo yes || echo no) write_cache=$q multipath=[$mp] ana_state=$(cat "$b/ana_state" 2>/dev/null || echo -) device=$(readlink "$b/device" | sed 's|.*/||')"
done

# Which write_cache matters, where flushes are counted: the shared
# namespace (NSID 1), its head and its paths.
head=$(head_of 1) || head=''
paths=$(paths_of 1 | tr '\n' ' ')
info "NSID 1: head=$head paths=[$paths]"
# shellcheck disable=SC2086 # split into words
set -- $paths
if [ "$#" -eq 2 ]; then pass nsid-1-has-two-paths; else fail nsid-1-has-two-paths "paths: [$paths]"; fi
# stats: flush requests per disk since the previous call (kept in files:
# it runs in command substitutions).
stats() {
	for p in $head $paths; do
		_now=$(flushes "$p")
		_prev=$(cat "/tmp/flushes.$p" 2>/dev/null || echo 0)
		echo "$_now" >"/tmp/flushes.$p"
		printf '%s=+%s ' "$p" "$((_now - _prev))"
	done
}
wcs() {
	for p in $head $paths; do
		[ -e "/sys/class/block/$p/queue/write_cache" ] && printf "%s='%s' " "$p" "$(cat "/sys/class/block/$p/queue/write_cache")"
	done
}
if [ -n "$head" ]; then
	info "write_cache: $(wcs)"
	stats >/dev/null
	dsync_writes "$head" 10
	info "new flushes for 10 dsync writes to $head (write back): $(stats)"
	set_wc "$head" "write through"
	info "after head write through: $(wcs)"
	dsync_writes "$head" 10
	info "new flushes for 10 dsync writes to $head (head write through): $(stats)"
	set_wc "$head" "write back"
	for p in $paths; do
		if echo "write through" >"/sys/class/block/$p/queue/write_cache" 2>/dev/null; then
			info "path $p write_cache writable: $(wcs)"
			dsync_writes "$head" 10
			info "new flushes for 10 dsync writes to $head (path $p write through): $(stats)"
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
	# the in-use checks (quirks) look for holders of the head's generic
	# node ngXnY: with native multipath the kernel makes no per-path
	# generic node (no ngXcYnZ beside the hidden nvmeXcYnZ)
	info "generic nodes: $(ls /sys/class/nvme-generic | tr '\n' ' ')"
	check_eq "multipath: generic nodes only for the heads (no per-path ngXcYnZ)" \
		"$(ls /sys/class/nvme-generic | grep -c 'c')" 0
else
	fail multipath-head "no visible disk with NSID 1"
fi

finish
