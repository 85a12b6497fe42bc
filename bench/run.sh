#!/bin/bash
# Benchmarks (not tests): boot a guest per benchmark and print its BENCH:
# lines; with -s, also save them under bench/results/ with the machine,
# the date, the kernel and the command that made them.
# Usage: bench/run.sh [-s] [-k KERNEL] [NAME...]
#   NAME: fsync (the fsync table of the kernel patch "nvme: honor the
#   volatile write cache enable state"), toggle (sidecar reaction, set-cache
#   window), sync (cost of one sync), audit (audit vs shell loop, 16
#   controllers), flush (flush-latency), sidecar-io (fio IOPS/CPU with the
#   sidecar running vs stopped), smart (SMART bit 4 to write back, step by
#   step), zeroout (blkdiscard --zeroout before and after quirks, the
#   measure of the kernel quirk proposal that disables Write Zeroes on the
#   Crucial T700/T705). Default: all. Builds its own tree (build-bench/, no coverage
#   counters; VWC_DESTDIR=DIR measures an installed build instead). The guests are
#   bench/guest/bench-NAME.sh.
#   Not in the default list: io-cost and io-cost-icount (the I/O-path cost
#   of the sidecar's kernel-side detection, kprobes and tracepoints,
#   nvme-loop over null_blk; -k a generic tag, e.g. 7.2-generic: the guest
#   boots TAG-io, that kernel with nvme-loop and null_blk; analysed by
#   bench/io-cost.sh, saved as bench/results/NAME-TAG.txt), soak-30min (the
#   VM case soak's fault injection for 30 minutes: with -k 7.2-generic or
#   6.1-generic), and sched (the fast path thread's scheduling,
#   none/nice/fifo, by the sidecar's share of the reaction; per kernel),
#   faults-all (the VM case faults at every step of every command, each
#   with the next fault kind in turn; per kernel, about 15 min under TCG),
#   aside (side by side with the kernel patch "nvme: honor the volatile
#   write cache enable state": the reaction to a raw Set Features 06h of
#   the patched kernel alone, with the sidecar, and of the stock kernel with
#   the sidecar, in one boot: -k 7.2-generic-patched or 6.1-generic-patched),
#   wcstore (what one write of write back to queue/write_cache costs the
#   writer: -k 7.2-generic, 6.1-generic),
#   t700-boot (how much later the T700 stand-in is usable with Write Zeroes
#   off through the udev rule or the initramfs script on the stock nvme
#   modules than with the quirk in the patched modules' table, in one
#   boot: -k 7.2-generic-patched or 6.1-generic-patched; about 12 min),
#   fabrics-scale (the udev rule's cost over nvme-loop at 32 x 16
#   namespaces: -k 7.2-generic-io; about 12 min under TCG), audit-scale
#   (where audit -o json's time goes over 1,025 PCIe namespaces; 1 min)
#   audit-fabrics (the same over nvme-loop, 63 x 16 namespaces, two
#   paths each: -k 7.2-generic-io; about 8 min), fabrics-storm (the VM
#   case fabrics-1024 with its reconnect storm over all 64 subsystems, 10
#   rounds: -k 7.2-generic-io; about an hour) and textfile-scale (how soon
#   the sidecar's textfile follows one namespace's change among 1,025,
#   and among 1, in one boot).
#   bench/README.md lists them with their results.
# A guest's "# timeout: S" line is its hard timeout (default 3600 s); with
# "# bench: per-kernel" its result is saved as NAME-KERNEL.txt.
# Environment: VWC_BENCH_APPEND, extra guest kernel command line (io-cost:
# "vwc.io_pairs=N vwc.io_seconds=S"; fabrics-scale at 4,096 namespaces:
# "vwc.fs_subsys=128 vwc.fs_ns=32 vwc.fs_phases=off"), VWC_BENCH_OUT, the
# result's name when not the benchmark's (fabrics-scale-4096).
# The guest's serial log is kept as build/bench-logs/NAME.log.
# The header records the host's 1-minute load average, sampled every 10 s
# while the guest ran: the machine may be shared.
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
# A build of its own, not instrumented: the test command's build counts
# lines for coverage (-Db_coverage=true), which costs every process time.
# VWC_DESTDIR names an installed build to measure instead.
if [ -n "${VWC_DESTDIR:-}" ]; then
	DEST=$VWC_DESTDIR build_kind="VWC_DESTDIR=$VWC_DESTDIR"
else
	DEST=build-bench/destdir build_kind="build-bench (debugoptimized, not instrumented)"
	mkdir -p build-bench
	work_build_log=build-bench/bench-build.log
	opts=(--buildtype=debugoptimized -Db_coverage=false "-Dnvme_cli_source=$(bash scripts/fetch-nvme-cli.sh)")
	if [ -f build-bench/build.ninja ]; then
		meson configure build-bench "${opts[@]}" >/dev/null
	else
		meson setup build-bench "${opts[@]}" >/dev/null
	fi
	meson compile -C build-bench >"$work_build_log" 2>&1 ||
		{ cat "$work_build_log" >&2; echo "bench: build-bench failed" >&2; exit 1; }
	rm -rf "$DEST"
	DESTDIR=$PWD/$DEST meson install -C build-bench --quiet >/dev/null
fi
[ -x "$DEST/usr/local/sbin/nvme" ] || { echo "bench: no build in $DEST" >&2; exit 1; }
# the code measured: what was built now (the tree may change during a run)
build_commit="$(git rev-parse --short HEAD 2>/dev/null || echo ?)$(git diff --quiet HEAD 2>/dev/null || echo ' with changes')"
work=$(mktemp -d)
lpid=''
trap '[ -z "$lpid" ] || kill "$lpid" 2>/dev/null; rm -rf "$work"' EXIT
bash tests/vm/mkinitramfs.sh --fio "$work/initrd.cpio" "$DEST" >/dev/null
for name in "${names[@]}"; do
	guest=bench/guest/bench-$name.sh
	[ -f "$guest" ] || { echo "bench: no $guest" >&2; exit 2; }
	ktag=$kernel out=$name
	case $name in
	io-cost*) ktag=${kernel%-io}-io out=$name-${kernel%-io} ;;
	esac
	bash tests/vm/kernels.sh "$ktag" >/dev/null
	# the fixtures the guest names ("# vm: fixture NAME"), for its kernel
	for fx in $(sed -n 's/^# vm: fixture[[:space:]]*//p' "$guest"); do
		bash "tests/vm/fixture-$fx.sh" "$ktag" >/dev/null
	done
	log=$work/$name.log
	to=$(sed -n 's/^# timeout:[[:space:]]*//p' "$guest" | head -n 1)
	! grep -q '^# bench: per-kernel' "$guest" || out=$name-$kernel
	out=${VWC_BENCH_OUT:-$out}
	(while :; do cut -d' ' -f1 /proc/loadavg; sleep 10; done) >"$work/load" &
	lpid=$!
	t0=$(date -u '+%Y-%m-%d %H:%M UTC')
	run=$(bash tests/vm/run-vm.sh -i "$work/initrd.cpio" -k "$ktag" -l "$log" -t "${to:-3600}" \
		-a "${VWC_BENCH_APPEND:+ $VWC_BENCH_APPEND}" "$guest" | tail -n 1) || true
	kill "$lpid"
	wait "$lpid" 2>/dev/null || true
	lpid=''
	{
		echo "# ${VWC_BENCH_APPEND:+VWC_BENCH_APPEND=\"$VWC_BENCH_APPEND\" }${VWC_BENCH_OUT:+VWC_BENCH_OUT=$VWC_BENCH_OUT }bench/run.sh -k $kernel $name"
		echo "# date: $t0 to $(date -u '+%H:%M UTC')"
		echo "# host: $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
		echo "# host load average (1 min, every 10 s during the run): $(awk '{ n++; s += $1; if (n == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 } END { if (n) printf "mean %.1f, min %.1f, max %.1f (%d samples)", s / n, lo, hi, n }' "$work/load") on $(nproc) cores; the machine is shared (other guests and builds ran at the same time)"
		echo "# guest: QEMU $(qemu-system-x86_64 --version | head -n 1 | awk '{ print $4 }') -accel tcg$(sed -n 's/^# vm: icount /, -icount /p' "$guest"), kernel $(grep -m1 -o 'VWC-INIT: kernel [^ ]*' "$log" | cut -d' ' -f3)"
		echo "# build: $build_kind, commit $build_commit"
		echo "# run: ${run#VWC-RUN: }"
		case $name in
		io-cost*) grep -aE '^(BENCH|VWC-INFO|VWC-TEST: PASS)' "$log" ;;
		*) grep -aE '^BENCH' "$log" ;;
		esac | sed 's/^BENCH[A-Z-]*: //' | tr -d '\r'
		grep -aq 'VWC-TEST: FAIL' "$log" && grep -a 'VWC-TEST: FAIL' "$log"
		case $name in
		io-cost*) echo "# analysis (bench/io-cost.sh):"; bash bench/io-cost.sh "$log" ;;
		esac
		true
	} >"$work/$out.txt"
	cat "$work/$out.txt"
	[ "$save" = 0 ] || cp "$work/$out.txt" "bench/results/$out.txt"
	# the guest's whole serial log stays for a look afterwards
	mkdir -p build/bench-logs
	cp "$log" "build/bench-logs/$out.log"
	echo "bench: guest log kept as build/bench-logs/$out.log"
done
