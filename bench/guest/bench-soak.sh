#!/bin/sh
# vm: ctrl wc=off
#
# The sidecar over 1000 events (500 raw WCE toggles, each a close event
# and an evaluation): descriptors and resident memory before and after,
# and how many evaluations it did.
. /vwc/guest/lib.sh
N=${VWC_BENCH_SOAK:-500}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
pid=$!
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"
fd0=$(ls /proc/$pid/fd | command wc -l); rss0=$(awk '/VmRSS/ { print $2 }' /proc/$pid/status)
i=0
while [ $i -lt "$N" ]; do
	nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
	nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1
	i=$((i + 1))
done
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"
sleep 1
fd1=$(ls /proc/$pid/fd | command wc -l); rss1=$(awk '/VmRSS/ { print $2 }' /proc/$pid/status)
kill -TERM $pid; wait $pid
echo "BENCH: sidecar over $((2 * N)) raw Set Features 06h: fds $fd0 -> $fd1, VmRSS $rss0 -> $rss1 kB; $(tail -n 1 /tmp/watch.log | sed 's/^nvme-vwc-sync: //')"
echo "BENCH: final write_cache $(wc "$ns"), WCE $(get_wce "$c")"
finish
