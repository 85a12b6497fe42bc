#!/bin/sh
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off
# kernels: 7.2
# timeout: 900
#
# No fixed limits: 4 controllers x 256 namespaces (1 MiB each) and
# a probe controller with one namespace, all WCE off. With udevd running,
# the sidecar must watch all 1025 namespaces (its log says how many) and put
# every one in write through, `nvme-vwc-sync audit` must list them all,
# `audit -o json` over them must take at most 1000 ms (best of 3; or 10
# process starts of the same binary measured beside it, if more), and
# a raw WCE toggle on the probe controller must be handled in about the same
# time as once the four big controllers are unbound from the driver (a
# 1-namespace machine in the same boot): p50 at most twice the 1-namespace
# p50 plus 5 ms, both directions. A toggle on a 256-namespace controller is
# timed to its last namespace and compared with the kernel's own cost of 256
# plain write_cache writes (shell loop, next to each toggle): p50 at most
# 2x + 100 ms.
. /vwc/guest/lib.sh
plan 12
N=${VWC_SCALE_TOGGLES:-10}
# toggle pairs on a 256-namespace controller, each beside two shell loops
# of 256 writes (about 17 s a pair under TCG; 5 until 2026-12-01, cut for
# the test command's time: the p50 of 3 is their median)
NBIG=${VWC_SCALE_BIG_TOGGLES:-3}
NNS=1025

nblk() { ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l; }
all_there() { [ "$(nblk)" -ge "$NNS" ]; }
fact wait_for "scale: $NNS namespaces appear" 300 all_there
info "scale: $(nblk) namespaces at uptime $(cut -d' ' -f1 /proc/uptime) s"
probe=$(ctrl_by_serial VWC4)
big=$(ctrl_by_serial VWC0)
pns=$(ns_of "$probe")
bns=$(ls -d /sys/class/nvme/$big/nvme*n256 2>/dev/null | sed 's|.*/||; s/c[0-9]*n/n/')
[ -n "$bns" ] || bns=${big}n256
info "scale: probe $probe ($pns), 256-namespace controller $big (last namespace $bns)"

# the kernel's own cost of 256 write_cache writes, for comparison with the
# sidecar's handling of a 256-namespace controller
ms_since() { echo $((($(/usr/bin/date +%s%N) - $1) / 1000000)); }
bigglob=/sys/block/$(echo "$bns" | sed 's/n256$//')n*/queue/write_cache
raw() { # MODE: ms to write MODE into the 256 namespaces' write_cache
	_t0=$(/usr/bin/date +%s%N)
	for _f in $bigglob; do echo "$1" >"$_f"; done
	ms_since "$_t0"
}
raw_wt=$(raw "write through")
raw_wb=$(raw "write back")
info "scale: 256 write_cache writes by a shell loop, before the sidecar: to write through $raw_wt ms, to write back $raw_wb ms"

mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=60
nwt() { cat /sys/block/nvme*n*/queue/write_cache | grep -c 'write through'; }
t0=$(cut -d' ' -f1 /proc/uptime)
nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
wpid=$!
all_wt() { [ "$(nwt)" -ge "$NNS" ]; }
wait_for "scale: the sidecar puts all $NNS namespaces in write through" 300 all_wt
info "scale: $(nwt) in write through, $(awk -v a="$t0" '{ printf "%.1f", $1 - a }' /proc/uptime) s after the sidecar started"
line=$(grep -m 1 'watching' /tmp/watch.log)
info "scale: sidecar says: $line"
case $line in
*" $NNS namespace"*) pass "scale: the sidecar's log says it watches $NNS namespaces" ;;
*) fail "scale: the sidecar watches all namespaces" "its log: '$line'" ;;
esac

# audit -o json over the 1,025: three runs, each beside a process start
# of the same binary (audit --help), the host's load being what it is
ms_of() { _t0=$(/usr/bin/date +%s%N); "$@"; ms_since "$_t0"; }
audit_json() { nvme-vwc-sync audit -o json >/tmp/audit.json 2>/tmp/audit.err; echo $? >/tmp/audit.rc; }
audit_help() { nvme-vwc-sync audit --help >/dev/null 2>&1; }
aud='' hlp=''
for i in 1 2 3; do
	aud="$aud $(ms_of audit_json)"
	hlp="$hlp $(ms_of audit_help)"
done
rc=$(cat /tmp/audit.rc)
best() { echo "$@" | tr ' ' '\n' | grep . | sort -n | head -n 1; }
ab=$(best $aud) hb=$(best $hlp)
info "scale: audit -o json over $NNS namespaces took$aud ms (best $ab), exit $rc; a process start (audit --help)$hlp ms (best $hb)"
check_eq "scale: audit lists 5 controllers and $NNS namespaces" \
	"$(jq -r '[(.controllers | length), (.namespaces | length)] | map(tostring) | join(" ")' /tmp/audit.json 2>&1)" "5 $NNS"
# Under TCG (2-core host at load 3 to 5, shared): 265 ms median for a
# build without coverage counters, against 384 ms for the build before
# the scan found namespaces by hash and made its arrays once (the bench
# audit-scale, interleaved in one boot); 440 ms best of 3 here (this
# build's counters, the sidecar running). The bound: 1000 ms (the goal,
# about 2x that), or 10 process starts if that is more (a host loaded
# further slows both alike).
lim=1000
[ $((10 * hb)) -le "$lim" ] || lim=$((10 * hb))
if [ "$ab" -le "$lim" ]; then
	pass "scale: audit -o json over $NNS namespaces in $ab ms (bound $lim ms)"
else
	fail "scale: audit -o json over $NNS namespaces" "best of 3 $ab ms, over the bound of $lim ms (process start $hb ms)"
fi
t0=$(/usr/bin/date +%s%N)
n=$(nvme-vwc-sync audit 2>/dev/null | grep -oE 'nvme[0-9]+n[0-9]+' | sort -u | command wc -l)
info "scale: audit (table) took $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms"
check_eq "scale: audit's table names all $NNS namespaces" "$n" "$NNS"

# toggles: ms from nvme-cli's exit until write_cache follows (wc-sampler;
# 0 when the sidecar had already switched before nvme-cli exited)
# timed CTRL NS EXPECT VALUE TIMEOUT_MS: one raw Set Features, prints ms,
# "timeout", or "stale" (already in EXPECT before nvme-cli started: the
# previous toggle was never followed, the time means nothing)
timed() {
	_o=$(wc-sampler run -n "$2" -e "$3" -t "$5" -q -- nvme set-feature "/dev/$1" --feature-id=6 --value="$4")
	case $_o in
	*" pre=$3"*) echo stale ;;
	*timeout=0*) echo "$_o" | sed -n 's/.* ms=\([0-9.]*\).*/\1/p' ;;
	*) echo timeout ;;
	esac
}
# pcts FILE: "p50 p99 max" of a column of ms, "- - -" when empty
pcts() {
	sort -n "$1" | awk '{ a[NR] = $1 } END {
		if (!NR) { print "- - -"; exit }
		printf "%s %s %s\n", a[int((NR + 1) / 2)], a[int(NR * 0.99 + 0.999999)], a[NR] }'
}
# series CTRL NS COUNT TIMEOUT_MS: COUNT toggles WCE=1 then WCE=0; prints
# "on_p50 on_p99 on_max off_p50 off_p99 off_max missed", missed counting the
# toggles (either way) that timed out or were stale
series() {
	: >/tmp/on.ms; : >/tmp/off.ms
	_to=0 _i=0
	while [ "$_i" -lt "$3" ]; do
		_m=$(timed "$1" "$2" back 1 "$4")
		case $_m in timeout | stale) _to=$((_to + 1)) ;; *) echo "$_m" >>/tmp/on.ms ;; esac
		_m=$(timed "$1" "$2" through 0 "$4")
		case $_m in timeout | stale) _to=$((_to + 1)) ;; *) echo "$_m" >>/tmp/off.ms ;; esac
		sleep 0.2
		_i=$((_i + 1))
	done
	echo "$(pcts /tmp/on.ms) $(pcts /tmp/off.ms) $_to"
}
say() { # LABEL on_p50 on_p99 on_max off_p50 off_p99 off_max missed COUNT
	info "scale: $1: WCE=1 -> write back p50 $2 ms, p99 $3 ms, max $4 ms; WCE=0 -> write through p50 $5 ms, p99 $6 ms, max $7 ms; missed $8 of $9 toggle pairs"
}
set -- $(series "$probe" "$pns" "$N" 5000)
on_many=$1 off_many=$4
say "$probe (1 namespace) with $NNS namespaces in the machine" "$@" "$N"
check_eq "scale: every toggle on the probe controller followed" "$7" 0
# the 256-namespace controller, each toggle pair next to a plain loop of
# 256 writes (the host's load changes over minutes; neighbours compare)
: >/tmp/big.on; : >/tmp/big.off; : >/tmp/raw.wb; : >/tmp/raw.wt
# Each toggle may take 30 s, or four times the kernel's own cost of the
# 256 writes measured just before it if that is more: under a loaded TCG
# host one write_cache write has cost 20 to 60 ms (256 writes 5 to 17 s),
# and the check is that every toggle is followed, not how fast.
to=0 i=0
while [ "$i" -lt "$NBIG" ]; do
	rb=$(raw "write back")
	rt=$(raw "write through")
	echo "$rb" >>/tmp/raw.wb
	echo "$rt" >>/tmp/raw.wt
	lim=$((rb * 4))
	[ "$lim" -ge $((rt * 4)) ] || lim=$((rt * 4))
	[ "$lim" -ge 30000 ] || lim=30000
	m=$(timed "$big" "$bns" back 1 "$lim")
	case $m in timeout | stale) to=$((to + 1)) ;; *) echo "$m" >>/tmp/big.on ;; esac
	m=$(timed "$big" "$bns" through 0 "$lim")
	case $m in timeout | stale) to=$((to + 1)) ;; *) echo "$m" >>/tmp/big.off ;; esac
	i=$((i + 1))
done
set -- $(pcts /tmp/big.on) $(pcts /tmp/big.off) "$to"
big_on=$1
say "$big (256 namespaces; time to its last, $bns)" "$@" "$NBIG"
check_eq "scale: every toggle on a 256-namespace controller followed (30 s, or 4x the kernel's own 256 writes)" "$7" 0
set -- $(pcts /tmp/raw.wb) $(pcts /tmp/raw.wt)
raw_wb=$1
info "scale: the kernel's own cost alongside: 256 plain write_cache writes to write back p50 $1 ms (max $3), to write through p50 $4 ms (max $6)"
if awk -v a="$big_on" -v b="$raw_wb" 'BEGIN { exit !(a != "-" && a <= 2 * b + 100) }'; then
	pass "scale: a 256-namespace controller's toggle costs about the kernel's own writes ($big_on ms p50 vs $raw_wb ms for 256 plain writes)"
else
	fail "scale: a 256-namespace controller's toggle" "p50 $big_on ms to its last namespace, against $raw_wb ms for 256 plain writes (limit 2x + 100 ms)"
fi

# the 1-namespace machine: unbind the four big controllers
for s in VWC0 VWC1 VWC2 VWC3; do
	cc=$(ctrl_by_serial $s) || continue
	pci=$(basename "$(readlink -f /sys/class/nvme/$cc/device)")
	echo "$pci" >/sys/bus/pci/drivers/nvme/unbind
done
one_left() { [ "$(nblk)" -eq 1 ]; }
wait_for "scale: four controllers unbound, one namespace left" 120 one_left
udevadm settle --timeout=120
sleep 5
set -- $(series "$probe" "$pns" "$N" 5000)
say "$probe with 1 namespace in the machine" "$@" "$N"
check_eq "scale: every toggle on the probe controller followed, 1 namespace" "$7" 0
# WCE=1 is often followed before nvme-cli exits (0 ms); WCE=0 waits for
# the completion: compare both directions
if awk -v a="$on_many" -v b="$1" -v c="$off_many" -v d="$4" 'BEGIN { exit !(a != "-" && b != "-" && c != "-" && d != "-" && a <= 2 * b + 5 && c <= 2 * d + 5) }'; then
	pass "scale: a toggle with $NNS namespaces is handled in about the 1-namespace time (p50 on/off $on_many/$off_many ms vs $1/$4 ms)"
else
	fail "scale: toggle time independent of the namespace count" "p50 on/off $on_many/$off_many ms with $NNS namespaces, $1/$4 ms with 1 (limit 2x + 5 ms each)"
fi
kill -TERM "$wpid"
wait "$wpid"
info "scale: sidecar $(tail -n 1 /tmp/watch.log)"
finish
