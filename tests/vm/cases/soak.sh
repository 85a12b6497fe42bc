#!/bin/sh
# vm: ctrl wc=off
# vm: rootport
# vm: spare
# kernels: 6.1-generic 7.2-generic
# timeout: 600
#
# Fault-injection soak, VWC_SOAK_S seconds (default 120; the
# 30-minute run is bench/run.sh -k KERNEL soak-30min). write_cache of VWC0's
# namespace is sampled every 1 ms by wc-sampler (soak mode: follows the
# controller by serial through resets, rebinds and module reloads), and a
# second sampler follows the hot-added controller VWCHP, while at random:
#   0-1 WCE toggles through nvme-cli      2 through a held descriptor
#   3 through io_uring passthrough        4 controller reset
#   5 rescan                              6 unbind/bind (same nvmeN back)
#   7 rmmod nvme + modprobe nvme          8 CPU 1 offline/online
#   9 hot-add, or hot-remove, of VWCHP through the QEMU monitor (WCE on
#     or off at random)
#  10 tracefs unmounted and mounted again
# and uid 65534 tries to take the writers' lock all along. The guest has
# 2 vCPUs (run-vm.sh's -smp 2), so CPU 1 can go.
# Each fault is counted as done only when it took effect; the INFO lines
# say how many were done and refused. A controller the kernel gives up
# after an admin command timed out (state dead, seen once in 30 minutes
# on 7.2-generic; or removed after a failed probe, seen once in 30
# minutes on 6.1-generic) is brought back as an admin would, by a PCI
# remove + rescan, and counted apart. No fault starts before the
# sidecar's start line.
# `rmmod nvme`: an open /dev/nvmeN or namespace takes a reference on the
# module. The sidecar lets its descriptors go after 1 s idle (watch-model.h,
# VWC_MODEL_HOLD_S); wc-sampler closes its own on SIGUSR1; udevd's blkid
# opens namespaces for a moment after events. So rmmod is tried every
# 0.1 s for up to 5 s, as an admin would try again, and what still holds
# the module is named when it is refused.
# Result: no sample in write through while WCE=1 more than LIMIT_MS into
# its window, and the windows' p50/p99/max (INFO); at the end, held-
# descriptor toggles from CPU 1 after it went offline and back.
# LIMIT_MS 1000. A window closes when the sidecar has seen the Set
# Features on the tracepoints and written write back; a toggle it misses
# ends only when the toggler sets WCE=0 again: wce-toggle's -t 2000 (the
# two misses of this case's first run, before kwatch reopened a CPU's
# events on hotplug, were 2131 and 2218 ms), nvme-cli's second
# set-feature after 0-0.4 s plus its start (about 1 s under load). The
# sidecar's own lines (INFO "sidecar reactions": Set Features submission
# to write back, and the write_cache writes' share) on this 2-core machine
# at load 17-20 with other guests: 6.1-generic p50 2.7-4.6 ms, max 264 ms
# (the sidecar's share 262: waiting for a CPU), write_cache writes max
# 8 ms; 7.2-generic p50 25 ms, max 52 ms, writes max 52 ms. The samplers'
# windows: 7.2-generic max 15 ms (6 windows), 6.1-generic max 152 ms and
# 80 ms. So 1000 ms is about 4 times the slowest reaction seen under that
# load and below every miss; it is not to be raised for load. Not
# explained yet, both under load: one 6.1-generic run (load 17, before the
# sidecar's lines were timed) had one window of 1494 ms; the 30-minute run
# on 7.2-generic (bench/results/soak-30min-7.2-generic.txt) one of 1348 ms
# of 92, over which the sidecar logged nothing for 1.36 s before a full
# probe of the hot-added controller ended, and the sampler got about 90
# samples a second instead of 1000 (the guest starved, or the sidecar
# blocked in that probe's admin commands: not told apart).
# The CPU 1 check without kwatch's reopen on hotplug (7.2-generic): 3 of 3
# toggles timed out at 2000 ms, soak windows up to 3086 ms; with it, 3 of
# 3 within 20-24 ms (7.2-generic), 123 ms (6.1-generic).
# On the sidecar of commit 376e7ee (7.2-generic), before the fixes: 17
# windows, p50 41 ms, max 2272 ms, 1657 samples beyond 1000 ms, and rmmod
# refused every time (the sidecar held /dev/nvme0 for good).
. /vwc/guest/lib.sh
# the plan (tests/lib/guest.sh): whoever adds or removes a check here
# changes it
plan 9
DUR=${VWC_SOAK_S:-120}
LIMIT_MS=${VWC_SOAK_LIMIT_MS:-1000}
S=VWC0
HP=VWCHP
NOBODY="/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups"
kmod_as() { ln -sf /usr/bin/kmod "/tmp/$1"; }
kmod_as rmmod
kmod_as modprobe
kmod_as lsmod
now_s() { /usr/bin/date +%s; }
TR=/sys/kernel/tracing

mkdir -p $TR
grep -q " $TR " /proc/mounts || mount -t tracefs -o nosuid,nodev,noexec tracefs $TR 2>/dev/null
start_udev || fail "soak: udevd" "systemd-udevd did not start"
c=$(ctrl_by_serial $S)
ns=$(ns_of "$c")
pci0=$(basename "$(readlink -f "/sys/class/nvme/$c/device")")
info "soak: $DUR s on $(uname -r), $c $ns, limit $LIMIT_MS ms, $(grep -c ^processor /proc/cpuinfo) CPUs"
# the sidecar's lines with the time (/proc/uptime, as the samplers'
# windows and faults.log count)
mkfifo /tmp/watch.fifo
awk '{ getline u <"/proc/uptime"; close("/proc/uptime"); split(u, a, " ")
	print a[1], $0; fflush() }' </tmp/watch.fifo >/tmp/watch.log &
nvme-vwc-sync watch -v -v >/tmp/watch.fifo 2>&1 &
wpid=$!
wt() { [ "$(cat /sys/block/$ns/queue/write_cache 2>/dev/null)" = "write through" ]; }
wait_for "soak: sidecar puts the WCE-off namespace in write through" 10 wt
# no fault before the sidecar watches: udevd's rule may have put the
# namespace in write through before the sidecar started (a first run's
# first toggle came 1 s before the sidecar's start line)
wait_for "soak: the sidecar's start line (it watches)" 30 grep -q 'watching .*Set Features detection' /tmp/watch.log

wc-sampler soak -s $S -l "$LIMIT_MS" >/tmp/soak.out 2>&1 &
spid=$!
wc-sampler soak -s $HP -l "$LIMIT_MS" >/tmp/soak-hp.out 2>&1 &
hspid=$!
$NOBODY sh -c 'n=0; g=0; while [ ! -e /tmp/soak.stop ]; do
	if /usr/bin/flock -n /run/nvme-vwc-sync/lock true 2>/dev/null; then g=$((g + 1)); fi
	n=$((n + 1)); done; echo "$n $g" >/tmp/nobody.count' &
hpid=$!

# back: wait until the controller (by serial) and its namespace are there
back() {
	_i=0
	while [ "$_i" -lt 300 ]; do
		c=$(ctrl_by_serial $S) && ns=$(ns_of "$c") && ctrl_live "$c" &&
			[ -e "/sys/block/$ns/queue/write_cache" ] && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# holders: who has an nvme node open, and the module's use count
holders() {
	for _p in /proc/[0-9]*; do
		_l=
		for _f in "$_p"/fd/*; do
			_t=$(readlink "$_f" 2>/dev/null)
			case $_t in /dev/nvme* | /dev/ng*) _l="$_l $_t" ;; esac
		done
		[ -z "$_l" ] || printf '%s(%s):%s; ' "$(cat "$_p/comm" 2>/dev/null)" "${_p#/proc/}" "$_l"
	done
	printf 'nvme refcnt %s' "$(cat /sys/module/nvme/refcnt 2>/dev/null)"
}

# rmmod_nvme: try for up to 5 s; true when nvme is unloaded
rmmod_nvme() {
	_i=0
	while [ "$_i" -lt 50 ]; do
		/tmp/rmmod nvme 2>/tmp/rmmod.err && return 0
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# why_not_back: each controller's serial and state, the namespaces, and
# the kernel's last nvme lines
why_not_back() {
	for _d in /sys/class/nvme/nvme*; do
		[ -e "$_d" ] || continue
		printf '%s %s %s; ' "${_d##*/}" "$(cat "$_d/serial" 2>/dev/null | tr -d ' ')" "$(cat "$_d/state" 2>/dev/null)"
	done
	printf 'namespaces: %s; ' "$(ls /sys/block | grep nvme | tr '\n' ' ')"
	dmesg | grep -i nvme | tail -n 8 | tr '\n' '|'
}

# gave_up: the kernel gave VWC0's controller up: marked it dead (it stays,
# state dead), or removed it after a failed probe ("Removing after probe
# failure": the PCI function stays, without a driver). Sets dead_pci.
gave_up() {
	if _c=$(ctrl_by_serial $S 2>/dev/null); then
		[ "$(cat "/sys/class/nvme/$_c/state" 2>/dev/null)" = dead ] || return 1
		dead_pci=$(basename "$(readlink -f "/sys/class/nvme/$_c/device")")
	else
		dead_pci=$pci0
		[ ! -e "/sys/bus/pci/devices/$pci0/driver" ] || return 1
	fi
	[ -e "/sys/bus/pci/devices/$dead_pci/remove" ]
}

hp_n=0
hp_present() { ctrl_by_serial $HP >/dev/null; }
hp_gone() { ! hp_present; }
tr_mounted() { grep -q " $TR " /proc/mounts; }

n_set=0 n_fd=0 n_uring=0 n_uring_skip=0 n_reset=0 n_rescan=0 n_rebind=0
n_rebind_name=0 n_mod=0 n_mod_refused=0 n_cpu=0 n_cpu_fail=0 n_lost=0
n_add=0 n_add_fail=0 n_del=0 n_del_fail=0 n_tr=0 n_tr_busy=0 n_dead=0
end=$(($(now_s) + DUR))
while [ "$(now_s)" -lt "$end" ]; do
	r=$((RANDOM % 11))
	echo "$(cut -d' ' -f1 /proc/uptime) $r" >>/tmp/faults.log
	case $r in
	0 | 1)
		nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
		sleep 0.$((RANDOM % 5))
		nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1
		n_set=$((n_set + 1)) ;;
	2)
		wce-toggle -n 1 -d $((RANDOM % 200)) -s "$ns" -t 2000 "/dev/$c" >/dev/null 2>&1
		n_fd=$((n_fd + 1)) ;;
	3)
		wce-toggle -u -n 1 -d $((RANDOM % 200)) -s "$ns" -t 2000 "/dev/$c" >/tmp/uring.out 2>&1
		if [ $? = 3 ]; then
			n_uring_skip=$((n_uring_skip + 1))
		else
			n_uring=$((n_uring + 1))
		fi ;;
	4)
		echo 1 >"/sys/class/nvme/$c/reset_controller" 2>/dev/null
		n_reset=$((n_reset + 1)) ;;
	5)
		echo 1 >"/sys/class/nvme/$c/rescan_controller" 2>/dev/null
		n_rescan=$((n_rescan + 1)) ;;
	6)
		pci=$(basename "$(readlink -f "/sys/class/nvme/$c/device")")
		c0=$c
		echo "$pci" >/sys/bus/pci/drivers/nvme/unbind 2>/dev/null
		sleep 0.$((RANDOM % 5))
		echo "$pci" >/sys/bus/pci/drivers/nvme/bind 2>/dev/null
		n_rebind=$((n_rebind + 1))
		back && [ "$c" = "$c0" ] && n_rebind_name=$((n_rebind_name + 1)) ;;
	7)
		kill -USR1 "$spid" "$hspid"
		sleep 0.05
		if rmmod_nvme; then
			sleep 0.$((RANDOM % 5))
			/tmp/modprobe nvme || info "soak: modprobe nvme failed"
			n_mod=$((n_mod + 1))
		else
			n_mod_refused=$((n_mod_refused + 1))
			info "soak: rmmod nvme refused for 5 s: $(head -n 1 /tmp/rmmod.err); $(holders)"
		fi
		kill -USR2 "$spid" "$hspid" ;;
	8)
		if echo 0 >/sys/devices/system/cpu/cpu1/online 2>/dev/null; then
			sleep 0.$((RANDOM % 5))
			echo 1 >/sys/devices/system/cpu/cpu1/online
			n_cpu=$((n_cpu + 1))
		else
			n_cpu_fail=$((n_cpu_fail + 1))
		fi ;;
	9)
		if hp_present; then
			host "device_del nvhp"
			if wait_for - 30 hp_gone; then
				n_del=$((n_del + 1))
			else
				n_del_fail=$((n_del_fail + 1))
			fi
		else
			hp_n=$((hp_n + 1))
			w=$([ $((RANDOM % 2)) = 0 ] && echo on || echo off)
			host "drive_add 0 if=none,id=hp$hp_n,file={dir}/spare0.img,format=raw"
			sleep 0.5
			host "device_add nvme,id=nvhp,serial=$HP,drive=hp$hp_n,bus=rp0,write-cache=$w"
			if wait_for - 30 hp_present; then
				n_add=$((n_add + 1))
			else
				n_add_fail=$((n_add_fail + 1))
			fi
		fi ;;
	10)
		if umount $TR 2>/tmp/umount.err; then
			sleep 0.$((RANDOM % 5))
			mount -t tracefs -o nosuid,nodev,noexec tracefs $TR
			n_tr=$((n_tr + 1))
		else
			tr_mounted || mount -t tracefs -o nosuid,nodev,noexec tracefs $TR
			n_tr_busy=$((n_tr_busy + 1))
		fi ;;
	esac
	if ! back && gave_up; then
		# the kernel gave the controller up after an admin command
		# timed out ("I/O 0 QID 0 timeout, disable controller"), then
		# "reset failure" (state dead; 7.2-generic, 30-minute run) or
		# "Removing after probe failure" (6.1-generic, 30-minute run):
		# an admin removes the PCI function and rescans
		n_dead=$((n_dead + 1))
		info "soak: the kernel gave $S up after fault $r: $(why_not_back); PCI remove + rescan"
		echo 1 >"/sys/bus/pci/devices/$dead_pci/remove"
		sleep 0.5
		echo 1 >/sys/bus/pci/rescan
	fi
	back || {
		n_lost=$((n_lost + 1))
		info "soak: $S not back after fault $r: $(why_not_back)"
	}
	echo "$(cut -d' ' -f1 /proc/uptime) $r end" >>/tmp/faults.log
	sleep 0.$((RANDOM % 3))
done
touch /tmp/soak.stop
wait "$hpid"
# Deterministic at the end: CPU 1 goes offline and comes back, then WCE
# toggles through a held descriptor from a process on CPU 1 (no close
# event: only the tracepoints see them). A per-CPU perf event is dead once
# its CPU went offline: the sidecar must open CPU 1's ring anew.
cpuev() { grep -c 'uevent online cpu1' /tmp/watch.log; }
n0=$(cpuev)
echo 0 >/sys/devices/system/cpu/cpu1/online && sleep 0.5 &&
	echo 1 >/sys/devices/system/cpu/cpu1/online
cpu_seen() { [ "$(cpuev)" -gt "$n0" ]; }
wait_for - 10 cpu_seen && cs=seen || cs="not seen in 10 s"
info "soak: the sidecar and CPU 1's online uevent: $cs"
sleep 1
back
taskset -c 1 wce-toggle -n 3 -d 100 -s "$ns" -t 2000 "/dev/$c" >/tmp/cpu1.out 2>&1
info "soak: CPU 1 back, held-descriptor toggles from it ($c $ns): $(wct_summary /tmp/cpu1.out)"
wct_all_within /tmp/cpu1.out 3 "$LIMIT_MS" &&
	pass "soak: held-descriptor WCE=1 from CPU 1 after it went offline and back: 3 of 3 followed within $LIMIT_MS ms" ||
	fail "soak: held-descriptor WCE=1 from CPU 1 after it went offline and back" "$(grep 'WCT' /tmp/cpu1.out | tr '\n' ' ')"
# the last toggles' windows close before the samplers stop
sleep 3
kill -TERM "$spid" "$hspid"
wait "$spid"
src=$?
wait "$hspid"
hsrc=$?
alive=0
kill -0 "$wpid" 2>/dev/null && alive=1
kill -TERM "$wpid" 2>/dev/null
wait "$wpid"
sleep 0.2
res=$(sed -n 's/^WCS soak //p' /tmp/soak.out)
hres=$(sed -n 's/^WCS soak //p' /tmp/soak-hp.out)
fig() { echo "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }
info "soak: faults done over $DUR s:"
info "soak:   WCE toggles: nvme-cli $n_set, held descriptor $n_fd, io_uring $n_uring ($n_uring_skip refused by the kernel$([ "$n_uring_skip" = 0 ] || echo ": $(sed -n 's/^WCT skip via=uring reason=//p' /tmp/uring.out)"))"
info "soak:   resets $n_reset, rescans $n_rescan, unbind/bind $n_rebind ($n_rebind_name back under the same name)"
info "soak:   rmmod nvme + modprobe nvme: $n_mod done, $n_mod_refused refused"
info "soak:   cpu1 offline/online: $n_cpu done, $n_cpu_fail refused"
info "soak:   hot-add $HP through the monitor: $n_add done, $n_add_fail not seen in 30 s; hot-remove: $n_del done, $n_del_fail not gone in 30 s"
info "soak:   tracefs unmounted and mounted again: $n_tr done, $n_tr_busy busy ($(head -n 1 /tmp/umount.err 2>/dev/null))"
info "soak:   $S given up by the kernel (dead, or removed after a failed probe) and brought back by a PCI remove + rescan: $n_dead"
info "soak:   $S not back within 30 s after a fault: $n_lost"
info "soak: uid 65534 lock attempts, taken: $(cat /tmp/nobody.count 2>/dev/null)"
info "soak: sampler $S: $res"
info "soak: sampler $HP: $hres"
info "soak: window (ms from WCE=1 seen to write back), $S: n $(fig " $res" windows) p50 $(fig " $res" p50) p99 $(fig " $res" p99) max $(fig " $res" max); $HP: n $(fig " $hres" windows) max $(fig " $hres" max)"
info "soak: sidecar: tracepoint lines $(grep -c 'tracepoint' /tmp/watch.log), CPU uevents $(grep -c 'uevent o[nf]*line cpu' /tmp/watch.log), descriptors let go when idle $(grep -c 'idle: descriptor closed' /tmp/watch.log)"
# the sidecar's own figures: Set Features submission to write back, and
# the write_cache writes' share of it
info "soak: sidecar reactions (ms): $(sed -n 's/.*reaction \([0-9.]*\) ms from .*write_cache writes \([0-9.]*\) ms, the sidecar.s share \([0-9.]*\) ms.*/\1 \2 \3/p' /tmp/watch.log |
	sort -n | awk '{ n++; r[n] = $1; if ($2 > w) w = $2; if ($3 > s) s = $3 }
		END { if (n) printf "n %d, p50 %s, max %s; write_cache writes max %s; sidecar share max %s", n, r[int((n + 1) / 2)], r[n], w, s; else printf "none" }')"
info "soak: sidecar: $(grep -v '^ ' /tmp/watch.log | tail -n 1)"
# each long window: the faults from the last one begun 3 s before it to
# its end (time:kind, "end" when the fault was over), and the sidecar's
# lines over it
sed -n 's/^WCS window at=\([0-9.]*\) len=\([0-9.]*\)/\1 \2/p' /tmp/soak.out /tmp/soak-hp.out | head -n 5 |
	while read -r at len; do
		e=$(awk -v a="$at" -v l="$len" 'BEGIN { print a + l / 1000 }')
		f=$(awk -v a="$at" -v e="$e" '$1 <= a - 3 { f = "" } $1 <= e { f = f $1 ":" $2 ($3 ? "-" $3 : "") " " } END { print f }' /tmp/faults.log)
		info "soak: window of $len ms at $at s; faults (time:kind): $f"
		awk -v a="$at" -v e="$e" '$1 >= a - 1 && $1 <= e + 0.5' /tmp/watch.log | head -n 25 |
			while IFS= read -r l; do info "soak:   | $l"; done
	done
case $res in
*" outside=0 "*) pass "soak: $S: no write through sample with WCE=1 more than $LIMIT_MS ms into its window ($DUR s)" ;;
*) fail "soak: $S: write through with WCE=1 beyond $LIMIT_MS ms" "$res (exit $src)" ;;
esac
case $hres in
*" outside=0 "*) pass "soak: $HP (hot-added): no write through sample with WCE=1 more than $LIMIT_MS ms into its window" ;;
*) fail "soak: $HP: write through with WCE=1 beyond $LIMIT_MS ms" "$hres (exit $hsrc)" ;;
esac
check_eq "soak: uid 65534 never got the lock" "$(cut -d' ' -f2 /tmp/nobody.count 2>/dev/null)" 0
check_eq "soak: the sidecar ran to the end" "$alive" 1
[ "$n_mod" -gt 0 ] && pass "soak: rmmod nvme + modprobe nvme happened ($n_mod)" ||
	fail "soak: rmmod nvme + modprobe nvme happened" "$n_mod done, $n_mod_refused refused"
check_eq "soak: $S came back after every fault" "$n_lost" 0
finish
