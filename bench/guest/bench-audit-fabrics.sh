#!/bin/sh
# timeout: 2400
# vm: memory 4096
#
# Benchmark (not a test): where `nvme-vwc-sync audit -o json` spends its
# time at storage-array scale over fabrics (kernel tag 7.2-generic-io):
# the VM case fabrics-1024's machine, Linux's own target over nvme-loop
# exporting S subsystems of K namespaces (vwc.fs_subsys=S vwc.fs_ns=K on
# the kernel command line, default 64 x 16 = 1,024; 128 x 32 = 4,096 in
# bench/results/audit-fabrics-4096.txt, which needs the 4 GiB), each
# subsystem on two loop ports (two controllers, two paths for every namespace), odd
# namespaces on a null_blk device without a write cache, even ones on one
# with a cache. udevd runs with the project's rule opted out, no sidecar:
# the connects (one subsystem after the other), udev settled, one
# `nvme-vwc-sync sync` (every namespace in its mode, as the case leaves
# them), then the measures of bench-audit-scale.sh (lib-audit-profile.sh).
. /vwc/guest/lib.sh
REPS=${VWC_BENCH_REPS:-5}
S=64 K=16
setup_fail() { fail "bench-audit-fabrics: setup" "$1"; finish; exit 1; }
. /vwc/guest/nvmet-loop.sh
nl_size
nl_setup bench-audit-fabrics a 1 2

# nvme-cli's connect fails past about 1,000 namespaces with the usual
# soft limit of 1,024 descriptors (bench-fabrics-scale.sh; at 63 x 16 this
# bench stayed under it, and its 128th connect failed): root raises it
# shellcheck disable=SC3045 # the guest's sh (dash, busybox) has ulimit -n
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || :
mkdir -p /etc/udev/rules.d
echo 'ENV{NVME_VWC_SYNC}="0"' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
start_udev >/dev/null 2>&1 || setup_fail "udevd"
t0=$(/usr/bin/date +%s)
s=1
while [ $s -le $S ]; do
	for p in 1 2; do
		timeout 120 nvme connect -t loop -a "$p" -n "nqn.2026-12.org.vwc:a$s" >/dev/null 2>&1 ||
			info "connect a$s port $p failed: $(dmesg | tail -n 3 | tr '\n' '|')"
	done
	s=$((s + 1))
done
heads() { ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$'; }
paths() { ls /sys/block | grep -c '^nvme[0-9]*c[0-9]*n[0-9]*$'; }
all_there() { [ "$(heads)" -ge $((S * K)) ] && [ "$(paths)" -ge $((2 * S * K)) ]; }
info "connects done in $(($(/usr/bin/date +%s) - t0)) s: $(heads) namespaces, $(paths) paths"
udevadm settle --timeout=300
# a connect that failed (the last one has, now and then): measured as is
wait_for - 300 all_there || info "not all there: measured over what is"
info "connected: $(heads) namespaces, $(paths) paths in $(($(/usr/bin/date +%s) - t0)) s (udev settled)"
t0=$(/usr/bin/date +%s%N)
nvme-vwc-sync sync -q >/dev/null 2>&1
info "nvme-vwc-sync sync: exit $?, $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms"
. /vwc/bench/lib-audit-profile.sh
audit_profile "$(ls /sys/class/nvme | grep -c '^nvme[0-9]*$')" "$(heads)"
nvme disconnect-all >/dev/null 2>&1
finish
