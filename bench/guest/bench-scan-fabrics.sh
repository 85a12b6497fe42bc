#!/bin/sh
# timeout: 2400
# vm: memory 4096
#
# Benchmark (not a test): what one of the sidecar's topology scans costs
# on a real sysfs under TCG (kernel tag 7.2-generic-io), where a system
# call costs what it costs in the sidecar's guests: the VM case
# fabrics-1024's machine (Linux's own target over nvme-loop, S subsystems
# of K namespaces, vwc.fs_subsys=S vwc.fs_ns=K on the kernel command line,
# default 64 x 16 = 1,024, two paths each), udevd with the project's rule
# opted out and no sidecar, then bench/host/scan-cost.c's measures over
# /sys: vwc-scan-cost, and vwc-scan-cost-base (another commit's) beside
# it if there, in turns (bench/host/scan-guest.sh builds them).
. /vwc/guest/lib.sh
N=${VWC_BENCH_REPS:-20}
S=64 K=16
setup_fail() { fail "bench-scan-fabrics: setup" "$1"; finish; exit 1; }
command -v vwc-scan-cost >/dev/null || setup_fail "no vwc-scan-cost (bench/run.sh builds it)"
. /vwc/guest/nvmet-loop.sh
nl_size
nl_setup bench-scan-fabrics a 1 2

mkdir -p /etc/udev/rules.d
echo 'ENV{NVME_VWC_SYNC}="0"' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
start_udev >/dev/null 2>&1 || setup_fail "udevd"
for s in $(seq 1 "$S"); do
	for p in 1 2; do
		printf 'transport=loop,traddr=%s,nqn=nqn.2026-12.org.vwc:a%s,hostnqn=%s,hostid=%s' \
			"$p" "$s" "$HOSTNQN" "$HOSTID" >/dev/nvme-fabrics 2>/dev/null ||
			info "connect a$s port $p failed"
	done
done
udevadm settle --timeout=600
info "connected: $(ls /sys/class/nvme | grep -c '^nvme[0-9]*$') controllers, $(ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$') namespaces, $(ls /sys/block | grep -c '^nvme[0-9]*c[0-9]*n[0-9]*$') paths"
# each build twice, in turns: what the host did meanwhile falls on both
for round in 1 2; do
	for b in vwc-scan-cost-base vwc-scan-cost; do
		command -v "$b" >/dev/null || continue
		echo "BENCH: $b, round $round:"
		"$b" /sys "$N" /run/vwc-scan.prom | sed 's/^/BENCH:   /'
	done
done
finish
