#!/bin/sh
# vm: ctrl wc=off
#
# What one `nvme vwc-sync` on one controller costs, side by side with the
# process start of a do-nothing binary and with one nvme-cli admin command
# (nvme id-ctrl), in one run. Under TCG every instruction is emulated:
# the differences and ratios are the figures, not the absolute times.
. /vwc/guest/lib.sh
N=${VWC_BENCH_REPS:-30}
c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
timeit() {
	_i=0
	while [ $_i -lt "$N" ]; do
		_t0=$(/usr/bin/date +%s%N)
		"$@" >/dev/null 2>&1
		echo $((($(/usr/bin/date +%s%N) - _t0) / 1000))
		_i=$((_i + 1))
	done | med
}
t_true=$(timeit /usr/bin/true)
t_help=$(timeit nvme-vwc-sync --version)
t_idctrl=$(timeit nvme id-ctrl "/dev/$c")
t_sync=$(timeit nvme-vwc-sync sync "$c")
t_plugin=$(timeit nvme vwc-sync "$c")
t_dry=$(timeit nvme-vwc-sync sync --dry-run "$c")
echo "BENCH: medians of $N runs, wall, us (TCG): /usr/bin/true $t_true, nvme-vwc-sync --version $t_help, nvme id-ctrl $t_idctrl"
echo "BENCH: nvme-vwc-sync sync $c (no change needed) $t_sync; nvme vwc-sync $t_plugin; --dry-run $t_dry"
echo "BENCH: sync's own work beyond process start: $((t_sync - t_help)) us; nvme id-ctrl beyond process start: $((t_idctrl - t_true)) us"
echo "BENCH: ratio sync / (one nvme-cli id-ctrl): $(awk -v a="$t_sync" -v b="$t_idctrl" 'BEGIN { printf "%.2f", a / b }')"
set_wc "$ns" "write back"
t0=$(/usr/bin/date +%s%N); nvme-vwc-sync sync "$c" >/dev/null 2>&1; t1=$(/usr/bin/date +%s%N)
echo "BENCH: one sync that changes write back -> write through: $(((t1 - t0) / 1000)) us"
finish
