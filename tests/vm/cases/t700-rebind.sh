#!/bin/sh
# vm: ctrl wc=on whole
# vm: ctrl wc=on intel whole
# vm: rootport
# vm: spare
# vm: quirks
# kernels: 6.1 7.2 7.2-generic
# timeout: 900
#
# The Write Zeroes rebind of `quirks` and `restore` (t700-dynid.sh's
# machine) when something happens between the unbind and the bind, and
# who may hold the controller's own device when it is rebound.
#
# A signal during the unbind: strace holds the write of the PCI address to
# the nvme driver's unbind file for 8 s at its exit (-P: that file alone;
# the unbind is done, the write has not returned), the signal is sent then.
# strace logs the write's return as the hold begins, a moment after the
# function shows unbound in sysfs: the case waits for that line (at most
# 4 s, well inside the hold) before it signals.
# The strace log (-y names each descriptor's file) shows which write was
# held and where the signal was delivered. SIGTERM, SIGINT, SIGHUP and
# SIGPIPE must leave the controller bound again with its namespace, the
# exit status 128 + the signal. SIGKILL cannot be blocked: the record
# written before the unbind (<rundir>/unbound/<address>: the unbinder's
# pid and start time) must bring the function back: the next command that
# takes the quirks lock, `rebind-guard` (the path unit's service; started
# before the kill, it must wait while the unbinder lives) and the sidecar.
# A function the admin unbound himself (no record) is never bound.
#
# Holders of the controller's character device /dev/nvmeN (a firmware
# download, a format or a sanitize in progress) are refused by pid and
# name; the sidecar's own descriptor is not one (its pid file in the run
# directory, checked against /proc/PID/exe: a forged one is refused), and
# the sidecar holds no descriptor of the removed controller after.
#
# A re-sync that fails after the rebind (the writers' lock held) makes
# `quirks` exit 1.
. /vwc/guest/lib.sh
. /vwc/guest/t700-lib.sh
# set-up 2; holders 7; each of four signals 8; restore's SIGTERM 3; the
# closed pipe 2; SIGKILL: the next command 5, rebind-guard 3, the sidecar
# 3; the admin's unbind 1; the sidecar as holder 4; the forged pid file
# and the pid file 2; the failed re-sync 2
plan 66

tool=nvme-vwc-sync
RUN=/run/nvme-vwc-sync
DRV=/sys/bus/pci/drivers/nvme
lst=$(ctrl_by_serial VWC0)
unl=$(ctrl_by_serial VWC1)
ns=$(ns_of "$lst")
addr=$(basename "$(readlink -f "/sys/class/nvme/$lst/device")")
uaddr=$(basename "$(readlink -f "/sys/class/nvme/$unl/device")")
wz() { cat "/sys/block/$1/queue/write_zeroes_max_bytes" 2>/dev/null || echo none; }
dseq() { cat "/sys/block/$1/diskseq" 2>/dev/null || echo "?"; }
unbound() { [ ! -e "/sys/bus/pci/devices/$addr/driver" ]; }
# the listed controller bound, live, its namespace there
back() {
	_c=$(ctrl_by_serial VWC0) && ctrl_live "$_c" && _n=$(ns_of "$_c") &&
		[ -e "/sys/block/$_n/queue/write_zeroes_max_bytes" ]
}
cur() { lst=$(ctrl_by_serial VWC0); ns=$(ns_of "$lst"); }
# after a failed check: bind it by hand, so that the next checks start bound
hand_bind() {
	if unbound; then
		info "binding $addr by hand"
		echo "$addr" >$DRV/bind
	fi
	wait_for - 30 back
	cur
}
info "kernel $(uname -r): listed $lst ($addr, $ns) wz=$(wz "$ns"); unlisted $unl ($uaddr)"
wz0=$(wz "$ns")
t700_setup "$lst" >/tmp/setup.out 2>&1 && pass "quirk database and table stand-in set up" ||
	fail "quirk database and table stand-in" "$(cat /tmp/setup.out)"
[ -n "$T700_MODS" ] && info "NVME_VWC_SYNC_MODULES_DIR=$T700_MODS"
check_cmd "strace is in the guest" test -x /usr/bin/strace

# delayed CMD...: CMD under strace, its write to the unbind file held 8 s
# at its exit; returns once the function is unbound ($sp: strace, $tp: the
# command). Output in /tmp/c.out, strace's log in /tmp/st.log.
delayed() {
	rm -f /tmp/st.log
	strace -o /tmp/st.log -tt -y -e trace=write -P $DRV/unbind -P $DRV/bind \
		-e inject=write:delay_exit=8000000:when=1 \
		sig-default "$@" >/tmp/c.out 2>&1 &
	sp=$!
	tp=
	wait_for - 60 unbound || { info "never unbound: $(cat /tmp/c.out)"; return 1; }
	tp=$(child_of "$sp")
	[ -n "$tp" ]
}
# child_of PID: a child of PID (busybox here has no pgrep): its children
# file where the kernel has one, else the parent fields of /proc/*/stat,
# read by the shell alone (a command per process takes seconds here)
child_of() {
	if read -r _c _ 2>/dev/null <"/proc/$1/task/$1/children" && [ -n "$_c" ]; then
		echo "$_c"
		return 0
	fi
	for _p in /proc/[0-9]*; do
		read -r _l 2>/dev/null <"$_p/stat" || continue
		# shellcheck disable=SC2086 # the fields after the command name
		set -- "$1" ${_l##*) }
		[ "$3" = "$1" ] && echo "${_p#/proc/}" && return 0
	done
	return 1
}
# line LOG PATTERN: number of the first line of LOG matching PATTERN (or 0)
line() { _l=$(grep -n -- "$2" "$1" | head -n 1 | cut -d: -f1); echo "${_l:-0}"; }
held_unbind() { grep -q "nvme/unbind>, \"$addr\", [0-9]*) = [0-9]* (DELAYED)" /tmp/st.log; }
rec_names() { grep -q "^unbinder $1 " "$RUN/unbound/$addr" 2>/dev/null; }

# --- holders of /dev/nvmeN: refused by pid and name, nothing changed ---
s0=$(dseq "$ns")
sleep 100 <"/dev/$lst" &
hp=$!
sleep 0.3
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
check_eq "/dev/$lst open by a process: quirks exit 1" "$rc" 1
hl=$lst
grep -q "process $hp (sleep) holds $hl, the controller's device (through /dev/$hl)" /tmp/q.out &&
	pass "/dev/$hl open: the refusal names the process" || fail "/dev/$hl open: refusal message" "$(cat /tmp/q.out)"
kill $hp; wait $hp 2>/dev/null
cur
# through a second node of the same device (a container's /dev)
mknod /tmp/ctl-node c $(tr : ' ' <"/sys/class/nvme/$lst/dev")
sleep 100 </tmp/ctl-node &
hp=$!
sleep 0.3
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
kill $hp; wait $hp 2>/dev/null
rm -f /tmp/ctl-node
hl=$lst
cur
grep -q "process $hp (sleep) holds $hl, the controller's device (through /tmp/ctl-node)" /tmp/q.out && [ "$rc" = 1 ] &&
	pass "controller open through another node: refused by name" || fail "controller open through another node" "rc $rc: $(cat /tmp/q.out)"
# restore refuses the same way (after a quirks, so that it has a rebind to do)
$tool quirks "$lst" >/tmp/q.out 2>&1 || info "quirks said: $(tr '\n' '|' </tmp/q.out)"
cur
sleep 100 <"/dev/$lst" &
hp=$!
sleep 0.3
$tool restore "$lst" >/tmp/r.out 2>&1; rc=$?
kill $hp; wait $hp 2>/dev/null
hl=$lst
cur
grep -q "process $hp (sleep) holds $hl, the controller's device" /tmp/r.out && [ "$rc" = 1 ] &&
	pass "restore: /dev/$hl open: refused by name" || fail "restore: /dev/$hl open" "rc $rc: $(cat /tmp/r.out)"
check_eq "holder refusals: quirks changed nothing before, restore nothing after (Write Zeroes off, one rebind)" "$(wz "$ns")" 0
$tool restore "$lst" >/tmp/r.out 2>&1
cur
check_eq "restored: Write Zeroes back" "$(wz "$ns")" "$wz0"
[ "$(dseq "$ns")" != "$s0" ] && pass "restored: rebound (a new disk sequence number)" ||
	fail "restored: rebound" "never rebound"

# --- a signal while the unbind write is in progress ---
for sig in TERM INT HUP PIPE; do
	n=$(kill -l "$sig")
	cur
	if ! delayed $tool quirks "$lst"; then
		fail "SIG$sig: quirks under strace reached the unbind" "$(cat /tmp/c.out)"
		hand_bind
		continue
	fi
	wait_for - 4 held_unbind
	held_unbind && pass "SIG$sig: the write to $DRV/unbind is the one held (the function unbound, the write not returned)" ||
		fail "SIG$sig: the held write" "$(cat /tmp/st.log)"
	rec_names "$tp" && pass "SIG$sig: the record of the unbind names the command (pid $tp)" ||
		fail "SIG$sig: record of the unbind" "$(cat "$RUN/unbound/$addr" 2>&1)"
	kill -"$sig" "$tp"
	wait "$sp"; rc=$?
	wait_for "SIG$sig during the unbind: bound again with its namespace" 20 back || hand_bind
	cur
	check_eq "SIG$sig: exit status $((128 + n)) (interrupted)" "$rc" $((128 + n))
	u=$(line /tmp/st.log 'nvme/unbind>') b=$(line /tmp/st.log 'nvme/bind>') s=$(line /tmp/st.log "^[0-9:.]* --- SIG$sig ")
	if [ "$u" -gt 0 ] && [ "$b" -gt "$u" ] && [ "$s" -gt "$b" ]; then
		pass "SIG$sig delivered after the bind (strace lines: unbind $u, bind $b, signal $s)"
	else
		fail "SIG$sig delivered after the bind" "unbind $u, bind $b, signal $s: $(tr '\n' '|' </tmp/st.log)"
	fi
	grep -q "SIG$sig arrived during the rebind of .*: held until it ended" /tmp/c.out && pass "SIG$sig: the command says it held the signal until the rebind ended" ||
		fail "SIG$sig: message" "$(cat /tmp/c.out)"
	check_eq "SIG$sig: Write Zeroes off (the rebind completed with the dynamic ID)" "$(wz "$ns")" 0
	check_eq "SIG$sig: no record of an unbind left" "$(ls "$RUN/unbound" 2>/dev/null | wc -l)" 0
	$tool restore "$lst" >/tmp/r.out 2>&1 || info "restore said: $(tr '\n' '|' </tmp/r.out)"
	cur
done
# restore's own rebind, SIGTERM
$tool quirks "$lst" >/tmp/q.out 2>&1
cur
if delayed $tool restore "$lst"; then
	kill -TERM "$tp"
	wait "$sp"; rc=$?
	wait_for "restore, SIGTERM during the unbind: bound again with its namespace" 20 back || hand_bind
	check_eq "restore, SIGTERM: exit status 143" "$rc" 143
	check_eq "restore, SIGTERM: Write Zeroes back (dynamic ID removed)" "$(wz "$ns")" "$wz0"
else
	fail "restore under strace reached the unbind" "$(cat /tmp/c.out)"
	hand_bind
fi
# EPIPE on output: quirks piped into a reader that is gone
cur
{ sig-default $tool quirks -v "$lst" 2>&1; echo $? >/tmp/rc; } | true
cur
check_eq "quirks into a closed pipe: the rebind done (Write Zeroes off, bound)" "$(wz "$ns") $(back && echo bound)" "0 bound"
check_eq "quirks into a closed pipe: ends by SIGPIPE after its work (141)" "$(cat /tmp/rc)" 141
$tool restore "$lst" >/tmp/r.out 2>&1
cur

# --- SIGKILL right after the unbind write ---
# (1) the next command that takes the quirks lock binds it
if delayed $tool quirks "$lst"; then
	kill -KILL "$tp"
	wait "$sp"
	sleep 1
	unbound && pass "SIGKILL: the function is left unbound by the kill" || fail "SIGKILL: left unbound" "bound to $(readlink /sys/bus/pci/devices/$addr/driver)"
	rec_names "$tp" && pass "SIGKILL: the record names the dead unbinder" || fail "SIGKILL: record" "$(ls -l "$RUN/unbound" 2>&1)"
	$tool quirks "$unl" >/tmp/q.out 2>&1; rc=$?
	info "quirks $unl said: $(tr '\n' '|' </tmp/q.out)"
	wait_for "SIGKILL: the next command taking the quirks lock (quirks $unl) bound it again" 10 back || hand_bind
	grep -q "$addr.*bound again" /tmp/q.out && pass "SIGKILL: that command says so" || fail "SIGKILL: next command's message" "$(cat /tmp/q.out)"
	check_eq "SIGKILL: the record removed" "$(ls "$RUN/unbound" 2>/dev/null | wc -l)" 0
else
	fail "SIGKILL: quirks under strace reached the unbind" "$(cat /tmp/c.out)"
	hand_bind
fi
$tool restore "$lst" >/tmp/r.out 2>&1
cur
# (2) rebind-guard, started while the unbinder lives (as the path unit starts
# it when the record appears): waits, then binds
if delayed $tool quirks "$lst"; then
	$tool rebind-guard >/tmp/g.out 2>&1 &
	gp=$!
	sleep 1.5
	unbound && pass "rebind-guard: nothing bound while the unbinder lives" || fail "rebind-guard: waited for the unbinder" "bound: $(cat /tmp/g.out)"
	kill -KILL "$tp"
	wait "$sp"
	wait_for "rebind-guard: bound again within 10 s of the unbinder's SIGKILL" 10 back || hand_bind
	wait "$gp"; rc=$?
	check_eq "rebind-guard: exit 0" "$rc" 0
	info "rebind-guard said: $(tr '\n' '|' </tmp/g.out)"
else
	fail "rebind-guard: quirks under strace reached the unbind" "$(cat /tmp/c.out)"
	hand_bind
fi
$tool restore "$lst" >/tmp/r.out 2>&1
cur
# (3) the sidecar
$tool watch >/tmp/w.log 2>&1 &
wp=$!
wait_for "sidecar started" 60 grep -q 'watching ' /tmp/w.log
if delayed $tool quirks "$lst"; then
	kill -KILL "$tp"
	wait "$sp"
	wait_for "sidecar: bound again within 10 s of the unbinder's SIGKILL" 10 back || hand_bind
	# the sidecar says so after its bind returns and the record is gone:
	# the driver link may be seen first (it failed so under four guests)
	wait_for - 5 grep -q "$addr.*bound again" /tmp/w.log && pass "sidecar: its log says so" ||
		fail "sidecar: log" "$(tail -n 5 /tmp/w.log | tr '\n' '|')"
else
	fail "sidecar: quirks under strace reached the unbind" "$(cat /tmp/c.out)"
	hand_bind
fi
$tool restore "$lst" >/tmp/r.out 2>&1
cur
# the admin's own unbind: no record, never bound by us
echo "$addr" >$DRV/unbind
$tool rebind-guard >/tmp/g.out 2>&1
$tool quirks "$unl" >/tmp/q.out 2>&1
sleep 2
unbound && pass "the admin's own unbind: left unbound by rebind-guard, the next command and the sidecar" ||
	fail "the admin's own unbind left alone" "bound: $(cat /tmp/g.out /tmp/q.out; tail -n 3 /tmp/w.log)"
hand_bind

# --- the sidecar's descriptor on /dev/nvmeN is not a holder ---
# rescans keep the sidecar probing, so that it holds the controller open
( while :; do echo 1 >"/sys/class/nvme/$lst/rescan_controller" 2>/dev/null; sleep 0.3; done ) &
rp=$!
sleep 1
ls -l "/proc/$wp/fd" 2>/dev/null | grep -q "/dev/$lst\$" && info "sidecar holds /dev/$lst" || info "sidecar fds: $(ls -l /proc/$wp/fd | tr '\n' '|')"
s0=$(dseq "$ns")
hl=$lst
$tool quirks -vv "$lst" >/tmp/q.out 2>&1; rc=$?
kill $rp; wait $rp 2>/dev/null
cur
check_eq "sidecar running: quirks exit 0, Write Zeroes off" "$rc $(wz "$ns")" "0 0"
info "sidecar running: the controller was $hl, is $lst after the rebind (the kernel's lowest free instance)"
grep -q "open by the sidecar (pid $wp)" /tmp/q.out && pass "the sidecar's descriptor recognised (pid file, /proc/$wp/exe)" ||
	fail "sidecar's descriptor recognised" "$(grep -i sidecar /tmp/q.out)"
nodead() { ! ls -l "/proc/$wp/fd" 2>/dev/null | grep -q 'nvme.*(deleted)'; }
wait_for "sidecar: no descriptor of the removed controller left" 5 nodead
kill -0 "$wp" 2>/dev/null && pass "sidecar still running" || fail "sidecar alive" "$(tail -n 5 /tmp/w.log)"
$tool restore "$lst" >/tmp/r.out 2>&1
cur
# a forged pid file (the sidecar's, with a sleep's pid and start time) is
# no sidecar: /proc/PID/exe is not the sidecar's program
sleep 100 <"/dev/$lst" &
hp=$!
sleep 0.3
pf=$(ls "$RUN/watch/" 2>/dev/null | head -n 1)
if [ -n "$pf" ]; then
	sed -e "s/^pid .*/pid $hp/" -e "s/^start .*/start $(cut -d' ' -f22 "/proc/$hp/stat")/" "$RUN/watch/$pf" >"$RUN/watch/$hp"
	$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
	hl=$lst
	cur
	grep -q "process $hp (sleep) holds $hl" /tmp/q.out && [ "$rc" = 1 ] &&
		pass "a forged sidecar pid file does not exempt a holder" || fail "forged pid file" "rc $rc: $(cat /tmp/q.out)"
	rm -f "$RUN/watch/$hp"
else
	fail "sidecar pid file" "none in $RUN/watch"
fi
kill $hp; wait $hp 2>/dev/null
kill "$wp"; wait "$wp"
check_eq "sidecar pid file removed at exit" "$(ls "$RUN/watch" 2>/dev/null | wc -l)" 0

# --- a re-sync that fails makes quirks fail ---
cur
nvme set-feature "/dev/$lst" --feature-id=6 --value=0 >/dev/null 2>&1
info "WCE of $lst now $(get_wce "$lst")"
$tool sync "$lst" >/dev/null 2>&1
[ -e $RUN/lock ] || { : >$RUN/lock; chmod 600 $RUN/lock; }
flock $RUN/lock sleep 45 &
fp=$!
sleep 0.5
$tool quirks "$lst" >/tmp/q.out 2>&1; rc=$?
kill $fp; wait $fp 2>/dev/null
cur
info "quirks with the writers' lock held said: $(tr '\n' '|' </tmp/q.out)"
check_eq "re-sync failed (writers' lock held): the rebind done, Write Zeroes off" "$(wz "$ns")" 0
check_eq "re-sync failed: quirks exit 1" "$rc" 1
$tool restore "$lst" >/tmp/r.out 2>&1
nvme set-feature "/dev/$(ctrl_by_serial VWC0)" --feature-id=6 --value=1 >/dev/null 2>&1
finish
