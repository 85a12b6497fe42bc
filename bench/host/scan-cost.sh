#!/bin/bash
# What one topology scan of the sidecar costs, on the host, without a
# guest (bench/host/scan-cost.c): a fake sysfs of fabrics shape, S
# subsystems of two controllers each (two paths) and K namespaces, in a
# temporary directory; a first scan, then N - 1 scans each carrying what
# the one before found, as the sidecar's do (their CPU time and page
# faults), and the model's sync timed N times, then
# one run under strace -c (the system calls a scan makes), and the
# sidecar's node_exporter textfile over that topology, written N times in
# the temporary directory (its file system named), and the system calls
# of one write. Built against build-bench (bench/run.sh makes it: no
# coverage counters).
# Usage: bench/host/scan-cost.sh [S [K [N]]]   (default 64 16 20: 1,024
# namespaces, 2,048 paths, fabrics-1024's shape)
# VWC_SCAN_EMU="qemu-x86_64 -cpu max" runs the measures under QEMU's
# user-mode emulation (Debian's qemu-user): the same TCG as the guests',
# without a guest kernel (its system calls are the host's), so the
# user-space part of a scan as a guest pays it, steady to a few percent
# from run to run. VWC_SCAN_BASE=COMMIT builds that commit's scan-cost.c
# against its own libraries too, and runs the two in turns, twice, over
# the same tree (no strace then).
set -euo pipefail
cd "$(dirname "$0")/../.."
S=${1:-64} K=${2:-16} N=${3:-20}
B=build-bench
EMU=${VWC_SCAN_EMU:-} BASE=${VWC_SCAN_BASE:-}
[ -f "$B/src/watch/libvwc_watch.a" ] ||
	{ echo "scan-cost: no $B (bash bench/run.sh builds it)" >&2; exit 1; }
[ -z "$EMU" ] || command -v "${EMU%% *}" >/dev/null ||
	{ echo "scan-cost: no ${EMU%% *} (apt install qemu-user)" >&2; exit 1; }
# shellcheck source=bench/host/lib-scan.sh
. bench/host/lib-scan.sh
# the libraries as the tree is now: the header names the commit
ninja -C "$B" "${scan_libs[@]}" >/dev/null
work=$(mktemp -d)
# restore's marks: an empty directory of our own, not the host's /run
export NVME_VWC_SYNC_RUNDIR=$work/run
trap '[ -z "$BASE" ] || git worktree remove --force "$work/base" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
R=$work/sys
mkdir -p "$R/class/nvme" "$R/class/block" "$R/devices/virtual/nvme-fabrics/ctl"
c=0
for ((s = 0; s < S; s++)); do
	sd=$R/devices/virtual/nvme-subsystem/nvme-subsys$s
	mkdir -p "$sd"
	for _ in 0 1; do # two controllers: two paths
		cd_=$R/devices/virtual/nvme-fabrics/ctl/nvme$c
		mkdir -p "$cd_"
		printf '%-40s\n' Linux >"$cd_/model"
		echo "SN$s" >"$cd_/serial"
		echo 7.2 >"$cd_/firmware_rev"
		echo loop >"$cd_/transport"
		echo "nqn.2026-12.org.vwc:s$s" >"$cd_/subsysnqn"
		echo io >"$cd_/cntrltype"
		ln -s "../../devices/virtual/nvme-fabrics/ctl/nvme$c" "$R/class/nvme/nvme$c"
		for ((n = 1; n <= K; n++)); do
			mkdir -p "$cd_/nvme${s}c${c}n$n/queue"
			ln -s "../../devices/virtual/nvme-fabrics/ctl/nvme$c/nvme${s}c${c}n$n" \
				"$R/class/block/nvme${s}c${c}n$n"
		done
		c=$((c + 1))
	done
	for ((n = 1; n <= K; n++)); do
		mkdir -p "$sd/nvme${s}n$n/queue"
		echo "write back" >"$sd/nvme${s}n$n/queue/write_cache"
		ln -s "../../devices/virtual/nvme-subsystem/nvme-subsys$s/nvme${s}n$n" "$R/class/block/nvme${s}n$n"
	done
done
build_cost . "$B" "$work/scan-cost"
if [ -n "$BASE" ]; then
	base_build "$BASE" "$work/base"
	build_cost "$work/base" "$work/base/build" "$work/scan-cost-base"
fi
echo "# ${EMU:+VWC_SCAN_EMU=\"$EMU\" }${BASE:+VWC_SCAN_BASE=$BASE }bench/host/scan-cost.sh $S $K $N ($(nproc) cores, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), commit $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src || echo ' with changes')${BASE:+; scan-cost-base at $(git rev-parse --short "$BASE")})"
if [ -n "$BASE" ]; then
	# in turns: what the host did meanwhile falls on both
	for round in 1 2; do
		for b in scan-cost-base scan-cost; do
			echo "$b, round $round:"
			# shellcheck disable=SC2086 # the prefix's words
			$EMU "$work/$b" "$R" "$N" "$work/vwc.prom" | sed 's/^/  /'
		done
	done
	exit 0
fi
# shellcheck disable=SC2086 # the prefix's words
$EMU "$work/scan-cost" "$R" "$N" "$work/vwc.prom"
echo "(the textfile's directory is on $(findmnt -n -o FSTYPE -T "$work"))"
if [ -z "$EMU" ] && command -v strace >/dev/null; then
	strace -c -o "$work/st" "$work/scan-cost" "$R" 1 >/dev/null
	echo "system calls of one scan and the first sync (strace -c):"
	awk 'NR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ { print "  " $NF " " $4 }' "$work/st" | sort -k2 -rn | head -n 8
	awk '$NF == "total" { print "  total " $4 }' "$work/st"
	# a rescan's own: two scans (and two syncs) less one
	strace -c -o "$work/st3" "$work/scan-cost" "$R" 2 >/dev/null
	echo "system calls of a rescan after it (and a sync): strace -c of two less one:"
	awk 'FNR > 2 && $NF != "total" && $4 ~ /^[0-9]+$/ { n[$NF] += FILENAME == ARGV[1] ? -$4 : $4 }
	     END { for (k in n) if (n[k]) print "  " k " " n[k] }' "$work/st" "$work/st3" | sort -k2 -rn | head -n 8
	awk '$NF == "total" { t[FILENAME] = $4 } END { print "  total " t[ARGV[2]] - t[ARGV[1]] }' "$work/st" "$work/st3"
	strace -c -o "$work/st2" "$work/scan-cost" "$R" 1 "$work/vwc.prom" >/dev/null
	echo "system calls of one textfile write: $(($(awk '$NF == "total" { print $4 }' "$work/st2") - $(awk '$NF == "total" { print $4 }' "$work/st")))"
fi
