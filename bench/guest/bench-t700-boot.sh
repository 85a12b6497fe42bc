#!/bin/sh
# vm: ctrl wc=on quirks
# vm: fixture stock
# bench: per-kernel
# timeout: 3000
#
# The T700 path's boot cost, side by side with the kernel patch
# "nvme-pci: disable write zeroes for Crucial T700 and T705" (-k
# 7.2-generic-patched or 6.1-generic-patched: the generic kernel with its
# nvme host modules rebuilt with the kernel patches; there QEMU's table
# entry carries NVME_QUIRK_DISABLE_WRITE_ZEROES, standing in for the
# T700/T705 entries). QEMU's PCI ID is in the quirk database through an
# admin hwdb file (t700-lib.sh), as for a T700.
#
# How much later the controller is usable with Write Zeroes off, measured
# from the fork of `insmod nvme.ko` (the PCI function already there, as in
# an initramfs, where nvme loads on the coldplug of a function the kernel
# enumerated) with udevd running the package's rules, to the first sample
# (1 ms, nvme-ready) where the controller is live, has its namespace and
# that namespace's queue/write_zeroes_max_bytes reads 0; then to the end
# of `udevadm settle` after it. In ONE boot, round by round, each
# configuration after rmmod nvme nvme_core and insmod of its nvme-core.ko
# (untimed), the order reversed every other round:
#   patched       the patched modules: the quirk from the table, one probe
#   stock+rule    the stock modules of the same release (the fixture
#                 "stock"), the package's udev rule: the controller's add
#                 event runs `nvme-vwc-sync quirks` (the PCI function's own
#                 add event came before nvme was loaded, when the tool can
#                 only leave it to that one)
#   stock+script  the stock modules, the package's rules opted out (the
#                 initramfs has none of them), then what initramfs-tools
#                 does: udevadm settle (init-top), then the package's
#                 init-premount script (`quirks --verbose --deactivate-lvm`);
#                 timed to the script's end as well
#   patched+script the patched modules, the package's rules opted out,
#                 then udevadm settle and the init-premount script, as
#                 stock+script: what an initramfs with this package does on
#                 the patched kernel (the tool finds nothing to do)
#   stock+param   (where the stock nvme has a quirks parameter) the stock
#                 modules with the quirks= that `quirks` wrote to
#                 modprobe.d in this boot, as modprobe passes it at the next
#                 boot; the rule runs and has nothing to do
#   stock         the stock modules, the package's rules opted out: Write
#                 Zeroes stays on; the floor (live with a namespace)
# Each sample also says how many namespaces (diskseq values) were seen: 1
# is one probe, 2 the controller bound again. The kernel's uevents of the
# untimed stock+rule pass show the path the rule took.
. /vwc/guest/lib.sh
. /vwc/guest/t700-lib.sh
R=${VWC_BENCH_ROUNDS:-20}
ver=$(uname -r)
stockdir=/usr/lib/vwc-test/stock-modules/$ver
patchdir=/lib/modules/$ver/kernel/drivers/nvme/host
OFF=/etc/udev/rules.d/70-nvme-vwc-sync-off.rules
SNIPPET=/etc/modprobe.d/zz-nvme-vwc-sync.conf
pm=$(ls /usr/local/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync \
	/usr/share/initramfs-tools/scripts/init-premount/nvme-vwc-sync 2>/dev/null | head -n 1)
bail() { echo "BENCH: FAIL $*"; finish; exit 1; }

[ -s "$stockdir/nvme.ko" ] || bail "no stock modules in $stockdir"
[ -n "$pm" ] || bail "no init-premount script"
c=$(ctrl_by_serial VWC0) || bail "no controller VWC0"
t700_hwdb >/dev/null 2>&1 || bail "hwdb"
# no quirks attribute (6.1): the tool reads the driver's table through
# libkmod; QEMU's ID is in it (bogus_nid) and it would refuse, as it must
# for a listed drive whose quirks it cannot know. As in the VM case
# t700-dynid: a module directory listing nvme's class-wide entry only
# (the table of a T700) for the tool, in udev's runs too.
if [ ! -e "/sys/class/nvme/$c/quirks" ]; then
	t700_mkmods /tmp/mods 'pci:v*d*sv*sd*bc01sc08i02*' >/dev/null 2>&1
	export NVME_VWC_SYNC_MODULES_DIR=/tmp/mods/lib/modules/1.0
	mkdir -p /etc/udev/rules.d
	echo "ENV{NVME_VWC_SYNC_MODULES_DIR}=\"$NVME_VWC_SYNC_MODULES_DIR\"" >/etc/udev/rules.d/00-t700-modules-dir.rules
	info "no quirks attribute: NVME_VWC_SYNC_MODULES_DIR=$NVME_VWC_SYNC_MODULES_DIR"
fi
start_udev >/dev/null 2>&1
# nvmet (loaded at boot for other guests) needs nvme_core on 7.x
! grep -q '^nvmet ' /proc/modules || rmmod nvmet
src_patched=$(cat /sys/module/nvme/srcversion)
info "kernel $ver; patched nvme srcversion $src_patched; stock: $(ls "$stockdir" | tr '\n' ' ')"

rules() { # on|off: the package's udev rules
	if [ "$1" = off ]; then
		echo 'ENV{NVME_VWC_SYNC}="0"' >$OFF
	else
		rm -f $OFF
	fi
	udevadm control --reload
}
unload() {
	udevadm settle --timeout=60
	_i=0
	while grep -q '^nvme ' /proc/modules; do
		rmmod nvme 2>/dev/null && break
		_i=$((_i + 1))
		[ "$_i" -lt 50 ] || bail "rmmod nvme: $(grep nvme /proc/modules | tr '\n' '|')"
		sleep 0.2
	done
	! grep -q '^nvme_core ' /proc/modules || rmmod nvme_core || bail "rmmod nvme_core"
	udevadm settle --timeout=60
}

# measure CONF: one configuration; its line appended to /tmp/CONF
measure() {
	conf=$1
	d=$stockdir
	case $conf in patched*) d=$patchdir ;; esac
	case $conf in
	stock | *+script) rules off ;;
	esac
	unload
	insmod "$d/nvme-core.ko" || bail "insmod $d/nvme-core.ko"
	udevadm settle --timeout=60
	sleep 1
	mp=
	if [ -n "$MON" ]; then
		udevadm monitor --kernel --subsystem-match=pci --subsystem-match=nvme \
			--subsystem-match=block/disk >/tmp/ev.log 2>&1 &
		mp=$!
		sleep 0.5
	fi
	case $conf in
	*+script)
		o=$(nvme-ready -s VWC0 -z -S -- sh -c "insmod $d/nvme.ko && udevadm settle --timeout=60 && $pm") ;;
	stock+param)
		o=$(nvme-ready -s VWC0 -z -S -- insmod "$d/nvme.ko" "quirks=$qparam") ;;
	stock)
		o=$(nvme-ready -s VWC0 -S -- insmod "$d/nvme.ko") ;;
	*)
		o=$(nvme-ready -s VWC0 -z -S -- insmod "$d/nvme.ko") ;;
	esac
	[ -z "$mp" ] || { sleep 0.5; kill "$mp"; wait "$mp" 2>/dev/null; }
	src=$(cat /sys/module/nvme/srcversion 2>/dev/null)
	case $conf in
	patched*) [ "$src" = "$src_patched" ] ;;
	*) [ "$src" != "$src_patched" ] ;;
	esac || echo "$conf: nvme srcversion $src unexpected" >>/tmp/odd
	case $conf in
	stock | *+script) rules on ;;
	esac
	c=$(ctrl_by_serial VWC0)
	kq=$(tr '\n' , <"/sys/class/nvme/$c/quirks" 2>/dev/null || echo "-")
	echo "$conf: $o quirks=$kq" >>/tmp/all
	case $o in
	*timeout=0*) ;;
	*)
		echo "$conf: $o" >>/tmp/odd
		echo "-1 -1 -1 -1 0 -1" >>"/tmp/$conf"	# the rows stay rounds
		return ;;
	esac
	# what each configuration must show: probes, Write Zeroes
	v() { echo "$o" | sed -n "s/.* $1=\([^ ]*\).*/\1/p"; }
	case $conf:$(v seqs):$(v wz) in
	patched:1:0 | patched+script:1:0 | stock+param:1:0 | stock+rule:2:0 | stock+script:2:0) ;;
	stock:1:*) [ "$(v wz)" != 0 ] || echo "$conf: Write Zeroes off: $o" >>/tmp/odd ;;
	*) echo "$conf: unexpected probes or Write Zeroes: $o" >>/tmp/odd ;;
	esac
	echo "$(v ready_ms) $(v settled_ms) $(v first_ms) $(v cmd_ms) $(v seqs) $(v first_wz)" >>"/tmp/$conf"
}

# one untimed pass of each (caches warm; quirks writes its modprobe.d
# snippet where nvme has a quirks parameter), then the rounds
qparam=
MON=
for conf in patched stock+rule stock+script patched+script stock; do
	[ "$conf" = stock+rule ] && MON=1
	measure "$conf"
	if [ -n "$MON" ]; then
		MON=
		ev=$(awk '/^KERNEL\[/ { n = split($3, p, "/"); printf "%s%s %s %s", s, $2, $4, p[n]; s = ", " }' /tmp/ev.log)
		rec=$(cat /run/nvme-vwc-sync/dynid/* 2>/dev/null | head -n 1)
	fi
done
if [ -e /sys/module/nvme/parameters/quirks ] && [ -s $SNIPPET ]; then
	qparam=$(sed -n 's/^options nvme quirks=//p' $SNIPPET)
fi
info "warm-up: $(tr '\n' '|' </tmp/all)"
info "modprobe.d snippet: $(cat $SNIPPET 2>/dev/null | tr '\n' '|'); quirks parameter: $(test -e /sys/module/nvme/parameters/quirks && echo yes || echo no)"
confs="patched stock+rule stock+script patched+script ${qparam:+stock+param }stock"
rev=$(echo "$confs" | tr ' ' '\n' | sed '/^$/d' | awk '{ a[NR] = $0 } END { for (i = NR; i > 0; i--) printf "%s ", a[i] }')
for f in $confs; do rm -f "/tmp/$f"; done
: >/tmp/all
r=0
while [ "$r" -lt "$R" ]; do
	order=$confs
	[ $((r % 2)) = 1 ] && order=$rev
	for conf in $order; do
		measure "$conf"
	done
	r=$((r + 1))
	info "round $r of $R done ($order)"
done
# med FILE COLUMN: the median (of the two middle ones: their mean)
med() {
	awk -v k="$2" '$k >= 0 { print $k }' "$1" | sort -n | awk '{ a[NR] = $1 } END {
		if (!NR) { print "-"; exit }
		if (NR % 2) printf "%.1f\n", a[(NR + 1) / 2]; else printf "%.1f\n", (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}
range() {
	awk -v k="$2" '$k >= 0 { print $k }' "$1" | sort -n | awk '{ a[NR] = $1 } END {
		if (NR) printf "min %.1f, max %.1f", a[1], a[NR] }'
}
echo "BENCH: kernel $ver, $R rounds; ms from the fork of insmod nvme.ko (nvme-core.ko loaded before, untimed) on CLOCK_MONOTONIC, sampled every 1 ms; udevd running the package's rules unless said; medians (min, max)"
echo "BENCH: configuration | n | ready: live, namespace, Write Zeroes off (stock: on) | udevadm settle returned | first namespace seen | insmod (or the script) exited | namespaces seen (1: one probe; 2: bound again)"
for conf in $confs; do
	f=/tmp/$conf
	[ -s "$f" ] || { echo "BENCH: $conf | 0"; continue; }
	echo "BENCH: $conf | $(awk '$1 >= 0' "$f" | command wc -l) | $(med "$f" 1) ($(range "$f" 1)) | $(med "$f" 2) ($(range "$f" 2)) | $(med "$f" 3) | $(med "$f" 4) | $(awk '{ print $5 }' "$f" | sort | uniq -c | awk '{ printf "%s%dx%s", s, $1, $2; s = " " }')"
done
# ratios and differences of the medians, and the median of the per-round
# differences (the samples of one round are neighbours in time)
# cmp A B COLUMN:NAME
cmp() {
	[ -s "/tmp/$1" ] && [ -s "/tmp/$2" ] || return 0
	a=$(med "/tmp/$2" "${3%%:*}")
	b=$(med "/tmp/$1" "${3%%:*}")
	p=$(paste -d ' ' "/tmp/$1" "/tmp/$2" | awk -v k="${3%%:*}" -v n="$(head -n 1 "/tmp/$1" | awk '{ print NF }')" \
		'$k >= 0 && $(k + n) >= 0 { printf "%.3f\n", $k - $(k + n) }' | sort -n | awk '{ a[NR] = $1 } END {
		if (NR % 2) printf "%+.1f", a[(NR + 1) / 2]; else printf "%+.1f", (a[NR / 2] + a[NR / 2 + 1]) / 2 }')
	echo "BENCH: $1 / $2, ${3#*:}: $b / $a ms = x$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", b / a }'), $(awk -v a="$a" -v b="$b" 'BEGIN { printf "%+.1f", b - a }') ms; median of the per-round differences $p ms"
}
for conf in $confs; do
	case $conf in patched | patched+script) continue ;; esac
	cmp "$conf" patched 1:ready
	cmp "$conf" patched 2:settled
done
cmp stock+script patched+script 1:ready
cmp stock+script patched+script 4:script exited
echo "BENCH: the path of stock+rule: kernel uevents of its untimed pass, from insmod nvme.ko on (pci, nvme, disks): $ev; dynamic ID on the nvme driver then (the tool's record): ${rec:-none}"
echo "BENCH: first Write Zeroes value seen (bytes; 0 = off from the first probe): $(for conf in $confs; do printf '%s %s; ' "$conf" "$(awk '{ print $6 }' "/tmp/$conf" | sort -u | tr '\n' ' ')"; done)"
if [ -s /tmp/odd ]; then
	echo "BENCH: odd samples: $(command wc -l </tmp/odd)"
	sed 's/^/BENCH:   /' /tmp/odd
else
	echo "BENCH: odd samples: 0 (every patched, patched+script and stock+param sample one probe with Write Zeroes off, every stock+rule and stock+script sample two, every stock sample one with Write Zeroes on, the modules the configuration names)"
fi
info "all samples: $(command wc -l </tmp/all)"
finish
