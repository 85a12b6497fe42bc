#!/bin/sh
# vm: ctrl wc=off size=256
#
# Does the sidecar cost the I/O path? (Its kernel-side Set
# Features detection enables the nvme tracepoints, which fire for every
# command.) fio 4k random read, O_DIRECT, QD16, on the WCE-off namespace,
# alternating runs with the sidecar stopped and running in one boot (the
# order flips every pair to cancel drift). fio runs with
# --clocksource=clock_gettime: with its default clock, under TCG on a loaded
# host, some runs reported about 20x the requested runtime (IOPS 287 for
# 18550 I/Os). Per-run figures (label, IOPS, fio's usr+sys CPU %, I/O
# count, wall ms of the fio command), then the mean and spread (min-max,
# standard deviation) of IOPS and CPU for each, the median of the per-pair
# ratios (adjacent runs see about the same load on a shared host), the
# sidecar's own CPU ticks while fio ran, and its stop line (the events that
# reached it).
. /vwc/guest/lib.sh
R=${VWC_BENCH_IO_RUNS:-8}
T=${VWC_BENCH_IO_SECONDS:-3}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
start_udev >/dev/null 2>&1
nvme-vwc-sync sync "$c" >/dev/null 2>&1

# fio_run LABEL: one run; appends "iops cpu ios wall_ms" to /tmp/LABEL
fio_run() {
	_t0=$(/usr/bin/date +%s%N)
	fio --name=rr --filename="/dev/$ns" --rw=randread --bs=4k --direct=1 \
		--ioengine=libaio --iodepth=16 --runtime="$T" --time_based --clocksource=clock_gettime \
		--output-format=json >/tmp/fio.json 2>/tmp/fio.err || { cat /tmp/fio.err; return 1; }
	_wall=$((($(/usr/bin/date +%s%N) - _t0) / 1000000))
	jq -r --arg w "$_wall" '.jobs[0] | "\(.read.iops) \(.usr_cpu + .sys_cpu) \(.read.total_ios) \($w)"' /tmp/fio.json >>"/tmp/$1"
	echo "BENCH-RUN: $1 $(tail -n 1 "/tmp/$1")"
}
running() {
	nvme-vwc-sync watch >/tmp/watch.log 2>&1 &
	pid=$!
	sleep 2
	t0=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	fio_run running
	t1=$(awk '{ print $14 + $15 }' /proc/$pid/stat)
	echo $((t1 - t0)) >>/tmp/ticks
	kill -TERM $pid
	wait $pid
	# what reached the sidecar while fio ran (its stop line, if it counts them)
	sed -n 's/.*stopping (\(.*\))$/\1/p' /tmp/watch.log | tail -n 1 >>/tmp/stops
}
stopped() {
	sleep 2
	fio_run stopped
}
: >/tmp/running; : >/tmp/stopped; : >/tmp/ticks; : >/tmp/stops
fio_run warmup >/dev/null
i=0
while [ "$i" -lt "$R" ]; do
	if [ $((i % 2)) -eq 0 ]; then stopped; running; else running; stopped; fi
	i=$((i + 1))
done
summ() {
	awk '{ n++; s += $1; q += $1 * $1; c += $2; if (n == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
	END { m = s / n; v = q / n - m * m; sd = v > 0 ? v : 0; for (i = 0; i < 60 && sd > 0; i++) sd = (sd + v / sd) / 2
		printf "IOPS mean %.0f, min %.0f, max %.0f (spread %.1f%% of the mean), sd %.0f; fio CPU (usr+sys) mean %.1f%%", m, lo, hi, 100 * (hi - lo) / m, sd, c / n }' "$1"
}
echo "BENCH: fio 4k randread QD16 ${T}s x$R, sidecar stopped: $(summ /tmp/stopped)"
echo "BENCH: fio 4k randread QD16 ${T}s x$R, sidecar running: $(summ /tmp/running)"
echo "BENCH: difference of the means: $(awk 'NR == FNR { a += $1; n++; next } { b += $1; m++ } END { printf "%+.1f%% (running vs stopped)", 100 * (b / m - a / n) / (a / n) }' /tmp/stopped /tmp/running)"
echo "BENCH: per-pair IOPS ratio running/stopped: $(paste /tmp/running /tmp/stopped | awk '{ printf "%.3f\n", $1 / $5 }' | sort -n | tr '\n' ' ')(median $(paste /tmp/running /tmp/stopped | awk '{ printf "%.3f\n", $1 / $5 }' | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'))"
echo "BENCH: sidecar CPU ticks during each running fio: $(tr '\n' ' ' </tmp/ticks)"
echo "BENCH: sidecar says: $(grep -m 1 watching /tmp/watch.log)"
echo "BENCH: sidecar's stop lines, one per running fio (its I/O count is the last column of the running lines): $(tr '\n' '|' </tmp/stops)"
finish
