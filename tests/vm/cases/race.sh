#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 7.2
# timeout: 600
#
# Writers that never race. udevd with the project's rules and the
# sidecar run; each round starts something that begins an evaluation of the
# same WCE-off controller (even rounds: `nvme id-ctrl`, whose close of
# /dev/nvmeX wakes the sidecar; odd rounds: a concurrent
# `nvme-vwc-sync sync --all`), then after a delay swept over 0..100 ms runs
# `nvme-vwc-sync set-cache on`. Once it returns, wc-sampler reads
# write_cache every 1 ms for 400 ms (and Get Features 06h whenever it reads
# write through). A round passes only when set-cache exits 0 and no sample
# reads write through while WCE is 1. `set-cache off` resets for the next
# round. Both kinds of failure are counted:
#   A "write through after set-cache on returned" (WCE=1)
#   B "cannot set write back: ..." (set-cache failed)
# A round counts only when it started from write through and its reset
# (set-cache off, then write through) took: a round whose reset failed
# proves nothing about the next, and each is counted as a failure.
. /vwc/guest/lib.sh
plan 6
N=${VWC_RACE_ROUNDS:-40}

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
start_udev || fail "race: udevd" "systemd-udevd did not start"
sidecar_start /tmp/watch.log -v
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wait_for "race: sidecar puts the WCE-off namespace in write through" 10 wt

i=0 bad=0 kind_a=0 kind_b=0 other=0 max_wt=0 nsamp=0 nspin=0 from_wt=0 reset_bad=0
while [ "$i" -lt "$N" ]; do
	d=$((i * 100 / (N - 1)))
	if wt; then from_wt=$((from_wt + 1)); else info "race round $i: did not start from write through ($(wc "$ns"))"; fi
	if [ $((i % 2)) -eq 0 ]; then
		what="id-ctrl"
		nvme id-ctrl "/dev/$c" >/dev/null 2>&1 &
	else
		what="sync --all"
		nvme-vwc-sync sync --all >/dev/null 2>&1 &
	fi
	bg=$!
	[ "$d" -eq 0 ] || usleep $((d * 1000))
	out=$(nvme-vwc-sync set-cache on "/dev/$c" 2>&1)
	rc=$?
	s=$(wc-sampler sample -n "$ns" -d 400 -c "/dev/$c")
	wait "$bg"
	nwt=$(echo "$s" | sed -n 's/.* wt=\([0-9]*\).*/\1/p')
	unsafe=$(echo "$s" | sed -n 's/.* unsafe=\([0-9]*\).*/\1/p')
	wce=$(echo "$s" | sed -n 's/.* wce_start=\([-0-9]*\) wce_end=\([-0-9]*\).*/\1\2/p')
	[ -n "$nwt" ] || { nwt=-1; unsafe=-1; }
	round_bad=""
	# write through while WCE=1 (start and end of the window read 1)
	if [ "$unsafe" != 0 ] || { [ "$nwt" != 0 ] && [ "$wce" = 11 ]; }; then
		kind_a=$((kind_a + 1))
		round_bad="A: $nwt write-through samples ($unsafe unsafe) after set-cache on returned"
	fi
	if [ "$rc" -ne 0 ]; then
		case $out in
		*"cannot set write back"*) kind_b=$((kind_b + 1)) ;;
		*) other=$((other + 1)) ;;
		esac
		round_bad="${round_bad:+$round_bad; }B: set-cache on exit $rc: $(echo "$out" | grep -v '^ ' | tail -n 2 | tr '\n' ' ')"
	fi
	[ "$nwt" -le "$max_wt" ] || max_wt=$nwt
	nsamp=$((nsamp + $(echo "$s" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')))
	case $s in *spin=1*) nspin=$((nspin + 1)) ;; esac
	if [ -n "$round_bad" ]; then
		bad=$((bad + 1))
		info "race round $i ($what, delay $d ms): $round_bad | $s"
	fi
	# reset: cache off, write through (by set-cache's own policy step)
	if ! off=$(nvme-vwc-sync set-cache off "/dev/$c" 2>&1); then
		reset_bad=$((reset_bad + 1))
		info "race round $i: set-cache off failed: $(echo "$off" | tail -n 3 | tr '\n' '|')"
	elif ! wait_for - 5 wt; then
		reset_bad=$((reset_bad + 1))
		info "race round $i: not back in write through after set-cache off"
	fi
	usleep 200000
	i=$((i + 1))
done

info "race: $N rounds (delay 0..100 ms, id-ctrl / sync --all alternating): $bad bad; A (write through after set-cache on returned, WCE=1) $kind_a; B (cannot set write back) $kind_b; other set-cache failures $other; most write-through samples in one window $max_wt; $nsamp samples in $N windows of 400 ms (sampler spun in $nspin)"
check_eq "race: no round with write through while WCE=1 after set-cache on ($N rounds)" "$kind_a" 0
check_eq "race: set-cache on never failed ($N rounds)" "$((kind_b + other))" 0
check_eq "race: every round started from write through" "$from_wt of $i" "$N of $N"
check_eq "race: every round's reset took (set-cache off, then write through)" "$reset_bad" 0
sidecar_stop "race: sidecar still running until SIGTERM, clean exit"
info "sidecar: $(tail -n 1 /tmp/watch.log)"
finish
