#!/bin/sh
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off ns=256 size=1
# vm: ctrl wc=off
# kernels: 7.2
# timeout: 900
# manual: issue 15, fails on the code with fixed watch limits (enable when it lands)
#
# Issue 15, no fixed limits: 4 controllers x 256 namespaces (1 MiB each) and
# a probe controller with one namespace, all WCE off. With udevd running,
# the sidecar must watch all 1025 namespaces (its log says how many) and put
# every one in write through, `nvme-vwc-sync audit` must list them all, and
# a raw WCE toggle on the probe controller must be handled in about the same
# time as once the four big controllers are unbound from the driver (a
# 1-namespace machine in the same boot): p50 at most twice the 1-namespace
# p50 plus 5 ms. A toggle on a 256-namespace controller is timed (its last
# namespace) and reported.
. /vwc/guest/lib.sh
N=${VWC_SCALE_TOGGLES:-10}
NNS=1025

nblk() { ls -d /sys/block/nvme*n* 2>/dev/null | command wc -l; }
all_there() { [ "$(nblk)" -ge "$NNS" ]; }
wait_for "scale: $NNS namespaces appear" 300 all_there
info "scale: $(nblk) namespaces at uptime $(cut -d' ' -f1 /proc/uptime) s"
probe=$(ctrl_by_serial VWC4)
big=$(ctrl_by_serial VWC0)
pns=$(ns_of "$probe")
bns=$(ls -d /sys/class/nvme/$big/nvme*n256 2>/dev/null | sed 's|.*/||; s/c[0-9]*n/n/')
[ -n "$bns" ] || bns=${big}n256
info "scale: probe $probe ($pns), 256-namespace controller $big (last namespace $bns)"

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

t0=$(/usr/bin/date +%s%N)
nvme-vwc-sync audit -o json >/tmp/audit.json 2>/tmp/audit.err
rc=$?
info "scale: audit -o json took $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms, exit $rc"
check_eq "scale: audit lists 5 controllers and $NNS namespaces" \
	"$(jq -r '[(.controllers | length), (.namespaces | length)] | map(tostring) | join(" ")' /tmp/audit.json 2>&1)" "5 $NNS"
t0=$(/usr/bin/date +%s%N)
n=$(nvme-vwc-sync audit 2>/dev/null | grep -oE 'nvme[0-9]+n[0-9]+' | sort -u | command wc -l)
info "scale: audit (table) took $((($(/usr/bin/date +%s%N) - t0) / 1000000)) ms"
check_eq "scale: audit's table names all $NNS namespaces" "$n" "$NNS"

# toggles: ms from nvme-cli's exit until write_cache follows (wc-sampler)
# timed CTRL NS EXPECT VALUE: one raw Set Features, prints ms, "timeout",
# or "stale" (already in EXPECT before nvme-cli started: the previous toggle
# was never followed, the time means nothing)
timed() {
	_o=$(wc-sampler run -n "$2" -e "$3" -t 5000 -q -- nvme set-feature "/dev/$1" --feature-id=6 --value="$4")
	case $_o in
	*" pre=$3"*) echo stale ;;
	*timeout=0*) echo "$_o" | sed -n 's/.* ms=\([0-9.]*\).*/\1/p' ;;
	*) echo timeout ;;
	esac
}
# series LABEL CTRL NS: N toggles on then off; "p50 p99 max missed" of WCE=1,
# missed counting the toggles (either way) that timed out or were stale
series() {
	: >/tmp/on.ms
	_to=0 _i=0
	while [ "$_i" -lt "$N" ]; do
		_m=$(timed "$2" "$3" back 1)
		case $_m in timeout | stale) _to=$((_to + 1)) ;; *) echo "$_m" >>/tmp/on.ms ;; esac
		_m=$(timed "$2" "$3" through 0)
		case $_m in timeout | stale) _to=$((_to + 1)) ;; esac
		sleep 0.2
		_i=$((_i + 1))
	done
	sort -n /tmp/on.ms | awk -v to="$_to" '{ a[NR] = $1 } END {
		if (!NR) { print "- - -", to; exit }
		i = int(NR * 0.99 + 0.999999); printf "%s %s %s %d\n", a[int((NR + 1) / 2)], a[i], a[NR], to }'
}
set -- $(series probe "$probe" "$pns")
p50_many=$1
info "scale: WCE=1 on $probe with $NNS namespaces: p50 $1 ms, p99 $2 ms, max $3 ms, missed $4 ($N toggles)"
check_eq "scale: every toggle on the probe controller followed" "$4" 0
set -- $(series big "$big" "$bns")
info "scale: WCE=1 on $big (256 namespaces, time to its last, $bns): p50 $1 ms, p99 $2 ms, max $3 ms, missed $4 ($N toggles)"
check_eq "scale: every toggle on a 256-namespace controller followed" "$4" 0

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
set -- $(series probe "$probe" "$pns")
p50_one=$1
info "scale: WCE=1 on $probe with 1 namespace: p50 $1 ms, p99 $2 ms, max $3 ms, missed $4 ($N toggles)"
if awk -v a="$p50_many" -v b="$p50_one" 'BEGIN { exit !(a != "-" && b != "-" && a <= 2 * b + 5) }'; then
	pass "scale: a toggle with $NNS namespaces is handled in about the 1-namespace time ($p50_many vs $p50_one ms p50)"
else
	fail "scale: toggle time independent of the namespace count" "p50 $p50_many ms with $NNS namespaces, $p50_one ms with 1 (limit 2x + 5 ms)"
fi
kill -TERM "$wpid"
wait "$wpid"
info "scale: sidecar $(tail -n 1 /tmp/watch.log)"
finish
