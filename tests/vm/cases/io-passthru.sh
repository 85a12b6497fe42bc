#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=off
# kernels: 6.1 6.12 7.2 6.1-generic 7.2-generic
# timeout: 420
#
# I/O passthrough is not Set Features. An I/O command with opcode 09h is
# Dataset Management; with 7 ranges (CDW10 low byte 6) and the Integral
# Dataset for Read bit (CDW11 bit 0) its bytes are those of a Set Features
# 06h WCE=1. The kprobe on nvme_submit_user_cmd() sees admin and I/O
# passthrough alike: only a command on an admin queue (the kernel's own
# rule: a request queue with no queuedata) may count as Set Features, and
# the probe's return must not wake the fast path thread for every
# passthrough I/O.
# Two WCE-off controllers in write through, the sidecar running; a user
# with write access to VWC0's ng node (vwcuser, the node chowned to it)
# sends 20 Dataset Management commands with 7 ranges and IDR, and other
# I/O passthrough whose bytes look like Set Features 06h (WCE=0 and WCE=1,
# the 64-bit ioctl, Deallocate); root sends the same through the block
# node and the controller node. 6.1 refuses passthrough to a user without
# CAP_SYS_ADMIN (checked), so root sends the user's part there. Every
# command must reach the drive (its status 0, and the nvme_setup_cmd
# tracepoint in a tracefs instance of the test's own sees it on an I/O
# queue); a 1 ms sampler on both namespaces must see no sample out of
# write through, the sidecar's log no Set Features event, and the fast
# path thread (the sidecar's SCHED_FIFO thread) must not wake for them.
# Then a real Set Features 06h WCE=1 on VWC0 must still be caught at its
# submission, named by its queue: the check fails if the probe's filter
# is too wide and if it is too narrow.
. /vwc/guest/lib.sh
# 18 checks, and the test's own tracepoint's where the kernel has it
plan 18
N_DSM=20
N_WAKE=200
SLBA=100000

c0=$(ctrl_by_serial VWC0)
ns0=$(ns_of "$c0")
c1=$(ctrl_by_serial VWC1)
ns1=$(ns_of "$c1")
ng0=ng${ns0#nvme}
nsid=$(ns_nsid "$ns0")
info "io-passthru: VWC0 $c0 $ns0 /dev/$ng0 (nsid $nsid), VWC1 $c1 $ns1 on $(uname -r)"
start_udev || fail "io-passthru: udevd" "systemd-udevd did not start"
wt() { [ "$(cat "/sys/block/$1/queue/write_cache")" = "write through" ]; }
both_wt() { wt "$ns0" && wt "$ns1"; }
field() { echo "$1" | sed -n "s/.* $2=\([0-9.-]*\).*/\1/p"; }

mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
wait_for "io-passthru: both WCE-off namespaces in write through (udev rule)" 20 both_wt

nvme-vwc-sync watch -v -v >/tmp/watch.log 2>&1 &
wpid=$!
wait_for - 20 grep -q 'watching .*Set Features detection' /tmp/watch.log
start=$(grep 'watching .*Set Features detection' /tmp/watch.log | head -n 1)
info "io-passthru: $start"
case $start in
*kprobes*) pass "io-passthru: the sidecar watches with kprobes" ;;
*) fail "io-passthru: the sidecar watches with kprobes" "$start" ;;
esac
wait_for - 10 both_wt
sleep 1

# the fast path thread: the sidecar's thread with SCHED_FIFO (policy 1,
# field 41 of its stat; the comm has no space)
tid=
for t in "/proc/$wpid/task/"*; do
	t=${t##*/}
	[ "$t" = "$wpid" ] && continue
	[ "$(awk '{ print $41 }' "/proc/$wpid/task/$t/stat" 2>/dev/null)" = 1 ] && tid=$t
done
info "io-passthru: fast path thread $tid ($(cat "/proc/$wpid/task/$tid/comm" 2>/dev/null))"
if [ -n "$tid" ] && kill -0 "$wpid"; then
	pass "io-passthru: the sidecar runs, with a SCHED_FIFO fast path thread"
else
	fail "io-passthru: the sidecar runs, with a SCHED_FIFO fast path thread" "pid $wpid tid '$tid'"
fi
wakes() { sed -n 's/^voluntary_ctxt_switches:[[:space:]]*//p' "/proc/$wpid/task/$tid/status"; }

chown vwcuser "/dev/$ng0"
chmod 0600 "/dev/$ng0"
# as_user on the kernels that let a user with write access send I/O
# passthrough (6.2 and later); 6.1 refuses it without CAP_SYS_ADMIN
sender=vwcuser
out=$(as_user vwcuser io-pt -n 1 -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ng0")
info "io-passthru: as vwcuser, one probe: $out"
if [ "$(field "$out" ok)" != 1 ]; then
	case $out in
	*"errno=13 "*)
		sender=root
		pass "io-passthru: the kernel refuses I/O passthrough to a user without CAP_SYS_ADMIN ($(uname -r)): root sends the user's part"
		;;
	*) fail "io-passthru: one Dataset Management as vwcuser" "$out" ;;
	esac
else
	pass "io-passthru: vwcuser, with write access to /dev/$ng0 only, sends I/O passthrough"
fi
# whatever the probe made the sidecar do is over before the measurement
wait_for - 10 both_wt
sleep 2.5

# the test's own view of what reaches an I/O queue with opcode 09h
ti=/sys/kernel/tracing/instances/iopt
tp=no
if mkdir -p "$ti" 2>/dev/null && [ -d "$ti/events/nvme/nvme_setup_cmd" ] &&
	echo 'qid != 0 && opcode == 9' >"$ti/events/nvme/nvme_setup_cmd/filter" &&
	echo 1 >"$ti/events/nvme/nvme_setup_cmd/enable"; then
	tp=yes
	plan 1
fi
info "io-passthru: nvme_setup_cmd tracepoint in a tracefs instance: $tp"

send() { # send WHO ARGS...: io-pt as WHO (vwcuser or root), its line kept
	_w=$1
	shift
	if [ "$_w" = root ]; then
		io-pt "$@" >>/tmp/iopt.out 2>&1
	else
		as_user "$_w" io-pt "$@" >>/tmp/iopt.out 2>&1
	fi
}

wc-sampler sample -n "$ns0" -d 0 >/tmp/sample0.out 2>&1 &
s0=$!
wc-sampler sample -n "$ns1" -d 0 >/tmp/sample1.out 2>&1 &
s1=$!
sleep 0.3
w0=$(wakes)
: >/tmp/iopt.out
# 20 Dataset Management, 7 ranges, IDR: Set Features 06h WCE=1's bytes
send "$sender" -n "$N_DSM" -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ng0"
# WCE=0's bytes; Deallocate with IDR; the 64-bit ioctl
send "$sender" -n 5 -o 9 -N "$nsid" -a 6 -b 0 -r 7 -s "$SLBA" "/dev/$ng0"
send "$sender" -n 5 -o 9 -N "$nsid" -a 6 -b 5 -r 7 -s "$SLBA" "/dev/$ng0"
send "$sender" -6 -n 5 -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ng0"
# root through the block node and through the controller node
send root -n 5 -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ns0"
send root -n 5 -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$c0"
n_sent=$((N_DSM + 25))
# the pending timeout (2 s) reads WCE on controllers that took an event as
# theirs: sample past it
sleep 3
w1=$(wakes)
kill -TERM "$s0" "$s1"
wait "$s0"
wait "$s1"
while read -r l; do info "io-passthru: $l"; done </tmp/iopt.out
ok_sum=$(sed -n 's/.* ok=\([0-9]*\) .*/\1/p' /tmp/iopt.out | awk '{ s += $1 } END { print s + 0 }')
check_eq "io-passthru: $n_sent Dataset Management commands completed by the drive with status 0 (sent as $sender and root)" "$ok_sum" "$n_sent"
if [ "$tp" = yes ]; then
	echo 0 >"$ti/events/nvme/nvme_setup_cmd/enable"
	n_tp=$(grep -c 'nvme_setup_cmd' "$ti/trace")
	check_eq "io-passthru: the nvme_setup_cmd tracepoint saw them all on an I/O queue (qid != 0, opcode 09h)" "$n_tp" "$n_sent"
	rmdir "$ti" 2>/dev/null
fi

sample0=$(cat /tmp/sample0.out)
sample1=$(cat /tmp/sample1.out)
info "io-passthru: VWC0 $sample0"
info "io-passthru: VWC1 $sample1"
for s in "$ns0:$sample0" "$ns1:$sample1"; do
	n=${s%%:*}
	v=${s#*:}
	if [ "$(field "$v" wb)" = 0 ] && [ "$(field "$v" wt)" -gt 1000 ]; then
		pass "io-passthru: $n never left write through (1 ms sampler) during the I/O passthrough"
	else
		fail "io-passthru: $n never left write through (1 ms sampler) during the I/O passthrough" "$v"
	fi
done
n_sf=$(grep -c 'Set Features 06h WCE=' /tmp/watch.log)
check_eq "io-passthru: the sidecar's log shows no Set Features event for I/O passthrough" "$n_sf" 0 ||
	grep 'Set Features 06h WCE=' /tmp/watch.log | head -n 5 | while read -r l; do info "io-passthru, log: $l"; done
info "io-passthru: log lines saying write back: $(grep -c 'write back' /tmp/watch.log); fast path thread wakeups over those $n_sent commands from 6 processes: $((w1 - w0))"

# the fast path thread's wakeups over N_WAKE Dataset Management commands
# from one process on the ng node: its close makes the main loop read
# VWC0's WCE (the sidecar's own Get Features 06h wakes the thread, which
# learns the queue from it), the commands themselves must wake it never
sleep 2.5
w0=$(wakes)
mark0=$(command wc -l </tmp/watch.log)
: >/tmp/iopt.out
send "$sender" -n "$N_WAKE" -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ng0"
sleep 1
w1=$(wakes)
info "io-passthru: $(cat /tmp/iopt.out)"
reads=$(tail -n +"$((mark0 + 1))" /tmp/watch.log | grep -c "$c0: wce=")
dw=$((w1 - w0))
info "io-passthru: fast path thread wakeups over $N_WAKE passthrough I/Os from one process: $dw ($w0 -> $w1); the sidecar read $c0 $reads time(s)"
if kill -0 "$wpid" && [ "$(field "$(cat /tmp/iopt.out)" ok)" = "$N_WAKE" ] &&
	[ "$dw" -le 4 ]; then
	pass "io-passthru: the fast path thread woke at most 4 times for $N_WAKE passthrough I/Os"
else
	fail "io-passthru: the fast path thread woke at most 4 times for $N_WAKE passthrough I/Os" "$dw wakeups"
	tail -n +"$((mark0 + 1))" /tmp/watch.log | head -n 20 | while read -r l; do info "io-passthru, log: $l"; done
fi

# a real Set Features 06h WCE=1 on VWC0: caught at its submission
mark=$(command wc -l </tmp/watch.log)
wc-sampler sample -n "$ns1" -d 0 >/tmp/sample1b.out 2>&1 &
s1=$!
sleep 0.3
run=$(wc-sampler run -n "$ns0" -e back -t 5000 -q -- nvme set-feature "/dev/$c0" --feature-id=6 --value=1)
info "io-passthru: real Set Features: $run"
sleep 0.5
kill -TERM "$s1"
wait "$s1"
tail -n +"$((mark + 1))" /tmp/watch.log >/tmp/watch-real.log
if grep -q "$c0: Set Features 06h WCE=1 submitted" /tmp/watch-real.log &&
	grep -q "$c0: reaction" /tmp/watch-real.log; then
	pass "io-passthru: a real Set Features 06h WCE=1 on $c0 is seen at its submission, named by its queue"
else
	fail "io-passthru: a real Set Features 06h WCE=1 on $c0 is seen at its submission, named by its queue" "$(grep -v '^ ' /tmp/watch-real.log | head -n 8 | tr '\n' '|')"
fi
# its return seen (the return probe's filter keeps it): the model's line
if grep -q "$c0: Set Features 06h completed (thread" /tmp/watch-real.log; then
	pass "io-passthru: the real Set Features 06h's return is seen"
else
	fail "io-passthru: the real Set Features 06h's return is seen" "$(grep "$c0" /tmp/watch-real.log | head -n 6 | tr '\n' '|')"
fi
ms=$(field "$run" ms)
if [ "$(field "$run" rc)" = 0 ] && [ "$(field "$run" timeout)" = 0 ] &&
	awk -v m="$ms" 'BEGIN { exit !(m < 100) }'; then
	pass "io-passthru: $ns0 in write back within 100 ms of nvme-cli's exit"
else
	fail "io-passthru: $ns0 in write back within 100 ms of nvme-cli's exit" "$run"
fi
info "io-passthru: VWC1 during the real one: $(cat /tmp/sample1b.out)"
nvme set-feature "/dev/$c0" --feature-id=6 --value=0 >/dev/null 2>&1
wait_for "io-passthru: back to write through once WCE=0 again" 10 wt "$ns0"
if kill -0 "$wpid"; then
	pass "io-passthru: the sidecar is still running"
else
	fail "io-passthru: the sidecar is still running" "pid $wpid gone"
fi
kill -TERM "$wpid"
wait "$wpid"

# without BTF (VWC_KWATCH=nobtf: as on a kernel without it) nothing tells
# an I/O queue from an admin queue not learned yet: such a command is
# taken as a Set Features 06h on a controller not known by its queue,
# every controller's (safe: write back, then write through again once
# WCE is read); the sampler sees it, so the checks above can fail
VWC_KWATCH=nobtf nvme-vwc-sync watch -v -v >/tmp/watch-nobtf.log 2>&1 &
wpid=$!
wait_for - 20 grep -q 'watching .*Set Features detection' /tmp/watch-nobtf.log
start=$(grep 'watching .*Set Features detection' /tmp/watch-nobtf.log | head -n 1)
info "io-passthru, nobtf: $start"
case $start in
*"ioctl on any queue"*) pass "io-passthru: without BTF the start line says ioctl on any queue" ;;
*) fail "io-passthru: without BTF the start line says ioctl on any queue" "$start" ;;
esac
check_cmd "io-passthru: without BTF a warning names the cause" grep -q 'I/O commands cannot be told apart.*VWC_KWATCH=nobtf' /tmp/watch-nobtf.log
wait_for - 10 both_wt
sleep 1
wc-sampler sample -n "$ns1" -d 0 >/tmp/sample-nobtf.out 2>&1 &
s1=$!
sleep 0.3
: >/tmp/iopt.out
send "$sender" -n 5 -o 9 -N "$nsid" -a 6 -b 1 -r 7 -s "$SLBA" "/dev/$ng0"
sleep 3
kill -TERM "$s1"
wait "$s1"
sample=$(cat /tmp/sample-nobtf.out)
info "io-passthru, nobtf: $(cat /tmp/iopt.out); VWC1 $sample"
if [ "$(field "$sample" wb)" -gt 0 ] &&
	grep -q 'Set Features 06h WCE=1 on a controller not known by its queue' /tmp/watch-nobtf.log; then
	pass "io-passthru: without BTF the Dataset Management is taken as every controller's Set Features 06h (VWC1 written: the checks above can fail)"
else
	fail "io-passthru: without BTF the Dataset Management is taken as every controller's Set Features 06h (VWC1 written: the checks above can fail)" "$sample"
fi
wait_for "io-passthru: without BTF, both back to write through once WCE is read" 10 both_wt
kill -TERM "$wpid"
wait "$wpid"
finish
