#!/bin/sh
# kernels: 7.2-generic-io
# timeout: 1500
#
# Fabrics at array scale in one guest: Linux's own target over nvme-loop
# exports 64 subsystems of 16 namespaces (1,024), each subsystem on two
# loop ports (traddr 1 and 2: two controllers, two paths for every
# namespace, ANA optimized on both), odd namespaces on a null_blk device
# without a write cache (their own "no volatile write cache" bit: write
# through), even ones on a null_blk device with a cache (write back). With
# udevd running the image's rules and the project's, and the sidecar
# running (the rules leave controller and namespace events to it: no
# namespace is in write through on a controller's word), every
# path is connected one subsystem after the other. Proves: every one of
# the 1,024 namespaces reaches its mode; audit -o json over them exits 0;
# no lock timeout and no error in the sidecar's log (but about controllers
# the storm deleted while it read them); udevd killed no
# worker and warned of no slow event; the sidecar idle afterwards (no CPU
# tick over 10 s); then a reconnect storm (both paths of 8 subsystems
# gone and back, 2 rounds, the second on what the first left: 10 took
# 360 to 600 s of the guest, more than the test command has, and a third
# round 46 s more, the same paths again) leaves every mode right and the
# sidecar idle.
# The figures (times, CPU) are printed as info; bench/ compares them with
# the rule opted out (bench/guest/bench-fabrics-scale.sh), and runs the
# storm over every subsystem, 10 rounds (bench/guest/bench-fabrics-storm.sh:
# VWC_STORM_SUBSYS and VWC_STORM_ROUNDS, at most 64 subsystems).
. /vwc/guest/lib.sh
plan 12

S=64 K=16 STORM_S=${VWC_STORM_SUBSYS:-8} STORM_N=${VWC_STORM_ROUNDS:-2}
# a storm of at least one subsystem and one round, at most every subsystem
case $STORM_S in '' | *[!0-9]* | 0) STORM_S=8 ;; esac
case $STORM_N in '' | *[!0-9]* | 0) STORM_N=2 ;; esac
[ "$STORM_S" -le "$S" ] || STORM_S=$S
setup_fail() { fail "fabrics-1024: setup" "$1"; finish; exit 1; }
. /vwc/guest/nvmet-loop.sh
nl_setup fabrics-1024 a 1 2

# udevd in the foreground of a background job, its warnings kept
mkdir -p /run/udev
SYSTEMD_LOG_LEVEL=warning SYSTEMD_LOG_TARGET=console \
	systemd-udevd --resolve-names=never >/tmp/udevd.log 2>&1 &
ping_udevd() { udevadm control --ping --timeout=2 >/dev/null 2>&1; }
wait_for - 30 ping_udevd || setup_fail "udevd: $(head -c 300 /tmp/udevd.log)"
udevadm trigger --action=add --type=subsystems >/dev/null 2>&1
udevadm trigger --action=add --type=devices >/dev/null 2>&1
udevadm settle --timeout=60

sidecar_start /tmp/watch.log -v
wait_for - 120 test -e /run/nvme-vwc-sync/sidecar-active ||
	setup_fail "the sidecar made no mark: $(tail -n 3 /tmp/watch.log | tr '\n' '|')"

now() { /usr/bin/date +%s%N; }
ms() { echo $((($(now) - $1) / 1000000)); }
busy() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6 }' /proc/stat; }
sc_cpu() { awk '{ print $14 + $15 }' "/proc/$SC_PID/stat"; }
heads() { ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$'; }
paths() { ls /sys/block | grep -c '^nvme[0-9]*c[0-9]*n[0-9]*$'; }
# namespaces not in their mode: odd NSIDs write through, even write back
# (one grep over every head's two files: a process per file would be
# thousands of forks a poll, CPU taken from what is measured)
wrong() {
	grep -H . /sys/block/nvme*n*/nsid /sys/block/nvme*n*/queue/write_cache 2>/dev/null |
		awk -F: '{ split($1, p, "/"); d = p[4]; if (d ~ /c[0-9]+n/) next
			if ($1 ~ /\/nsid$/) id[d] = $2; else wc[d] = $2 }
			END { w = 0; for (d in wc) { e = (id[d] % 2) ? "write through" : "write back"
				if (!(d in id) || wc[d] != e) w++ } print w }'
}
all_right() { [ "$(heads)" = $((S * K)) ] && [ "$(wrong)" = 0 ]; }
# Connected and deleted through the kernel's own interfaces, as nvme-cli
# does it underneath: nvme-cli scans every controller and namespace the
# host has before each connect (its check for a duplicate), which at this
# scale costs seconds a connect, the same with and without this project
connect() { # SUBSYSTEM PORT
	printf 'transport=loop,traddr=%s,nqn=nqn.2026-12.org.vwc:a%s,hostnqn=%s,hostid=%s' \
		"$2" "$1" "$HOSTNQN" "$HOSTID" 2>/tmp/connect.err >/dev/nvme-fabrics ||
		{ info "connect a$1 port $2: $(head -c 200 /tmp/connect.err) | $(dmesg | tail -n 3 | tr '\n' '|')"; return 1; }
}
disconnect() { # SUBSYSTEM: both of its controllers
	for _f in $(grep -lx "nqn.2026-12.org.vwc:a$1" /sys/class/nvme/nvme*/subsysnqn); do
		echo 1 >"${_f%/subsysnqn}/delete_controller" 2>/dev/null
	done
}

t0=$(now) b0=$(busy) c0=$(sc_cpu)
s=1
while [ $s -le $S ]; do
	connect $s 1
	connect $s 2
	s=$((s + 1))
done
tc=$(ms "$t0")
udevadm settle --timeout=1200
ts=$(ms "$t0")
wait_for - 300 all_right
tr=$(ms "$t0")
info "1,024: connect $tc ms, settled $ts ms, every mode right $tr ms; guest CPU $(($(busy) - b0)) ticks, the sidecar's $(($(sc_cpu) - c0))"
# quiet_idle NAME: the sidecar's work on the events done, then idle: its
# log quiet for 3 s, 6 s more (a reconnected controller is looked at again
# 0.3, 1.5 and 5 s after its event, watch-model.c's settle_delay, quietly
# when nothing changed), then a window of 10 s without one CPU tick; a
# window with ticks (events still being read, e.g. the closes of an
# admin's tool) is followed by another, up to 4: a sidecar that spins
# never has one
quiet_idle() {
	log_quiet /tmp/watch.log 300
	sleep 6
	_w=1
	while :; do
		_c=$(sc_cpu) _l=$(wc -l </tmp/watch.log)
		sleep 10
		_t=$(($(sc_cpu) - _c))
		[ "$_t" = 0 ] || [ $_w -ge 4 ] || { _w=$((_w + 1)); continue; }
		break
	done
	check_eq "$1: the sidecar idle (a window of 10 s without a CPU tick, within 4)" "$_t" 0 ||
		info "$1: the sidecar's log over the last window: $(tail -n +$((_l + 1)) /tmp/watch.log | head -n 8 | tr '\n' '|')"
	info "$1: idle in window $_w"
}
check_eq "connected: $((S * K)) namespaces, $((2 * S * K)) paths" "$(heads) $(paths)" "$((S * K)) $((2 * S * K))"
check_eq "every namespace in its mode (odd write through by its own bit, even write back)" "$(wrong)" 0
# every write through here is the kernel's own (7.2 reads the namespace's
# own bit): no run wrote one, so none made the write-through mark, and
# udev's rule ran no sync for the 128 controllers' adds and connected
# changes (the sidecar took them)
c1=$(ls /sys/class/nvme | head -n 1)
check_eq "no write-through mark; the rule leaves a controller's change ($c1) to the sidecar" \
	"$(test -e /run/nvme-vwc-sync/write-through && echo made) $(udev_queues change "/sys/class/nvme/$c1" 'nvme-vwc-sync sync' && echo queued || echo none)" " none" ||
	info "who made it: $(grep -h "made /run/nvme-vwc-sync/write-through" /tmp/watch.log | head -n 3 | tr '\n' '|')"
quiet_idle "after the connects"

t1=$(now)
nvme-vwc-sync audit -o json >/tmp/audit.json 2>/tmp/audit.err
rc=$?
info "audit -o json over $(jq '.namespaces | length' /tmp/audit.json 2>/dev/null) namespaces: $(ms "$t1") ms"
check_eq "audit -o json over every namespace: exit 0, 1,024 namespaces" \
	"$rc $(jq '.namespaces | length' /tmp/audit.json 2>/dev/null)" "0 $((S * K))"


# both paths of STORM_S subsystems gone and back, STORM_N rounds
t2=$(now) c2=$(sc_cpu)
r=1
while [ $r -le $STORM_N ]; do
	s=1
	while [ $s -le $STORM_S ]; do
		disconnect $s
		s=$((s + 1))
	done
	s=1
	while [ $s -le $STORM_S ]; do
		connect $s 1
		connect $s 2
		s=$((s + 1))
	done
	info "storm: round $r done at $(ms "$t2") ms"
	r=$((r + 1))
done
udevadm settle --timeout=600
wait_for - 300 all_right
info "storm: $STORM_N rounds of $STORM_S subsystems' both paths in $(ms "$t2") ms, the sidecar's CPU $(($(sc_cpu) - c2)) ticks"
check_eq "after the storm: $((S * K)) namespaces, $((2 * S * K)) paths" "$(heads) $(paths)" "$((S * K)) $((2 * S * K))"
check_eq "after the storm: every namespace in its mode" "$(wrong)" 0
quiet_idle "after the storm"

# what the rule runs for one controller's event, and for one namespace's
# (when the sidecar is not there), at this scale: medians of 3 (after the
# idle checks: each run's close of /dev/nvmeN is an event the sidecar
# reads WCE for)
med3() {
	for _i in 1 2 3; do
		_t=$(now)
		"$@" >/dev/null 2>&1
		ms "$_t"
	done | sort -n | sed -n 2p
}
c1=$(grep -lx "nqn.2026-12.org.vwc:a1" /sys/class/nvme/nvme*/subsysnqn | head -n 1 | cut -d/ -f5)
h1=$(ls /sys/block | grep '^nvme[0-9]*n1$' | head -n 1)
info "the rule's run at this scale (median of 3): sync $c1 $(med3 nvme-vwc-sync sync --quiet --keep-restored "$c1") ms, sync $h1 $(med3 nvme-vwc-sync sync --quiet --keep-restored "$h1") ms, --version $(med3 nvme-vwc-sync --version) ms"

check_cmd "the sidecar's log: no lock timeout" sh -c "! grep -q \"writers' lock .* is \" /tmp/watch.log"
# The storm deletes controllers while the sidecar reads them: an open
# that finds the node gone (ENOENT, ENODEV) or the controller not live
# (EAGAIN), a command the host fails for the path being torn down (NVMe
# status 0x370, Host Pathing Error) or that finds no device are the
# kernel's answers about a controller that is going; any other error is
# a failure
gone='No such file or directory|No such device|Resource temporarily unavailable|Host Pathing Error'
check_cmd "the sidecar's log: no error but about controllers the storm deleted" \
	sh -c "! grep -i 'error\\|failed\\|cannot' /tmp/watch.log | grep -qvE '$gone'"
info "the sidecar's errors: $(grep -i 'error\|failed\|cannot' /tmp/watch.log | sed 's/nvme[0-9]*/N/g' | sort | uniq -c | sort -rn | head -n 6 | tr '\n' '|')"
info "udevd said: $(grep -v '^$' /tmp/udevd.log | head -n 5 | tr '\n' '|')"
check_cmd "udevd: no worker killed, no slow event" sh -c "! grep -qi 'timeout\\|killed\\|taking a long time' /tmp/udevd.log"
sidecar_stop "the sidecar stops cleanly"
info "the sidecar's own count: $(grep -o 'stopping (.*)' /tmp/watch.log | tail -n 1)"
info "the sidecar's own account: $(grep -o 'its CPU: .*' /tmp/watch.log | tail -n 1)"
nvme disconnect-all >/dev/null 2>&1
finish
