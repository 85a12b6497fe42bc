#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 7.2-generic
# timeout: 420
# manual: run by tests/compat/run.sh (row 3.x), whose image brings nvme-vwc-sync on libnvme3
#
# The sidecar's idle-descriptor release on the libnvme3 backend, with nvme
# a module: libnvme3 sends each command through a transport handle holding
# a descriptor of its own, which must go when the sidecar lets its own
# descriptor go. After the release the sidecar holds no descriptor of any
# NVMe node; `rmmod nvme` is not refused because of it; the controllers
# coming back are synced again; a controller removed from the PCI bus is
# let go (no "(deleted)" node left open) and, rescanned, comes back under
# its own name (a controller kept alive by an open descriptor keeps its
# instance number: the new one would get another). Before: the handles
# stayed open for the process's life (module pinned, removed controllers
# kept alive).
. /vwc/guest/lib.sh
# 12 checks on every path, and 5 more (or 1) as rmmod nvme goes
plan 12

if [ -r /etc/vwc-compat/expect ]; then
	. /etc/vwc-compat/expect
	libs=$(LD_TRACE_LOADED_OBJECTS=1 nvme-vwc-sync 2>&1)
	case $libs in
	*"$VWC_EXPECT_STANDALONE"*) pass "compat: nvme-vwc-sync loads $VWC_EXPECT_STANDALONE" ;;
	*) fail "compat: nvme-vwc-sync loads $VWC_EXPECT_STANDALONE" "$libs" ;;
	esac
else
	fail "compat: /etc/vwc-compat/expect" "missing: not an image made by tests/compat/run.sh"
fi

off=$(ctrl_by_serial VWC0)
on=$(ctrl_by_serial VWC1)
wtoff() { [ "$(cat "/sys/block/$(ns_of "$(ctrl_by_serial VWC0)")/queue/write_cache" 2>/dev/null)" = "write through" ]; }
alive() { kill -0 "$pid" 2>/dev/null; }
# nvme_fds: the sidecar's descriptors of NVMe nodes, "fd -> node" each
nvme_fds() {
	for f in /proc/$pid/fd/*; do
		t=$(readlink "$f" 2>/dev/null) || continue
		case $t in /dev/nvme* | /dev/ng*) echo "${f##*/} -> $t" ;; esac
	done
}
# released N: the log has N "idle: descriptor closed" lines or more
released() { [ "$(grep -c 'idle: descriptor closed' /tmp/watch.log)" -ge "$1" ]; }
none_left() { ! ls -d /sys/class/nvme/nvme* >/dev/null 2>&1; }
both_live() {
	for s in VWC0 VWC1; do
		c=$(ctrl_by_serial "$s") && ctrl_live "$c" || return 1
	done
}
gone() { [ ! -e "/sys/class/nvme/$1" ]; }
# no_fds NAME: no descriptor of an NVMe node held, once the sidecar is quiet
no_fds() {
	# the re-checks after a controller came (0.3, 1.5, 5 s) and the
	# release of their descriptors 1 s after are over
	log_quiet /tmp/watch.log 40
	_f=$(nvme_fds | tr '\n' ' ')
	if [ -z "$_f" ]; then
		pass "$1"
	else
		fail "$1" "held: $_f"
		tail -n 8 /tmp/watch.log | while IFS= read -r _l; do info "watch.log: $_l"; done
	fi
}

nvme-vwc-sync watch -v -v --interval=600 >/tmp/watch.log 2>&1 &
pid=$!
wait_for "initial: WCE-off namespace write through" 20 wtoff
wait_for "both controllers' descriptors released when idle" 20 released 2
no_fds "after the idle release: no descriptor of an NVMe node held"

if rmmod nvme 2>/tmp/rmmod.err; then
	plan 5
	pass "rmmod nvme: not refused because of the sidecar"
	wait_for "the controllers are gone" 10 none_left
	alive && pass "the sidecar keeps running without nvme" || fail "the sidecar keeps running without nvme" "$(tail -n 3 /tmp/watch.log)"
	modprobe nvme
	wait_for "modprobe nvme: the controllers are back" 20 both_live
	wait_for "the controllers back: the WCE-off namespace synced again" 20 wtoff
else
	plan 1
	fail "rmmod nvme: not refused because of the sidecar" "$(cat /tmp/rmmod.err); sidecar holds: $(nvme_fds | tr '\n' ' ')"
	lsmod | grep -w nvme | while read -r l; do info "lsmod: $l"; done
fi

n=$(grep -c 'idle: descriptor closed' /tmp/watch.log)
wait_for "released again when idle" 20 released $((n + 2))
no_fds "again: no descriptor of an NVMe node held"

on=$(ctrl_by_serial VWC1)
addr=$(basename "$(readlink -f "/sys/class/nvme/$on/device")")
echo 1 >"/sys/bus/pci/devices/$addr/remove"
wait_for "PCI remove of $on ($addr): the controller is gone" 10 gone "$on"
sleep 2
left=$(nvme_fds | grep deleted)
check_eq "after the removal: no removed node held open" "$left" ""
echo 1 >/sys/bus/pci/rescan
wait_for "rescan: the controller is back" 20 ctrl_by_serial VWC1
back=$(ctrl_by_serial VWC1)
check_eq "rescan: it comes back as $on (its instance was freed)" "$back" "$on"
alive && pass "the sidecar keeps running" || fail "the sidecar keeps running" "$(tail -n 3 /tmp/watch.log)"
kill -TERM "$pid"
wait "$pid"
check_eq "clean stop" "$?" 0
finish
