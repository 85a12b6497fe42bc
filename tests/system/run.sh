#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Full-system tests: the Debian packages of this tree, installed with apt in
# a booted Debian 12 (bookworm) and Debian 13 (trixie) system, systemd as
# PID 1, under QEMU (TCG) with NVMe drives attached.
#
#   run.sh [--prepare] [SUITE...]
#                         (default: $VWC_SYSTEM_SUITES, else
#                          trixie-nvmeroot-dracut trixie-nvmeroot-lvm
#                          trixie bookworm-nvmeroot-lvm bookworm, in an
#                          order that makes the two workers end together;
#                          bookworm-nvmeroot and trixie-nvmeroot run by
#                          name: root on a plain GPT partition is proven
#                          by trixie-nvmeroot-dracut, and every check of
#                          trixie-nvmeroot but its layout facts by
#                          trixie-nvmeroot-lvm)
#
# SUITE-nvmeroot boots the suite's generic kernel (NVMe a module, loaded from
# the initramfs) with the root file system on an NVMe drive whose cache is
# off (serial VWCROOT), laid out as Debian's installer does it (mkimage.sh:
# SUITE-nvmeroot GPT with an EFI system partition, ext4 root and swap;
# SUITE-nvmeroot-lvm the same with /boot and root and swap on LVM, which
# lvm2's udev rule activates in the initramfs before our script: it
# deactivates and activates them again around its rebind; the kernel and
# initramfs are
# given to QEMU with -kernel and -initrd, root= as the installer's boot
# loader would pass it: no UEFI firmware, no boot loader), beside the same
# two drives, and runs the layout checks, the boot,
# service, remove and purge checks (hot-add, SMART, restarts and upgrade
# are proven by the plain suite), and root on a drive the quirk database
# lists (Write Zeroes disabled from the initramfs, undone on removal): three
# boots, the second and third from the initramfs the guest's
# update-initramfs made (the package's trigger), read back from the test
# disk. trixie-nvmeroot-dracut: the same with dracut in place of
# initramfs-tools (mkimage.sh flavour dracut): the package's dracut module.
#
# For each suite: scripts/build-debs.sh builds the package in a clean
# chroot (and repacks it as the next version, 0.1.0+up1, for the upgrade
# check: --repack); tests/system/mkimage.sh gives the cached system
# image; a copy-on-write overlay of it boots with a second disk (label
# VWCTEST) holding tests/system/guest/test.sh and the .deb files. The
# guest script installs the package, reboots once, and checks boot,
# service, hot-add, SMART, restart, kill, upgrade (with a PCI dynamic ID
# live), Debian's next nvme-cli update (guest/cases/55-aptup.sh;
# tests/system/nvme-cli-up.sh puts a higher nvme-cli in a local apt
# repository on the disk), remove and purge (see the script). The host
# sends the guest's "VWC-HOST:" lines to the QEMU monitor. The kernel is
# the bzImage, as a boot loader gives it: the VM suite's uncompressed
# boot (tests/lib/qemu.sh vq_pvh) was tried here and a bookworm
# root-on-LVM system lost its root NVMe controller during the install
# (its I/O aborted by the host, then every write failed), a cause not
# found, for some 20 s saved in the whole suite.
#
# Environment: VWC_SYSTEM_OUT (logs; default build/system in the
# repository), VWC_DEBS_FROM=head (build the packages from the last commit,
# see build-debs.sh --head), VWC_DEBS_OPTS (more options for build-debs.sh,
# e.g. --no-plugin), VWC_SYSTEM_TIMEOUT (seconds per boot, 1500: a boot
# that installs the package rebuilds the initramfs, dracut's taking
# minutes under TCG on a slow host; 900 ran out once at load 13),
# VWC_SYSTEM_BOOT_TIMEOUT (seconds for a boot to reach the runner, 600;
# 120 s of guest CPU at most here, alone),
# VWC_SYSTEM_JOBS (variants booted at once, one core each; default the
# number of cores), VWC_CACHE_DIR,
# VWC_SYSTEM_PREPARED=1 (the packages marked built in OUT are this run's:
# --prepare's, kept, not built again; the caller cleared the marks of
# earlier runs).
# Each boot's part of the guest script declares its plan (tests/lib/
# guest.sh); the variant's checks are compared with the sum of its plans.
# Last lines: the figures "system: product checks N (N distinct), harness
# facts N (N distinct)", then "system: N passed, N failed[, N skipped]".
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
# shellcheck source=../lib/qemu.sh
. tests/lib/qemu.sh
trap '[ -z "$VQ_QPID" ] || kill "$VQ_QPID" 2>/dev/null' EXIT
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
OUT=${VWC_SYSTEM_OUT:-$REPO/build/system}
TIMEOUT=${VWC_SYSTEM_TIMEOUT:-1500}
BOOT_TIMEOUT=${VWC_SYSTEM_BOOT_TIMEOUT:-600}
prepare=0
if [ "${1:-}" = --prepare ]; then
	prepare=1
	shift
fi
# shellcheck disable=SC2086 # word splitting intended
# (two workers take them in this order: the longest two first, then the
# one that ends them closest together; their QEMU time in a full run of
# 24eece2: 995, 734, 555, 675 and 446 s, so 1,670 and 1,735 s a worker,
# where the longest first made it 1,550 and 1,855)
[ "$#" -gt 0 ] || set -- ${VWC_SYSTEM_SUITES:-trixie-nvmeroot-dracut trixie-nvmeroot-lvm trixie bookworm-nvmeroot-lvm bookworm}

passed=0 failed=0 skipped=0
log() { echo "system: $*" >&2; }
broken() { echo "VWC-TEST: FAIL $1: $2"; failed=$((failed + 1)); }
now() { vq_now; }
elapsed() { vq_elapsed "$1"; }

# Host tools (Debian packages).
need=()
# (fdisk, dosfstools, lvm2: the partitioned and LVM images of nvmeroot)
for p in mmdebstrap qemu-system-x86 qemu-utils socat e2fsprogs git fdisk dosfstools lvm2; do
	dpkg-query -W -f='${db:Status-Status}\n' "$p" 2>/dev/null | grep -qx installed || need+=("$p")
done
if [ "${#need[@]}" -gt 0 ]; then
	log "installing ${need[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >&2 ||
		{ broken system "cannot install ${need[*]}"; echo "system: 0 passed, 1 failed"; exit 1; }
fi

mkdir -p "$OUT"
# packages built by an earlier run are built again (see run_suite), but
# not those that --prepare built for this run (VWC_SYSTEM_PREPARED=1)
[ "${VWC_SYSTEM_PREPARED:-}" = 1 ] || [ "$prepare" = 1 ] || rm -f "$OUT"/debs-*/.built
from=()
[ "${VWC_DEBS_FROM:-}" != head ] || from=(--head)
# shellcheck disable=SC2206 # word splitting intended
from+=(${VWC_DEBS_OPTS:-})

# build_debs SUITE DIR LOG [BUILD-DEBS OPTION...]: the packages of this
# tree for SUITE in DIR, once a run: variants side by side (and --prepare)
# take the same lock, and the first builds them (DIR/.built).
build_debs() {
	local suite=$1 dir=$2 blog=$3 lk rc=0
	shift 3
	exec {lk}>"$dir.lock"
	flock "$lk"
	if [ -e "$dir/.built" ]; then
		log "$suite: packages ($(basename "$dir")) already built in this run"
	else
		rm -rf "$dir"
		if bash scripts/build-debs.sh "${from[@]}" "$@" "$suite" "$dir" >"$blog" 2>&1; then
			touch "$dir/.built"
		else
			rc=1
		fi
	fi
	exec {lk}>&-
	return "$rc"
}

# variant_image NAME: mkimage.sh's arguments for a variant name
variant_image() {
	case $1 in
	bookworm | trixie) echo "$1 cloud whole" ;;
	*-nvmeroot) echo "${1%-nvmeroot} generic gpt" ;;
	*-nvmeroot-lvm) echo "${1%-nvmeroot-lvm} generic lvm" ;;
	trixie-nvmeroot-dracut) echo "trixie dracut gpt" ;;
	esac
}

# run_suite RELEASE [nvmeroot [lvm|"" [dracut]]]: build, image, boot; adds to
# the counts.
run_suite() {
	local suite=$1 variant=${2:-} lay=${3:-} gen=${4:-} t0 dir img work log rc status
	local debs=$OUT/debs-$suite debs2=$OUT/debs-$suite-up name=$suite
	[ -z "$variant" ] || name=$suite-$variant${lay:+-$lay}${gen:+-$gen}
	work=$OUT/$name
	rm -rf "$work"
	mkdir -p "$work"

	t0=$(now)
	# Variants run side by side (workers below): the packages of a
	# release are built once, by the first variant that needs them, the
	# others wait on the same lock.
	if ! build_debs "$suite" "$debs" "$work/build-debs.log"; then
		tail -n 20 "$work/build-debs.log" >&2
		broken "$suite" "build-debs.sh failed ($work/build-debs.log)"
		return
	fi
	# The next version, for the upgrade check of the plain suite only;
	# cases/50-plugin.sh then checks the nvme-cli-vwc of that version.
	if [ -z "$variant" ] &&
		! build_debs "$suite" "$debs2" "$work/build-debs-up.log" --version 0.1.0+up1 --repack "$debs"; then
		log "$suite: the next version did not build; the upgrade check is skipped"
		rm -rf "$debs2"
	fi
	log "$suite: packages built in $(elapsed "$t0") s; lintian: $(grep -c '^E: ' "$debs/lintian.txt") error(s), $(grep -c '^W: ' "$debs/lintian.txt") warning(s)"
	grep '^[EW]: ' "$debs/lintian.txt" | sed "s/^/system: $suite: lintian: /" >&2

	t0=$(now)
	# nvmeroot: as the installer lays a disk out (GPT, ESP, root, swap);
	# nvmeroot-lvm: GPT, ESP, /boot, LVM with root and swap
	local flavour=cloud layout=whole
	[ "$variant" != nvmeroot ] || flavour=${gen:-generic} layout=${lay:-gpt}
	if ! dir=$(bash tests/system/mkimage.sh "$suite" "$flavour" "$layout" 2>"$work/mkimage.log"); then
		cat "$work/mkimage.log" >&2
		broken "$name" "mkimage.sh failed"
		return
	fi
	cat "$work/mkimage.log" >&2
	log "$name: image ready in $(elapsed "$t0") s ($dir, kernel $(cat "$dir/kernel-version"), layout $layout, $(cat "$dir/cmdline"))"

	# The test disk: the guest script and the packages.
	mkdir -p "$work/vwc/debs/v1" "$work/vwc/out" "$work/vwc/lib"
	cp tests/system/guest/test.sh tests/system/guest/lib.sh "$work/vwc/"
	cp -r tests/system/guest/cases "$work/vwc/"
	# The plain suite's nvme-cli update check (guest/cases/55-aptup.sh): a local
	# repository with a higher nvme-cli, and what the rebuild command
	# reads of a source tree
	if [ -z "$variant" ]; then
		if repo=$(bash tests/system/nvme-cli-up.sh "$suite" 2>"$work/nvme-cli-up.log"); then
			cp -a "$repo" "$work/vwc/repo"
			mkdir -p "$work/vwc/src/debian" "$work/vwc/src/scripts"
			cp debian/changelog debian/rules "$work/vwc/src/debian/"
			cp scripts/fetch-nvme-cli.sh "$work/vwc/src/scripts/"
		else
			cat "$work/nvme-cli-up.log" >&2
			log "$suite: no higher nvme-cli built; the nvme-cli update check is skipped"
		fi
	fi
	cp tests/lib/guest.sh "$work/vwc/lib/"
	# wc-sampler (static): write_cache sampled through the upgrade
	mkdir -p "$work/vwc/bin"
	gcc -O2 -Wall -static -o "$work/vwc/bin/wc-sampler" tests/vm/tools/wc-sampler.c ||
		broken "$name" "wc-sampler did not build"
	# kill-when-gone (static): a SIGKILL inside a rebind's unbind write
	gcc -O2 -Wall -static -o "$work/vwc/bin/kill-when-gone" tests/vm/tools/kill-when-gone.c ||
		broken "$name" "kill-when-gone did not build"
	chmod 755 "$work/vwc/test.sh"
	echo "${variant:-full}" >"$work/vwc/mode"
	echo "$layout" >"$work/vwc/layout"
	echo "${gen:-initramfs-tools}" >"$work/vwc/initramfs"
	cp "$debs"/nvme-vwc-sync_*.deb "$debs"/nvme-cli-vwc_*.deb "$work/vwc/debs/v1/" 2>/dev/null
	if [ -d "$debs2" ] && [ -z "$variant" ]; then
		mkdir -p "$work/vwc/debs/v2"
		cp "$debs2"/nvme-vwc-sync_*.deb "$debs2"/nvme-cli-vwc_*.deb "$work/vwc/debs/v2/" 2>/dev/null
	fi
	img=$work/vwctest.img
	# nvmeroot: room for the guest's initramfs (36 MB on trixie)
	if [ "$variant" = nvmeroot ]; then truncate -s 160M "$img"; else truncate -s 64M "$img"; fi
	mke2fs -q -t ext4 -L VWCTEST -d "$work/vwc" "$img"
	qemu-img create -q -f qcow2 -b "$dir/root.raw" -F raw "$work/root.qcow2"
	for f in nv0 nv1 spare0; do truncate -s 64M "$work/$f.img"; done
	local rootdisk=(-drive "file=$work/root.qcow2,if=virtio,format=qcow2")
	if [ "$variant" = nvmeroot ]; then
		rootdisk=(-device nvme,id=nvroot,serial=VWCROOT
			-drive "file=$work/root.qcow2,if=none,id=droot,format=qcow2"
			-device nvme-ns,drive=droot,bus=nvroot,nsid=1,write-cache=off)
	fi

	log=$work/serial.log
	local sock=$work/monitor.sock
	: >"$log"
	: >"$log.monitor"
	local qemu=(qemu-system-x86_64 -accel "$VQ_ACCEL" -machine q35 -cpu "$VQ_CPU"
		-m 1024 -smp 1 -display none -vga none -nodefaults -nic none -no-reboot
		-kernel "$dir/vmlinuz"
		-append "$(cat "$dir/cmdline") console=ttyS0 quiet panic=-1 no_timer_check systemd.show_status=error"
		"${rootdisk[@]}"
		-drive "file=$img,if=virtio,format=raw"
		-device nvme,id=nv0,serial=VWC0
		-drive "file=$work/nv0.img,if=none,id=d0,format=raw"
		-device nvme-ns,drive=d0,bus=nv0,nsid=1,write-cache=off
		-device nvme,id=nv1,serial=VWC1
		-drive "file=$work/nv1.img,if=none,id=d1,format=raw"
		-device nvme-ns,drive=d1,bus=nv1,nsid=1,write-cache=on
		-device pcie-root-port,id=rp0,chassis=1,slot=1)
	# No default devices (-nodefaults: VGA, CD-ROM, parallel port; no
	# user's NVMe server has them): a generic kernel loads their drivers
	# on every boot. Boot to the test runner of the trixie root-on-LVM
	# image: 44.5 and 43.4 s of QEMU CPU with them, 41.8 and 41.4 s
	# without (taken in turns). The serial console and the monitor are
	# vq_boot's.
	# The guest reboots once, as a power cycle: it powers off, and the
	# host starts QEMU again on the same disks (a warm reset under TCG
	# gave RCU stalls and soft lockups in the next boot's initramfs, twice
	# in six reboots here). A boot that never reaches the test runner
	# (same stalls, rarer on a cold boot) is retried once.
	# The first boot runs the image's initramfs; a later one the guest's
	# own if it left one on the test disk (/boot/initrd-for-boot-N.img).
	status=ok rc=0
	local boot blog a initrd=$dir/initrd.img
	t0=$(now)
	for boot in 1 2 3; do
		if [ "$boot" -gt 1 ]; then
			rm -f "$work/initrd-$boot.img"
			debugfs -R "dump /boot/initrd-for-boot-$boot.img $work/initrd-$boot.img" "$img" >/dev/null 2>&1
			if [ -s "$work/initrd-$boot.img" ]; then
				initrd=$work/initrd-$boot.img
				log "$name: boot $boot runs the guest's initramfs ($(stat -c %s "$initrd") bytes)"
			fi
		fi
		blog=$work/serial-$boot.log
		vq_boot "$blog" "$sock" "$work" 'VWC-INFO:' "$BOOT_TIMEOUT" "$TIMEOUT" '' \
			-- "${qemu[@]}" -initrd "$initrd" || true
		status=$VQ_STATUS rc=$VQ_RC
		cat "$blog.qemu" >>"$work/qemu.log" 2>/dev/null
		for a in "$blog".attempt*; do [ ! -e "$a" ] || cat "$a" >>"$log"; done
		cat "$blog" >>"$log"
		log "$name: boot $boot: $status after $VQ_TOTAL s ($VQ_ATTEMPTS attempt(s), QEMU CPU $VQ_CPU_S s)"
		[ "$status" = ok ] || break
		grep -aq 'VWC-TEST: DONE' "$log" && break
		grep -aq "VWC-INFO: .*powering off for boot $((boot + 1))" "$log" || { status=stopped; break; }
	done
	local total
	total=$(elapsed "$t0")

	# Root on NVMe: the package's initramfs scripts ran without a shell
	# error on the console of the boots that ran them ("SCRIPT: LINE:
	# message" from dash or klibc's sh: a command the initramfs lacks, a
	# syntax error), checked here as the guest cannot see its console.
	if [ "$variant" = nvmeroot ] && grep -aq 'VWC-TEST: DONE' "$log"; then
		local sherr
		sherr=$(grep -aho 'nvme-vwc-sync[^ :]*: [0-9][0-9]*: .*' "$log" | head -n 3 | tr '\n' ';')
		echo "VWC-TEST: PLAN 1" >>"$log"
		if [ -z "$sherr" ]; then
			echo "VWC-TEST: PASS $name: initramfs: the package's scripts ran without a shell error (console of every boot)" >>"$log"
		else
			echo "VWC-TEST: FAIL $name: initramfs: the package's scripts ran without a shell error: $sherr" >>"$log"
		fi
	fi

	# Results: the serial console; logs from the test disk (debugfs).
	debugfs -R "rdump /out $work" "$img" >/dev/null 2>&1 || true
	: >"$OUT/.$name.names"
	vq_results "$log" "system:" "$OUT/.$name.names"
	passed=$((passed + VQ_PASSED)) failed=$((failed + VQ_FAILED)) skipped=$((skipped + VQ_SKIPPED))
	if [ "$VQ_DONE" != 1 ]; then
		broken "$name" "the guest did not finish (status $status, QEMU exit $rc, $total s; $log)"
		grep -av '^\s*$' "$log" | tail -n 15 | sed 's/^/system:   | /' >&2
	fi
	local b1 b2 b3
	b1=$(grep -a -m1 'boot 1: multi-user.target after' "$log" | sed 's/.*after \([0-9]*\) ms.*/\1/')
	b2=$(grep -a -m1 'boot 2: multi-user.target after' "$log" | sed 's/.*after \([0-9]*\) ms.*/\1/')
	b3=$(grep -a -m1 'boot 3: multi-user.target after' "$log" | sed 's/.*after \([0-9]*\) ms.*/\1/')
	log "$name: QEMU ran $total s in all ($boot boots, power cycles between); multi-user.target reached ${b1:-?} ms, ${b2:-?} ms${b3:+, $b3 ms} after kernel start; logs in $work"
}

# run_named NAME: one variant by its name
run_named() {
	case $1 in
	bookworm | trixie) run_suite "$1" ;;
	bookworm-nvmeroot | trixie-nvmeroot) run_suite "${1%-nvmeroot}" nvmeroot ;;
	bookworm-nvmeroot-lvm | trixie-nvmeroot-lvm) run_suite "${1%-nvmeroot-lvm}" nvmeroot lvm ;;
	trixie-nvmeroot-dracut) run_suite trixie nvmeroot '' dracut ;;
	*) broken "$1" "unknown suite (bookworm, trixie, bookworm-nvmeroot, trixie-nvmeroot, bookworm-nvmeroot-lvm, trixie-nvmeroot-lvm, trixie-nvmeroot-dracut)" ;;
	esac
}

# --prepare: what the variants take from the host before they boot, made
# ahead (tests/check runs it at nice 19 beside the VM suite, whose
# guests leave a core idle a third of the time): each release's packages
# (and a plain suite's next version) for this run, every variant's
# image and the plain suites' higher nvme-cli (both cached). Nothing here
# is a test: a step that fails is done again by its variant.
if [ "$prepare" = 1 ]; then
	declare -A rel=() plain=()
	for v in "$@"; do
		read -r r _ <<<"$(variant_image "$v")"
		[ -n "$r" ] || continue
		rel[$r]=1
		[ "$v" != "$r" ] || plain[$r]=1
	done
	# this run's packages: none yet, unless the caller cleared the marks
	# already (tests/check, before it starts this and the suite)
	[ "${VWC_SYSTEM_PREPARED:-}" = 1 ] || rm -f "$OUT"/debs-*/.built
	for r in "${!rel[@]}"; do
		t0=$(now)
		build_debs "$r" "$OUT/debs-$r" "$OUT/prepare-$r.log" || log "prepare: $r packages did not build ($OUT/prepare-$r.log)"
		[ -z "${plain[$r]:-}" ] || build_debs "$r" "$OUT/debs-$r-up" "$OUT/prepare-$r-up.log" --version 0.1.0+up1 --repack "$OUT/debs-$r" ||
			log "prepare: $r next version did not build"
		log "prepare: $r packages in $(elapsed "$t0") s"
	done
	for v in "$@"; do
		t0=$(now)
		# shellcheck disable=SC2046 # the three words
		bash tests/system/mkimage.sh $(variant_image "$v") >/dev/null 2>"$OUT/prepare-$v-image.log" ||
			log "prepare: $v image failed ($OUT/prepare-$v-image.log)"
		log "prepare: $v image in $(elapsed "$t0") s"
	done
	for r in "${!plain[@]}"; do
		bash tests/system/nvme-cli-up.sh "$r" >/dev/null 2>"$OUT/prepare-$r-nvme-cli-up.log" ||
			log "prepare: $r higher nvme-cli failed"
	done
	exit 0
fi

# Workers: each guest is single-threaded TCG on one host core, so
# VWC_SYSTEM_JOBS (default: the number of cores) variants run at once,
# taken from the queue in the order given (put the longest first). A
# variant's output is printed whole when it ends; its counts come back
# in a file.
jobs=${VWC_SYSTEM_JOBS:-$(nproc)}
[ "$jobs" -ge 1 ] 2>/dev/null || jobs=1
queue=$OUT/.queue
printf '%s\n' "$@" >"$queue"
: >"$OUT/.counts"
worker() {
	local name lk
	trap '[ -z "$VQ_QPID" ] || kill "$VQ_QPID" 2>/dev/null' EXIT
	exec {lk}>"$queue.lock"
	while :; do
		flock "$lk"
		name=$(head -n 1 "$queue")
		[ -z "$name" ] || sed -i 1d "$queue"
		flock -u "$lk"
		[ -n "$name" ] || break
		log "$name: started (worker $1)"
		passed=0 failed=0 skipped=0
		run_named "$name" >"$OUT/.$name.out" 2>"$OUT/.$name.err"
		flock "$lk"
		cat "$OUT/.$name.err" >&2
		cat "$OUT/.$name.out"
		echo "$passed $failed $skipped" >>"$OUT/.counts"
		flock -u "$lk"
	done
}
t_all=$(now)
wpids=()
for ((w = 1; w <= jobs; w++)); do
	worker "$w" &
	wpids+=($!)
done
trap 'kill "${wpids[@]}" 2>/dev/null; pkill -P "$$" 2>/dev/null' EXIT
wait "${wpids[@]}"
while read -r p f k; do
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + k))
done <"$OUT/.counts"
log "all suites: $(elapsed "$t_all") s"
# (a variant's work directory is named as the variant)
for v in "$@"; do cat "$OUT/.$v.names" 2>/dev/null; done >"$OUT/checks.txt"
vq_figures "$OUT/checks.txt" "system:"
summary="system: $passed passed, $failed failed"
[ "$skipped" -eq 0 ] || summary="$summary, $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
