#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on
# vm: append nvme_core.multipath=N
# kernels: 6.1 7.2
#
# With the kernel's native multipath off, a namespace shared by two
# controllers is one block device through each (nvme0n1 and nvme1n1, the
# same namespace id in one subsystem, the same identifiers): it is still
# one namespace, write through only when every controller reaching it has
# its cache off, whichever of its block devices is named.
. /vwc/guest/lib.sh
# 22 checks, and the timed one where a write_cache write costs little
plan 22

a='' b=''
for c in $(ls /sys/class/nvme | grep '^nvme[0-9]*$'); do
	case $(cat "/sys/class/nvme/$c/cntlid") in
	0) a=$c ;;
	1) b=$c ;;
	esac
done
check_eq "mpath-off: native multipath off" "$(cat /sys/module/nvme_core/parameters/multipath)" N
# the shared namespace (nsid 1) through each controller
ns_nsid() { for _n in /sys/class/nvme/$1/nvme*n*; do [ "$(cat "$_n/nsid" 2>/dev/null)" = "$2" ] && basename "$_n" && return 0; done; return 1; }
na=$(ns_nsid "$a" 1) nb=$(ns_nsid "$b" 1)
[ -n "$na" ] && [ -n "$nb" ] && [ "$na" != "$nb" ] &&
	pass "mpath-off: nsid 1 is $na through $a and $nb through $b" ||
	fail "mpath-off: one namespace, two block devices" "a=$a:$na b=$b:$nb; $(ls /sys/block | tr '\n' ' ')"
check_eq "mpath-off: the same identifier through both" "$(cat /sys/block/$na/wwid)" "$(cat /sys/block/$nb/wwid)"
info "mpath-off: wwid $(cat /sys/block/$na/wwid); $a WCE=$(get_wce "$a") $b WCE=$(get_wce "$b")"
nvme set-feature "/dev/$a" --feature-id=6 --value=0 >/dev/null 2>&1
check_eq "mpath-off: $a WCE=0" "$(get_wce "$a")" 0
check_eq "mpath-off: $b WCE=1" "$(get_wce "$b")" 1

set_wc "$na" "write through"
check_cmd "mpath-off: sync of $na alone" nvme vwc-sync "$na"
check_eq "mpath-off: $na write back: $b, WCE=1, reaches it too" "$(wc "$na")" "write back"
set_wc "$na" "write through"
check_cmd "mpath-off: sync of $a alone" nvme vwc-sync "/dev/$a"
check_eq "mpath-off: $na write back after a sync of its own controller" "$(wc "$na")" "write back"
json=$(nvme vwc-sync --dry-run -o json "$na" 2>&1)
case $json in *"\"$a\""*"\"$b\""* | *"\"$b\""*"\"$a\""*) pass "mpath-off: the report names both controllers" ;;
*) fail "mpath-off: the report names both controllers" "$json" ;; esac
check_cmd "mpath-off: sync --all" nvme vwc-sync --all
check_eq "mpath-off: $na write back" "$(wc "$na")" "write back"
check_eq "mpath-off: $nb write back" "$(wc "$nb")" "write back"

# both off: both block devices write through
nvme set-feature "/dev/$b" --feature-id=6 --value=0 >/dev/null 2>&1
check_eq "mpath-off: $b WCE=0" "$(get_wce "$b")" 0
check_cmd "mpath-off: sync --all, both off" nvme vwc-sync --all
check_eq "mpath-off: both off: $na write through" "$(wc "$na")" "write through"
check_eq "mpath-off: both off: $nb write through" "$(wc "$nb")" "write through"

# the sidecar: a Set Features 06h WCE=1 on $b puts $na in write back too
sidecar_start /tmp/mo-watch.log -v -v
wpid=$SC_PID
started() { grep -q 'watching' /tmp/mo-watch.log; }
wait_for "mpath-off: sidecar started" 30 started
out=$(wc-sampler run -n "$na" -e back -t 5000 -q -- nvme set-feature "/dev/$b" --feature-id=6 --value=1)
info "mpath-off: $out"
ms=$(echo "$out" | sed -n 's/.* ms=\([0-9.]*\) .*/\1/p')
to=$(echo "$out" | sed -n 's/.* timeout=\([0-9]*\).*/\1/p')
check_eq "mpath-off: sidecar: $na write back after WCE=1 on $b" "${to:-?}" 0
# the fast path writes write back at the submission, before the drive
# completes the command: its own line names every namespace it wrote
fp=$(grep "$b: fast path: write back on" /tmp/mo-watch.log | head -n 1)
info "mpath-off: ${fp:-no fast path line}"
case " $fp " in
*" $na "*) pass "mpath-off: sidecar: the fast path wrote $na for a Set Features 06h on $b" ;;
*) fail "mpath-off: sidecar: the fast path wrote $na for a Set Features 06h on $b" "${fp:-no fast path line}" ;;
esac
# where a write_cache write costs next to nothing (6.1), write back is in
# place when nvme-cli exits; 7.x's queue freeze makes it later
t0=$(/usr/bin/date +%s%N)
for i in 1 2 3 4 5; do echo "write back" >"/sys/block/$nb/queue/write_cache"; done
cost=$((($(/usr/bin/date +%s%N) - t0) / 5000000))
info "mpath-off: one write_cache write: ${cost} ms; $na write back ${ms:-?} ms after nvme-cli exited"
if [ "$cost" -lt 5 ]; then
	plan 1
	if [ -n "$ms" ] && awk -v m="$ms" 'BEGIN { exit !(m <= 20) }'; then
		pass "mpath-off: sidecar: $na write back ${ms} ms after nvme-cli exited (at most 20)"
	else
		fail "mpath-off: sidecar: $na write back as nvme-cli exits" "${ms:-?} ms after"
	fi
fi
sidecar_alive "mpath-off: sidecar still running"
sidecar_stop "mpath-off: sidecar: clean exit on SIGTERM"
finish
