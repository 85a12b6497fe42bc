#!/bin/sh
# timeout: 2400
#
# Benchmark (not a test): where `nvme-vwc-sync audit -o json` spends its
# time at storage-array scale over fabrics (kernel tag 7.2-generic-io):
# the VM case fabrics-1024's machine, Linux's own target over nvme-loop
# exporting S subsystems of K namespaces (vwc.fs_subsys=S vwc.fs_ns=K on
# the kernel command line, default 63 x 16 = 1,008: the 128th controller's
# connect failed in two runs here and the guest hung), each subsystem on two
# loop ports (two controllers, two paths for every namespace), odd
# namespaces on a null_blk device without a write cache, even ones on one
# with a cache. udevd runs with the project's rule opted out, no sidecar:
# the connects (one subsystem after the other), udev settled, one
# `nvme-vwc-sync sync` (every namespace in its mode, as the case leaves
# them), then the measures of bench-audit-scale.sh (lib-audit-profile.sh).
. /vwc/guest/lib.sh
REPS=${VWC_BENCH_REPS:-5}
S=63 K=16
for a in $(cat /proc/cmdline); do
	case $a in
	vwc.fs_subsys=*) S=${a#*=} ;;
	vwc.fs_ns=*) K=${a#*=} ;;
	esac
done
M=/lib/modules/$(uname -r)
setup_fail() { fail "bench-audit-fabrics: setup" "$1"; finish; exit 1; }
grep -q '/nvme-loop\.ko$' "$M/modules.load" 2>/dev/null ||
	setup_fail "no nvme-loop in $(uname -r) (boot 7.2-generic-io)"

mount -t configfs none /sys/kernel/config 2>/dev/null
NB=/sys/kernel/config/nullb/nullbwc
mkdir "$NB" && echo 1024 >"$NB/size" && echo 1 >"$NB/memory_backed" &&
	echo 16 >"$NB/cache_size" && echo 1 >"$NB/power" ||
	setup_fail "null_blk with a cache refused"
WCDEV=nullbwc
[ -b /dev/$WCDEV ] || WCDEV=nullb$(cat "$NB/index")
[ -b /dev/$WCDEV ] || setup_fail "no null_blk disk with a cache"

T=/sys/kernel/config/nvmet
for p in 1 2; do
	mkdir "$T/ports/$p" && echo loop >"$T/ports/$p/addr_trtype" &&
		echo "$p" >"$T/ports/$p/addr_traddr" || setup_fail "port $p"
done
s=1
while [ $s -le $S ]; do
	SS=$T/subsystems/nqn.2026-12.org.vwc:a$s
	mkdir "$SS" && echo 1 >"$SS/attr_allow_any_host" || setup_fail "subsystem $s"
	n=1
	while [ $n -le $K ]; do
		mkdir "$SS/namespaces/$n" || setup_fail "namespace $s/$n"
		if [ $((n % 2)) = 1 ]; then dev=/dev/nullb0; else dev=/dev/$WCDEV; fi
		printf %s "$dev" >"$SS/namespaces/$n/device_path" &&
			echo 1 >"$SS/namespaces/$n/enable" ||
			setup_fail "namespace $s/$n on $dev"
		n=$((n + 1))
	done
	for p in 1 2; do
		ln -s "$SS" "$T/ports/$p/subsystems/" || setup_fail "link $s to port $p"
	done
	s=$((s + 1))
done
mkdir -p /etc/nvme
hid=$(cat /proc/sys/kernel/random/uuid)
echo "nqn.2014-08.org.nvmexpress:uuid:$hid" >/etc/nvme/hostnqn
echo "$hid" >/etc/nvme/hostid

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
