#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=off
# kernels: 6.1 7.2 6.1-generic 7.2-generic
# timeout: 300
#
# An io_uring Set Features 06h names its controller. The kprobe
# on nvme_dev_uring_cmd() fetches ioucmd->file->private_data->admin_q at
# offsets read from the kernel's BTF (vmlinux's, and nvme_core's own where
# it is a module: the generic kernels), so a WCE toggle through io_uring
# on VWC0 puts VWC0 alone in write back, and the other WCE-off
# controller's namespace is never written: never two write_cache writes
# where one would do.
# wc-sampler reads VWC1's write_cache every millisecond while VWC0's WCE
# is toggled ROUNDS times through io_uring on a held descriptor: every
# sample must read write through. Then the same with VWC_KWATCH=nobtf (the
# sidecar as on a kernel without BTF): VWC0's toggles are still caught,
# and VWC1 is written (back, then through once the pending timeout reads
# its WCE), which shows that the sampler sees such writes.
. /vwc/guest/lib.sh
ROUNDS=10

c0=$(ctrl_by_serial VWC0)
ns0=$(ns_of "$c0")
c1=$(ctrl_by_serial VWC1)
ns1=$(ns_of "$c1")
info "uring-ctrl: VWC0 $c0 $ns0, VWC1 $c1 $ns1 on $(uname -r)"
start_udev || fail "uring-ctrl: udevd" "systemd-udevd did not start"
wt() { [ "$(cat "/sys/block/$1/queue/write_cache")" = "write through" ]; }
both_wt() { wt "$ns0" && wt "$ns1"; }

# run LABEL ENV: a sidecar (with ENV, e.g. VWC_KWATCH=nobtf), ROUNDS
# io_uring toggles on VWC0, VWC1 sampled; sets $start, $sample, $toggles
run() {
	env $2 nvme-vwc-sync watch -vv >/tmp/watch-$1.log 2>&1 &
	wpid=$!
	wait_for - 20 grep -q 'watching .*Set Features detection' /tmp/watch-$1.log
	wait_for - 10 both_wt
	sleep 1
	start=$(grep 'watching .*Set Features detection' /tmp/watch-$1.log | head -n 1)
	info "uring-ctrl, $1: $start"
	wc-sampler sample -n "$ns1" -d 0 >/tmp/sample-$1.out 2>&1 &
	spid=$!
	sleep 0.3
	wce-toggle -u -n "$ROUNDS" -d 100 -s "$ns0" -t 2000 "/dev/$c0" >/tmp/toggle-$1.out 2>&1
	trc=$?
	# the pending timeout (2 s) reads WCE on the controllers that took
	# the event as theirs: sample past it
	sleep 3
	kill -TERM "$spid"
	wait "$spid"
	sample=$(cat /tmp/sample-$1.out)
	toggles=$(wct_summary /tmp/toggle-$1.out)
	info "uring-ctrl, $1: VWC0 WCE=1 -> write back $toggles"
	info "uring-ctrl, $1: VWC1 $sample"
	kill -TERM "$wpid"
	wait "$wpid"
	nvme-vwc-sync sync "$c0" >/dev/null 2>&1
	wait_for - 5 both_wt
}

field() { echo "$1" | sed -n "s/.* $2=\([0-9-]*\).*/\1/p"; }

# checks LABEL WHAT PATTERN: the start line matches PATTERN, and every
# toggle on VWC0 was caught within 1 s (LABEL: btf or nobtf)
checks() {
	case $start in
	*"$3"*) pass "uring-ctrl: $2: the start line says io_uring is $3" ;;
	*) fail "uring-ctrl: $2: the start line says io_uring is $3" "$start" ;;
	esac
	if wct_all_within "/tmp/toggle-$1.out" "$ROUNDS" 1000; then
		pass "uring-ctrl: $2: $ROUNDS/$ROUNDS io_uring WCE=1 toggles on VWC0 caught within 1 s"
	else
		fail "uring-ctrl: $2: $ROUNDS/$ROUNDS io_uring WCE=1 toggles on VWC0 caught within 1 s" "$toggles"
	fi
}

run btf ""
if [ "$trc" -eq 3 ]; then
	plan 1
	skip "uring-ctrl: io_uring toggles" "$(sed -n 's/^WCT skip via=[a-z]* reason=//p' /tmp/toggle-btf.out)"
	finish
	exit 0
fi
plan 7
checks btf "kernel BTF" "by controller"
if [ "$(field "$sample" wb)" = 0 ] && [ "$(field "$sample" wt)" -gt 1000 ]; then
	pass "uring-ctrl: VWC1's namespace never left write through while VWC0 was toggled through io_uring"
else
	fail "uring-ctrl: VWC1's namespace never left write through while VWC0 was toggled through io_uring" "$sample"
fi
# the sidecar's lines that take an io_uring event as VWC1's
as_vwc1() { grep -cE "nvme-vwc-sync: ($c1: .*io_uring|$ns1.*write back)" "$1"; }
check_eq "uring-ctrl: the sidecar took no io_uring event as VWC1's (log lines naming it)" "$(as_vwc1 /tmp/watch-btf.log)" 0 ||
	grep -v '^ ' /tmp/watch-btf.log | head -n 40 | while read -r l; do info "uring-ctrl, btf log: $l"; done

# without BTF: taken as every controller's (safe, one write more each)
run nobtf VWC_KWATCH=nobtf
checks nobtf "VWC_KWATCH=nobtf" "as any controller's"
info "uring-ctrl, nobtf: $(as_vwc1 /tmp/watch-nobtf.log) log line(s) take an io_uring event as VWC1's"
if [ "$(field "$sample" wb)" -gt 0 ]; then
	pass "uring-ctrl: without BTF, the sampler sees VWC1 written (the check above can fail)"
else
	fail "uring-ctrl: without BTF, the sampler sees VWC1 written (the check above can fail)" "$sample"
fi
finish
