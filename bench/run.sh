#!/bin/bash
# Benchmarks (not tests): boot a guest per benchmark and print its BENCH:
# lines; with -s, also save them under bench/results/ with the machine,
# the date, the kernel and the command that made them.
# Usage: bench/run.sh [-s] [-k KERNEL] [NAME...]
#   NAME: fsync (seed 000's table), toggle (sidecar reaction, set-cache
#   window), sync (cost of one sync), audit (audit vs shell loop, 16
#   controllers), flush
#   (flush-latency), sidecar-io (fio IOPS/CPU with the sidecar running vs
#   stopped), smart (SMART bit 4 to write back, step by step), zeroout (seed
#   003: blkdiscard --zeroout before and after quirks), soak-30min (issue
#   21's fault-injection soak for 30 minutes: with -k 7.2-generic or
#   6.1-generic, not in the default list). Default: all. Needs a build: run
#   tests/run-all.sh or meson compile + install into build/destdir first.
# A guest's "# timeout: S" line is its hard timeout (default 1800 s); with
# "# bench: per-kernel" its result is saved as NAME-KERNEL.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
save=0 kernel=7.2
while getopts sk: o; do
	case $o in
	s) save=1 ;;
	k) kernel=$OPTARG ;;
	*) exit 2 ;;
	esac
done
shift $((OPTIND - 1))
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(fsync toggle sync soak audit flush sidecar-io smart zeroout)
DEST=${VWC_DESTDIR:-build/destdir}
[ -x "$DEST/usr/local/sbin/nvme" ] || { echo "bench: no build in $DEST (run tests/run-all.sh first)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash tests/vm/kernels.sh "$kernel" >/dev/null
bash tests/vm/mkinitramfs.sh "$work/initrd.gz" "$DEST" >/dev/null
for name in "${names[@]}"; do
	guest=tests/vm/guest/bench-$name.sh
	[ -f "$guest" ] || { echo "bench: no $guest" >&2; exit 2; }
	log=$work/$name.log
	to=$(sed -n 's/^# timeout:[[:space:]]*//p' "$guest" | head -n 1)
	out=$name
	! grep -q '^# bench: per-kernel' "$guest" || out=$name-$kernel
	run=$(bash tests/vm/run-vm.sh -i "$work/initrd.gz" -k "$kernel" -l "$log" -t "${to:-1800}" "$guest" | tail -n 1)
	{
		echo "# bench/run.sh -k $kernel $name"
		echo "# date: $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "# host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
		echo "# guest: QEMU $(qemu-system-x86_64 --version | head -n 1 | awk '{ print $4 }') -accel tcg, kernel $(grep -m1 -o 'VWC-INIT: kernel [^ ]*' "$log" | cut -d' ' -f3)"
		echo "# run: ${run#VWC-RUN: }"
		grep -E '^BENCH' "$log" | sed 's/^BENCH[A-Z-]*: //'
		grep -q 'VWC-TEST: FAIL' "$log" && grep 'VWC-TEST: FAIL' "$log"
		true
	} >"$work/$name.txt"
	cat "$work/$name.txt"
	[ "$save" = 0 ] || cp "$work/$name.txt" "bench/results/$out.txt"
done
