#!/bin/sh
# timeout: 1200
# vm: memory 2048
#
# What the sidecar's kernel-side detection costs a process that sends
# passthrough commands, and how many one `nvme connect` sends: Linux's own
# target over nvme-loop in one guest (kernel tag 7.2-generic-io), S
# subsystems of K namespaces (vwc.fs_subsys=S vwc.fs_ns=K, default 8 x 16),
# no udevd.
#  1. io-pt sends N Flush commands through a namespace node's passthrough
#     (each is a call of nvme_submit_user_cmd(), where the kprobe and the
#     return probe sit): its CPU and wall time with the sidecar stopped and
#     running, alternating, P pairs (the order flips every pair); the
#     difference per command.
#  2. One `nvme connect` of the last subsystem with the others connected:
#     its CPU with the sidecar stopped and running, alternating, P pairs;
#     then its ioctl and openat counts under strace -c (nvme-cli's libnvme
#     scans the whole topology at each connect).
. /vwc/guest/lib.sh
plan 1

S=8 K=16
N=$(cmdline_arg vwc.pc_cmds 5000)
P=$(cmdline_arg vwc.pc_pairs 3)
setup_fail() { fail "passthru-cost: setup" "$1"; finish; exit 1; }
. /vwc/guest/nvmet-loop.sh
nl_size
nl_setup passthru-cost s 1
# shellcheck disable=SC3045 # the guest's sh has ulimit -n
ulimit -n 65536 2>/dev/null || :
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

now() { /usr/bin/date +%s%N; }
kids() { awk '{ print $16 + $17 }' /proc/$$/stat; }	# reaped children's ticks
HZ=$(getconf CLK_TCK 2>/dev/null || echo 100)

s=1
while [ $s -lt "$S" ]; do
	nvme connect -t loop -n "nqn.2026-12.org.vwc:s$s" >/dev/null 2>&1 ||
		setup_fail "connect s$s"
	s=$((s + 1))
done
wait_for - 120 sh -c "[ \$(ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*\$') -ge $(((S - 1) * K)) ]" ||
	setup_fail "namespaces of $((S - 1)) subsystems did not appear"
ns=$(ls /sys/block | grep '^nvme[0-9]*n[0-9]*$' | head -n 1)
nsid=$(cat "/sys/block/$ns/nsid" 2>/dev/null || echo 1)
info "$(ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$') namespaces on $((S - 1)) subsystems; $N Flush commands a run through /dev/$ns (NSID $nsid), $P pairs"

# timed FILE CMD...: CMD, its wall ms and the CPU ticks of its reaping
# appended to /tmp/FILE, and left in $_ms and $_tk
timed() {
	_f=$1
	shift
	_k0=$(kids) _t0=$(now)
	"$@"
	_t1=$(now) _k1=$(kids)
	_ms=$(((_t1 - _t0) / 1000000)) _tk=$((_k1 - _k0))
	echo "$_ms $_tk" >>"/tmp/$_f"
}
# N Flush commands through io-pt; run LABEL: one run, as LABEL (stopped
# or running)
iopt() {
	io-pt -n "$N" -o 0 -N "$nsid" "/dev/$ns" >/tmp/iopt.out 2>&1 ||
		info "io-pt: $(cat /tmp/iopt.out)"
}
run() {
	timed "$1" iopt
	echo "BENCH: $1: $N commands: $_ms ms wall, $_tk ticks of CPU ($(cat /tmp/iopt.out))"
}
# the sidecar as the service runs it, idle (its CPU unchanged for 3 s)
# before a run; its CPU is reaped into this shell's outside the runs
sc_cpu() { awk '{ print $14 + $15 }' "/proc/$SC_PID/stat"; }
on() { sidecar_start /tmp/watch.log; steady 120 sc_cpu || info "the sidecar still busy"; }
off() { kill -TERM "$SC_PID"; wait "$SC_PID"; }
# pairs FN: FN stopped and FN running, P pairs, the order flipped every pair
pairs() {
	_i=0
	while [ $_i -lt "$P" ]; do
		if [ $((_i % 2)) = 0 ]; then
			"$1" stopped; on; "$1" running; off
		else
			on; "$1" running; off; "$1" stopped
		fi
		_i=$((_i + 1))
	done
}
rm -f /tmp/stopped /tmp/running
pairs run
mean() { awk -v c="$2" '{ s += $c; n++ } END { printf "%.1f", s / n }' "/tmp/$1"; }
ws=$(mean stopped 1) wr=$(mean running 1) cs=$(mean stopped 2) cr=$(mean running 2)
echo "BENCH: means of $P runs of $N commands: stopped $ws ms wall, $cs ticks; running $wr ms wall, $cr ticks"
echo "BENCH: per command, running minus stopped: $(awk -v a="$wr" -v b="$ws" -v n="$N" 'BEGIN { printf "%.1f", (a - b) * 1000 / n }') us wall, $(awk -v a="$cr" -v b="$cs" -v n="$N" -v hz="$HZ" 'BEGIN { printf "%.1f", (a - b) / hz * 1e6 / n }') us CPU"

# 2. one connect with the others connected: its CPU with the sidecar
# stopped and running, alternating, P pairs (the sidecar's own work on
# the new namespaces is not in it); then its system calls under strace
connect1() { nvme connect -t loop -n "nqn.2026-12.org.vwc:s$S" >/dev/null 2>&1; }
conn() {
	timed "c-$1" connect1
	echo "BENCH: one connect, $1 ($((S - 1)) subsystems, $(((S - 1) * K)) namespaces connected): $_ms ms wall, $_tk ticks of CPU"
	udevadm settle >/dev/null 2>&1
	nvme disconnect -n "nqn.2026-12.org.vwc:s$S" >/dev/null 2>&1
	sleep 2
}
rm -f /tmp/c-stopped /tmp/c-running
pairs conn
echo "BENCH: one connect, means of $P: stopped $(mean c-stopped 1) ms wall, $(mean c-stopped 2) ticks; running $(mean c-running 1) ms wall, $(mean c-running 2) ticks"
on
strace -c -f -o /tmp/conn.txt -e trace=ioctl,openat \
	nvme connect -t loop -n "nqn.2026-12.org.vwc:s$S" >/dev/null 2>&1
echo "BENCH: one connect under strace, the sidecar running: $(awk '$NF == "ioctl" || $NF == "openat" { printf "%s %s calls; ", $4, $NF }' /tmp/conn.txt)"
# the kprobe's hits while the sidecar ran (its nmissed too)
kp=$(cat /sys/kernel/tracing/kprobe_profile 2>/dev/null | grep -E '^ *(admin|done|uring|uring_done) ' | tr -s ' ' | tr '\n' ';')
echo "BENCH: kprobe_profile while running (probe, hits, missed): ${kp:-none}"
off
echo "BENCH: the sidecar's stop line: $(grep -o 'stopping (.*)' /tmp/watch.log | tail -n 1)"
check_eq "passthru-cost: io-pt completed every command" "$(grep -c 'ok='"$N" /tmp/iopt.out)" 1
finish
