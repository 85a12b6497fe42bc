#!/bin/sh
# timeout: 3000
# vm: memory 4096
#
# The udev rule's cost at fabrics scale: Linux's own target over nvme-loop
# in one guest (kernel tag 7.2-generic-io), S subsystems of K namespaces
# each (vwc.fs_subsys=S vwc.fs_ns=K on the kernel command line, default
# 32 x 16 = 512), half of each subsystem's namespaces on a null_blk device
# without a write cache (NSFEAT bit 5 set: write through), half on one
# with a cache (write back). With udevd running the image's rules (the
# host's and the project's), the subsystems are connected one after the
# other and udev settled, timed: first with the project's rule opted out
# (ENV{NVME_VWC_SYNC}="0"), then with it, then with it and the sidecar
# running (namespace adds handed to the sidecar), in the same boot,
# disconnected in between, and the opted-out phase once more at the end.
# Also: the CPU time of the whole guest over each phase and whose it was,
# one sync of one namespace at that scale beside a process start, and
# audit over everything.
. /vwc/guest/lib.sh
plan 2

S=32 K=16
setup_fail() { fail "fabrics-scale: setup" "$1"; finish; exit 1; }
. /vwc/guest/nvmet-loop.sh
nl_size
nl_setup fabrics-scale s 1

# nvme-cli's connect and disconnect fail past about 1,000 namespaces
# with the usual soft limit of 1,024 descriptors ("Failed to open
# /dev/nvme-fabrics: Too many open files", nvme-cli 2.3): root raises it
# shellcheck disable=SC3045 # the guest's sh (dash, busybox) has ulimit -n
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null || :
# shellcheck disable=SC3045
info "descriptors: at most $(ulimit -n) a process"
BIN=$(command -v nvme-vwc-sync)
start_udev >/dev/null 2>&1 || setup_fail "udevd"

busy() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6 }' /proc/stat; }
now() { /usr/bin/date +%s%N; }
nsn() { ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$'; }

# acct: who spent the guest's CPU, in ticks, as "UDEV KERNEL SIDECAR
# SCRIPT": udevd and everything it ran (its workers and their RUN
# programs: alive, or reaped into its own children's time), the kernel's
# threads alive at the time, the sidecar ($SC_PID, when it runs), and
# what this script ran and reaped (nvme connect, udevadm settle)
acct() {
	cat /proc/[0-9]*/stat 2>/dev/null | awk -v sc="${SC_PID:-0}" -v me="$$" '
	{
		pid = $1; c = $0; sub(/^[^(]*\(/, "", c); sub(/\) [^)]*$/, "", c)
		s = $0; sub(/^.*\) /, "", s); split(s, a, " ")
		own = a[12] + a[13]; kids = a[14] + a[15]
		if (c ~ /udev/) u += own + kids
		else if (a[2] == 2 || pid == 2) k += own
		if (pid == sc) d += own
		if (pid == me) m += kids
	}
	END { print u + 0, k + 0, d + 0, m + 0 }'
}

# phase NAME: connect every subsystem one after the other, then settle
phase() {
	_tag=$2 _a0=$(acct)
	_b0=$(busy) _t0=$(now) _said=''
	s=1
	while [ $s -le "$S" ]; do
		if ! nvme connect -t loop -n "nqn.2026-12.org.vwc:s$s" >/tmp/conn.out 2>&1; then
			info "$1: connect s$s failed: $(tr '\n' '|' </tmp/conn.out | head -c 300)"
			[ -n "$_said" ] || info "$1: the kernel said: $(dmesg | tail -n 5 | tr '\n' '|')"
			_said=1
		fi
		s=$((s + 1))
	done
	_t1=$(now)
	udevadm settle --timeout=1800
	_t2=$(now)
	_b1=$(busy)
	_a1=$(acct)
	echo "BENCH: $1: $(nsn) namespaces on $S subsystems: connect ${S}x $(((_t1 - _t0) / 1000000)) ms, then settle $(((_t2 - _t1) / 1000000)) ms: total $(((_t2 - _t0) / 1000000)) ms; guest CPU busy $((_b1 - _b0)) ticks of $(getconf CLK_TCK 2>/dev/null || echo 100)/s"
	# shellcheck disable=SC2086 # four numbers each
	set -- "$1" $_a0 $_a1
	echo "BENCH: $1: whose CPU, ticks: udevd with its workers and RUN programs $(($6 - $2)), kernel threads $(($7 - $3)), the sidecar $(($8 - $4)), nvme connect and udevadm $(($9 - $5)), the rest $((_b1 - _b0 - ($6 - $2) - ($7 - $3) - ($8 - $4) - ($9 - $5))) (interrupts, exited kernel threads; below 0 by what the processes' and the CPUs' tick counts differ)"
	eval "T_$_tag=$(((_t2 - _t0) / 1000000))"
}
disconnect_all() {
	s=1
	while [ $s -le "$S" ]; do
		nvme disconnect -n "nqn.2026-12.org.vwc:s$s" >/dev/null 2>&1
		s=$((s + 1))
	done
	udevadm settle --timeout=600
	wait_for - 60 sh -c '[ "$(ls /sys/block | grep -c "^nvme")" = 0 ]'
}
modes() { # "write through" and "write back" counts over the heads
	for b in /sys/block/nvme*n*; do
		case ${b##*/} in nvme*c*n*) continue ;; esac
		cat "$b/queue/write_cache"
	done | sort | uniq -c | tr -s ' ' | tr '\n' ';'
}

# vwc.fs_phases=off,on (the default): which phases run before the
# sidecar's, which always does (at 4,096 namespaces: off, for time)
P=$(cmdline_arg vwc.fs_phases off,on)
has() { case ",$P," in *",$1,"*) return 0 ;; esac; return 1; }
T_off=0
if has off; then
	echo 'ENV{NVME_VWC_SYNC}="0"' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
	udevadm control --reload
	phase "rule opted out" off
	echo "BENCH: rule opted out: modes $(modes)"
	disconnect_all
	rm /etc/udev/rules.d/70-nvme-vwc-sync-off.rules
	udevadm control --reload
fi
if has on; then
	phase "with the rule" on
	echo "BENCH: with the rule: modes $(modes)"
	[ "$T_off" = 0 ] ||
		echo "BENCH: with the rule / opted out: $(awk -v a="$T_on" -v b="$T_off" 'BEGIN { printf "%.2fx", a / b }')"
	disconnect_all
fi

# the rule with the sidecar running: namespace adds are the sidecar's
# (it made <rundir>/sidecar-active); how long until it is idle (its work
# on the events done: its CPU time unchanged for 3 s), its CPU time. It
# runs as the service does, its notices only; vwc.fs_verbose=1: every
# event logged (-v -v), for the log's lines by kind below
V=''
grep -q 'vwc.fs_verbose=1' /proc/cmdline && V='-v -v'
# the rule's runs for controllers' events: none while the sidecar runs
# and no <rundir>/write-through exists (this tool wrote no write through:
# on 7.2 the kernel holds every one here itself, on the namespace's own
# bit)
# shellcheck disable=SC2086 # V: no word or two
sidecar_start /tmp/watch.log $V
wait_for - 120 test -e /run/nvme-vwc-sync/sidecar-active ||
	info "no /run/nvme-vwc-sync/sidecar-active: this build's sidecar does not make it"
cpu() { awk '{ print $14 + $15 }' "/proc/$SC_PID/stat"; }
# vwc.fs_strace=1: the sidecar's system calls counted over the phase
# (strace -c: slower, for a look at where its time goes, not a figure)
ST=''
if grep -q 'vwc.fs_strace=1' /proc/cmdline && command -v strace >/dev/null; then
	strace -c -f -o /tmp/sc-strace.txt -p "$SC_PID" 2>/dev/null &
	ST=$!
	sleep 1
fi
c0=$(cpu)
phase "with the rule and the sidecar" sc
_q0=$(now)
steady 600 cpu || info "the sidecar still busy after 600 s"
echo "BENCH: with the rule and the sidecar${V:+ (-v -v)}: the sidecar idle $(((($(now) - _q0) / 1000000) - 3000)) ms after settle (3 s of no CPU not counted); its CPU $(($(cpu) - c0)) ticks; modes $(modes)"
echo "BENCH: /run/nvme-vwc-sync/write-through $(test -e /run/nvme-vwc-sync/write-through && echo 'made: the rule ran sync for controllers' || echo 'absent: the rule left controllers to the sidecar')"
[ "$T_off" = 0 ] ||
	echo "BENCH: with the rule and the sidecar / opted out: $(awk -v a="$T_sc" -v b="$T_off" 'BEGIN { printf "%.2fx", a / b }')"
if [ -n "$ST" ]; then
	kill -INT "$ST"
	wait "$ST" 2>/dev/null
	head -n 16 /tmp/sc-strace.txt | while IFS= read -r l; do echo "BENCH: strace -c: $l"; done
fi
sidecar_stop "the sidecar stops cleanly"
# what the sidecar did: its stop line's counts, and its log's lines by
# kind (device names and numbers taken out), the most frequent first
echo "BENCH: the sidecar's own count: $(grep -o 'stopping (.*)' /tmp/watch.log | tail -n 1)"
echo "BENCH: the sidecar's own account: $(grep -o 'its CPU: .*' /tmp/watch.log | tail -n 1)"
sed -e 's/^nvme-vwc-sync: //' -e 's/nvme[0-9]*c[0-9]*n[0-9]*/P/g' -e 's/nvme[0-9]*n[0-9]*/N/g' \
	-e 's/nvme[0-9]*/C/g' -e 's/[0-9][0-9.]*/#/g' /tmp/watch.log | sort | uniq -c | sort -rn | head -n 12 |
	while read -r n l; do echo "BENCH: sidecar log: $n x $l"; done

# one sync of one namespace at this scale, beside a process start
ns=$(ls /sys/block | grep '^nvme[0-9]*n[0-9]*$' | head -n 1)
med() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
timeit() {
	_i=0
	while [ $_i -lt 5 ]; do
		_t0=$(now)
		"$@" >/dev/null 2>&1
		echo $((($(now) - _t0) / 1000))
		_i=$((_i + 1))
	done | med
}
echo "BENCH: medians of 5, us: /bin/true (a process start) $(timeit /bin/true); nvme-vwc-sync --version (with its libraries) $(timeit "$BIN" --version); sync --quiet --keep-restored $ns (what the rule runs) $(timeit "$BIN" sync --quiet --keep-restored "$ns"); sync --dry-run $ns $(timeit "$BIN" sync --dry-run "$ns")"
# what the rule runs for a controller's add or connected event, and
# where its system calls go (strace -c: slower, for the split)
c=$(ls /sys/class/nvme | head -n 1)
echo "BENCH: medians of 5, us: sync --quiet --keep-restored $c (what the rule runs for a controller, $(ls -d /sys/class/nvme/$c/nvme*n* 2>/dev/null | command wc -l) namespace paths) $(timeit "$BIN" sync --quiet --keep-restored "$c")"
if command -v strace >/dev/null; then
	strace -c -f -o /tmp/ctrl-strace.txt "$BIN" sync --quiet --keep-restored "$c" >/dev/null 2>&1
	head -n 12 /tmp/ctrl-strace.txt | while IFS= read -r l; do echo "BENCH: strace -c sync $c: $l"; done
	tail -n 1 /tmp/ctrl-strace.txt | while IFS= read -r l; do echo "BENCH: strace -c sync $c: $l"; done
fi
_t0=$(now)
"$BIN" audit -o json >/tmp/audit.json 2>/tmp/audit.err
rc=$?
echo "BENCH: audit -o json over $(jq '.namespaces | length' /tmp/audit.json) namespaces: $((($(now) - _t0) / 1000000)) ms, exit $rc"
check_eq "audit after the connects with the rule: in sync" "exit $rc" "exit 0"

# the opted-out phase once more, last: how much the baseline moves within
# one boot (the first phase also meets the target's devices cold)
if has off; then
	disconnect_all
	echo 'ENV{NVME_VWC_SYNC}="0"' >/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
	udevadm control --reload
	phase "rule opted out, again" off2
	echo "BENCH: rule opted out, again: modes $(modes)"
	echo "BENCH: with the rule and the sidecar / opted out, the first and the last: $(awk -v a="$T_sc" -v b="$T_off" -v c="$T_off2" 'BEGIN { printf "%.2fx, %.2fx", a / b, a / c }')"
fi
finish
