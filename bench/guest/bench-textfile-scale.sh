#!/bin/sh
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off
# timeout: 1800
#
# How soon the sidecar's node_exporter textfile (watch --textfile) says
# that one namespace changed, among 1,025: four controllers of 256
# namespaces and a probe controller with one, all WCE off (every
# namespace in write through). A raw Set Features 06h to 1 on the probe
# controller; the time from its namespace's write_cache reading "write
# back" (the sidecar's write) to the textfile saying so, N toggles
# (vwc.tf_toggles=N, default 20); then the same with the four big
# controllers unbound (one namespace in the machine), in the same boot.
# Also the textfile's size and the sidecar's CPU over the toggles.
#   bench/run.sh -s textfile-scale
. /vwc/guest/lib.sh
plan 2
N=$(cmdline_arg vwc.tf_toggles 20)
NNS=1025
tf=/run/prom/nvme-vwc-sync.prom
mkdir -p /run/prom
nblk() { ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l; }
nwt() { cat /sys/block/nvme*n*/queue/write_cache | grep -c 'write through'; }
all_there() { [ "$(nblk)" -ge "$NNS" ]; }
all_wt() { [ "$(nwt)" -ge "$NNS" ]; }
wait_for - 300 all_there || { fail "textfile-scale: setup" "$(nblk) namespaces, not $NNS"; finish; exit 1; }
probe=$(ctrl_by_serial VWC4) && pns=$(ns_of "$probe") && [ -n "$pns" ] ||
	{ fail "textfile-scale: setup" "no probe controller (serial VWC4) or namespace"; finish; exit 1; }
sidecar_start /tmp/watch.log --textfile=$tf
wait_for - 300 all_wt || { fail "textfile-scale: setup" "$(nwt) of $NNS in write through"; finish; exit 1; }
wait_for - 30 grep -q "^nvme_vwc_namespace_write_back{namespace=\"$pns\".* 0\$" $tf
log_quiet /tmp/watch.log 60
cpu() { awk '{ print $14 + $15 }' "/proc/$SC_PID/stat"; }

one() { # WHAT
	_c=$(cpu)
	tf_follow "$probe" "$pns" "$tf" "$N"
	echo "BENCH: $1: textfile $(stat -c %s $tf) bytes; after $pns's write back: mean $TF_MEAN ms, worst $TF_WORST ms over $TF_OK of $N toggles; the sidecar's CPU $(($(cpu) - _c)) ticks over them"
	echo "BENCH: $1: each, ms:$TF_ALL"
	echo "BENCH: $1: median $(echo "$TF_ALL" | tr ' ' '\n' | grep -x -e '-\{0,1\}[0-9][0-9]*' | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }') ms"
}
one "$NNS namespaces"
m_many=$TF_MEAN ok_many=$TF_OK back_many=$TF_BACK
for s in VWC0 VWC1 VWC2 VWC3; do
	c=$(ctrl_by_serial $s) || continue
	basename "$(readlink -f "/sys/class/nvme/$c/device")" >/sys/bus/pci/drivers/nvme/unbind
done
one_left() { [ "$(nblk)" -eq 1 ] && [ "$(grep -c '^nvme_vwc_namespace_write_back{' $tf)" = 1 ]; }
wait_for - 120 one_left || info "the textfile still lists $(grep -c '^nvme_vwc_namespace_write_back{' $tf) namespaces"
log_quiet /tmp/watch.log 60
one "1 namespace"
echo "BENCH: mean with $NNS namespaces / with 1: $(awk -v a="$m_many" -v b="$TF_MEAN" 'BEGIN { printf "%.1fx", b ? a / b : 0 }')"
check_eq "every toggle reached the textfile and back, both" "$ok_many $back_many $TF_OK $TF_BACK" "$N $N $N $N"
sidecar_stop "the sidecar stops cleanly"
finish
