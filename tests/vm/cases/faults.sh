#!/bin/sh
# vm: ctrl wc=off whole
# vm: ctrl wc=on whole
# vm: quirks
# kernels: 7.2
# timeout: 900
#
# Fault injection at the steps of every command that writes: sync,
# set-cache off, set-cache on, quirks, restore and the sidecar's actions
# (watch: its start, write back on a raw Set Features WCE=1, write through
# on WCE=0, its stop). A step is the Nth call of one syscall (write,
# pwrite64, ioctl, flock, rename, renameat2, unlink, unlinkat, mkdir,
# fsync) in one thread, as strace counts its `when=` (per syscall and per
# tracee): each command's steps are listed by one run under
# `strace -f -y`, then the command is run once per chosen step with that
# step killed (SIGKILL), signalled (SIGTERM, SIGINT, SIGHUP, SIGPIPE, at
# its entry) or failed (EIO, EINTR, ENOSPC, EAGAIN; the call not made),
# through `sig-default` so that no signal is ignored. After each run:
#   - no namespace in write through unless every controller reaching it
#     reads WCE=0 (Get Features 06h; unknown counts as enabled);
#   - both PCI functions bound to nvme with their namespaces within 5 s;
#     after a SIGKILL of quirks or restore, by `rebind-guard` (what the
#     path unit runs when the record of the unbind appears); a sidecar that
#     the fault ended is started again first (systemd's Restart=, or the
#     admin's start after a stop) and must put things right within 5 s;
#   - the writers' lock and the quirks lock free (flock -n);
#   - a command that exits 0 after its step was reached has done its job
#     (sync: each namespace in its mode; set-cache: WCE and the mode
#     changed; quirks: Write Zeroes off; restore: on again): a fault
#     that kept the job from being done shows in the exit status;
#   - the same command run again without a fault exits 0 (the sidecar:
#     follows a WCE toggle both ways and stops with 0);
#   - a sidecar that lives through its fault puts the namespace in write
#     back within 10 s of WCE=1 (else the run counts as unsafe: nothing
#     restarts a live sidecar), and stops on SIGTERM within 10 s;
#   - no nvme-vwc-sync process is left running after the run (one left
#     would follow the later runs' toggles and take the writers' lock in
#     their place).
# And the sidecar's stop with every write failing from SIGTERM on.
# And at least 80 % of the runs reach their step (a run whose injected
# step was never reached tested nothing).
# The default run takes the steps that touch state (a queue/write_cache,
# a PCI driver's bind, unbind, new_id or remove_id, the run directory, a
# lock, Set/Get Features) and, among them, at most VWC_FAULTS_CAP (per
# command) spread evenly, each with the next fault kind in turn; a command
# with no such step takes all its steps. VWC_FAULTS=all (bench/run.sh
# faults-all) takes every step, each with the next fault kind in turn
# (about 240 runs on 7.2: 14 minutes under TCG); VWC_FAULTS=every, every
# step with every fault kind (nine times that). Each run prints one
# check; the table (command x fault kind -> runs, steps, hit, unsafe,
# unbound, locked, next-failed, recovered, exit0-undone, hung: a sidecar
# that did not stop on SIGTERM, or a process left running) is printed as
# INFO lines.
. /vwc/guest/lib.sh
. /vwc/guest/t700-lib.sh

tool=nvme-vwc-sync
RUN=/run/nvme-vwc-sync
DRV=/sys/bus/pci/drivers/nvme
MODE=${VWC_FAULTS:-sample}
SET=write,pwrite64,ioctl,flock,rename,renameat2,unlink,unlinkat,mkdir,fsync
# the lines of a step that touches state (strace -y names the files)
PRI='write_cache|/drivers/nvme/|driver_override|nvme-vwc-sync|flock[(]|ioctl[(][0-9]*</dev/nvme|fsync[(]'
KINDS="KILL TERM EIO INT EINTR HUP ENOSPC PIPE EAGAIN"
CMDS=${VWC_FAULTS_CMDS:-sync setcache-off setcache-on quirks restore watch}
T=/tmp/faults
mkdir -p $T
: >$T/table

addr0=$(basename "$(readlink -f "/sys/class/nvme/$(ctrl_by_serial VWC0)/device")")
addr1=$(basename "$(readlink -f "/sys/class/nvme/$(ctrl_by_serial VWC1)/device")")
c0() { ctrl_by_serial VWC0; }
c1() { ctrl_by_serial VWC1; }
n0() { ns_of "$(c0)"; }
n1() { ns_of "$(c1)"; }
wce_is() { [ "$(get_wce "$1")" = "$2" ]; }

# the command line of a command name
cmdline() {
	case $1 in
	sync) echo "$tool sync" ;;
	setcache-off) echo "$tool set-cache off $(c1)" ;;
	setcache-on) echo "$tool set-cache on $(c0)" ;;
	quirks) echo "$tool quirks $(c0)" ;;
	restore) echo "$tool restore $(c0)" ;;
	watch) echo "$tool watch" ;;
	esac
}

# the state each command starts from
bound_live() { # ADDR SERIAL: bound to nvme, its controller live with a namespace
	[ "$(basename "$(readlink "/sys/bus/pci/devices/$1/driver" 2>/dev/null)")" = nvme ] &&
		_c=$(ctrl_by_serial "$2") && ctrl_live "$_c" && ns_of "$_c" >/dev/null
}
all_bound() { bound_live "$addr0" VWC0 && bound_live "$addr1" VWC1; }
wz0() { cat "/sys/block/$(n0)/queue/write_zeroes_max_bytes"; }
pre() {
	wait_for - 30 all_bound
	# restore's marks (namespaces kept in the kernel's choice) go with a sync
	[ -z "$(ls $RUN/restored 2>/dev/null)" ] || $tool sync >/dev/null 2>&1
	wce_is "$(c1)" 1 || nvme set-feature "/dev/$(c1)" --feature-id=6 --value=1 >/dev/null 2>&1
	case $1 in
	setcache-on | watch)
		wce_is "$(c0)" 0 || nvme set-feature "/dev/$(c0)" --feature-id=6 --value=0 >/dev/null 2>&1
		set_wc "$(n0)" "write through" ;;
	*)
		wce_is "$(c0)" 0 || nvme set-feature "/dev/$(c0)" --feature-id=6 --value=0 >/dev/null 2>&1
		set_wc "$(n0)" "write back" ;;
	esac
	set_wc "$(n1)" "write back"
	case $1 in
	quirks) [ "$(wz0)" = 0 ] && $tool restore "$(c0)" >/dev/null 2>&1 ;;
	restore) [ "$(wz0)" = 0 ] || $tool quirks "$(c0)" >/dev/null 2>&1 ;;
	esac
	wait_for - 30 all_bound
}

# goal CMD: what CMD is for is done (the state pre() left it to change)
goal() {
	case $1 in
	sync) wc_is "$(n0)" "write through" && wc_is "$(n1)" "write back" ;;
	setcache-off) wce_is "$(c1)" 0 && wc_is "$(n1)" "write through" ;;
	setcache-on) wce_is "$(c0)" 1 && wc_is "$(n0)" "write back" ;;
	quirks) [ "$(wz0)" = 0 ] ;;
	restore) [ "$(wz0)" != 0 ] ;;
	*) true ;;
	esac
}

# safe: every namespace in write through has every controller reaching it
# at WCE=0, read now (a controller that cannot be read counts as enabled)
unsafe_list() {
	for _c in /sys/class/nvme/nvme*; do
		_c=${_c##*/}
		for _n in /sys/class/nvme/"$_c"/nvme*n*; do
			[ -e "$_n" ] || continue
			_n=${_n##*/}
			case $_n in *c*n*) _n=$(echo "$_n" | sed 's/^nvme\([0-9]*\)c[0-9]*n/nvme\1n/') ;; esac
			[ "$(wc "$_n")" = "write through" ] || continue
			wce_is "$_c" 0 || echo "$_n($_c WCE=$(get_wce "$_c" || echo unknown))"
		done
	done
}
safe() { [ -z "$(unsafe_list)" ]; }
locks_free() {
	for _l in $RUN/lock $RUN/quirks.lock; do
		[ -e "$_l" ] || continue
		flock -n "$_l" true || return 1
	done
}

# the sidecar's scenario, on the sidecar PID runs (under strace: strace's
# pid; it ends when the sidecar does): its start line, WCE=1 -> write back,
# WCE=0 -> write through. Gives up as soon as PID has ended.
wc_is() { [ "$(wc "$1")" = "$2" ]; }
up() { grep -q 'watching ' "$1" || ! kill -0 "$2" 2>/dev/null; }
wc_or_gone() { wc_is "$1" "$2" || ! kill -0 "$3" 2>/dev/null; }
# SC_STUCK=1 when the sidecar, alive, left the namespace in write through
# 10 s after WCE=1: the invariant broken by the one process there to keep
# it (a sidecar the fault ended is the restart's business, below)
scenario() { # LOG PID: 0 when the sidecar followed both toggles
	SC_STUCK=0
	wait_for - 30 up "$1" "$2"
	grep -q 'watching ' "$1" && kill -0 "$2" 2>/dev/null || return 1
	nvme set-feature "/dev/$(c0)" --feature-id=6 --value=1 >/dev/null 2>&1
	wait_for - 10 wc_or_gone "$(n0)" "write back" "$2"
	if ! wc_is "$(n0)" "write back"; then
		gone "$2" || SC_STUCK=1
		return 1
	fi
	nvme set-feature "/dev/$(c0)" --feature-id=6 --value=0 >/dev/null 2>&1
	wait_for - 10 wc_or_gone "$(n0)" "write through" "$2"
	wc_is "$(n0)" "write through"
}
gone() { _s=$(proc_stat "$1"); [ -z "$_s" ] || [ "${_s%% *}" = Z ]; }
# sc_stop PID: SIGTERM to the sidecar (PID itself, or PID's child when PID
# is strace, which ignores SIGTERM when it writes to a file), then PID's
# exit status; SIGKILL to both after 10 s (SC_KILLED=1). The children
# file has no newline at its end: read fails on it (its SIGTERM went to
# strace, the SIGKILL to strace alone, and the sidecar lived on detached)
sc_stop() {
	SC_KILLED=0
	_t=$(cat "/proc/$1/task/$1/children" 2>/dev/null)
	_t=${_t%% *}
	[ -n "$_t" ] || _t=$1
	kill -TERM "$_t" 2>/dev/null
	if ! wait_for - 10 gone "$1"; then
		SC_KILLED=1
		kill -KILL "$_t" "$1" 2>/dev/null
	fi
	wait "$1"
}
# the nvme-vwc-sync processes running
ours() {
	for _p in /proc/[0-9]*; do
		[ "$(cat "$_p/comm" 2>/dev/null)" = nvme-vwc-sync ] && echo "${_p##*/}"
	done | tr '\n' ' '
}

# steps CMD: list CMD's steps, "SYSCALL N PRI" a line, in $T/CMD.steps
steps() {
	pre "$1"
	rm -f $T/en.log $T/w.log
	if [ "$1" = watch ]; then
		strace -f -q -y -o $T/en.log -e trace=$SET sig-default $tool watch >$T/w.log 2>&1 &
		_sp=$!
		scenario $T/w.log $_sp
		sc_stop $_sp
	else
		# shellcheck disable=SC2046 # the command line's words
		strace -f -q -y -o $T/en.log -e trace=$SET sig-default $(cmdline "$1") >$T/out 2>&1
	fi
	awk -v pri="$PRI" '
		{
			pid = 0; l = $0
			if (l ~ /^[0-9]+ /) { pid = $1; sub(/^[0-9]+ +/, "", l) }
			if (l !~ /^[a-z_0-9]+\(/) next
			s = l; sub(/\(.*/, "", s); k = pid " " s; n[k]++
			key = s " " n[k]; p = ($0 ~ pri) ? 1 : 0
			if (!(key in seen)) { seen[key] = p; ord[++m] = key }
			else if (p) seen[key] = 1
		}
		END { for (i = 1; i <= m; i++) print ord[i], seen[ord[i]] }' $T/en.log >"$T/$1.steps"
}

# runs CMD OFFSET: the runs of CMD, "SYSCALL N KIND" a line, in $T/CMD.runs
runs() {
	if [ "$MODE" = every ]; then
		while read -r _s _n _p; do
			for _k in $KINDS; do echo "$_s $_n $_k"; done
		done <"$T/$1.steps" >"$T/$1.runs"
		return
	fi
	if [ "$MODE" = all ]; then
		awk -v off="$3" -v kinds="$KINDS" '
			BEGIN { nk = split(kinds, k, " ") }
			{ print $1, $2, k[(NR - 1 + off) % nk + 1] }' "$T/$1.steps" >"$T/$1.runs"
		return
	fi
	grep ' 1$' "$T/$1.steps" >$T/cand
	[ -s $T/cand ] || cp "$T/$1.steps" $T/cand
	awk -v cap="$2" -v off="$3" -v kinds="$KINDS" '
		{ s[NR] = $1 " " $2 }
		END {
			nk = split(kinds, k, " "); r = NR < cap ? NR : cap
			for (j = 0; j < r; j++) print s[int(j * NR / r) + 1], k[(j + off) % nk + 1]
		}' $T/cand >"$T/$1.runs"
}

# reached SYSCALL N: some thread of the run made its Nth SYSCALL (the step
# was reached; strace's log of the injected run)
reached() {
	awk -v sc="$1" -v n="$2" '
		{ pid = 0; l = $0; if (l ~ /^[0-9]+ /) { pid = $1; sub(/^[0-9]+ +/, "", l) }
		  if (index(l, sc "(") == 1 && ++c[pid] >= n) hit = 1 }
		END { exit !hit }' $T/inj.log
}

# one CMD SYSCALL N KIND: the run, its checks, the state put back
one() {
	cmd=$1 sc=$2 n=$3 kind=$4
	case $kind in
	KILL | TERM | INT | HUP | PIPE) spec=signal=$kind ;;
	*) spec=error=$kind ;;
	esac
	pre "$cmd"
	w0=$(wz0)
	# the sidecars' logs gone first: the background job's redirection
	# empties them only when it runs, and up() read the last run's
	# 'watching' meanwhile (the scenario, then SIGTERM, went on before the
	# sidecar had started)
	rm -f $T/inj.log $T/w.log $T/w2.log
	st=$(date +%s)
	sr=0 stuck=0 hung=0
	if [ "$cmd" = watch ]; then
		strace -f -q -y -o $T/inj.log -e trace="$sc" -e inject="$sc:$spec:when=$n" \
			sig-default $tool watch >$T/w.log 2>&1 &
		sp=$!
		scenario $T/w.log $sp || sr=1
		stuck=$SC_STUCK
		sc_stop $sp
		rc=$?
		hung=$SC_KILLED
	else
		# shellcheck disable=SC2046 # the command line's words
		timeout -s KILL 120 strace -f -q -y -o $T/inj.log -e trace="$sc" \
			-e inject="$sc:$spec:when=$n" sig-default $(cmdline "$cmd") >$T/out 2>&1
		rc=$?
	fi
	hit=0 recovered=0 unsafe=0 unbound=0 locked=0 nextf=0 lied=0 why=
	[ "$cmd" = watch ] && [ "$stuck" = 1 ] &&
		unsafe=1 why="the sidecar, alive, left $(n0) in write through 10 s after WCE=1;"
	[ $hung = 1 ] && why="$why the sidecar did not stop on SIGTERM in 10 s;"
	reached "$sc" "$n" && hit=1
	# exit 0 says the job is done: a fault that kept it from being done
	# must show in the exit status (the next run's success says nothing
	# about this one's honesty)
	[ "$cmd" != watch ] && [ "$rc" = 0 ] && [ $hit = 1 ] && ! wait_for - 5 goal "$cmd" &&
		lied=1 why="$why exit 0 with the job not done;"
	[ $hit = 1 ] || info "$cmd $kind $sc#$n not reached: Write Zeroes $w0 -> $(wz0); $(tail -n 2 $T/out | tr '\n' '|')"
	# the designed recovery: rebind-guard after a SIGKILL of a rebind
	case $kind.$cmd in
	KILL.quirks | KILL.restore)
		if [ -n "$(ls $RUN/unbound 2>/dev/null)" ] || ! all_bound; then
			$tool rebind-guard >$T/g.out 2>&1
			recovered=1
		fi ;;
	esac
	# a sidecar the fault ended or kept from following is started again,
	# as systemd (Restart=on-failure) or the admin would: it must put
	# things right within 5 s
	scp=
	if [ "$cmd" = watch ] && [ "$sr$rc" != 00 ]; then
		$tool watch >$T/w2.log 2>&1 &
		scp=$!
		recovered=1
		wait_for - 30 up $T/w2.log $scp
	fi
	wait_for - 5 all_bound || { unbound=1 why="$why unbound:$(ls $RUN/unbound 2>/dev/null | tr '\n' ' ')"; }
	if [ -n "$scp" ]; then
		wait_for - 5 safe || { unsafe=1 why="$why unsafe:$(unsafe_list)"; }
	else
		safe || { unsafe=1 why="$why unsafe:$(unsafe_list)"; }
	fi
	wait_for - 5 locks_free || { locked=1 why="$why lock-held"; }
	# the next run, no fault
	if [ "$cmd" = watch ]; then
		if [ -z "$scp" ]; then
			$tool watch >$T/w2.log 2>&1 &
			scp=$!
		fi
		scenario $T/w2.log $scp || { nextf=1 why="$why next:no-follow"; }
		sc_stop $scp || { nextf=1 why="$why next:stop-exit"; }
	else
		# shellcheck disable=SC2046,SC2091 # the command line's words, run
		$(cmdline "$cmd") >$T/next.out 2>&1 || { nextf=1 why="$why next:exit$?:$(tail -n 2 $T/next.out | tr '\n' '|')"; }
	fi
	safe || { unsafe=1 why="$why unsafe-after-next:$(unsafe_list)"; }
	left=$(ours)
	if [ -n "$left" ]; then
		hung=1 why="$why left running: $left;"
		# shellcheck disable=SC2086 # the pids
		kill -KILL $left 2>/dev/null
	fi
	echo "$cmd $kind $sc#$n $hit $unsafe $unbound $locked $nextf $recovered $lied $hung" >>$T/table
	name="$cmd: $kind at $sc #$n (exit $rc, $(($(date +%s) - st)) s$([ $hit = 1 ] || echo ', not reached'))"
	if [ "$unsafe$unbound$locked$nextf$lied$hung" = 000000 ]; then
		pass "$name: safe, bound, locks free, exit status true, stopped, next run ok"
	else
		fail "$name" "$why; $(tail -n 3 $T/out $T/w.log $T/w2.log 2>/dev/null | tr '\n' '|')"
		# the next run starts from a sound state
		for _a in $addr0 $addr1; do
			[ -e "/sys/bus/pci/devices/$_a/driver" ] || echo "$_a" >$DRV/bind 2>/dev/null
		done
	fi
}

info "kernel $(uname -r): VWC0 $(c0) ($addr0, $(n0)) WCE=$(get_wce "$(c0)"), VWC1 $(c1) ($addr1, $(n1)) WCE=$(get_wce "$(c1)"); mode $MODE"
t700_setup "$(c0)" >$T/setup.out 2>&1 || info "t700 set-up: $(cat $T/setup.out)"
t0=$(date +%s)
off=0
total=0
for cmd in $CMDS; do
	steps "$cmd"
	case $cmd in
	quirks | restore) cap=${VWC_FAULTS_CAP_REBIND:-7} ;;
	watch) cap=${VWC_FAULTS_CAP_WATCH:-4} ;;
	*) cap=${VWC_FAULTS_CAP:-9} ;;
	esac
	runs "$cmd" "$cap" "$off"
	off=$((off + 2))
	info "$cmd: $(command wc -l <"$T/$cmd.steps") steps ($(grep -c ' 1$' "$T/$cmd.steps") touch state), $(command wc -l <"$T/$cmd.runs") runs"
	total=$((total + $(command wc -l <"$T/$cmd.runs")))
done
info "steps listed in $(($(date +%s) - t0)) s"
# two facts, one check per command (its steps listed), one per run, the
# share of runs whose fault was reached and the stop with failing writes
plan $((4 + $(echo $CMDS | command wc -w) + total))
fact check_eq "strace, sig-default and flock in the guest" \
	"$(command -v strace >/dev/null && command -v sig-default >/dev/null && command -v flock >/dev/null && echo yes)" yes
fact check_eq "VWC0 is listed for Write Zeroes (hwdb stand-in): quirks takes it" "$(pre quirks; $tool quirks "$(c0)" >/dev/null 2>&1; wz0)" 0
for cmd in $CMDS; do
	[ -s "$T/$cmd.runs" ] && pass "$cmd: steps listed, runs chosen" || fail "$cmd: steps listed" "$(tail -n 5 $T/en.log)"
done
# The sidecar's stop when every write fails from SIGTERM on: strace
# attached to every thread once it watches, ENOSPC at each write. Its
# fast path's thread is told to end all the same, and it stops with 0
# within 10 s (before: the stop was a command written to the thread's
# pipe; that write failed, the command was dropped, and the sidecar
# waited in pthread_join() until SIGKILL).
traced() { # PID TRACER: every thread of PID traced by TRACER
	for _k in /proc/"$1"/task/*; do
		[ "$(awk '/^TracerPid:/ { print $2 }' "$_k/status" 2>/dev/null)" = "$2" ] || return 1
	done
}
pre watch
rm -f $T/ws.log
$tool watch >$T/ws.log 2>&1 &
wsp=$!
wait_for - 30 up $T/ws.log $wsp
strace -f -q -o $T/ws.st -e trace=write -e inject=write:error=ENOSPC -p $wsp &
wst=$!
wait_for - 10 traced $wsp $wst
kill -TERM $wsp
if wait_for - 10 gone $wsp; then st=stopped; else st="running 10 s after SIGTERM"; kill -KILL $wsp; fi
wait $wsp
st="$st, exit $?"
wait $wst
# (the fast path's thread running, the writes failed: else it proves nothing)
check_eq "watch: SIGTERM stops the sidecar whose writes fail from then on ($(grep -c INJECTED $T/ws.st) ENOSPC injected)" \
	"$st, fast path $(grep -q 'fast path: ' $T/ws.log && echo yes || echo no), writes failed $([ "$(grep -c INJECTED $T/ws.st)" -gt 0 ] && echo yes || echo no)" \
	"stopped, exit 0, fast path yes, writes failed yes"
for cmd in $CMDS; do
	while read -r sc n kind; do
		one "$cmd" "$sc" "$n" "$kind"
	done <"$T/$cmd.runs"
done
info "runs done in $(($(date +%s) - t0)) s"
# a run whose step was not reached (the injected run took another path
# than the listing) proves nothing: at least 80 % of them must be reached
hits=$(awk '{ h += $4 } END { print h + 0 }' $T/table)
runs_n=$(command wc -l <$T/table)
fact check_cmd "faults reached in at least 80 % of the runs ($hits of $runs_n)" test $((hits * 5)) -ge $((runs_n * 4))
# the table
info "command       fault   runs steps  hit unsafe unbound locked next-failed recovered exit0-undone hung"
for cmd in $CMDS; do
	for kind in $KINDS; do
		awk -v c="$cmd" -v k="$kind" '
			$1 == c && $2 == k { r++; st[$3] = 1; h += $4; u += $5; b += $6; l += $7; nf += $8; rc += $9; li += $10; hg += $11 }
			END { if (r) { ns = 0; for (s in st) ns++
				printf "%-13s %-7s %4d %5d %4d %6d %7d %6d %11d %9d %12d %4d\n", c, k, r, ns, h, u, b, l, nf, rc, li, hg } }' $T/table
	done
done | while IFS= read -r l; do info "$l"; done
awk '{ r++; h += $4; u += $5; b += $6; l += $7; nf += $8; rc += $9; li += $10; hg += $11 }
	END { printf "%-13s %-7s %4d %5s %4d %6d %7d %6d %11d %9d %12d %4d\n", "all", "", r, "", h, u, b, l, nf, rc, li, hg }' $T/table |
	while IFS= read -r l; do info "$l"; done
finish
