#!/bin/sh
# vm: ctrl wc=off quirks
# bench: per-kernel
# timeout: 300
#
# What one write of "write back" to queue/write_cache costs the writer, by
# kernel (the sidecar's fast path is such a write). N times: `sh -c true`
# and `sh -c "echo 'write back' >.../write_cache"` (from write through),
# each run by wc-sampler run -F: from the fork to the shell's exit, and to
# the first sample (0.5 ms) in write back. The difference of the exit
# times' p50 is the store's own cost.
. /vwc/guest/lib.sh
N=${VWC_BENCH_N:-30}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
f=/sys/block/$ns/queue/write_cache
: >/tmp/t
: >/tmp/w
i=0
while [ "$i" -lt "$N" ]; do
	wc-sampler run -F -n "$ns" -e through -t 2000 -p 500 -- sh -c true |
		sed -n 's/.*exit_ms=\([0-9.]*\).*/\1/p' >>/tmp/t
	wc-sampler run -F -n "$ns" -e back -t 2000 -p 500 -- sh -c "echo 'write back' >$f" |
		sed -n 's/.* ms=\([0-9.]*\) .*exit_ms=\([0-9.]*\).*/\2 \1/p' >>/tmp/w
	echo "write through" >"$f"
	usleep 50000
	i=$((i + 1))
done
stats() {
	awk -v k="$2" '{ print $k }' "$1" | sort -n | awk '{ a[NR] = $1 } END {
		printf "n=%d p50=%.1f p90=%.1f max=%.1f ms", NR, a[int((NR + 1) / 2)], a[int(NR * 0.9 + 0.999999)], a[NR] }'
}
echo "BENCH: kernel $(uname -r); from wc-sampler's fork"
echo "BENCH: sh -c true, to its exit: $(stats /tmp/t 1)"
echo "BENCH: sh -c echo 'write back' >write_cache, to its exit: $(stats /tmp/w 1)"
echo "BENCH: the same, to write back read: $(stats /tmp/w 2)"
finish
