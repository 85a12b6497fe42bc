#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 7.2
# timeout: 300
#
# `restore --all` with the sidecar running. The WCE-off drive is
# in write through (the sidecar put it there); restore reports write back
# and write_cache must still read write back 10 s later, through a close
# event on the controller (nvme id-ctrl) that wakes the sidecar. Then an
# explicit `nvme-vwc-sync sync` brings write through back, and the sidecar
# follows raw WCE toggles again.
. /vwc/guest/lib.sh
plan 13

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
start_udev || fail "restore-watch: udevd" "systemd-udevd did not start"
sidecar_start /tmp/watch.log -v
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }
wait_for "restore-watch: sidecar puts the WCE-off namespace in write through" 10 wt
sleep 1

out=$(nvme-vwc-sync restore --all 2>&1)
rc=$?
now=$(wc "$ns")
info "restore --all (exit $rc) said: $(echo "$out" | tr '\n' '|')"
check_eq "restore --all: exit 0" "$rc" 0
case $out in
*"$ns: write through -> write back"*) pass "restore --all: reports $ns write through -> write back" ;;
*) fail "restore --all: report" "no '$ns: write through -> write back' in: $out" ;;
esac
check_eq "restore --all: write back when it returns" "$now" "write back"

# 10 s of samples; a close event on the controller 2 s in
(sleep 2; nvme id-ctrl "/dev/$c" >/dev/null 2>&1) &
bg=$!
s=$(wc-sampler sample -n "$ns" -d 10000 -p 5000)
wait "$bg"
info "10 s after restore: $s"
nwt=$(echo "$s" | sed -n 's/.* wt=\([0-9]*\).*/\1/p')
check_eq "restore --all: no write-through sample over 10 s with the sidecar running" "$nwt" 0
sidecar_alive "restore --all: the sidecar ran through those 10 s (the same process)"
check_eq "restore --all: write back 10 s later" "$(wc "$ns")" "write back"

# an explicit sync takes over again
out=$(nvme-vwc-sync sync "$c" 2>&1)
rc=$?
check_eq "sync after restore: exit 0" "$rc" 0
check_eq "sync after restore: write through" "$(wc "$ns")" "write through"
sleep 2
check_eq "sync after restore: still write through 2 s later" "$(wc "$ns")" "write through"
nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
wait_for "after sync: the sidecar follows a raw WCE=1 again (write back)" 5 wb
nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1
wait_for "after sync: the sidecar follows a raw WCE=0 again (write through)" 5 wt

sidecar_stop "restore-watch: sidecar clean exit"
info "sidecar log tail: $(tail -n 4 /tmp/watch.log | tr '\n' '|')"
finish
