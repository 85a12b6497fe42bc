#!/bin/sh
# vm: ctrl wc=off
# kernels: 7.2
# timeout: 1500
# manual: needs valgrind in the image (tests/sanitize/valgrind.sh puts it in the install tree)
#
# valgrind memcheck on the sidecar over N Set Features 06h events (1000,
# or /usr/share/vwc-test/valgrind-events; nvme set-feature toggling WCE,
# every 10th toggle waits for the sidecar to follow): 0 errors, 0 bytes
# definitely or indirectly lost at exit.
. /vwc/guest/lib.sh

# tests/sanitize/valgrind.sh ships valgrind as a tar in the install tree
[ -f /usr/share/vwc-test/valgrind.tar.gz ] &&
	tar -xzf /usr/share/vwc-test/valgrind.tar.gz -C /
if ! command -v valgrind >/dev/null 2>&1; then
	skip "valgrind memcheck on the sidecar" "valgrind not in the image"
	finish
	exit 0
fi
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

events=$(cat /usr/share/vwc-test/valgrind-events 2>/dev/null || echo 1000)
t0=$(date +%s)
i=0 lagged=0
while [ $i -lt $((events / 2)) ]; do
	nvme set-feature "/dev/$off" --feature-id=6 --value=1 >/dev/null 2>&1
	nvme set-feature "/dev/$off" --feature-id=6 --value=0 >/dev/null 2>&1
	i=$((i + 1))
	if [ $((i % 5)) -eq 0 ]; then
		until_s 60 wt || lagged=$((lagged + 1))
	fi
done
t1=$(date +%s)
until_s 120 wt
check_eq "valgrind: after $events Set Features: write through" "$(cat /sys/block/$ns/queue/write_cache)" "write through"
info "$events Set Features in $((t1 - t0)) s; $lagged of $((events / 10)) checkpoints timed out"

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
check_eq "valgrind: sidecar exit status" "$rc" 0
check_eq "valgrind: 0 errors" "${errs:-none}" 0
check_eq "valgrind: 0 bytes definitely lost" "${def:-none}" 0
check_eq "valgrind: 0 bytes indirectly lost" "${ind:-none}" 0
if [ "${errs:-1}" != 0 ]; then
	head -n 80 /tmp/vg.log | sed 's/^/VWC-INFO: vg| /'
fi
finish
