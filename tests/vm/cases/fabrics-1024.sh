#!/bin/sh
# kernels: 7.2-generic-io
# timeout: 1500
# manual: about 20 min under TCG (the connects alone took 443 s on a shared 2-core host): over the test command's time; run it by name
#
# Fabrics at array scale in one guest: Linux's own target over nvme-loop
# exports 64 subsystems of 16 namespaces (1,024), each subsystem on two
# loop ports (traddr 1 and 2: two controllers, two paths for every
# namespace, ANA optimized on both), odd namespaces on a null_blk device
# without a write cache (their own "no volatile write cache" bit: write
# through), even ones on a null_blk device with a cache (write back). With
# udevd running the image's rules and the project's, and the sidecar
# running (the rules leave controller and namespace events to it), every
# path is connected one subsystem after the other. Proves: every one of
# the 1,024 namespaces reaches its mode; audit -o json over them exits 0;
# no lock timeout and no error in the sidecar's log; udevd killed no
# worker and warned of no slow event; the sidecar idle afterwards (no CPU
# tick over 10 s); then a reconnect storm (both paths of 8 subsystems
# gone and back, 10 rounds) leaves every mode right and the sidecar idle.
# The figures (times, CPU) are printed as info; bench/ compares them with
# the rule opted out (bench/guest/bench-fabrics-scale.sh).
. /vwc/guest/lib.sh
plan 11

S=64 K=16 STORM_S=8 STORM_N=10
M=/lib/modules/$(uname -r)
setup_fail() { fail "fabrics-1024: setup" "$1"; finish; exit 1; }
grep -q '/nvme-loop\.ko$' "$M/modules.load" 2>/dev/null ||
	setup_fail "no nvme-loop in $(uname -r) (boot 7.2-generic-io)"

mount -t configfs none /sys/kernel/config 2>/dev/null
NB=/sys/kernel/config/nullb/nullbwc
mkdir "$NB" && echo 1024 >"$NB/size" && echo 1 >"$NB/memory_backed" &&
	echo 16 >"$NB/cache_size" && echo 1 >"$NB/power" ||
	setup_fail "null_blk with a cache refused"
WCDEV=nullbwc
[ -b /dev/$WCDEV ] || WCDEV=nullb$(cat "$NB/index")
[ -b /dev/$WCDEV ] || setup_fail "no null_blk disk with a cache"

T=/sys/kernel/config/nvmet
for p in 1 2; do
	mkdir "$T/ports/$p" && echo loop >"$T/ports/$p/addr_trtype" &&
		echo "$p" >"$T/ports/$p/addr_traddr" || setup_fail "port $p"
done
s=1
while [ $s -le $S ]; do
	SS=$T/subsystems/nqn.2026-12.org.vwc:a$s
	mkdir "$SS" && echo 1 >"$SS/attr_allow_any_host" || setup_fail "subsystem $s"
	n=1
	while [ $n -le $K ]; do
		mkdir "$SS/namespaces/$n" || setup_fail "namespace $s/$n"
		if [ $((n % 2)) = 1 ]; then dev=/dev/nullb0; else dev=/dev/$WCDEV; fi
		printf %s "$dev" >"$SS/namespaces/$n/device_path" &&
			echo 1 >"$SS/namespaces/$n/enable" ||
			setup_fail "namespace $s/$n on $dev"
		n=$((n + 1))
	done
	for p in 1 2; do
		ln -s "$SS" "$T/ports/$p/subsystems/" || setup_fail "link $s to port $p"
	done
	s=$((s + 1))
done
mkdir -p /etc/nvme
hid=$(cat /proc/sys/kernel/random/uuid)
echo "nqn.2014-08.org.nvmexpress:uuid:$hid" >/etc/nvme/hostnqn
echo "$hid" >/etc/nvme/hostid

# udevd in the foreground of a background job, its warnings kept
mkdir -p /run/udev
SYSTEMD_LOG_LEVEL=warning SYSTEMD_LOG_TARGET=console \
	systemd-udevd --resolve-names=never >/tmp/udevd.log 2>&1 &
ping_udevd() { udevadm control --ping --timeout=2 >/dev/null 2>&1; }
wait_for - 30 ping_udevd || setup_fail "udevd: $(head -c 300 /tmp/udevd.log)"
udevadm trigger --action=add --type=subsystems >/dev/null 2>&1
udevadm trigger --action=add --type=devices >/dev/null 2>&1
udevadm settle --timeout=60

sidecar_start /tmp/watch.log
wait_for - 120 test -e /run/nvme-vwc-sync/sidecar-active ||
	setup_fail "the sidecar made no mark: $(tail -n 3 /tmp/watch.log | tr '\n' '|')"

now() { /usr/bin/date +%s%N; }
ms() { echo $((($(now) - $1) / 1000000)); }
busy() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print t - $5 - $6 }' /proc/stat; }
sc_cpu() { awk '{ print $14 + $15 }' "/proc/$SC_PID/stat"; }
heads() { ls /sys/block | grep -c '^nvme[0-9]*n[0-9]*$'; }
paths() { ls /sys/block | grep -c '^nvme[0-9]*c[0-9]*n[0-9]*$'; }
# namespaces not in their mode: odd NSIDs write through, even write back
wrong() {
	_w=0
	for b in /sys/block/nvme*n*; do
		case ${b##*/} in nvme*c*n*) continue ;; esac
		_id=$(cat "$b/nsid" 2>/dev/null) || continue
		if [ $((_id % 2)) = 1 ]; then _e="write through"; else _e="write back"; fi
		[ "$(cat "$b/queue/write_cache")" = "$_e" ] || _w=$((_w + 1))
	done
	echo $_w
}
all_right() { [ "$(heads)" = $((S * K)) ] && [ "$(wrong)" = 0 ]; }
connect() { # SUBSYSTEM PORT
	nvme connect -t loop -a "$2" -n "nqn.2026-12.org.vwc:a$1" >/dev/null 2>&1
}

t0=$(now) b0=$(busy) c0=$(sc_cpu)
s=1
while [ $s -le $S ]; do
	connect $s 1 || info "connect a$s port 1 failed"
	connect $s 2 || info "connect a$s port 2 failed"
	s=$((s + 1))
done
tc=$(ms "$t0")
udevadm settle --timeout=1200
ts=$(ms "$t0")
wait_for - 300 all_right
tr=$(ms "$t0")
info "1,024: connect $tc ms, settled $ts ms, every mode right $tr ms; guest CPU $(($(busy) - b0)) ticks, the sidecar's $(($(sc_cpu) - c0))"
check_eq "connected: $((S * K)) namespaces, $((2 * S * K)) paths" "$(heads) $(paths)" "$((S * K)) $((2 * S * K))"
check_eq "every namespace in its mode (odd write through by its own bit, even write back)" "$(wrong)" 0

t1=$(now)
nvme-vwc-sync audit -o json >/tmp/audit.json 2>/tmp/audit.err
rc=$?
info "audit -o json over $(jq '.namespaces | length' /tmp/audit.json 2>/dev/null) namespaces: $(ms "$t1") ms"
check_eq "audit -o json over every namespace: exit 0, 1,024 namespaces" \
	"$rc $(jq '.namespaces | length' /tmp/audit.json 2>/dev/null)" "0 $((S * K))"

quiet_idle() { # NAME: log quiet, then no CPU tick over 10 s
	log_quiet /tmp/watch.log 300
	_c=$(sc_cpu)
	sleep 10
	check_eq "$1: the sidecar idle (CPU ticks over 10 s)" "$(($(sc_cpu) - _c))" 0
}
quiet_idle "after the connects"

# both paths of STORM_S subsystems gone and back, STORM_N rounds
t2=$(now) c2=$(sc_cpu)
r=1
while [ $r -le $STORM_N ]; do
	s=1
	while [ $s -le $STORM_S ]; do
		nvme disconnect -n "nqn.2026-12.org.vwc:a$s" >/dev/null 2>&1
		s=$((s + 1))
	done
	s=1
	while [ $s -le $STORM_S ]; do
		connect $s 1
		connect $s 2
		s=$((s + 1))
	done
	r=$((r + 1))
done
udevadm settle --timeout=600
wait_for - 300 all_right
info "storm: $STORM_N rounds of $STORM_S subsystems' both paths in $(ms "$t2") ms, the sidecar's CPU $(($(sc_cpu) - c2)) ticks"
check_eq "after the storm: $((S * K)) namespaces, $((2 * S * K)) paths" "$(heads) $(paths)" "$((S * K)) $((2 * S * K))"
check_eq "after the storm: every namespace in its mode" "$(wrong)" 0
quiet_idle "after the storm"

check_cmd "the sidecar's log: no lock timeout" sh -c "! grep -q \"writers' lock .* is \" /tmp/watch.log"
check_cmd "the sidecar's log: no error" sh -c "! grep -qi 'error\\|failed\\|cannot' /tmp/watch.log"
info "udevd said: $(grep -v '^$' /tmp/udevd.log | head -n 5 | tr '\n' '|')"
check_cmd "udevd: no worker killed, no slow event" sh -c "! grep -qi 'timeout\\|killed\\|taking a long time' /tmp/udevd.log"
sidecar_stop "the sidecar stops cleanly"
nvme disconnect-all >/dev/null 2>&1
finish
