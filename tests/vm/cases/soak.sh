#!/bin/sh
# vm: ctrl wc=off
# vm: subsys name=s0 ctrls=2 wc=off,on
# vm: rootport
# vm: spare
# kernels: 6.1-generic 7.2-generic
# timeout: 600
# timing: samplers read write_cache every 1 ms and judge windows of it
#
# Fault-injection soak, VWC_SOAK_S seconds (default 120; the
# 30-minute run is bench/run.sh -k KERNEL soak-30min). Three samplers
# read write_cache every 1 ms (wc-sampler soak: each follows its
# namespace by serial through resets, rebinds and module reloads, and
# asks every controller reaching it for WCE): VWC0's namespace; the
# hot-added controller VWCHP's; and the namespace (nsid 1) that the
# subsystem VWC1's two controllers share, one WCE=0 (cntlid 0) and one
# WCE=1 (cntlid 1, WCE on through its private namespace). Faults, dealt
# as a deck (every kind once a round, in random order; the first round is
# played whole however long it takes, then rounds until VWC_SOAK_S):
#   0-1 VWC0's WCE toggled through nvme-cli   2 through a held descriptor
#   3 through io_uring passthrough        4 controller reset
#   5 rescan                              6 unbind/bind (same nvmeN back)
#   7 rmmod nvme + modprobe nvme          8 CPU 1 offline/online
#   9 hot-add, or hot-remove, of VWCHP through the QEMU monitor (WCE on
#     or off at random)
#  10 tracefs unmounted and mounted again
#  11 VWCHP's WCE toggled from write through (hot-added first if absent)
#  12 path leave/join: VWC1's WCE=1 controller unbound (the shared
#     namespace goes write through once only the WCE=0 one reaches it),
#     then bound again: write back within LIMIT_MS (its sampler judges)
#  13 Dataset Management with a Set Features 06h WCE=1's bytes (opcode
#     09h, CDW10 low byte 6, CDW11 bit 0) from uid 65534 through VWC0's
#     ng node (chowned to it; 6.1 refuses I/O passthrough without
#     CAP_SYS_ADMIN: root sends those), and `nvme dsm` as root: the
#     sidecar must write no write_cache and log no Set Features, VWC0 stay
#     in write through (a sampler over them)
#  14 `nvme-vwc-sync sync --all` or `set-cache on|off` killed by a random
#     signal (TERM INT HUP PIPE KILL) 0-50 ms after its exec (sig-default
#     -k): the writers' lock is free afterwards
#  15 /run/nvme-vwc-sync read-only or full (a tmpfs over it) while VWC0's
#     WCE goes 1 and 0: the sidecar logs the cause, keeps write back, and
#     writes write through once the directory is back
#  16 a netlink flood: 5 rounds of `change` on every controller's and
#     block device's uevent: the sidecar lives and VWC0 is right again
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
# VWC_MODEL_HOLD_S); the samplers let theirs go from SIGUSR1 until rmmod
# is done (SIGUSR2; letting them go for each attempt only was tried: a
# starved sampler had not yet, and rmmod was refused for 5 s; keeping
# them let go over modprobe, which waits for every probe, made up to
# 25 % of a sampler's samples unknown); udevd's blkid
# opens namespaces for a moment after events. So rmmod is tried every
# 0.1 s for up to 5 s, as an admin would try again, and what still holds
# the module is named when it is refused.
# Result: exposure, not samples: no window (from the first sample in
# write through with a controller at WCE=1 to the first sample known
# safe; a sample whose WCE cannot be read neither opens nor ends one) is
# longer than LIMIT_MS, however sparsely it was sampled, on any of the
# three samplers, and the windows' p50/p99/max (INFO); every sampler's
# drive was toggled (a sampler with no window proves nothing otherwise);
# unknown samples at most UNKNOWN_PCT (5) % of each sampler's outside
# the rmmod pauses (of the samples taken outside them), the pauses
# (timed by the harness) at most PAUSE_PCT (25) % of the samplers' time;
# the
# checks of faults 13-16 above; at the end, held-descriptor toggles from
# CPU 1 after it went offline and back.
# Faults 11-16's first runs (120 s each, 2026-12-02, this 2-core machine
# with other guests beside): 1-2 whole rounds of the deck, 147.3 s
# (7.2-generic) and 146.7 s (6.1-generic) of guest time (the soak before
# them, in a full run beside: 154.8 and 151.3 s); the shared namespace's
# windows on its controller's return 77-92 ms (7.2-generic, 2-3 a run)
# and 119 ms (6.1-generic); no Dataset Management taken for a Set
# Features; every /run fault's cause logged. Unknown samples: 0.0-0.7 %
# outside the rmmod pauses; in all 3.3-6.7 % (7.2-generic) and 12.9-17.8 %
# (6.1-generic: rmmod tears the controllers down for seconds while their
# namespaces still read write through); 25.5 % when the pause also
# covered modprobe; 35.7 % (0.0 % outside: 6.1-generic, the hot-added
# drive's sampler, CI's run of 7e8f067), which failed the bound of 30 %
# in all then in place of the pauses' timed share (below). The soak
# before these faults: 17 and 13 % in all, and
# its hot-added drive's sampler never saw write through (wt=0: that
# drive was never toggled). With a build whose kprobe filter takes an
# I/O queue's command as Set Features (tests/mutants/passthru-io-taken.mut),
# the Dataset Management check fails: the sidecar writes write back.
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
# changes it: 2 waits at the start, the CPU 1 check, 3 samplers'
# windows, 3 drives toggled, 3 unknown shares, the rmmod pauses' share,
# I/O passthrough, signals, /run, floods, the lock, the sidecar alive,
# rmmod, back after each fault
plan 21
DUR=${VWC_SOAK_S:-120}
LIMIT_MS=${VWC_SOAK_LIMIT_MS:-1000}
UNKNOWN_PCT=${VWC_SOAK_UNKNOWN_PCT:-5}
PAUSE_PCT=${VWC_SOAK_PAUSE_PCT:-25}
S=VWC0
HP=VWCHP
SH=VWC1
D=/run/nvme-vwc-sync
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
# the shared namespace (nsid 1 of the subsystem VWC1): write back while
# the WCE=1 controller (cntlid 1) reaches it
sh_ns() { ns_of "$(ctrl_by_serial $SH 0)"; }
wt_of() { [ "$(cat "/sys/block/$1/queue/write_cache" 2>/dev/null)" = "write through" ]; }
wb_of() { [ "$(cat "/sys/block/$1/queue/write_cache" 2>/dev/null)" = "write back" ]; }
sh_wb() { wb_of "$(sh_ns)"; }
wait_for - 30 sh_wb
info "soak: shared namespace $(sh_ns) of $SH: $(wc "$(sh_ns)") with $(ctrl_by_serial $SH 0) (cntlid 0, WCE=$(get_wce "$(ctrl_by_serial $SH 0)")) and $(ctrl_by_serial $SH 1) (cntlid 1, WCE=$(get_wce "$(ctrl_by_serial $SH 1)"))"

wc-sampler soak -s $S -l "$LIMIT_MS" >/tmp/soak.out 2>&1 &
spid=$!
wc-sampler soak -s $HP -l "$LIMIT_MS" >/tmp/soak-hp.out 2>&1 &
hspid=$!
wc-sampler soak -s $SH -N 1 -l "$LIMIT_MS" >/tmp/soak-sh.out 2>&1 &
shspid=$!
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
		nap 0.1
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

# resume_samplers: the samplers take their descriptors again (SIGUSR2),
# and the pause since p0 (their SIGUSR1, in hundredths) is counted
resume_samplers() {
	kill -USR2 "$spid" "$hspid" "$shspid"
	uptime_cs
	pause_cs=$((pause_cs + UPTIME_CS - p0))
}
# rmmod_nvme: try every 0.1 s for up to 5 s (by the clock, uptime_cs,
# read without a process: a loaded guest runs a round of the loop in far
# more than 0.1 s); true when nvme is unloaded
rmmod_nvme() {
	uptime_cs
	_end=$((UPTIME_CS + 500))
	while [ "$UPTIME_CS" -lt "$_end" ]; do
		/tmp/rmmod nvme 2>/tmp/rmmod.err && return 0
		nap 0.1
		uptime_cs
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

# hp_add: hot-add VWCHP through the monitor (WCE on or off at random)
hp_add() {
	hp_n=$((hp_n + 1))
	w=$([ $((RANDOM % 2)) = 0 ] && echo on || echo off)
	host "drive_add 0 if=none,id=hp$hp_n,file={dir}/spare0.img,format=raw"
	sleep 0.5
	host "device_add nvme,id=nvhp,serial=$HP,drive=hp$hp_n,bus=rp0,write-cache=$w"
	if wait_for - 30 hp_present; then
		n_add=$((n_add + 1))
	else
		n_add_fail=$((n_add_fail + 1))
		return 1
	fi
}
# toggle CTRL: WCE=1, 0-0.4 s, WCE=0 through nvme-cli; true when WCE=1 was set
toggle() {
	_t=1
	nvme set-feature "/dev/$1" --feature-id=6 --value=1 >/dev/null 2>&1 || _t=
	sleep 0.$((RANDOM % 5))
	nvme set-feature "/dev/$1" --feature-id=6 --value=0 >/dev/null 2>&1
	[ -n "$_t" ]
}
# since MARK PATTERN: the sidecar's lines after line MARK matching PATTERN
since() { tail -n +"$(($1 + 1))" /tmp/watch.log | grep -c -- "$2"; }
mark() { command wc -l </tmp/watch.log; }
b_gone() { ! ctrl_by_serial $SH 1 >/dev/null; }
b_live() { _b=$(ctrl_by_serial $SH 1) && ctrl_live "$_b"; }
lock_errs() { since "$1" "cannot take the writers' lock"; }
# the deck: every kind of fault once a round, in random order; the first
# round is played whole whatever the time
KINDS=17
deck() {
	awk -v s="$RANDOM" -v n="$KINDS" 'BEGIN { srand(s); for (i = 0; i < n; i++) a[i] = i
		for (i = n - 1; i > 0; i--) { j = int(rand() * (i + 1)); t = a[i]; a[i] = a[j]; a[j] = t }
		for (i = 0; i < n; i++) printf "%d ", a[i] }'
}
SIGS="15:TERM 2:INT 1:HUP 13:PIPE 9:KILL"

n_set=0 n_fd=0 n_uring=0 n_uring_skip=0 n_reset=0 n_rescan=0 n_rebind=0
pause_cs=0 n_rebind_name=0 n_mod=0 n_mod_refused=0 n_cpu=0 n_cpu_fail=0 n_lost=0
n_add=0 n_add_fail=0 n_del=0 n_del_fail=0 n_tr=0 n_tr_busy=0 n_dead=0
n_hp_tog=0 n_hp_tog_fail=0 n_join=0 n_join_wb=0 n_join_late=0 n_join_fail=0
n_dsm=0 n_dsm_refused=0 n_dsm_cmds=0 n_dsm_bad=0 n_dsm_wb=0 n_dsm_fail=0
n_sig=0 n_sig_killed=0 n_sig_lock=0 n_sig_late=0 sig_kinds='' sig_tries='' n_run=0 n_run_fail=0
n_run_logged=0 n_run_back=0 n_flood=0 n_flood_ok=0 n_flood_ev=0 n_flood_seen=0
rounds=0
end=$(($(now_s) + DUR))
while :; do
	for r in $(deck); do
	[ "$rounds" -gt 0 ] && [ "$(now_s)" -ge "$end" ] && break 2
	echo "$(cut -d' ' -f1 /proc/uptime) $r" >>/tmp/faults.log
	case $r in
	0 | 1)
		toggle "$c" && n_set=$((n_set + 1)) ;;
	2)
		wce-toggle -n 1 -d $((RANDOM % 200)) -s "$ns" -t 2000 "/dev/$c" >/tmp/fd.out 2>&1
		[ "$(wct_field "$(wct_summary /tmp/fd.out)" n)" = 1 ] && n_fd=$((n_fd + 1)) ;;
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
		uptime_cs
		p0=$UPTIME_CS
		kill -USR1 "$spid" "$hspid" "$shspid"
		sleep 0.05
		if rmmod_nvme; then
			# the samplers take descriptors again as the
			# controllers come (modprobe waits for their probes)
			resume_samplers
			sleep 0.$((RANDOM % 5))
			/tmp/modprobe nvme || info "soak: modprobe nvme failed"
			n_mod=$((n_mod + 1))
		else
			n_mod_refused=$((n_mod_refused + 1))
			info "soak: rmmod nvme refused for 5 s: $(head -n 1 /tmp/rmmod.err); $(holders)"
			resume_samplers
		fi ;;
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
			hp_add
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
	11)
		# VWCHP's own toggle (hot-added first when absent), from write
		# through: its sampler must see WCE=1 come
		hp_present || hp_add
		if hc=$(ctrl_by_serial $HP) && hn=$(ns_of "$hc") &&
			nvme set-feature "/dev/$hc" --feature-id=6 --value=0 >/dev/null 2>&1 &&
			wait_for - 10 wt_of "$hn" && toggle "$hc"; then
			n_hp_tog=$((n_hp_tog + 1))
		else
			n_hp_tog_fail=$((n_hp_tog_fail + 1))
		fi ;;
	12)
		# path leave/join: the WCE=1 controller of the shared namespace
		# unbound (the namespace may go write through), bound again
		# (write back within the limit: the shared sampler judges it);
		# done when the namespace was write through while it was gone
		if cb=$(ctrl_by_serial $SH 1) && b_live; then
			pb=$(basename "$(readlink -f "/sys/class/nvme/$cb/device")")
			echo "$pb" >/sys/bus/pci/drivers/nvme/unbind 2>/dev/null
			gwt=
			wait_for - 10 b_gone && wait_for - 15 wt_of "$(sh_ns)" && gwt=1
			sleep 0.$((RANDOM % 3))
			echo "$pb" >/sys/bus/pci/drivers/nvme/bind 2>/dev/null
			if wait_for - 30 b_live; then
				if [ -n "$gwt" ]; then
					n_join=$((n_join + 1))
				else
					n_join_wb=$((n_join_wb + 1))
				fi
				wait_for - 10 sh_wb || n_join_late=$((n_join_late + 1))
			else
				n_join_fail=$((n_join_fail + 1))
				info "soak: $SH cntlid 1 ($pb) not back in 30 s: $(why_not_back)"
			fi
		else
			n_join_fail=$((n_join_fail + 1))
		fi ;;
	13)
		# Dataset Management with a Set Features 06h WCE=1's bytes from
		# uid 65534 on VWC0's ng node, and nvme-cli's dsm as root: no
		# write_cache write by the sidecar, VWC0 never out of write through
		ng=ng${ns#nvme}
		DSM_BAD=" $ns: write [a-z]* -> |$c: Set Features 06h WCE=|Set Features 06h WCE=1 on a controller not known"
		if chown 65534 "/dev/$ng" 2>/dev/null && chmod 0600 "/dev/$ng" &&
			wait_for - 10 wt; then
			m0=$(mark)
			wc-sampler sample -n "$ns" -d 0 >/tmp/dsm-sample.out 2>&1 &
			dpid=$!
			sleep 0.1
			nsid=$(ns_nsid "$ns")
			out=$(dsm_wce1_bytes nobody 5 "/dev/$ng" "$nsid")
			case $out in
			*"errno=13 "*)
				# 6.1: no I/O passthrough without CAP_SYS_ADMIN
				n_dsm_refused=$((n_dsm_refused + 1))
				out=$(dsm_wce1_bytes root 5 "/dev/$ng" "$nsid") ;;
			esac
			ok=$(echo "$out" | sed -n 's/.* ok=\([0-9]*\) .*/\1/p')
			nvme dsm "/dev/$ng" --namespace-id="$nsid" --idr --slbs=100000,100001,100002,100003,100004,100005,100006 \
				--blocks=1,1,1,1,1,1,1 >/dev/null 2>&1 && ok=$((${ok:-0} + 1))
			sleep 0.5
			kill -TERM "$dpid"
			wait "$dpid"
			sleep 0.3
			if [ "${ok:-0}" = 6 ]; then
				n_dsm=$((n_dsm + 1))
				n_dsm_cmds=$((n_dsm_cmds + ok))
				tail -n +"$((m0 + 1))" /tmp/watch.log | grep -E "$DSM_BAD" >/tmp/dsm-lines
				n_dsm_bad=$((n_dsm_bad + $(command wc -l </tmp/dsm-lines)))
				cat /tmp/dsm-lines >>/tmp/dsm-bad.log
				n_dsm_wb=$((n_dsm_wb + $(sed -n 's/.* wb=\([0-9]*\) .*/\1/p' /tmp/dsm-sample.out)))
			else
				n_dsm_fail=$((n_dsm_fail + 1))
				info "soak: Dataset Management not completed: $out"
			fi
		else
			n_dsm_fail=$((n_dsm_fail + 1))
		fi ;;
	14)
		# our own commands killed mid-run: a random signal 0-50 ms
		# after the command's exec (sig-default sends it: a shell's
		# `&`, sleep and kill landed before the exec, on a job that
		# ignores SIGINT, or after the command had ended, in 2 of 2
		# tries of one run)
		sg=$(echo $SIGS | cut -d' ' -f$((RANDOM % 5 + 1)))
		sig=${sg#*:}
		case $((RANDOM % 3)) in
		0) cmd="set-cache $([ $((RANDOM % 2)) = 0 ] && echo on || echo off) /dev/$c" ;;
		*) cmd="sync --all" ;;
		esac
		sig-default -k "${sg%%:*}" -a $((RANDOM % 51)) nvme-vwc-sync $cmd >/dev/null 2>/tmp/sig.err
		krc=$?
		n_sig=$((n_sig + 1))
		sd=$(sed -n 's/^SIGDEF //p' /tmp/sig.err)
		case $sd in *running=0*) n_sig_late=$((n_sig_late + 1)) ;; esac
		sig_tries="$sig_tries ${cmd%% *}:$sig:${sd#*after_ms=}"
		if [ "$krc" -gt 128 ]; then
			n_sig_killed=$((n_sig_killed + 1))
			case " $sig_kinds " in *" $sig "*) ;; *) sig_kinds="$sig_kinds $sig" ;; esac
		fi
		# nothing of it holds the writers' lock
		/usr/bin/flock -w 2 $D/lock true 2>/dev/null && n_sig_lock=$((n_sig_lock + 1))
		case $cmd in set-cache\ on*) nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1 ;; esac ;;
	15)
		# the run directory read-only or full for a moment (a tmpfs over
		# it), while VWC0's WCE goes 1 and 0: the sidecar must log the
		# cause, keep write back, and write through once it is usable
		how=$([ $((RANDOM % 2)) = 0 ] && echo ro || echo full)
		m0=$(mark)
		if rundir_$how $D 2>/dev/null; then
			toggle "$c" && n_set=$((n_set + 1))
			logged() { [ "$(lock_errs "$m0")" -gt 0 ]; }
			wait_for - 5 logged
			umount $D 2>/dev/null || umount -l $D
			n_run=$((n_run + 1))
			logged && n_run_logged=$((n_run_logged + 1))
			wait_for - 20 wt && n_run_back=$((n_run_back + 1))
		else
			grep -q " $D " /proc/mounts && umount $D
			n_run_fail=$((n_run_fail + 1))
		fi ;;
	16)
		# a netlink flood: change uevents on every controller and block
		# device, 5 rounds at once
		m0=$(mark)
		ne=0
		for _i in 1 2 3 4 5; do
			for u in /sys/class/nvme/nvme*/uevent /sys/block/nvme*/uevent; do
				echo change >"$u" 2>/dev/null && ne=$((ne + 1))
			done
		done
		flood_seen() { [ "$(since "$m0" 'uevent change')" -gt 0 ]; }
		if [ "$ne" -gt 0 ] && wait_for - 20 flood_seen; then
			n_flood=$((n_flood + 1))
			n_flood_ev=$((n_flood_ev + ne))
			udevadm settle --timeout=30 >/dev/null 2>&1
			n_flood_seen=$((n_flood_seen + $(since "$m0" 'uevent change')))
			kill -0 "$wpid" 2>/dev/null && wait_for - 20 wt && n_flood_ok=$((n_flood_ok + 1))
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
	rounds=$((rounds + 1))
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
kill -TERM "$spid" "$hspid" "$shspid"
wait "$spid"
src=$?
wait "$hspid"
hsrc=$?
wait "$shspid"
shsrc=$?
alive=0
kill -0 "$wpid" 2>/dev/null && alive=1
kill -TERM "$wpid" 2>/dev/null
wait "$wpid"
sleep 0.2
res=$(sed -n 's/^WCS soak //p' /tmp/soak.out)
hres=$(sed -n 's/^WCS soak //p' /tmp/soak-hp.out)
shres=$(sed -n 's/^WCS soak //p' /tmp/soak-sh.out)
fig() { echo "$1" | sed -n "s/.* $2=\([0-9.]*\).*/\1/p"; }
info "soak: faults done over $DUR s, $rounds round(s) of the $KINDS kinds:"
info "soak:   WCE toggles: nvme-cli $n_set, held descriptor $n_fd, io_uring $n_uring ($n_uring_skip refused by the kernel$([ "$n_uring_skip" = 0 ] || echo ": $(sed -n 's/^WCT skip via=uring reason=//p' /tmp/uring.out)"))"
info "soak:   resets $n_reset, rescans $n_rescan, unbind/bind $n_rebind ($n_rebind_name back under the same name)"
info "soak:   rmmod nvme + modprobe nvme: $n_mod done, $n_mod_refused refused"
info "soak:   cpu1 offline/online: $n_cpu done, $n_cpu_fail refused"
info "soak:   hot-add $HP through the monitor: $n_add done, $n_add_fail not seen in 30 s; hot-remove: $n_del done, $n_del_fail not gone in 30 s"
info "soak:   tracefs unmounted and mounted again: $n_tr done, $n_tr_busy busy ($(head -n 1 /tmp/umount.err 2>/dev/null))"
info "soak:   $S given up by the kernel (dead, or removed after a failed probe) and brought back by a PCI remove + rescan: $n_dead"
info "soak:   $S not back within 30 s after a fault: $n_lost"
info "soak:   $HP WCE toggled from write through: $n_hp_tog done, $n_hp_tog_fail not"
info "soak:   path leave/join of $SH's WCE=1 controller: $n_join done (shared namespace write through while it was gone), $n_join_wb with the namespace still write back while it was gone, $n_join_fail not back in 30 s; write back not within 10 s of its return: $n_join_late"
info "soak:   Dataset Management with Set Features 06h WCE=1's bytes (5 from uid 65534, 1 nvme dsm as root): $n_dsm done ($n_dsm_cmds commands; uid 65534 refused by the kernel $n_dsm_refused times, root sent those), $n_dsm_fail not; the sidecar's write_cache writes and Set Features events for $S over them: $n_dsm_bad; write back samples: $n_dsm_wb"
info "soak:   our commands (sync --all, set-cache) sent a signal 0-50 ms after their exec: $n_sig, $n_sig_killed killed by it (${sig_kinds# }), $n_sig_late ended before it; the writers' lock free afterwards: $n_sig_lock; each (command:signal:ms, running, status):$sig_tries"
info "soak:   $D read-only or full: $n_run done ($n_run_fail could not be made), the cause logged $n_run_logged, write through again within 20 s $n_run_back"
info "soak:   netlink floods: $n_flood ($n_flood_ev change uevents written, $n_flood_seen uevent lines of the sidecar), correct again within 20 s $n_flood_ok; ENOBUFS warnings: $(grep -c 'ENOBUFS' /tmp/watch.log)"
info "soak: uid 65534 lock attempts, taken: $(cat /tmp/nobody.count 2>/dev/null)"
info "soak: sampler $S: $res"
info "soak: sampler $HP: $hres"
info "soak: sampler $SH (shared namespace): $shres"
info "soak: window (ms from WCE=1 seen to write back), $S: n $(fig " $res" windows) p50 $(fig " $res" p50) p99 $(fig " $res" p99) max $(fig " $res" max); $HP: n $(fig " $hres" windows) max $(fig " $hres" max); $SH: n $(fig " $shres" windows) max $(fig " $shres" max)"
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
sed -n 's/^WCS window at=\([0-9.]*\) len=\([0-9.]*\).*/\1 \2/p' /tmp/soak.out /tmp/soak-hp.out /tmp/soak-sh.out | head -n 5 |
	while read -r at len; do
		e=$(awk -v a="$at" -v l="$len" 'BEGIN { print a + l / 1000 }')
		f=$(awk -v a="$at" -v e="$e" '$1 <= a - 3 { f = "" } $1 <= e { f = f $1 ":" $2 ($3 ? "-" $3 : "") " " } END { print f }' /tmp/faults.log)
		info "soak: window of $len ms at $at s; faults (time:kind): $f"
		awk -v a="$at" -v e="$e" '$1 >= a - 1 && $1 <= e + 0.5' /tmp/watch.log | head -n 25 |
			while IFS= read -r l; do info "soak:   | $l"; done
	done
# exposure, not samples: a window (WCE=1 seen while write through) longer
# than LIMIT_MS fails however sparsely it was sampled (outside: such
# windows, one still open at the end included)
for v in "$S:$res:$src" "$HP (hot-added):$hres:$hsrc" "$SH (shared namespace):$shres:$shsrc"; do
	n=${v%%:*}
	r=${v#*:}
	case $r in
	*" outside=0 "*) pass "soak: $n: no window of write through with WCE=1 longer than $LIMIT_MS ms ($DUR s)" ;;
	*) fail "soak: $n: no window of write through with WCE=1 longer than $LIMIT_MS ms" "$r (exit ${r##*:})" ;;
	esac
done
# every sampler's drive was toggled: a sampler with no window proves
# nothing unless WCE=1 came while it watched: the harness's count says
# the toggles were done, the sampler's "rises" (write through followed by
# write back, in its own samples) that it saw them happen
r_s=$(fig " $res" rises) r_hp=$(fig " $hres" rises) r_sh=$(fig " $shres" rises)
[ "$((n_set + n_fd + n_uring))" -gt 0 ] && [ "${r_s:-0}" -gt 0 ] &&
	pass "soak: $S's WCE toggled ($n_set nvme-cli, $n_fd held descriptor, $n_uring io_uring), the sampler saw ${r_s:-none} rise(s) to write back" ||
	fail "soak: $S's WCE toggled, seen by its sampler" "toggles $((n_set + n_fd + n_uring)), rises seen ${r_s:-none}"
[ "$n_hp_tog" -gt 0 ] && [ "${r_hp:-0}" -gt 0 ] &&
	pass "soak: $HP's WCE toggled from write through ($n_hp_tog), the sampler saw ${r_hp:-none} rise(s)" ||
	fail "soak: $HP's WCE toggled from write through, seen by its sampler" "$n_hp_tog done, $n_hp_tog_fail not; rises seen ${r_hp:-none}"
[ "$n_join" -gt 0 ] && [ "${r_sh:-0}" -gt 0 ] &&
	pass "soak: $SH's WCE=1 controller left and joined the write-through shared namespace ($n_join), the sampler saw ${r_sh:-none} rise(s)" ||
	fail "soak: $SH's WCE=1 controller left and joined the write-through shared namespace, seen by its sampler" "$n_join done, $n_join_wb still write back while gone, $n_join_fail not back; rises seen ${r_sh:-none}"
# unknown samples (write through, WCE not readable: a reset, a path
# going, the descriptors let go for rmmod) prove nothing either way:
# bounded outside the rmmod pauses. The pauses themselves (by the
# harness's design: rmmod tried for up to 5 s, and the kernel's teardown
# of every controller, seconds each under TCG) are timed here, and may
# take at most PAUSE_PCT % of the samplers' time: the rest is watched
# (3.0 and 5.8 % in the first runs, 7.2-generic and 6.1-generic; a
# refused rmmod pauses 5 s).
# (A bound on the samplers' unknown share of samples in all, pauses
# included, was in place before: samples are no clock. A sampler keeps an
# absolute schedule of one a millisecond, falls behind while it asks the
# controllers for WCE, and catches up in a burst when a pause spares it
# that: one run on 7.2-generic, 36.0 % of the hot-added drive's samples
# in pauses that took 4.1 s of its 138 s, 3.0 %.)
pause_ms=$((pause_cs * 10))
for v in "$S:$res" "$HP:$hres" "$SH:$shres"; do
	n=${v%%:*}
	r=" ${v#*:}"
	sh_=$(awk -v u="$(fig "$r" unknown)" -v t="$(fig "$r" samples)" 'BEGIN { if (t > 0) printf "%.1f", 100 * u / t; else print "none" }')
	# of the samples outside the pauses (a sampler catches up in a burst
	# while paused: counted in all, those would dilute the share)
	shp=$(awk -v u="$(fig "$r" unknown)" -v p="$(fig "$r" paused)" -v t="$(fig "$r" samples)" -v ip="$(fig "$r" in_pause)" 'BEGIN { if (t - ip > 0) printf "%.1f", 100 * (u - p) / (t - ip); else print "none" }')
	info "soak: sampler $n: unknown $(fig "$r" unknown) of $(fig "$r" samples) samples ($sh_%; $(fig "$r" paused) of them while its descriptors were let go for rmmod), absent $(fig "$r" absent), longest gap $(fig "$r" max_gap) ms"
	if [ "$shp" != none ] && awk -v p="$shp" -v l="$UNKNOWN_PCT" 'BEGIN { exit !(p <= l) }'; then
		pass "soak: sampler $n: unknown samples $shp% outside the rmmod pauses (at most $UNKNOWN_PCT%)"
	else
		fail "soak: sampler $n: unknown samples at most $UNKNOWN_PCT% outside the rmmod pauses" "$shp%: $r"
	fi
done
pause_pct=$(awk -v p="$pause_ms" -v t="$(fig " $res" ms)" 'BEGIN { if (t > 0) printf "%.1f", 100 * p / t; else print "none" }')
if [ "$pause_pct" != none ] && awk -v p="$pause_pct" -v l="$PAUSE_PCT" 'BEGIN { exit !(p <= l) }'; then
	fact pass "soak: rmmod pauses $pause_ms ms of the samplers' $(fig " $res" ms) ms ($pause_pct%, at most $PAUSE_PCT%; $n_mod rmmod, $n_mod_refused refused)"
else
	fact fail "soak: rmmod pauses at most $PAUSE_PCT% of the samplers' time" "$pause_ms ms of $(fig " $res" ms) ms ($pause_pct%; $n_mod rmmod, $n_mod_refused refused)"
fi
[ "$n_dsm" -gt 0 ] && [ "$n_dsm_bad" = 0 ] && [ "$n_dsm_wb" = 0 ] &&
	pass "soak: I/O passthrough with Set Features 06h WCE=1's bytes ($n_dsm_cmds commands): no write_cache write, no Set Features event, $S never out of write through" ||
	fail "soak: I/O passthrough with Set Features 06h WCE=1's bytes: no write_cache write, no Set Features event, $S never out of write through" "$n_dsm done ($n_dsm_fail not), sidecar lines $n_dsm_bad, write back samples $n_dsm_wb: $(head -n 3 /tmp/dsm-bad.log 2>/dev/null | tr '\n' '|')"
[ "$n_sig_killed" -gt 0 ] && [ "$n_sig_lock" = "$n_sig" ] &&
	pass "soak: our commands killed mid-run by a signal ($n_sig_killed of $n_sig:$sig_kinds): the writers' lock free after each" ||
	fail "soak: our commands killed mid-run by a signal: the writers' lock free after each" "$n_sig_killed of $n_sig killed ($n_sig_late ended before the signal), lock free after $n_sig_lock:$sig_tries"
[ "$n_run" -gt 0 ] && [ "$n_run_logged" = "$n_run" ] && [ "$n_run_back" = "$n_run" ] &&
	pass "soak: $D read-only or full ($n_run): the cause logged and write through again each time" ||
	fail "soak: $D read-only or full: the cause logged and write through again each time" "$n_run done, logged $n_run_logged, back $n_run_back, $n_run_fail not made"
[ "$n_flood" -gt 0 ] && [ "$n_flood_ok" = "$n_flood" ] &&
	pass "soak: netlink floods ($n_flood, $n_flood_ev uevents): the sidecar alive and $S write through again each time" ||
	fail "soak: netlink floods: the sidecar alive and $S write through again each time" "$n_flood floods, $n_flood_ok right again"
check_eq "soak: uid 65534 never got the lock" "$(cut -d' ' -f2 /tmp/nobody.count 2>/dev/null)" 0
check_eq "soak: the sidecar ran to the end" "$alive" 1
[ "$n_mod" -gt 0 ] && pass "soak: rmmod nvme + modprobe nvme happened ($n_mod)" ||
	fail "soak: rmmod nvme + modprobe nvme happened" "$n_mod done, $n_mod_refused refused"
check_eq "soak: $S came back after every fault" "$n_lost" 0
finish
