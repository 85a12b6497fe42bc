#!/bin/sh
# vm: ctrl wc=off
# bench: per-kernel
# timeout: 1200
#
# The sidecar's own share of the reaction to a WCE=1 submission
# through a held descriptor, by the fast path thread's scheduling
# (VWC_FAST_SCHED: none, nice -10, SCHED_FIFO 1, the default), in one
# boot, interleaved (3 rounds of each, 20 toggles a round), beside
# wce-toggle's own 1 ms sampler. The share is the sidecar's log line:
# from the kernel's timestamp of the submission (kprobe) to the start of
# its write_cache write. Run:
#   bench/run.sh -s -k 6.1 sched; bench/run.sh -s -k 7.2 sched
. /vwc/guest/lib.sh
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing
start_udev >/dev/null 2>&1
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
for round in 1 2 3; do
	for m in none nice fifo; do
		VWC_FAST_SCHED=$m nvme-vwc-sync watch -v >/tmp/w-$m.log 2>&1 &
		p=$!
		wait_for - 20 wt
		sleep 2
		wce-toggle -n 20 -d 50 -s "$ns" -t 2000 "/dev/$c" >/tmp/t.out 2>&1
		kill -TERM $p
		wait $p
		[ "$round" != 1 ] || echo "BENCH: $m: $(grep -m1 'fast path:' /tmp/w-$m.log | sed 's/^nvme-vwc-sync: //')"
		sed -n 's/.*share \([0-9.]*\) ms.*/\1/p' /tmp/w-$m.log >>/tmp/share-$m
		nvme-vwc-sync sync "$c" >/dev/null 2>&1
	done
done
echo "BENCH: $(uname -r): the sidecar's share (ms) of the reaction to a held-descriptor WCE=1, 60 toggles each, interleaved"
for m in none nice fifo; do
	echo "BENCH: $m: $(sort -n /tmp/share-$m | awk '{ a[NR] = $1 } END { printf "n=%d p50=%s p90=%s p99=%s max=%s", NR, a[int((NR + 1) / 2)], a[int(NR * 0.9 + 0.999)], a[int(NR * 0.99 + 0.999)], a[NR] }')"
done
finish
