#!/bin/sh
# vm: ctrl wc=off
# kernels: 7.2
# timeout: 1500
# manual: needs valgrind in the image (tests/sanitize/valgrind.sh puts it in the install tree)
#
# valgrind memcheck on the sidecar over N Set Features 06h events (400,
# or /usr/share/vwc-test/valgrind-events; nvme set-feature toggling WCE,
# every 10th event is a checkpoint: WCE=1 must be followed by write back
# and WCE=0 by write through, all of them, so that a sidecar that died or
# stopped following fails here rather than idling to the expected state):
# 0 errors, 0 bytes definitely or indirectly lost at exit, the sidecar
# alive until SIGTERM and stopping on it.
. /vwc/guest/lib.sh

# tests/sanitize/valgrind.sh ships valgrind as a tar in the install tree
[ -f /usr/share/vwc-test/valgrind.tar.gz ] &&
	tar -xzf /usr/share/vwc-test/valgrind.tar.gz -C /
if ! command -v valgrind >/dev/null 2>&1; then
	plan 1
	skip "valgrind memcheck on the sidecar" "valgrind not in the image"
	finish
	exit 0
fi
plan 8
off=$(ctrl_by_serial VWC0)
ns=$(ns_of "$off")
mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
# until SECONDS CMD...: by the clock (poll ticks are slow under valgrind)
until_s() {
	_end=$(($(date +%s) + $1))
	shift
	while ! "$@"; do
		[ "$(date +%s)" -lt "$_end" ] || return 1
		sleep 0.5
	done
}
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }

valgrind --tool=memcheck --leak-check=full --show-leak-kinds=definite,indirect \
	--errors-for-leak-kinds=definite,indirect --track-fds=no \
	--log-file=/tmp/vg.log nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
pid=$!
pstart=$(proc_start "$pid")
# by the clock, not by poll ticks: the guest is slow under valgrind
start=$(date +%s)
while ! wt; do
	now=$(date +%s)
	if [ $((now - start)) -ge 900 ] || ! kill -0 "$pid" 2>/dev/null; then
		fail "valgrind: initial sync puts the WCE-off namespace in write through" \
			"not after $((now - start)) s"
		tail -n 30 /tmp/vg.log | sed 's/^/VWC-INFO: vg| /'
		tail -n 30 /tmp/watch.log | sed 's/^/VWC-INFO: watch| /'
		kill -9 "$pid"
		finish
		exit 0
	fi
	[ $(((now - start) % 60)) -lt 2 ] &&
		info "waiting $((now - start)) s: $(tail -n 1 /tmp/vg.log) / $(tail -n 1 /tmp/watch.log)"
	sleep 2
done
pass "valgrind: initial sync puts the WCE-off namespace in write through"
info "sidecar under valgrind up after $(cut -d' ' -f1 /proc/uptime) s of uptime"

events=$(cat /usr/share/vwc-test/valgrind-events 2>/dev/null || echo 400)
t0=$(date +%s)
i=0 lagged=0 points=0
while [ $i -lt $((events / 2)) ]; do
	i=$((i + 1))
	nvme set-feature "/dev/$off" --feature-id=6 --value=1 >/dev/null 2>&1
	if [ $((i % 5)) -eq 0 ]; then
		# a checkpoint: both directions followed
		points=$((points + 1))
		until_s 60 wb || lagged=$((lagged + 1))
		nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
		until_s 60 wt || lagged=$((lagged + 1))
	else
		nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
	fi
done
t1=$(date +%s)
info "$events Set Features in $((t1 - t0)) s; $lagged of $((2 * points)) checkpoint waits timed out"
check_eq "valgrind: every checkpoint followed, WCE=1 and WCE=0 ($points of $((events / 10)))" \
	"$points checkpoints, $lagged missed" "$((events / 10)) checkpoints, 0 missed"
until_s 120 wt
check_eq "valgrind: after $events Set Features: write through" "$(cat /sys/block/$ns/queue/write_cache)" "write through"
check_alive "valgrind: the sidecar is alive after $events Set Features" "$pid" "$pstart"

kill -TERM "$pid"
until_s 300 sh -c "! kill -0 $pid 2>/dev/null"
wait "$pid"
rc=$?
grep 'stopping' /tmp/watch.log | sed 's/^/VWC-INFO: /'
sed -n 's/^==[0-9]*== \(ERROR SUMMARY:.*\|.*definitely lost:.*\|.*indirectly lost:.*\|.*possibly lost:.*\|.*still reachable:.*\|.*total heap usage:.*\)/VWC-INFO: valgrind: \1/p' /tmp/vg.log
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' /tmp/vg.log | tail -n 1)
def=$(sed -n 's/.*definitely lost: \([0-9,]*\) bytes.*/\1/p' /tmp/vg.log | tail -n 1)
ind=$(sed -n 's/.*indirectly lost: \([0-9,]*\) bytes.*/\1/p' /tmp/vg.log | tail -n 1)
# no leak summary at all means nothing was allocated at exit: 0 lost
grep -q 'All heap blocks were freed' /tmp/vg.log && def=0 ind=0
check_eq "valgrind: sidecar exit status on SIGTERM, and its stopping line" \
	"$rc $(grep -c 'signal 15: stopping' /tmp/watch.log)" "0 1"
check_eq "valgrind: 0 errors" "${errs:-none}" 0
check_eq "valgrind: 0 bytes definitely lost" "${def:-none}" 0
check_eq "valgrind: 0 bytes indirectly lost" "${ind:-none}" 0
if [ "${errs:-1}" != 0 ]; then
	head -n 80 /tmp/vg.log | sed 's/^/VWC-INFO: vg| /'
fi
finish
