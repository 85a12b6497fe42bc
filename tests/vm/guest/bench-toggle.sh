#!/bin/sh
# vm: ctrl wc=off
#
# Issue 4's figure: raw `nvme set-feature -f 6` toggled N times with the
# sidecar running; time from Set Features returning to the block layer
# showing the right mode (p50/p99/max), and the unsafe window (write through
# while WCE=1). Then the same through `nvme vwc set-cache`, where the block
# layer is switched first: the unsafe window must be zero.
. /vwc/guest/lib.sh
N=${VWC_BENCH_TOGGLES:-50}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10
nvme-vwc-sync watch >/tmp/watch.log 2>&1 &
pid=$!
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$ns/queue/write_cache)\" = 'write through' ]"

# Unsafe-instant sampler: write_cache, then WCE, then write_cache again. A
# sample counts as unsafe only if both reads say write through and WCE
# says 1 in between: with one toggle at a time that cannot come from the
# sampler's own ordering, only from a real window.
sampler() {
	: >/tmp/samples
	while [ -e /tmp/sampling ]; do
		m1=$(cat /sys/block/$ns/queue/write_cache)
		w=$(get_wce "$c")
		m2=$(cat /sys/block/$ns/queue/write_cache)
		if [ "$m1" = "write through" ] && [ "$w" = 1 ] && [ "$m2" = "write through" ]; then
			echo unsafe >>/tmp/samples
		else
			echo ok >>/tmp/samples
		fi
	done
}
# $1: seconds the sampler ran
window() {
	_n=$(command wc -l </tmp/samples)
	echo "$(grep -c unsafe /tmp/samples) unsafe of $_n samples, one every $(($1 * 1000 / (_n > 0 ? _n : 1))) ms (a window shorter than that can slip through)"
}

# poll until write_cache is $1; print microseconds since $2 (ns timestamp)
until_mode() {
	while [ "$(cat /sys/block/$ns/queue/write_cache)" != "$1" ]; do :; done
	echo $((($(/usr/bin/date +%s%N) - $2) / 1000))
}
: >/tmp/en.txt; : >/tmp/dis.txt
touch /tmp/sampling; sampler & spid=$!
s0=$(cut -d. -f1 /proc/uptime)
i=0
while [ $i -lt "$N" ]; do
	nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
	t=$(/usr/bin/date +%s%N)
	until_mode "write back" "$t" >>/tmp/en.txt
	nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1
	t=$(/usr/bin/date +%s%N)
	until_mode "write through" "$t" >>/tmp/dis.txt
	i=$((i + 1))
done
rm -f /tmp/sampling; wait $spid
raw_window=$(window $(($(cut -d. -f1 /proc/uptime) - s0)))
stats() { sort -n "$1" | awk '{ a[NR] = $1 } END { printf "n=%d p50=%d us p99=%d us max=%d us", NR, a[int((NR + 1) * 0.5)], a[int(NR * 0.99) > 0 ? int(NR * 0.99) : 1], a[NR] }'; }
echo "BENCH: raw set-feature WCE=1 -> write back (unsafe window: write through while WCE=1): $(stats /tmp/en.txt)"
echo "BENCH: raw set-feature WCE=0 -> write through (only slower, not unsafe):        $(stats /tmp/dis.txt)"
echo "BENCH: concurrent sampler during the raw toggles: $raw_window"

# set-cache: the same sampler while toggling through the tool, which puts
# the block layer in write back before WCE=1 and clears WCE before write
# through. No sidecar: the ordering alone must keep the window at zero.
kill -TERM $pid; wait $pid
nvme vwc-sync "$c" >/dev/null 2>&1
touch /tmp/sampling; sampler & spid=$!
s0=$(cut -d. -f1 /proc/uptime)
i=0
while [ $i -lt "$N" ]; do
	nvme vwc set-cache on "/dev/$c" >/dev/null 2>&1
	nvme vwc set-cache off "/dev/$c" >/dev/null 2>&1
	i=$((i + 1))
done
rm -f /tmp/sampling; wait $spid
echo "BENCH: nvme vwc set-cache on/off x$N with the same sampler: $(window $(($(cut -d. -f1 /proc/uptime) - s0)))"
echo "BENCH: the raw window is the WCE=1 -> write back time above; set-cache's is zero by its order (block layer first), checked by tests/vm/cases/setcache.sh"
finish
