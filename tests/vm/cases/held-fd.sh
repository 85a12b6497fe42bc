#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 7.2
# timeout: 420
#
# Issue 15: a process that keeps /dev/nvmeX open and toggles WCE through that
# descriptor (wce-toggle: NVME_IOCTL_ADMIN_CMD, and io_uring passthrough
# NVME_URING_CMD_ADMIN where the kernel takes it) raises no close event.
# With kernel-side detection (tracepoint nvme:nvme_setup_cmd) the sidecar
# puts the namespace in write back within tens of milliseconds of WCE=1
# (the issue's target: 50 ms; the figures are the INFO lines and
# bench/results/toggle.txt). The test bounds it at 500 ms, which no
# fallback reaches (the safety net, timed with --interval=2, takes ~1.9 s)
# and which a loaded host does not flake: seen up to 134 ms on 7.2 with
# two guests and a package build on 2 cores, where the write_cache store
# alone costs ~15 ms under emulation.
. /vwc/guest/lib.sh
ROUNDS=${VWC_HELDFD_ROUNDS:-10}
LIMIT_MS=500

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
tp=no
[ -d /sys/kernel/tracing/events/nvme/nvme_setup_cmd ] && tp=yes
info "tracepoint nvme:nvme_setup_cmd available: $tp"
start_udev || fail "held-fd: udevd" "systemd-udevd did not start"
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }

# stats FILE: "n=.. p50=.. p99=.. max=.. timeouts=.." for wce=1 from wce-toggle
on_summary() { sed -n 's/^WCT summary via=[a-z]* wce=1 //p' "$1"; }
field() { echo "$1" | sed -n "s/.*$2=\([0-9.]*\).*/\1/p"; }
# under LIMIT: all caught, p99 under LIMIT_MS
under_limit() {
	_s=$(on_summary "$1")
	[ "$(field "$_s" n)" = "$ROUNDS" ] && [ -n "$(field "$_s" p99)" ] &&
		awk -v p="$(field "$_s" p99)" -v l="$LIMIT_MS" 'BEGIN { exit !(p < l) }'
}

# 1. default sidecar: kernel-side detection where the kernel has it
nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
wpid=$!
wait_for "held-fd: sidecar puts the WCE-off namespace in write through" 10 wt
sleep 2
for via in ioctl uring; do
	opt=
	[ "$via" = uring ] && opt=-u
	wce-toggle $opt -n "$ROUNDS" -d 100 -s "$ns" -t 2000 "/dev/$c" >/tmp/$via.out 2>&1
	rc=$?
	if [ "$rc" -eq 3 ]; then
		skip "held-fd: $via toggle on a held descriptor" "$(sed -n 's/^WCT skip via=[a-z]* reason=//p' /tmp/$via.out)"
		continue
	fi
	info "held-fd $via, default sidecar: WCE=1 -> write back $(on_summary /tmp/$via.out)"
	info "held-fd $via, default sidecar: WCE=0 -> write through $(sed -n 's/^WCT summary via=[a-z]* wce=0 //p' /tmp/$via.out)"
	if [ "$tp" = yes ]; then
		if under_limit /tmp/$via.out; then
			pass "held-fd: $via toggle on a held descriptor caught in under $LIMIT_MS ms ($ROUNDS rounds)"
		else
			fail "held-fd: $via toggle on a held descriptor caught in under $LIMIT_MS ms" "$(on_summary /tmp/$via.out) (timeout 2000 ms per toggle)"
			info "held-fd $via: $(grep '^WCT' /tmp/$via.out | head -n 5 | tr '\n' '|')"
		fi
	else
		skip "held-fd: $via kernel-side detection" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
	fi
	nvme-vwc-sync sync "$c" >/dev/null 2>&1
	wait_for - 5 wt
	sleep 1 # the sidecar's evaluation after sync's close event
done
kill -TERM "$wpid"
wait "$wpid"
info "sidecar log (default): $(grep -v '^ ' /tmp/watch.log | tail -n 3 | tr '\n' '|')"

# 2. the fallback's figure: the safety net every 2 s. Kernel-side detection,
# where the sidecar has it, is switched off for this run by hiding tracefs.
umount /sys/kernel/tracing 2>/dev/null
umount /sys/kernel/debug/tracing 2>/dev/null
umount /sys/kernel/debug 2>/dev/null
nvme-vwc-sync watch -v --interval=2 >/tmp/watch2.log 2>&1 &
wpid=$!
wait_for - 10 wt
sleep 2
wce-toggle -n 5 -d 100 -s "$ns" -t 4000 "/dev/$c" >/tmp/fallback.out 2>&1
s=$(on_summary /tmp/fallback.out)
info "held-fd ioctl, fallback (--interval=2, no tracefs): WCE=1 -> write back $s"
if [ "$(field "$s" n)" = 5 ] && awk -v m="$(field "$s" max)" 'BEGIN { exit !(m <= 3000) }'; then
	pass "held-fd: fallback safety net catches a held-descriptor toggle within its interval (+1 s)"
else
	fail "held-fd: fallback safety net" "$s"
fi
kill -TERM "$wpid"
wait "$wpid"
info "sidecar log (fallback): $(grep -v '^ ' /tmp/watch2.log | tail -n 3 | tr '\n' '|')"
finish
