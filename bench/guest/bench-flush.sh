#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# timeout: 900
#
# Benchmark (not a test): `nvme vwc flush-latency --count N` (1000 by
# default) on a WCE-on and a WCE-off drive: avg/p50/p99/max of NVMe Flush
# through the passthrough interface. Under QEMU/TCG the figures measure the
# emulator and the host's storage, not a drive; on real drives this is the figure
# of the kernel patch "nvme: honor the volatile write cache enable state" (~200 us for a Flush the drive has nothing to do for, on some
# firmware), and the WCE-off row is the one the project removes from fsync.
# Lines for the bench runner start with "BENCH:".
. /vwc/guest/lib.sh
COUNT=${VWC_BENCH_FLUSH_COUNT:-1000}

echo "BENCH: flush-latency --count $COUNT, QEMU/TCG"
echo "BENCH:   drive     | WCE |  avg us |  p50 us |  p99 us |  max us"
for serial in VWC1 VWC0; do
	c=$(ctrl_by_serial "$serial")
	n=$(ns_of "$c")
	wce=$(get_wce "$c")
	if out=$(nvme vwc flush-latency "/dev/$n" --count "$COUNT" -o json 2>&1); then
		echo "$out" | jq -r --arg w "$wce" '"BENCH:   \(.device | . + "          " | .[0:9]) |   \($w) | \([.avg_us, .p50_us, .p99_us, .max_us] | map(tostring | ("       " + .) | .[-7:]) | join(" | "))"'
		pass "bench-flush: $n (WCE $wce)"
	else
		fail "bench-flush: $n (WCE $wce)" "$out"
	fi
done
finish
