#!/bin/sh
# vm: cpu hygon
# vm: ctrl wc=off
# vm: ctrl wc=on
# vm: quirks
# kernels: 6.1-generic-patched 7.2-generic-patched
# timeout: 900
#
# A kernel that carries the fixes (nvme host modules rebuilt with the
# kernel patches: WCE honoured with a rescan after Set Features 06h, QEMU's
# controller in the table with NVME_QUIRK_DISABLE_WRITE_ZEROES as a T700
# stand-in, no IRQ completion batching on Hygon): the tool steps aside and
# never fights it. sync, audit and quirks change nothing; the Hygon
# advisory says the kernel has the fix; the sidecar, through 100 WCE
# toggles and rescans sampled every millisecond, writes write_cache not
# once, logs nothing, and write_cache changes exactly once a toggle (the
# kernel's); the same with the admin's write-back and ignore lines. A
# refusal the kernel does not resolve (WCE=1 through io_uring, which its
# rescan misses) is still an error, and audit shows it.
. /vwc/guest/lib.sh
plan 30

c=$(ctrl_by_serial VWC0)
con=$(ctrl_by_serial VWC1)
ns=$(ns_of "$c")
nson=$(ns_of "$con")
wcf=/sys/block/$ns/queue/write_cache
wb() { [ "$(cat "$wcf")" = "write back" ]; }
wt() { [ "$(cat "$wcf")" = "write through" ]; }
info "kernel $(uname -r); nvme-core srcversion $(cat /sys/module/nvme_core/srcversion 2>/dev/null)"

# --- the fixture: the patched modules are the ones loaded ---
fact check_eq "WCE=0 controller: the kernel itself put it in write through" "$(wc "$ns")" "write through"
nvme set-feature "/dev/$con" --feature-id=6 --value=0 >/dev/null 2>&1
fact wait_for "set-feature WCE=0, no tool running: the kernel makes write_cache write through" 5 \
	sh -c "[ \"\$(cat /sys/block/$nson/queue/write_cache)\" = 'write through' ]"
fact check_eq "the kernel's own view: fua 0 with WCE=0" "$(cat /sys/block/$nson/queue/fua)" 0
nvme set-feature "/dev/$con" --feature-id=6 --value=1 >/dev/null 2>&1
fact check_eq "set-feature WCE=1: write back before nvme-cli exits" "$(wc "$nson")" "write back"
if [ -e "/sys/class/nvme/$c/quirks" ]; then
	fact check_cmd "the table gives QEMU's controller disable_write_zeroes (quirks attribute)" \
		grep -qx disable_write_zeroes "/sys/class/nvme/$c/quirks"
else
	fact check_eq "the table gives QEMU's controller disable_write_zeroes (write_zeroes_max_bytes)" \
		"$(cat /sys/block/$ns/queue/write_zeroes_max_bytes)" 0
fi

mkdir -p /run/udev
systemd-udevd --daemon --resolve-names=never >/dev/null 2>&1 && udevadm settle --timeout=10

# --- the commands step aside ---
nvme-vwc-sync sync -o json >/tmp/sync.json 2>/tmp/sync.err
check_eq "sync: no namespace changed" \
	"$(jq '[.namespaces[] | select(.action != "unchanged")] | length' /tmp/sync.json)" 0
nvme-vwc-sync audit >/tmp/audit.out 2>&1
check_eq "audit: in sync (exit 0)" "$?" 0
mkdir -p /etc/udev/hwdb.d
printf 'pci:v00001B36d00000010*\n NVME_VWC_SYNC_QUIRKS=disable_write_zeroes\n' >/etc/udev/hwdb.d/62-nvme-vwc-sync-local.hwdb
systemd-hwdb update
nvme-vwc-sync quirks >/tmp/quirks.out 2>&1
info "quirks: $(tr '\n' '|' </tmp/quirks.out)"
check_eq "quirks: no dynamic ID, no rebind (controller and namespace as they were)" \
	"$(ls /run/nvme-vwc-sync/dynid 2>/dev/null | command wc -l) $(ctrl_by_serial VWC0) $(ns_of "$c")" "0 $c $ns"
grep -q '^advisory: Hygon CPU: this kernel' /tmp/audit.out &&
	pass "audit: the Hygon advisory says the kernel has the fix" ||
	fail "audit: Hygon advisory" "$(grep advisory /tmp/audit.out)"

# --- the sidecar, through toggles and rescans ---
# toggles N: N Set Features 06h on VWC0, from WCE=1 on, a rescan after
# every 10th, while write_cache is sampled every 1 ms and every write(2)
# to it is counted; sets FOLLOWED (toggles write_cache followed within
# 5 s), TRANS (write_cache transitions), WRITES (userspace writes) and
# LINES (lines the sidecar logged meanwhile).
toggles() {
	wc-writes "$wcf" "/sys/block/$nson/queue/write_cache" >/tmp/ww.out 2>&1 &
	_wwp=$!
	wait_for - 5 grep -q ready /tmp/ww.out
	wc-sampler sample -n "$ns" -d 0 >/tmp/ws.out 2>&1 &
	_wsp=$!
	sleep 0.2
	_l0=$(command wc -l <"$SC_LOG")
	_i=0 FOLLOWED=0
	while [ $_i -lt "$1" ]; do
		_v=$(((_i + 1) % 2))
		nvme set-feature "/dev/$c" --feature-id=6 --value=$_v >/dev/null 2>&1
		if [ $_v = 1 ]; then wait_for - 5 wb; else wait_for - 5 wt; fi &&
			FOLLOWED=$((FOLLOWED + 1))
		if [ $((_i % 10)) = 9 ]; then
			echo 1 >"/sys/class/nvme/$c/rescan_controller"
			sleep 0.3
		fi
		_i=$((_i + 1))
	done
	# the sidecar's re-checks after the last rescan (0.3, 1.5, 5 s)
	sleep 6
	LINES=$(($(command wc -l <"$SC_LOG") - _l0))
	kill -TERM $_wsp $_wwp
	wait $_wsp $_wwp
	TRANS=$(sed -n 's/.* trans=\([0-9]*\).*/\1/p' /tmp/ws.out)
	WRITES=$(sed -n 's/^WCW writes=//p' /tmp/ww.out)
	info "$1 toggles: $(cat /tmp/ws.out); $(tr '\n' ' ' </tmp/ww.out)"
	[ "$LINES" = 0 ] || info "sidecar's lines: $(tail -n "$LINES" "$SC_LOG" | head -n 10 | tr '\n' '|')"
}

sidecar_start /tmp/watch.log
wait_for - 60 grep -q 'watching' /tmp/watch.log
sleep 1
toggles 100
check_eq "100 toggles: each followed within 5 s" "$FOLLOWED" 100
check_eq "100 toggles: no line in the sidecar's log (no error, no warning)" "$LINES" 0
check_eq "100 toggles: the sidecar wrote write_cache 0 times (the kernel did it all)" "$WRITES" 0
check_eq "100 toggles: 100 write_cache transitions, one a toggle (no flapping)" "$TRANS" 100
sidecar_alive "sidecar alive after 100 toggles"
nvme-vwc-sync audit >/dev/null 2>&1
check_eq "audit after the toggles: in sync" "$?" 0
sidecar_stop "sidecar: clean stop"

# the admin's lines: write back forced (the kernel refuses it while it
# holds no cache: WCE=0), a drive ignored; no flapping, no noise
printf 'device serial=VWC0 write-cache=write-back\n' >/tmp/wb.conf
sidecar_start /tmp/watch-wb.log --config=/tmp/wb.conf
wait_for - 60 grep -q 'watching' /tmp/watch-wb.log
sleep 1
toggles 20
check_eq "write-back line, 20 toggles: no line in the sidecar's log" "$LINES" 0
check_eq "write-back line, 20 toggles: one transition a toggle" "$TRANS" 20
check_eq "write-back line, 20 toggles: no write_cache write" "$WRITES" 0
nvme-vwc-sync audit --config=/tmp/wb.conf >/tmp/audit-wb.out 2>&1
check_eq "write-back line: audit in sync (the kernel holds no cache with WCE=0)" "$?" 0
sidecar_stop "sidecar (write-back line): clean stop"
printf 'device serial=VWC0 write-cache=ignore\n' >/tmp/ign.conf
sidecar_start /tmp/watch-ign.log --config=/tmp/ign.conf
wait_for - 60 grep -q 'watching' /tmp/watch-ign.log
sleep 1
toggles 20
check_eq "ignore line, 20 toggles: no line in the sidecar's log" "$LINES" 0
check_eq "ignore line, 20 toggles: one transition a toggle" "$TRANS" 20
check_eq "ignore line, 20 toggles: no write_cache write" "$WRITES" 0
sidecar_stop "sidecar (ignore line): clean stop"

# WCE=1 through io_uring: the patch rescans in the ioctl's passthrough
# end only, so the kernel keeps holding no write cache with the cache on
sidecar_start /tmp/watch-uring.log
wait_for - 60 grep -q 'watching' /tmp/watch-uring.log
sleep 1
wce-toggle -u -n 1 -d 0 -f 1 "/dev/$c" >/tmp/wct.out 2>&1
rc=$?
info "wce-toggle -u: exit $rc: $(tr '\n' '|' </tmp/wct.out)"
if [ $rc = 3 ]; then
	skip "io_uring WCE=1: the kernel does not follow" "no io_uring admin passthrough"
	skip "io_uring WCE=1: the sidecar's error" "no io_uring admin passthrough"
	skip "io_uring WCE=1: audit drift" "no io_uring admin passthrough"
	skip "ioctl Set Features: write back again" "no io_uring admin passthrough"
else
	sleep 3
	fact check_eq "io_uring WCE=1 ($(get_wce "$c")): the kernel does not follow (write_cache, fua)" \
		"$(wc "$ns") $(cat /sys/block/$ns/queue/fua)" "write through 0"
	wait_for "io_uring WCE=1: the sidecar logs an error naming the kernel's refusal" 20 \
		grep -q "$ns: the kernel holds no write cache for it while a controller reports its cache enabled" /tmp/watch-uring.log
	nvme-vwc-sync audit >/dev/null 2>&1
	check_eq "io_uring WCE=1: audit says drift (exit 3)" "$?" 3
	nvme set-feature "/dev/$c" --feature-id=6 --value=1 >/dev/null 2>&1
	check_eq "a Set Features through the ioctl: the kernel rescans, write back" "$(wc "$ns")" "write back"
fi
info "sidecar (io_uring): $(tr '\n' '|' </tmp/watch-uring.log | cut -c1-600)"
sidecar_stop "sidecar (io_uring): clean stop"
info "audit: $(tr '\n' '|' </tmp/audit.out)"
finish
