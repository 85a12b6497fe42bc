# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off
# timeout: 1800
#
# Benchmark (not a test): where `nvme-vwc-sync audit -o json` spends its
# time over 1,025 namespaces on 5 PCIe controllers (the VM case scale's
# machine), under QEMU/TCG.
# 1. Wall time, REPS runs (median, all), with the user and system CPU
#    time of each run (the shell's children times, 10 ms ticks), against
#    the scan alone ('audit nvme99': nothing probed) and process start
#    ('audit --help'); interleaved with /usr/local/sbin/nvme-vwc-sync-old
#    when the image has it (a previous build put into the DESTDIR by hand).
# 2. `strace -c -f`: system calls by kind, count and time.
# 3. `strace -f -ttt -T`: ioctl and openat counts (openat by what it
#    opens), and the time between system calls (the program's own CPU,
#    inflated by strace alike for every phase) by the phase it precedes:
#    the scan (class/nvme, class/block, controller attributes), the NVMe
#    commands (ioctl), the block-layer reads (queue/), the report (write to
#    stdout), with the longest gaps and the system calls around them.
# Lines for the bench runner start with "BENCH:".
. /vwc/guest/lib.sh
REPS=${VWC_BENCH_REPS:-7}
NNS=1025
nblk() { ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l; }
all_there() { [ "$(nblk)" -ge "$NNS" ]; }
wait_for - 300 all_there || { fail "bench-audit-scale: $NNS namespaces" "$(nblk) there"; finish; exit 0; }
info "$(nblk) namespaces at uptime $(cut -d' ' -f1 /proc/uptime) s"
. /vwc/bench/lib-audit-profile.sh
audit_profile 5 "$NNS"
finish
