#!/bin/sh
# vm: ctrl wc=off
# kernels: 6.1 7.2
# timeout: 420
#
# No unprivileged process can delay a writer or the sidecar, and
# the safe direction never waits.
#  0. An older version's /run/nvme-vwc-sync (0755) and lock (0644), held
#     through flock(1) by uid 65534: sync still writes write through at
#     once (the file is replaced), and makes them 0700 and 0600.
#  1. uid 65534 can neither open the lock nor create a file beside it.
#  2. Root holds the lock with the man page's pattern
#     `flock LOCK nvme set-feature ... --value=1` (and keeps it 6 s): the
#     sidecar puts write back in place while the lock is still held.
#  3. Root holds the lock (flock(1)); WCE=1 through a descriptor held open
#     (wce-toggle): write back within the reaction window.
#  4. Root holds the lock, WCE=1 raw, no sidecar: `sync` writes write back
#     at once, exit 0.
# Each check fails on the code before the lock was made root's alone and
# write back stopped waiting for it: the lock was 0644 in a 0755
# directory, and every write back waited up to 30 s for it.
. /vwc/guest/lib.sh
plan 13
LIMIT_MS=1500

c=$(ctrl_by_serial VWC0)
ns=$(ns_of "$c")
D=/run/nvme-vwc-sync
L=$D/lock
FLOCK=/usr/bin/flock
# util-linux setpriv by its path: busybox's own applet comes first otherwise;
# a command, not a function, so that $! of "$NOBODY cmd &" is cmd itself
NOBODY="/usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups"
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }
ms() { echo $(($(/usr/bin/date +%s%N) / 1000000)); }
held() { ! $FLOCK -n "$L" true; }
mode() { stat -c %a "$1" 2>/dev/null; }

mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
tp=no
[ -d /sys/kernel/tracing/events/nvme/nvme_setup_cmd ] && tp=yes
info "tracepoint nvme:nvme_setup_cmd available: $tp"
nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1

fact check_eq "lock: a process runs as uid 65534" "$($NOBODY /usr/bin/setpriv -d 2>&1 | sed -n 's/^uid: //p')" 65534

# 0. the old directory and file, held by uid 65534
mkdir -p "$D"
chmod 0755 "$D"
: >"$L"
chmod 0644 "$L"
$NOBODY $FLOCK -o "$L" sleep 60 &
npid=$!
wait_for "lock: uid 65534 holds an older version's 0644 lock file" 5 held
t0=$(ms)
nvme-vwc-sync sync "$c" >/tmp/sync0.out 2>&1
rc=$?
t=$(($(ms) - t0))
info "sync with uid 65534 holding the old file: exit $rc in $t ms: $(tr '\n' '|' </tmp/sync0.out)"
if [ "$rc" = 0 ] && wt && [ "$t" -lt 10000 ]; then
	pass "lock: the old file held by uid 65534 does not delay write through ($t ms)"
else
	fail "lock: the old file held by uid 65534 does not delay write through" "exit $rc, $(wc "$ns"), $t ms"
fi
check_eq "lock: run directory 0700, lock file 0600" "$(mode "$D") $(mode "$L")" "700 600"
kill "$npid" 2>/dev/null
wait "$npid" 2>/dev/null

# 1. uid 65534 cannot reach it
$NOBODY $FLOCK -n "$L" true >/tmp/nobody.out 2>&1
rc=$?
info "uid 65534: flock -n $L: exit $rc: $(tr '\n' ' ' </tmp/nobody.out)"
if [ "$rc" != 0 ] && grep -q "Permission denied" /tmp/nobody.out; then
	pass "lock: uid 65534 cannot open and flock the lock"
else
	fail "lock: uid 65534 cannot open and flock the lock" "exit $rc: $(cat /tmp/nobody.out)"
fi
$NOBODY $FLOCK -n "$D/other" true >/dev/null 2>&1
rc=$?
[ "$rc" != 0 ] && [ ! -e "$D/other" ] && pass "lock: uid 65534 cannot create a file in $D" ||
	fail "lock: uid 65534 cannot create a file in $D" "exit $rc"
$FLOCK -n "$L" true
check_eq "lock: root's flock(1) on it works" "$?" 0

# 2. the man page's pattern, holding the lock 15 s; the sidecar follows
# while it is held (seen still held when write back is seen: nvme-cli's own
# run under a loaded TCG host has taken more than 5 s by itself)
nvme-vwc-sync watch -v >/tmp/watch.log 2>&1 &
wpid=$!
wait_for "lock: sidecar puts the WCE-off namespace in write through" 10 wt
sleep 2
pre=$(wc "$ns")
t0=$(ms)
$FLOCK "$L" sh -c "nvme set-feature /dev/$c --feature-id=6 --value=1 >/dev/null 2>&1; sleep 15" &
fpid=$!
if [ "$tp" = yes ]; then
	wait_for - 12 wb
	t=$(($(ms) - t0))
	h=no
	held && h=yes
	info "flock LOCK nvme set-feature --value=1: write back after $t ms, lock still held: $h"
	if [ "$pre" = "write through" ] && wb && [ "$h" = yes ]; then
		pass "lock: the man page's flock pattern: write back while its lock is held ($t ms)"
	else
		fail "lock: the man page's flock pattern: write back while its lock is held" "$pre before, $(wc "$ns") after $t ms, lock held: $h"
	fi
else
	skip "lock: the man page's flock pattern" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
fi
wait "$fpid"
wait_for - 10 wb

# back to write through: set-cache off (under the lock), sidecar settled
nvme-vwc-sync set-cache off "/dev/$c" >/dev/null 2>&1
wait_for - 10 wt
sleep 2

# 3. a toggle through a held descriptor while root holds the lock
$FLOCK -o "$L" sleep 12 &
fpid=$!
wait_for - 5 held
if [ "$tp" = yes ]; then
	wce-toggle -n 1 -d 0 -s "$ns" -t 3000 "/dev/$c" >/tmp/toggle.out 2>&1
	s=$(wct_summary /tmp/toggle.out ioctl)
	p=$(wct_field "$s" max)
	h=no
	held && h=yes
	info "held descriptor WCE=1 while the lock is held: $s (lock still held: $h)"
	if echo "$s" | grep -q 'n=1 ' && [ -n "$p" ] &&
		awk -v p="$p" -v l="$LIMIT_MS" 'BEGIN { exit !(p < l) }' && [ "$h" = yes ]; then
		pass "lock: held-descriptor WCE=1 while root holds the lock: write back in $p ms"
	else
		fail "lock: held-descriptor WCE=1 while root holds the lock" "$s; $(grep '^WCT' /tmp/toggle.out | tr '\n' '|')"
	fi
else
	skip "lock: held-descriptor toggle" "no nvme:nvme_setup_cmd tracepoint on $(uname -r)"
fi
wait "$fpid"
# write through comes back once the lock is free (WCE=0 after the toggle)
wait_for "lock: write through again once the lock is free" 40 wt
kill -TERM "$wpid"
wait "$wpid"
info "sidecar log: $(grep -v '^ ' /tmp/watch.log | grep -i -e lock -e signal | tail -n 4 | tr '\n' '|')"

# 4. sync does not wait for the lock to write back
$FLOCK -o "$L" sleep 15 &
fpid=$!
wait_for - 5 held
nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
if wt; then fact pass "lock: raw WCE=1 without a sidecar leaves write through (the case sync must fix)"
else fact fail "lock: raw WCE=1 without a sidecar" "$(wc "$ns")"; fi
t0=$(ms)
nvme-vwc-sync sync "$c" >/tmp/sync4.out 2>&1
rc=$?
t=$(($(ms) - t0))
h=no
held && h=yes
info "sync while root holds the lock: exit $rc in $t ms, lock still held: $h"
if [ "$rc" = 0 ] && wb && [ "$t" -lt 5000 ]; then
	pass "lock: sync writes write back without waiting for the lock ($t ms)"
else
	fail "lock: sync writes write back without waiting for the lock" "exit $rc, $(wc "$ns"), $t ms: $(tr '\n' '|' </tmp/sync4.out)"
fi
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
nvme set-feature "/dev/$c" --feature-id=6 --value=0 >/dev/null 2>&1
finish
