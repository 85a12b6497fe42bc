#!/bin/bash
# A guest kernel that ignores NVME_QUIRK_DISABLE_WRITE_ZEROES, with a
# controller that reports a Write Zeroes Size Limit (WZSL), for the case
# wz-ignored.sh.
#
# Why a fixture: every Debian kernel the test bed boots carries "nvme:
# respect NVME_QUIRK_DISABLE_WRITE_ZEROES when wzsl is set" (the source
# packages' drivers/nvme/host/core.c, nvme_init_non_mdts_limits(): 6.1.192,
# 6.12.95, 6.12.117 and 7.2.13 all take WZSL only without the quirk), and
# QEMU 7.2's controller reports WZSL 0 (its Identify Controller for the NVM
# command set fills VSL and DMRSL alone; no property sets WZSL).
#
# So: the guest kernel's own nvme host modules, rebuilt out of tree from
# Debian's source of that exact version against its headers, with two
# changes to core.c: the line as it was before the fix (WZSL sets the
# Write Zeroes limit whatever the quirks say), and a module parameter
# nvme_core.vwc_test_wzsl (default 5, writable, read at each controller's
# probe) that stands in for the WZSL QEMU does not report: a controller
# reporting 0 is taken as reporting it. 5 means 2^5 minimum pages: 128 KiB
# on QEMU (4 KiB pages), not its 512 KiB transfer limit.
#
# Output, cached: $VWC_CACHE_DIR/fixtures/wzsl/<release>/modules.cpio.gz,
# usr/lib/modules/<release>/kernel/drivers/nvme/host/{nvme-core,nvme}.ko:
# the paths of the kernel's own overlay (tests/vm/kernels.sh), appended
# after it by run-vm.sh ("# vm: fixture wzsl"), so the kernel's unpacker
# replaces those two files and /init loads them in their place.
#
# Tags: 6.1-generic (bookworm: built on the host, whose gcc 12 is the one
# its headers name) and 7.2-generic (sid: built in a minimal sid chroot
# made by mmdebstrap with the headers and the compiler they name: the one
# tests/vm/patched-modules.sh keeps, $CACHE/chroots/kmod-sid-VERSION).
# Needs the tag fetched (tests/vm/kernels.sh TAG): its version file and the
# suite's apt state that script keeps.
# Usage: fixture-wzsl.sh [TAG...]   (default: 6.1-generic 7.2-generic)
set -euo pipefail

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
[ "$#" -gt 0 ] || set -- 6.1-generic 7.2-generic

log() { echo "fixture-wzsl: $*" >&2; }
die() { log "error: $*"; exit 1; }

# the two changes to core.c; each must match exactly once
FIXED='	if (id->wzsl && !(ctrl->quirks & NVME_QUIRK_DISABLE_WRITE_ZEROES))'
BEFORE='	if (!id->wzsl)
		id->wzsl = vwc_test_wzsl;	/* test bed: QEMU reports 0 */
	if (id->wzsl)			/* before the fix: the quirk not asked */'
PARAM='/* test bed: the WZSL a controller reporting 0 is taken to report */
static unsigned char vwc_test_wzsl = 5;
module_param(vwc_test_wzsl, byte, 0644);
MODULE_PARM_DESC(vwc_test_wzsl, "test bed: WZSL for a controller reporting 0");

static int nvme_init_non_mdts_limits(struct nvme_ctrl *ctrl)'

patch_core() {
	local f=$1 n
	n=$(FIXED=$FIXED BEFORE=$BEFORE PARAM=$PARAM perl -0777 -pi -e '
		$n += s/^\Q$ENV{FIXED}\E$/$ENV{BEFORE}/m;
		$n += s/^static int nvme_init_non_mdts_limits\(struct nvme_ctrl \*ctrl\)$/$ENV{PARAM}/m;
		END { print STDERR ($n || 0), "\n" }' "$f" 2>&1)
	[ "$n" = 2 ] || die "$f: $n of the 2 changes applied (the source is not the one this script knows)"
}

# chroot_for SUITE REL: the build chroot tests/vm/patched-modules.sh makes
# and keeps for the same kernel ($CACHE/chroots/kmod-SUITE-REL: minbase,
# make and linux-headers-REL with the compiler it depends on), made here
# the same way if that script has not made it yet, under the same lock:
# one chroot a kernel version for both fixtures
chroot_for() {
	local suite=$1 rel=$2 root=$CACHE/chroots/kmod-$1-$2
	mkdir -p "$CACHE/chroots"
	exec 8>"$root.lock"
	flock 8
	if [ -x "$root/usr/bin/make" ] && [ -d "$root/usr/src/linux-headers-$rel" ]; then
		exec 8>&-
		echo "$root"
		return 0
	fi
	log "$suite: making a build chroot with linux-headers-$rel (mmdebstrap)"
	rm -rf "$root.new"
	# sid's Release reads as expired to a fresh apt: keep it valid
	mmdebstrap --quiet --variant=minbase --mode=root --format=directory \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='APT::Install-Recommends "false"' \
		--include="make,linux-headers-$rel" \
		"$suite" "$root.new" "$CACHE/apt/$suite/debian.sources" >&2 ||
		die "$suite: mmdebstrap failed"
	rm -rf "$root"
	mv "$root.new" "$root"
	exec 8>&-
	echo "$root"
}

build() {
	local tag=$1 suite rel dest apt work pkgver hdr how root series
	case $tag in
	6.1-generic) suite=bookworm how=host ;;
	7.2-generic) suite=sid how=chroot ;;
	*) die "no fixture for tag '$tag' (6.1-generic, 7.2-generic)" ;;
	esac
	[ -s "$CACHE/kernels/$tag/version" ] || die "$tag: not fetched (tests/vm/kernels.sh $tag)"
	rel=$(cat "$CACHE/kernels/$tag/version")
	dest=$CACHE/fixtures/wzsl/$rel
	if [ -s "$dest/modules.cpio.gz" ] && [ -z "${VWC_KERNEL_REFRESH:-}" ]; then
		log "$tag: cached ($rel)"
		return 0
	fi
	apt=$CACHE/apt/$suite
	[ -s "$apt/debian.sources" ] || die "$suite: no apt state in $apt (tests/vm/kernels.sh $tag makes it)"
	work=$(mktemp -d)
	# shellcheck disable=SC2064 # expanded now, on purpose
	trap "rm -rf '$work'" EXIT
	# kernels.sh's lists, read only; a cache of our own
	mkdir -p "$work/apt/archives/partial"
	local opts=(-o "Dir::Etc::sourcelist=$apt/debian.sources" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$work/apt"
		-o APT::Sandbox::User=root -q)
	pkgver=$(apt-cache "${opts[@]}" show --no-all-versions "linux-image-$rel" |
		sed -n 's/^Version: //p' | head -n 1)
	[ -n "$pkgver" ] || die "$tag: linux-image-$rel not in $suite"
	series=$(echo "$pkgver" | cut -d. -f1,2)
	log "$tag: downloading linux-source-$series $pkgver"
	(cd "$work" && apt-get "${opts[@]}" download "linux-source-$series=$pkgver" >/dev/null)
	if [ "$how" = host ]; then
		log "$tag: downloading the headers of $rel"
		(cd "$work" && apt-get "${opts[@]}" download "linux-headers-$rel=$pkgver" \
			"linux-headers-${rel%-*}-common=$pkgver" \
			"linux-kbuild-$series=$pkgver" >/dev/null)
		mkdir "$work/root"
		for deb in "$work"/linux-headers-*.deb "$work"/linux-kbuild-*.deb; do
			dpkg-deb -x "$deb" "$work/root"
		done
		hdr=$work/root/usr/src/linux-headers-$rel
		# its Makefile includes the common headers by absolute path
		sed -i "s|^include /usr/src/|include $work/root/usr/src/|" "$hdr/Makefile"
	else
		root=$(chroot_for "$suite" "$rel")
	fi
	dpkg-deb --fsys-tarfile "$work"/linux-source-*.deb |
		tar -x -C "$work" --wildcards '*/linux-source-*.tar.xz'
	tar -xJf "$work"/usr/src/linux-source-*.tar.xz -C "$work" --wildcards \
		'*/drivers/nvme/host/*'
	rm -rf "${work:?}/usr"
	mv "$work"/linux-source-*/drivers/nvme/host "$work/host"
	patch_core "$work/host/core.c"
	log "$tag: building drivers/nvme/host against $rel ($how)"
	if [ "$how" = host ]; then
		make -s -C "$hdr" M="$work/host" -j"$(nproc)" modules >"$work/build.log" 2>&1 ||
			{ tail -n 30 "$work/build.log" >&2; die "$tag: build failed"; }
	else
		rm -rf "$root/build"
		mkdir -p "$root/build"
		cp -r "$work/host" "$root/build/host"
		# objtool reads /proc: mounted in a mount namespace of its own,
		# gone with it (the variables expand in that shell)
		# shellcheck disable=SC2016
		ROOT=$root REL=$rel unshare --mount --fork sh -c \
			'mount -t proc proc "$ROOT/proc" &&
			exec chroot "$ROOT" make -s -C "/usr/src/linux-headers-$REL" \
				M=/build/host -j"$(nproc)" modules' >"$work/build.log" 2>&1 ||
			{ tail -n 30 "$work/build.log" >&2; die "$tag: build failed"; }
		cp "$root"/build/host/*.ko "$work/host/"
		rm -rf "$root/build"
	fi
	local ov=$work/ov mdir=usr/lib/modules/$rel/kernel/drivers/nvme/host
	mkdir -p "$ov/$mdir"
	cp "$work/host/nvme-core.ko" "$work/host/nvme.ko" "$ov/$mdir/"
	modinfo -F vermagic "$ov/$mdir/nvme-core.ko" | grep -q "^$rel " ||
		die "$tag: vermagic $(modinfo -F vermagic "$ov/$mdir/nvme-core.ko") is not $rel"
	modinfo -F parm "$ov/$mdir/nvme-core.ko" | grep -q '^vwc_test_wzsl:' ||
		die "$tag: nvme-core.ko has no vwc_test_wzsl parameter"
	rm -rf "$dest.new"
	mkdir -p "$dest.new"
	(cd "$ov" && find usr/lib/modules/"$rel"/kernel -print | cpio -o -H newc --quiet) |
		gzip -9 >"$dest.new/modules.cpio.gz"
	echo "$pkgver" >"$dest.new/source-version"
	rm -rf "$dest"
	mv "$dest.new" "$dest"
	rm -rf "$work"
	trap - EXIT
	log "$tag: $dest/modules.cpio.gz (Debian source $pkgver)"
}

for tag in "$@"; do build "$tag"; done
