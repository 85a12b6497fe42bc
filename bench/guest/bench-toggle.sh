#!/bin/sh
# vm: ctrl wc=off
#
# How fast the sidecar follows a raw Set Features 06h.
# udevd (with the project's rules) and the sidecar run. Each of N toggles is
# `nvme set-feature --feature-id=6 --value=1` (then 0) run by wc-sampler,
# which reads write_cache every 1 ms from C and times from nvme-cli's exit to
# the mode that follows (no shell in the measurement): p50/p99/max. Then the
# same WCE toggles sent by wce-toggle through one held descriptor (ioctl, and
# io_uring passthrough where the kernel takes it): no close event. Last,
# `nvme-vwc-sync set-cache on/off` x N under a concurrent 1 ms sampler,
# with and without the sidecar: samples in write through while WCE=1.
. /vwc/guest/lib.sh
N=${VWC_BENCH_TOGGLES:-50}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
start_udev >/dev/null 2>&1
nvme-vwc-sync watch >/tmp/watch.log 2>&1 &
pid=$!
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wait_for - 10 wt
sleep 1

# stats FILE: p50/p99/max of the ms column
stats() {
	sort -n "$1" | awk '{ a[NR] = $1 } END {
		if (!NR) { print "n=0"; exit }
		printf "n=%d p50=%.1f ms p99=%.1f ms max=%.1f ms", NR, a[int((NR + 1) / 2)], a[int(NR * 0.99 + 0.999999)], a[NR] }'
}
: >/tmp/en.ms; : >/tmp/dis.ms
to_en=0 to_dis=0 st_en=0 st_dis=0 i=0
while [ "$i" -lt "$N" ]; do
	o=$(wc-sampler run -n "$ns" -e back -t 5000 -q -- nvme set-feature "/dev/$c" --feature-id=6 --value=1)
	case $o in *pre=back*) st_en=$((st_en + 1)) ;; *timeout=0*) echo "$o" | sed -n 's/.* ms=\([0-9.]*\).*/\1/p' >>/tmp/en.ms ;; *) to_en=$((to_en + 1)) ;; esac
	usleep 100000
	o=$(wc-sampler run -n "$ns" -e through -t 5000 -q -- nvme set-feature "/dev/$c" --feature-id=6 --value=0)
	case $o in *pre=through*) st_dis=$((st_dis + 1)) ;; *timeout=0*) echo "$o" | sed -n 's/.* ms=\([0-9.]*\).*/\1/p' >>/tmp/dis.ms ;; *) to_dis=$((to_dis + 1)) ;; esac
	usleep 100000
	i=$((i + 1))
done
echo "BENCH: raw nvme set-feature --value=1 -> write back, from nvme-cli's exit (wc-sampler, 1 ms): $(stats /tmp/en.ms), timeouts (5 s) $to_en, stale (already write back before) $st_en"
echo "BENCH: raw nvme set-feature --value=0 -> write through (only slower, not unsafe): $(stats /tmp/dis.ms), timeouts $to_dis, stale $st_dis"

# a held descriptor: no close event
for via in ioctl uring; do
	opt=
	[ "$via" = uring ] && opt=-u
	nvme-vwc-sync sync "$c" >/dev/null 2>&1
	wait_for - 5 wt
	sleep 1
	wce-toggle $opt -n 10 -d 100 -s "$ns" -t 2000 "/dev/$c" >/tmp/wct.out 2>&1
	if grep -q '^WCT skip' /tmp/wct.out; then
		echo "BENCH: held descriptor, $via: SKIP $(sed -n 's/^WCT skip via=[a-z]* //p' /tmp/wct.out)"
	else
		echo "BENCH: held descriptor, $via, WCE=1 -> write back (timeout 2 s): $(sed -n 's/^WCT summary via=[a-z]* wce=1 //p' /tmp/wct.out)"
	fi
done
kill -TERM $pid
wait $pid
nvme-vwc-sync sync "$c" >/dev/null 2>&1

# set-cache under a concurrent sampler: without, then with the sidecar
window() {
	wc-sampler sample -n "$ns" -d 0 -c "/dev/$c" >/tmp/window.out &
	spid=$!
	usleep 100000
	i=0 fails=0
	while [ "$i" -lt "$N" ]; do
		nvme-vwc-sync set-cache on "/dev/$c" >/dev/null 2>&1 || fails=$((fails + 1))
		nvme-vwc-sync set-cache off "/dev/$c" >/dev/null 2>&1 || fails=$((fails + 1))
		i=$((i + 1))
	done
	kill -TERM $spid
	wait $spid
	echo "set-cache failures $fails; $(sed 's/^WCS sample //' /tmp/window.out)"
}
echo "BENCH: nvme-vwc-sync set-cache on/off x$N, no sidecar, 1 ms sampler: $(window)"
nvme-vwc-sync watch >/tmp/watch2.log 2>&1 &
pid=$!
sleep 2
echo "BENCH: nvme-vwc-sync set-cache on/off x$N, sidecar running, 1 ms sampler: $(window)"
kill -TERM $pid
wait $pid
echo "BENCH: (unsafe = samples where write_cache read write through, then WCE read 1, then write through again)"
finish
