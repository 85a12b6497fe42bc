#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on
# kernels: 6.1 6.12 7.2
#
# A namespace shared by two controllers (NVMe multipath) goes write
# through only if every controller reaching it reports no enabled cache.
. /vwc/guest/lib.sh
plan 15

ctrls=$(ls /sys/class/nvme | grep '^nvme[0-9]*$' | tr '\n' ' ')
info "controllers: $ctrls"
for c in $ctrls; do info "$c WCE=$(get_wce "$c") paths: $(ls /sys/class/nvme/$c | grep n | tr '\n' ' ')"; done
# a: cntlid 0 (asked wc=off), b: cntlid 1 (wc=on, with a private namespace
# that keeps it reporting WCE=1 below). Not by name: the two probes run
# side by side and either can become nvme0 (seen on 6.12).
a='' b=''
for c in $ctrls; do
	case $(cat "/sys/class/nvme/$c/cntlid") in
	0) a=$c ;;
	1) b=$c ;;
	esac
done
[ -n "$a" ] && [ -n "$b" ] && fact pass "controllers by cntlid: $a (0), $b (1)" ||
	fact fail "controllers by cntlid" "cntlid 0 '$a', cntlid 1 '$b' among $ctrls"
# heads reached through hidden path nodes nvmeXcYnZ -> nvmeXnZ
heads() { ls "/sys/class/nvme/$1" | sed -n 's/^nvme\([0-9]*\)c[0-9]*n\([0-9]*\)$/nvme\1n\2/p' | sort; }
ns=$(heads "$a" | grep -x -F "$(heads "$b")" | head -n 1)
[ -n "$ns" ] && fact pass "one namespace reached by both controllers: $ns" || fact fail "shared namespace" "none: $(ls /sys/block | tr '\n' ' ')"
info "shared namespace $ns; multipath dir: $(ls /sys/block/$ns/multipath 2>/dev/null | tr '\n' ' ')"

# make sure: a has WCE=0, b has WCE=1
nvme set-feature "/dev/$a" --feature-id=6 --value=0 >/dev/null 2>&1
nvme set-feature "/dev/$b" --feature-id=6 --value=1 >/dev/null 2>&1
json=$(nvme vwc-sync -o json "$ns" 2>&1); rc=$?
check_eq "off+on: exit 0" "$rc" 0
check_eq "off+on: shared namespace stays write back" "$(wc "$ns")" "write back"
case $json in *"enabled on a controller sharing"*) pass "off+on: reason names the sharing controller" ;; *) fail "off+on: reason" "$json" ;; esac
case $json in *"\"$a\""*"\"$b\""*) pass "off+on: both controllers in the report" ;; *) fail "off+on: both controllers" "$json" ;; esac

nvme set-feature "/dev/$b" --feature-id=6 --value=0 >/dev/null 2>&1
check_cmd "off+off: exit 0" nvme vwc-sync "/dev/$a"
check_eq "off+off: shared namespace write through" "$(wc "$ns")" "write through"
for p in /sys/block/nvme*c*n*; do
	[ -e "$p/queue/write_cache" ] && info "path ${p##*/} write_cache: $(cat "$p/queue/write_cache")"
done

nvme set-feature "/dev/$b" --feature-id=6 --value=1 >/dev/null 2>&1
check_cmd "one back on: exit 0" nvme vwc-sync "/dev/$a"
check_eq "one back on: write back again (sync via the other controller)" "$(wc "$ns")" "write back"
for p in /sys/block/nvme*c*n${ns##*n}; do
	[ -e "$p/queue/write_cache" ] || continue
	check_eq "path ${p##*/} back to write back" "$(cat "$p/queue/write_cache")" "write back"
done

# A controller with WCE=1 that joins the shared namespace
# later (unbind and bind of its PCI function) must put it back in write
# back: its hidden path node nvmeXcYnZ comes with the kernel's scan after
# the controller's add and sends no uevent. The sidecar alone (no udevd:
# only the kernel's change events, and its safety net every 2 s).
wb() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write back" ]; }
wt() { [ "$(cat /sys/block/$ns/queue/write_cache)" = "write through" ]; }
# QEMU keeps one cache per namespace backend and a controller reports the
# first enabled one among its namespaces: WCE=0 through $a turns the shared
# namespace and $a's own off; $b still reports 1 through its own namespace.
nvme set-feature "/dev/$b" --feature-id=6 --value=1 >/dev/null 2>&1
nvme set-feature "/dev/$a" --feature-id=6 --value=0 >/dev/null 2>&1
info "before the unbind: $a WCE=$(get_wce "$a"), $b WCE=$(get_wce "$b")"
pci=$(basename "$(readlink "/sys/class/nvme/$b/device")")
nvme-vwc-sync watch -v -v --interval=2 >/tmp/mpw.log 2>&1 &
wpid=$!
wait_for "sidecar: shared namespace write back while $b has WCE=1" 10 wb
echo "$pci" >/sys/bus/pci/drivers/nvme/unbind
b_gone() { [ ! -e "/sys/class/nvme/$b" ]; }
wait_for - 10 b_gone
wait_for "sidecar: $b unbound, $a (WCE=0) alone: write through" 15 wt
echo "$pci" >/sys/bus/pci/drivers/nvme/bind
b2() { for _c in /sys/bus/pci/devices/$pci/nvme/nvme*; do [ -e "$_c" ] && echo "${_c##*/}" && return 0; done; return 1; }
wait_for - 20 b2
nb=$(b2)
wait_for - 20 ctrl_live "$nb"
info "rebound as $nb WCE=$(get_wce "$nb"); paths: $(ls /sys/class/nvme/$nb | grep 'c.*n' | tr '\n' ' ')"
wait_for "sidecar: $nb (WCE=1) joined the shared namespace again: write back" 15 wb
kill -TERM "$wpid"
wait "$wpid"
info "sidecar log: $(grep -E 'topology|watching|gone|removed|write|nvme1|uevent' /tmp/mpw.log | tail -n 20 | tr '\n' '|')"
finish
