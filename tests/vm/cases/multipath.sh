#!/bin/sh
# vm: subsys name=s0 ctrls=2 wc=off,on
# kernels: 6.1 6.12 7.2
#
# A namespace shared by two controllers (NVMe multipath) goes write
# through only if every controller reaching it reports no enabled cache.
. /vwc/guest/lib.sh

ctrls=$(ls /sys/class/nvme | grep '^nvme[0-9]*$' | tr '\n' ' ')
info "controllers: $ctrls"
for c in $ctrls; do info "$c WCE=$(get_wce "$c") paths: $(ls /sys/class/nvme/$c | grep n | tr '\n' ' ')"; done
set -- $ctrls
a=$1 b=$2
# heads reached through hidden path nodes nvmeXcYnZ -> nvmeXnZ
heads() { ls "/sys/class/nvme/$1" | sed -n 's/^nvme\([0-9]*\)c[0-9]*n\([0-9]*\)$/nvme\1n\2/p' | sort; }
ns=$(heads "$a" | grep -x -F "$(heads "$b")" | head -n 1)
[ -n "$ns" ] && pass "one namespace reached by both controllers: $ns" || fail "shared namespace" "none: $(ls /sys/block | tr '\n' ' ')"
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
finish
