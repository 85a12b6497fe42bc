#!/bin/sh
# vm: ctrl wc=off
# vm: ctrl wc=on
# kernels: 6.1 7.2
# timeout: 400
#
# An idle hour at a faster clock: the sidecar with a 1 s safety net for
# 60 s (60 rounds, the default 60 s interval's hour). Its CPU time stays
# small, and what it sends is only the safety net's Get Features 06h, each
# succeeding: the commands of those 60 s as the nvme:nvme_setup_cmd and
# nvme:nvme_complete_rq tracepoints saw them (a trace instance of the
# test's own). The sidecar is proven alive, and the same process, before
# and after the idle minute, and its Get Features count proves it was not
# idle for want of running: a dead or stuck sidecar would idle perfectly.
# (QEMU never adds error-log entries, so the drives' error-log counts
# could not fail: they are INFO lines.)
. /vwc/guest/lib.sh
plan 9

errs() { nvme smart-log "/dev/$1" -o json | jq '.num_err_log_entries'; }
off=$(ctrl_by_serial VWC0); on=$(ctrl_by_serial VWC1)
T=/sys/kernel/tracing
mkdir -p $T
grep -q " $T " /proc/mounts || mount -t tracefs tracefs $T 2>/dev/null
sidecar_start /tmp/watch.log --interval=1
pid=$SC_PID
wait_for - 10 sh -c "[ \"\$(cat /sys/block/$(ns_of "$off")/queue/write_cache)\" = 'write through' ]"
# idle from here: after the start's tail (the re-checks of controllers it
# has just seen, 0.3 to 5 s; under TCG, the kernel patching its text for the
# kprobes makes QEMU translate the guest's code again for a few seconds)
sleep 8
e0=$(errs "$off"); e1=$(errs "$on")
I=$T/instances/vwc-idle
tp=no
if [ -d $T/events/nvme/nvme_setup_cmd ] && mkdir -p $I 2>/dev/null; then
	echo 1 >$I/events/nvme/nvme_setup_cmd/enable && echo 1 >$I/events/nvme/nvme_complete_rq/enable && tp=yes
	: >$I/trace
fi
sidecar_alive "idle: the sidecar is alive before the idle minute"
t0=$(proc_cpu "$pid")
sleep 60
t1=$(proc_cpu "$pid")
sidecar_alive "idle: the sidecar is alive after the idle minute (the same process)"
if [ "$tp" = yes ]; then
	echo 0 >$I/events/nvme/nvme_setup_cmd/enable
	echo 0 >$I/events/nvme/nvme_complete_rq/enable
	grep -v '^#' $I/trace >/tmp/idle.trace
fi
info "sidecar CPU over 60 safety-net rounds: $((t1 - t0)) ticks ($(( (t1 - t0) * 10 )) ms at 100 Hz, under TCG)"
info "error-log entries: $off $e0 -> $(errs "$off"), $on $e1 -> $(errs "$on")"
if [ "$tp" = yes ]; then
	# admin commands (qid=0) the sidecar sent in those 60 s, by controller
	info "idle: trace: $(grep -c . /tmp/idle.trace) lines; commands: $(sed -n 's/.*nvme_setup_cmd: \(nvme[0-9]*\): .*cmd=(\([a-z_]*\)[^a-z_]*\([a-z]*=[0-9a-fx]*\).*/\1 \2 \3/p' /tmp/idle.trace | sort | uniq -c | tr -s ' \n' ' ')"
	head -n 2 /tmp/idle.trace | while IFS= read -r l; do info "idle: trace line: $l"; done
	for c in "$off" "$on"; do
		info "idle: $c: $(grep -c "nvme_setup_cmd: $c: .*qid=0,.*nvme_admin_get_features fid=0x6[^0-9a-f]" /tmp/idle.trace) Get Features 06h, $(grep "nvme_setup_cmd: $c: .*qid=0," /tmp/idle.trace | grep -vc 'nvme_admin_get_features fid=0x6[^0-9a-f]') other admin commands"
	done
	gf0=$(grep -c "nvme_setup_cmd: $off: .*qid=0,.*nvme_admin_get_features fid=0x6[^0-9a-f]" /tmp/idle.trace)
	gf1=$(grep -c "nvme_setup_cmd: $on: .*qid=0,.*nvme_admin_get_features fid=0x6[^0-9a-f]" /tmp/idle.trace)
	# 60 rounds of 1 s: at least 30 each under a loaded host's TCG
	if [ "$gf0" -ge 30 ] && [ "$gf1" -ge 30 ]; then
		pass "idle: the safety net ran: Get Features 06h to both controllers ($gf0, $gf1 in 60 s)"
	else
		fail "idle: the safety net ran" "Get Features 06h in 60 s: $off $gf0, $on $gf1 (at least 30 each)"
	fi
	check_eq "idle: nothing but Get Features 06h on the admin queues" \
		"$(grep 'nvme_setup_cmd: .*qid=0,' /tmp/idle.trace | grep -vc 'nvme_admin_get_features fid=0x6[^0-9a-f]')" 0
	# each completed (a command in flight at either end aside), status 0
	nset=$(grep -c 'nvme_setup_cmd: .*qid=0,' /tmp/idle.trace)
	ncomp=$(grep -c 'nvme_complete_rq: .*qid=0,' /tmp/idle.trace)
	nbad=$(grep 'nvme_complete_rq: .*qid=0,' /tmp/idle.trace | grep -vEc 'status=0(x0)?$')
	if [ "$ncomp" -gt 0 ] && [ "$ncomp" -ge $((nset - 2)) ] && [ "$nbad" = 0 ]; then
		pass "idle: every admin command completed with status 0 ($ncomp completions of $nset commands)"
	else
		fail "idle: every admin command completed with status 0" "$ncomp completions of $nset commands, $nbad with another status"
	fi
else
	skip "idle: the safety net ran" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
	skip "idle: nothing but Get Features 06h on the admin queues" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
	skip "idle: every admin command completed with status 0" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
fi
[ $((t1 - t0)) -lt 300 ] && pass "sidecar CPU under 3 s over 60 rounds (emulated)" || fail "sidecar CPU" "$((t1 - t0)) ticks"
check_eq "still write through" "$(wc "$(ns_of "$off")")" "write through"
# the safety net catches what no event reports: a hand-made change
set_wc "$(ns_of "$off")" "write back"
wait_for "safety net restores write through within 3 s" 3 sh -c "[ \"\$(cat /sys/block/$(ns_of "$off")/queue/write_cache)\" = 'write through' ]"
sidecar_stop "idle: the sidecar stops on SIGTERM"
finish
