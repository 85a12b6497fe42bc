#!/bin/sh
# vm: ctrl wc=off quirks
# vm: fixture stock
# bench: per-kernel
# timeout: 2400
#
# Side by side with the kernel patch "nvme: honor the volatile write cache
# enable state" (-k 7.2-generic-patched or 6.1-generic-patched: the
# generic kernel with its nvme host modules rebuilt with the patch). In ONE
# boot, round by round, the reaction to a raw Set Features 06h of:
#   patched          the patched modules, no sidecar
#   patched+sidecar  the patched modules, `nvme-vwc-sync watch` running
#   stock+sidecar    the stock modules of the same release (the fixture
#                    "stock": tests/vm/fixture-stock.sh), the sidecar running
# The modules are switched with rmmod nvme nvme_core (nvmet, which needs
# nvme_core on 7.x, unloaded first and left out) and insmod, once a
# round; the order alternates (patched, patched+sidecar, switch,
# stock+sidecar; then stock+sidecar, switch, patched+sidecar, patched).
# udevd with the project's rules runs throughout (as installed).
# Each toggle is `nvme set-feature -f 6 --value=1` (WCE 0->1; then
# --value=0) run by wc-sampler run -F, which samples write_cache every
# 0.5 ms from the fork on, while nvme-cli runs: ms from the fork to the
# first sample in write back (write through), and nvme-cli's exit, on the
# same clock. Then the same through a held descriptor (wce-toggle, ioctl):
# from the ioctl's return to the mode (wce-toggle's own reference), and
# through io_uring passthrough (the patch rescans in the ioctl's end only).
. /vwc/guest/lib.sh
R=${VWC_BENCH_ROUNDS:-12}
T=${VWC_BENCH_PER:-3}
ver=$(uname -r)
stockdir=/usr/lib/vwc-test/stock-modules/$ver
patchdir=/lib/modules/$ver/kernel/drivers/nvme/host
c='' ns=''
locate() {
	c=$(ctrl_by_serial VWC0) || return 1
	ns=$(ns_of "$c") || return 1
	[ -n "$ns" ] && [ -r "/sys/block/$ns/queue/write_cache" ]
}
wc_is() { [ "$(cat "/sys/block/$ns/queue/write_cache" 2>/dev/null)" = "write $1" ]; }
mkdir -p /sys/kernel/tracing
grep -q ' /sys/kernel/tracing ' /proc/mounts || mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
start_udev >/dev/null 2>&1
wait_for - 30 locate
src_patched=$(cat /sys/module/nvme_core/srcversion)
info "kernel $ver; patched nvme_core srcversion $src_patched; stock dir: $(ls "$stockdir" | tr '\n' ' ')"
loaded=patched

# swap WHICH: rmmod nvme nvme_core, insmod WHICH's two modules
swap() {
	d=$patchdir
	[ "$1" = stock ] && d=$stockdir
	# nvmet (loaded at boot for other guests) needs nvme_core on 7.x
	! grep -q '^nvmet ' /proc/modules || rmmod nvmet
	rmmod nvme nvme_core 2>/tmp/rmmod.err ||
		{ echo "BENCH: FAIL rmmod: $(cat /tmp/rmmod.err) $(lsmod | grep nvme | tr '\n' '|')"; finish; exit 1; }
	insmod "$d/nvme-core.ko" && insmod "$d/nvme.ko" ||
		{ echo "BENCH: FAIL insmod $d"; finish; exit 1; }
	wait_for - 30 locate || { echo "BENCH: FAIL no namespace after insmod $1"; finish; exit 1; }
	udevadm settle --timeout=30
	loaded=$1
	info "loaded $1: nvme_core srcversion $(cat /sys/module/nvme_core/srcversion), $c $ns"
}
spid=''
sidecar_on() {
	: >/tmp/watch.log
	nvme-vwc-sync watch >>/tmp/watch.log 2>&1 &
	spid=$!
	wait_for - 60 grep -q watching /tmp/watch.log || info "sidecar: no 'watching' line: $(tr '\n' '|' </tmp/watch.log)"
	sleep 0.5
}
sidecar_off() {
	[ -n "$spid" ] || return 0
	kill -TERM "$spid"
	wait "$spid"
	spid=''
}

# one CONF: T toggle pairs by nvme-cli, then T through a held descriptor
one() {
	conf=$1
	case $loaded in
	patched) [ "$(cat /sys/module/nvme_core/srcversion)" = "$src_patched" ] ;;
	*) [ "$(cat /sys/module/nvme_core/srcversion)" != "$src_patched" ] ;;
	esac || info "$conf: nvme_core srcversion $(cat /sys/module/nvme_core/srcversion) unexpected"
	# from write through
	nvme set-feature "/dev/$c" -f 6 --value=0 >/dev/null 2>&1
	wait_for - 5 wc_is through || info "$conf: not write through at the start"
	i=0
	while [ "$i" -lt "$T" ]; do
		for v in 1 0; do
			e=back
			[ "$v" = 0 ] && e=through
			o=$(wc-sampler run -F -n "$ns" -e "$e" -t 5000 -p 500 -q -- \
				nvme set-feature "/dev/$c" -f 6 --value=$v)
			case $o in
			*pre=$e*) echo "$conf" >>"/tmp/stale.$v" ;;
			*timeout=0*) echo "$o" | sed -n "s/.* ms=\([0-9.]*\) .* exit_ms=\([0-9.]*\).*/\1 \2/p" >>"/tmp/$conf.$v" ;;
			*) echo "$conf $o" >>"/tmp/timeouts.$v" ;;
			esac
			wait_for - 5 wc_is "$e"
			usleep 50000
		done
		i=$((i + 1))
	done
	nvme set-feature "/dev/$c" -f 6 --value=0 >/dev/null 2>&1
	wait_for - 5 wc_is through
	for via in ioctl uring; do
		opt=
		[ "$via" = uring ] && opt=-u
		nvme set-feature "/dev/$c" -f 6 --value=0 >/dev/null 2>&1
		wait_for - 5 wc_is through
		wce-toggle $opt -n "$T" -d 50 -s "$ns" -t 2000 "/dev/$c" >/tmp/wct.out 2>&1
		if grep -q '^WCT skip' /tmp/wct.out; then
			echo "$conf $(head -n 1 /tmp/wct.out)" >>/tmp/skip.h
			continue
		fi
		for v in 1 0; do
			sed -n "s/^WCT toggle via=$via i=[0-9]* wce=$v ms=\([0-9.]*\) timeout=0.*/\1/p" /tmp/wct.out >>"/tmp/$conf.$via$v"
			grep -cE "^WCT toggle via=$via i=[0-9]* wce=$v .*(timeout=1|unmeasured=1)" /tmp/wct.out >>"/tmp/$conf.$via$v.lost"
		done
	done
}

r=0
while [ "$r" -lt "$R" ]; do
	if [ $((r % 2)) = 0 ]; then
		one patched
		sidecar_on; one patched+sidecar; sidecar_off
		swap stock
		sidecar_on; one stock+sidecar; sidecar_off
	else
		sidecar_on; one stock+sidecar; sidecar_off
		swap patched
		sidecar_on; one patched+sidecar; sidecar_off
		one patched
	fi
	r=$((r + 1))
	info "round $r of $R done"
done

# stats FILE COLUMN: n, p50/p90/max of that column
stats() {
	[ -s "$1" ] || { echo "n=0"; return; }
	awk -v k="$2" '{ print $k }' "$1" | sort -n | awk '{ a[NR] = $1 } END {
		printf "n=%d p50=%.1f p90=%.1f max=%.1f ms", NR, a[int((NR + 1) / 2)], a[int(NR * 0.9 + 0.999999)], a[NR] }'
}
before() { [ -s "$1" ] && awk '$1 <= $2 { b++ } END { printf "%d of %d", b, NR }' "$1"; }
# lead FILE: how long before nvme-cli's exit the mode read (exit - flip;
# negative: after it), p10/p50/p90
lead() {
	[ -s "$1" ] || { echo "n=0"; return; }
	awk '{ printf "%.3f\n", $2 - $1 }' "$1" | sort -n | awk '{ a[NR] = $1 } END {
		printf "p10=%.1f p50=%.1f p90=%.1f ms", a[int(NR * 0.1 + 0.999999)], a[int((NR + 1) / 2)], a[int(NR * 0.9 + 0.999999)] }'
}
echo "BENCH: $R rounds x $T toggle pairs a configuration, kernel $ver; ms from the fork of nvme-cli (wc-sampler run -F, 0.5 ms); exit = nvme-cli's exit on the same clock; before exit = the mode read before nvme-cli had exited"
for conf in patched patched+sidecar stock+sidecar; do
	echo "BENCH: $conf, set-feature --value=1 -> write back: $(stats "/tmp/$conf.1" 1); exit p50 $(stats "/tmp/$conf.1" 2 | sed 's/.*p50=\([0-9.]*\).*/\1/') ms; before exit $(before "/tmp/$conf.1"), by $(lead "/tmp/$conf.1")"
	echo "BENCH: $conf, set-feature --value=0 -> write through: $(stats "/tmp/$conf.0" 1); exit p50 $(stats "/tmp/$conf.0" 2 | sed 's/.*p50=\([0-9.]*\).*/\1/') ms; before exit $(before "/tmp/$conf.0"), by $(lead "/tmp/$conf.0")"
done
for via in ioctl uring; do
	for conf in patched patched+sidecar stock+sidecar; do
		for v in 1 0; do
			m="WCE=1 -> write back"
			[ "$v" = 0 ] && m="WCE=0 -> write through"
			lost=$(awk '{ n += $1 } END { print n + 0 }' "/tmp/$conf.$via$v.lost" 2>/dev/null)
			echo "BENCH: $conf, held descriptor ($via), $m, from the command's return: $(stats "/tmp/$conf.$via$v" 1); not followed within 2 s (or not measured after one that was not) $lost"
		done
	done
done
[ ! -s /tmp/skip.h ] || echo "BENCH: held descriptor skipped: $(sort -u /tmp/skip.h | tr '\n' '|')"
echo "BENCH: timeouts (5 s): value=1 $(cat /tmp/timeouts.1 2>/dev/null | command wc -l), value=0 $(cat /tmp/timeouts.0 2>/dev/null | command wc -l); stale (already in the mode before): value=1 $(cat /tmp/stale.1 2>/dev/null | command wc -l), value=0 $(cat /tmp/stale.0 2>/dev/null | command wc -l)"
for f in /tmp/timeouts.1 /tmp/timeouts.0 ; do [ -s "$f" ] && info "$(head -n 5 "$f" | tr '\n' '|')"; done
finish
