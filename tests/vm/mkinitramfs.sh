#!/bin/bash
# Build the guest initramfs (a newc cpio, not compressed) for the VM tests.
# Usage: mkinitramfs.sh [--fio] OUT.cpio [DESTDIR]
#   --fio    add fio and its libraries (the benchmarks' guests; no test
#            case uses it, and Debian's fio with its libraries, librbd's
#            and ICU's among them, is 83 MB of the 130 MB image)
#   DESTDIR  the project's `meson install` tree; copied over / in the guest.
# Contents: busybox-static (+ applet links), nvme (from DESTDIR if it has one,
# else Debian's), systemd-udevd + udevadm with the host's udev rules, a hwdb
# compiled from DESTDIR's hwdb files (the package's, as its postinst
# compiles them; Debian's own 13 MB database of vendor and model names is
# not in the image: no rule or case here reads a name from it), DESTDIR,
# the shared libraries of every ELF file (ldd), an ld.so.cache, coreutils dd
# and date, tests/vm/guest/* in /vwc/guest, tests/vm/cases/* in /vwc/cases,
# the benchmarks' guests bench/guest/* in /vwc/bench, the test tools
# tests/vm/tools/*.c in /usr/local/bin, and /init. The host part
# (everything but DESTDIR, fio and the test files) is cached in
# $VWC_CACHE_DIR/initramfs/, keyed by the package versions and this script.
#
# Not compressed: a guest under software emulation unpacks 50 MB of cpio
# faster than it inflates the gzip of it (boot to init measured 3.9 to
# 4.5 s against 4.6 to 5.6 s for the same tree gzip'd, 6.4 s for the image
# with fio and Debian's hwdb), and every case boots at least once.
set -euo pipefail

with_fio=
[ "${1:-}" != --fio ] || { with_fio=1; shift; }
OUT=${1:?usage: mkinitramfs.sh [--fio] OUT.cpio [DESTDIR]}
DESTDIR_IN=${2:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/initramfs
MULTIARCH=x86_64-linux-gnu

log() { echo "mkinitramfs: $*" >&2; }

# add_file ROOT PATH [DEST]: copy PATH (following symlinks) to ROOT/DEST.
add_file() {
	local root=$1 src=$2 dst=${3:-$2}
	mkdir -p "$root$(dirname "$dst")"
	cp -L --remove-destination "$src" "$root$dst"
}

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }

# add_libs ROOT FILE...: copy the shared libraries that ldd lists for each
# ELF FILE (found on the host) into ROOT at the same paths. Libraries ldd
# cannot find must already be in ROOT (e.g. installed by DESTDIR).
add_libs() {
	local root=$1 f lib
	shift
	for f in "$@"; do
		is_elf "$f" || continue
		ldd "$f" 2>/dev/null | while read -r line; do
			case $line in
			*'=> not found'*)
				lib=${line%% *}
				if [ -z "$(find "$root" -name "$lib" -print -quit)" ]; then
					log "warning: $f needs $lib, not found"
				fi
				;;
			*'=> /'*) lib=${line#*=> }; add_file "$root" "${lib%% (*}" ;;
			# the loader, "/lib64/ld-linux-x86-64.so.2 (0x...)"; not
			# ldd's complaints about files built for another glibc
			# (tests/compat brings their libraries itself)
			/*' (0x'*) add_file "$root" "${line%% (*}" ;;
			esac
		done
	done
}

# The init script. Prints VWC-INIT first: the host's proof that init ran.
write_init() {
	cat >"$1/init" <<'INIT'
#!/bin/sh
echo "VWC-INIT: start"
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t tmpfs tmpfs /tmp
# debugfs and tracefs where and as systemd mounts them
# (sys-kernel-debug.mount, sys-kernel-tracing.mount), unless the case asked
# for neither (# vm: notracefs).
if ! grep -qw vwc.notracefs /proc/cmdline; then
	[ -d /sys/kernel/debug ] && mount -t debugfs -o nosuid,nodev,noexec debugfs /sys/kernel/debug 2>/dev/null
	[ -d /sys/kernel/tracing ] && mount -t tracefs -o nosuid,nodev,noexec tracefs /sys/kernel/tracing 2>/dev/null
fi
exec </dev/console >/dev/console 2>&1
echo "VWC-INIT: kernel $(uname -r) uptime $(cut -d' ' -f1 /proc/uptime)"

# Kernels with NVMe as a module ship an overlay listing what to load.
load=/lib/modules/$(uname -r)/modules.load
if [ -f "$load" ]; then
	while read -r m; do
		insmod "/lib/modules/$(uname -r)/$m" || echo "VWC-INIT: insmod $m failed"
	done <"$load"
fi

# vwc.noquirks=SERIAL (# vm: ctrl ... noquirks): that controller is bound
# with no quirks, as a drive the driver's table does not list: a dynamic ID
# with the class-wide entry's driver_data 0, matched before the table, for
# its rebind only.
for arg in $(cat /proc/cmdline); do
	case $arg in vwc.noquirks=*) ;; *) continue ;; esac
	nq=${arg#vwc.noquirks=} i=0 c=
	while [ "$i" -lt 100 ] && [ -z "$c" ]; do
		for d in /sys/class/nvme/nvme*; do
			[ "$(tr -d ' ' <"$d/serial" 2>/dev/null)" = "$nq" ] && c=$d
		done
		[ -n "$c" ] || { sleep 0.1; i=$((i + 1)); }
	done
	[ -n "$c" ] || { echo "VWC-INIT: noquirks: no controller $nq"; continue; }
	pci=$(basename "$(readlink -f "$c/device")")
	id="$(sed 's/^0x//' "$c/device/vendor") $(sed 's/^0x//' "$c/device/device")"
	d=/sys/bus/pci/drivers/nvme
	# the namespaces it has now (wait for the scan first), so that the
	# case starts with all of them back
	i=0
	while [ "$i" -lt 50 ] && ! ls -d "$c"/nvme*n* >/dev/null 2>&1; do sleep 0.1; i=$((i + 1)); done
	nns=$(ls -d "$c"/nvme*n* 2>/dev/null | wc -l)
	echo "$id ffffffff ffffffff 0 0 0" >$d/new_id &&
		echo "$pci" >$d/unbind && echo "$pci" >$d/bind
	echo "$id" >$d/remove_id
	i=0
	while [ "$i" -lt 200 ]; do
		c=$(ls -d /sys/bus/pci/devices/$pci/nvme/nvme* 2>/dev/null | head -n 1)
		[ -n "$c" ] && [ "$(cat "$c/state" 2>/dev/null)" = live ] &&
			[ "$(ls -d "$c"/nvme*n* 2>/dev/null | wc -l)" -ge "$nns" ] && break
		sleep 0.1
		i=$((i + 1))
	done
	[ "$i" -lt 200 ] || echo "VWC-INIT: noquirks: $nq not back with its $nns namespace(s) after 20 s"
	echo "VWC-INIT: noquirks: $nq at $pci rebound, quirks $(cat /sys/bus/pci/devices/$pci/nvme/nvme*/quirks 2>/dev/null | tr '\n' ' ')"
done

# Hooks an install tree may carry (tests/sanitize, tests/coverage): the
# variables /etc/vwc-test/env exports reach every process of the case, and
# /etc/vwc-test/after runs when the case has ended (prints reports).
[ -f /etc/vwc-test/env ] && . /etc/vwc-test/env

test=
for arg in $(cat /proc/cmdline); do
	case $arg in vwc.test=*) test=${arg#vwc.test=} ;; esac
done
if [ -z "$test" ]; then
	echo "VWC-INIT: no vwc.test= on the command line; starting a shell"
	setsid cttyhack sh
elif [ -f "/vwc/cases/$test.sh" ] || [ -f "/vwc/guest/$test.sh" ] || [ -f "/vwc/bench/$test.sh" ]; then
	script=/vwc/cases/$test.sh
	[ -f "$script" ] || script=/vwc/guest/$test.sh
	[ -f "$script" ] || script=/vwc/bench/$test.sh
	cd /vwc && sh "$script"
	echo "VWC-INIT: exit $?"
	[ -x /etc/vwc-test/after ] && /etc/vwc-test/after
else
	echo "VWC-TEST: FAIL $test: no such guest test"
	echo "VWC-INIT: exit 127"
fi
sync
poweroff -f
INIT
	chmod 755 "$1/init"
}

# build_base ROOT: the host part of the image.
build_base() {
	local root=$1 f
	mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,run,tmp,root,var}
	ln -s usr/bin "$root/bin"
	ln -s usr/sbin "$root/sbin"
	ln -s usr/lib "$root/lib"
	ln -s usr/lib64 "$root/lib64"
	ln -s ../run "$root/var/run"
	mknod -m 600 "$root/dev/console" c 5 1
	mknod -m 666 "$root/dev/null" c 1 3

	add_file "$root" /usr/bin/busybox /usr/bin/busybox
	for f in $(busybox --list-full); do
		[ -e "$root/$f" ] || ln -s /usr/bin/busybox "$root/$f"
	done

	# coreutils dd and date: busybox has no oflag=dsync, no date +%N; jq for JSON checks; lvm (LVM cases); flock(1) (the lock case: the man page's pattern); sfdisk (GPT); strace (signals and delays injected at one syscall).
	local bins=(/usr/sbin/nvme /usr/bin/udevadm /usr/bin/systemd-hwdb /usr/bin/dd /usr/bin/date /usr/bin/jq /usr/bin/setpriv /usr/bin/flock /usr/sbin/blkdiscard /usr/bin/kmod /usr/sbin/lvm /usr/sbin/sfdisk /usr/bin/strace)
	for f in "${bins[@]}"; do
		rm -f "$root$f"
		add_file "$root" "$f"
	done
	mkdir -p "$root/usr/lib/systemd"
	ln -s /usr/bin/udevadm "$root/usr/lib/systemd/systemd-udevd"
	ln -s /usr/lib/systemd/systemd-udevd "$root/usr/sbin/systemd-udevd"
	add_libs "$root" "${bins[@]}"

	# udev: the host's rules and helpers (the hwdb: below, from DESTDIR's).
	mkdir -p "$root/usr/lib/udev" "$root/etc/udev/rules.d"
	cp -a /usr/lib/udev/rules.d "$root/usr/lib/udev/"
	for f in /usr/lib/udev/*; do
		if [ -f "$f" ] && is_elf "$f"; then
			add_file "$root" "$f"
			add_libs "$root" "$f"
		fi
	done
	[ -f /etc/udev/udev.conf ] && add_file "$root" /etc/udev/udev.conf

	# Users and groups named by udev rules, nobody (65534) and one
	# ordinary user, vwcuser (1000): the unprivileged users of the cases
	# about permissions (setpriv --reuid=vwcuser ...).
	awk -F: '$3 < 1000' /etc/passwd >"$root/etc/passwd"
	awk -F: '$3 < 1000' /etc/group >"$root/etc/group"
	echo 'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' >>"$root/etc/passwd"
	echo 'nogroup:x:65534:' >>"$root/etc/group"
	echo 'vwcuser:x:1000:1000:vwc test user:/tmp:/bin/sh' >>"$root/etc/passwd"
	echo 'vwcuser:x:1000:' >>"$root/etc/group"
	echo "root::0:0:99999:7:::" >"$root/etc/shadow"
	printf '%s\n' "/usr/local/lib/$MULTIARCH" /usr/local/lib \
		"/usr/lib/$MULTIARCH" /usr/lib "include /etc/ld.so.conf.d/*.conf" >"$root/etc/ld.so.conf"
	mkdir -p "$root/etc/ld.so.conf.d"
	: >"$root/etc/machine-id"
}

base_key() {
	{
		dpkg-query -W busybox-static nvme-cli udev libc6 libnvme1 lvm2 fdisk strace 2>/dev/null
		sha256sum "${BASH_SOURCE[0]}"
	} | sha256sum | cut -c1-16
}

# --- host part, cached ---
key=$(base_key)
base="$CACHE/base-$key"
if [ ! -d "$base" ]; then
	log "building host part ($key)"
	mkdir -p "$CACHE"
	# A private directory per build: two builds at once (the suite and a
	# benchmark, another user's run) must not delete or fill each other's, and
	# only a complete tree is renamed into place.
	btmp=$(mktemp -d "$CACHE/base.XXXXXX")
	chmod 755 "$btmp"
	build_base "$btmp"
	[ -x "$btmp/usr/bin/busybox" ] && [ -x "$btmp/usr/bin/udevadm" ] ||
		{ log "host part incomplete in $btmp"; rm -rf "$btmp"; exit 1; }
	mv -T "$btmp" "$base" 2>/dev/null || rm -rf "$btmp" # another build won
	# other keys: left for a while to builds of another checkout in progress
	find "$CACHE" -maxdepth 1 -name 'base-*' ! -name "base-$key" -mmin +120 -exec rm -rf {} +
	find "$CACHE" -maxdepth 1 -name 'base.*' -mmin +120 -exec rm -rf {} +
fi

# --- full image ---
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
root="$work/root"
cp -a "$base" "$root"

# Test tools (tests/vm/tools/*.c: wc-sampler, wce-toggle ...) into
# /usr/local/bin, linked against the host's C library, which the image
# carries; cached by their sources and the compiler.
tflags=(-O2 -Wall)
tkey=$({ cat "$HERE"/tools/*.c; gcc --version | head -n 1; ldd --version | head -n 1; echo "${tflags[*]}"; } | sha256sum | cut -c1-16)
tools="$CACHE/tools-$tkey"
if [ ! -d "$tools" ]; then
	ttmp=$(mktemp -d "$CACHE/tools.XXXXXX")
	chmod 755 "$ttmp"
	for f in "$HERE"/tools/*.c; do
		gcc "${tflags[@]}" -o "$ttmp/$(basename "$f" .c)" "$f"
	done
	mv -T "$ttmp" "$tools" 2>/dev/null || rm -rf "$ttmp"
	find "$CACHE" -maxdepth 1 -name 'tools-*' ! -name "tools-$tkey" -mmin +120 -exec rm -rf {} +
fi
mkdir -p "$root/usr/local/bin"
cp "$tools"/* "$root/usr/local/bin/"
add_libs "$root" "$tools"/*

if [ -n "$with_fio" ]; then
	add_file "$root" /usr/bin/fio
	add_libs "$root" /usr/bin/fio
fi

if [ -n "$DESTDIR_IN" ]; then
	[ -d "$DESTDIR_IN" ] || { log "DESTDIR $DESTDIR_IN is not a directory"; exit 1; }
	# The install tree replaces the host's files (e.g. an nvme with the plugin).
	# Merge it through the image's /bin, /lib ... links instead of replacing them.
	(cd "$DESTDIR_IN" && find . ! -type d -print0) | while IFS= read -r -d '' f; do
		f=${f#.}
		mkdir -p "$root$(dirname "$f")"
		rm -f "$root$f"
		cp -a "$DESTDIR_IN$f" "$root$f"
	done
	mapfile -d '' elves < <(find "$DESTDIR_IN" -type f -print0)
	add_libs "$root" "${elves[@]}"
	for f in usr/sbin/nvme usr/local/sbin/nvme usr/bin/nvme usr/local/bin/nvme; do
		[ -x "$DESTDIR_IN/$f" ] && log "nvme from DESTDIR: /$f"
	done
fi

mkdir -p "$root/vwc/guest" "$root/vwc/cases" "$root/vwc/lib" "$root/vwc/bench"
cp -a "$HERE"/../lib/guest.sh "$root/vwc/lib/"
cp -a "$HERE"/guest/. "$root/vwc/guest/"
cp -a "$HERE"/cases/. "$root/vwc/cases/"
cp -a "$HERE"/../../bench/guest/. "$root/vwc/bench/"
# The hwdb: the hwdb files DESTDIR installed (the package's own; an
# admin's files are the cases' to add, and `systemd-hwdb update` in the
# guest compiles them with the package's, which stay in hwdb.d), compiled
# as the package's postinst does.
[ -z "$(ls "$root/usr/lib/udev/hwdb.d" 2>/dev/null)" ] || systemd-hwdb update --usr --root="$root"
write_init "$root"
ldconfig -r "$root" 2>/dev/null || ldconfig -r "$root"

(cd "$root" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc --quiet) >"$OUT.tmp"
mv "$OUT.tmp" "$OUT"
log "$OUT: $(du -h "$OUT" | cut -f1) ($(du -sh "$root" | cut -f1) unpacked)"
