#!/bin/bash
# Fetch the guest kernels into a cache outside the repository:
#   $VWC_CACHE_DIR/kernels/<tag>/vmlinuz       (+ version; vmlinuz.pvh: the
#   same kernel uncompressed, which the guests boot, see vq_pvh)
#   $VWC_CACHE_DIR/kernels/<tag>/modules.cpio.gz (+ modules.list): modules the
#   guest loads at boot: NVMe (where it is a module), dm-mod (LVM cases), ext4,
#   loop and nvmet (T700 in-use cases: a loop device, an nvmet export)
#   (generic kernels, where it is a module)
# Tags: 6.1 (Debian 12 cloud), 6.12 (bookworm-backports cloud), 7.2 (sid cloud),
# 7.2-generic (sid generic kernel, NVMe built as modules), 6.1-generic and
# 6.12-generic (the same suites' generic kernels, NVMe built as modules).
# 6.1-generic and 6.12-generic also carry a T700 stand-in module directory
# (see t700_standin).
# 7.2-generic-patched and 6.1-generic-patched: the same generic kernels whose
# nvme host modules are rebuilt from Debian's source of that version with the
# kernel patches this project stands in for (tests/vm/patched-modules.sh,
# tests/vm/patches/<X.Y>/): the kernel honours WCE, its table gives QEMU's
# controller NVME_QUIRK_DISABLE_WRITE_ZEROES (the T700/T705 entries' quirk),
# and IRQ completion batching is off on Hygon. The guest loads them in place
# of the stock ones; the tag's cache key holds the patches' hash.
# 7.2-generic-io and 6.1-generic-io: the same generic kernels with nvme-loop
# and null_blk added, for the benchmark io-cost (bench/run.sh) and the case
# fabrics-loop (Linux's target over nvme-loop), which name the tag on their
# "# kernels:" line: null_blk makes a block device at boot, which the other
# test cases must not see. Tags of their own, so the test kernels' module
# lists (their cache key) stay.
# Debian 12's kernel is built without nvme-loop (CONFIG_NVME_TARGET_LOOP is
# not set): 6.1-generic-io carries nvmet-tcp and nvme-tcp instead, for an
# export over TCP on the guest's loopback interface.
# 7.2-generic-tcp, 6.12-generic-tcp and 6.1-generic-tcp: the generic kernels with a virtio
# network card and NVMe over TCP, for the cases of two guests joined by a
# virtual network (# vm: peer, run-vm.sh): 7.2 is both the target (nvmet-tcp,
# null_blk) and an initiator, 6.1 and 6.12 (Debian 12 and 13) initiators (nvme-tcp).
# Tags of their own, as the -io ones, so that no other tag's module list changes.
# Packages come from the Debian archive named in the system's sources file, with
# the suite changed; versions are resolved at run time. Cached tags are skipped
# (VWC_KERNEL_REFRESH=1 fetches again).
# Usage: kernels.sh [TAG...]
#   (default: 6.1 6.12 7.2 7.2-generic 6.1-generic; 6.12-generic by name)
set -euo pipefail
# shellcheck source=../lib/qemu.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/qemu.sh"

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=/etc/apt/sources.list.d/debian.sources
[ "$#" -gt 0 ] || set -- 6.1 6.12 7.2 7.2-generic 6.1-generic

log() { echo "kernels: $*" >&2; }
die() { log "error: $*"; exit 1; }

# suite_sources SUITE OUT: a deb822 sources file for SUITE, derived from the
# system one. "bookworm" keeps the system file as it is (with security updates);
# any other suite takes the first (main archive) stanza with Suites replaced.
suite_sources() {
	local suite=$1 out=$2
	[ -r "$SYS_SOURCES" ] || die "$SYS_SOURCES not found (deb822 sources expected)"
	if [ "$suite" = bookworm ]; then
		grep -v '^#' "$SYS_SOURCES" >"$out"
	else
		awk -v s="$suite" 'BEGIN { RS = ""; ORS = "\n\n" }
			NR == 1 { print }' "$SYS_SOURCES" |
			grep -v '^#' | sed "s/^Suites:.*/Suites: $suite/" >"$out"
	fi
}

# apt_for SUITE: sets APT_OPTS to a private apt state for SUITE, updated once.
APT_OPTS=()
apt_for() {
	local suite=$1 dir="$CACHE/apt/$1"
	mkdir -p "$dir/lists/partial" "$dir/cache/archives/partial"
	suite_sources "$suite" "$dir/debian.sources"
	APT_OPTS=(-o "Dir::Etc::sourcelist=$dir/debian.sources" -o Dir::Etc::sourceparts=/dev/null
		-o "Dir::State::Lists=$dir/lists" -o "Dir::Cache=$dir/cache"
		-o APT::Sandbox::User=root -q)
	if [ ! -e "$dir/updated" ] || [ -n "${VWC_KERNEL_REFRESH:-}" ]; then
		log "apt-get update ($suite)"
		apt-get "${APT_OPTS[@]}" update >/dev/null
		touch "$dir/updated"
	fi
}

# dep_of PKG REGEX: the first Depends of PKG whose name matches REGEX.
dep_of() {
	apt-cache "${APT_OPTS[@]}" depends "$1" |
		sed -n 's/^ *|\{0,1\}Depends: //p' | grep -E -m1 "$2" || true
}

# fetch TAG SUITE FLAVOUR [MODULES [EXTRA]]
#   MODULES: "nvme dm-mod ..." for the overlay; EXTRA: t700-standin, or
#   patched (the nvme host modules rebuilt with the patches)
# The overlay's layout; a cached kernel with another is fetched again.
OVERLAY_LAYOUT=usr-lib
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# patch_key SERIES: what the patched modules of SERIES are built from
patch_key() {
	cat "$HERE/patches/$1"/*.patch "$HERE/patched-modules.sh" | sha256sum | cut -c1-16
}

fetch() {
	local tag=$1 suite=$2 flavour=$3 want_modules=${4:-} extra=${5:-}
	local dest="$CACHE/kernels/$tag" layout=$OVERLAY_LAYOUT${5:++$5}
	[ "$extra" != patched ] || layout=$layout-$(patch_key "${tag%%-*}")
	if [ -s "$dest/vmlinuz" ] && [ -z "${VWC_KERNEL_REFRESH:-}" ] &&
		[ "$(cat "$dest/modules.list" 2>/dev/null)" = "$want_modules" ] &&
		{ [ -z "$want_modules" ] || [ "$(cat "$dest/overlay.layout" 2>/dev/null)" = "$layout" ]; }; then
		log "$tag: cached ($(cat "$dest/version" 2>/dev/null))"
		return 0
	fi
	apt_for "$suite"
	local image binary modules
	image=$(dep_of "linux-image-$flavour" "^linux-image-[0-9]")
	[ -n "$image" ] || die "$tag: no linux-image package behind linux-image-$flavour in $suite"
	# sid splits the kernel: linux-image-V-F depends on linux-binary-V-F
	# (vmlinuz) and linux-modules-V-F (modules); older suites have one package.
	binary=$(dep_of "$image" "^linux-binary-")
	modules=$(dep_of "$image" "^linux-modules-")
	local pkgs=("${binary:-$image}")
	if [ -n "$want_modules" ] && [ -n "$modules" ]; then pkgs+=("$modules"); fi
	log "$tag: downloading ${pkgs[*]}"

	local tmp
	tmp=$(mktemp -d)
	(cd "$tmp" && apt-get "${APT_OPTS[@]}" download "${pkgs[@]}" >/dev/null)
	mkdir -p "$tmp/root"
	local deb
	for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$tmp/root"; done

	local vmlinuz ver
	vmlinuz=$(find "$tmp/root" -path '*/modules/*/vmlinuz' -o -path '*/boot/vmlinuz-*' | head -n1)
	[ -n "$vmlinuz" ] || die "$tag: no vmlinuz in ${pkgs[*]}"
	case $vmlinuz in
	*/boot/vmlinuz-*) ver=${vmlinuz##*/vmlinuz-} ;;
	*) ver=$(basename "$(dirname "$vmlinuz")") ;;
	esac

	rm -rf "$dest.new"
	mkdir -p "$dest.new"
	cp "$vmlinuz" "$dest.new/vmlinuz"
	echo "$ver" >"$dest.new/version"
	[ "$extra" != patched ] || patched_in "$tmp/root" "$suite" "$ver"
	if [ -n "$want_modules" ]; then
		nvme_modules "$tmp/root" "$ver" "$dest.new" "$want_modules" "$extra"
		echo "$want_modules" >"$dest.new/modules.list"
		echo "$layout" >"$dest.new/overlay.layout"
	fi
	rm -rf "$dest" "$tmp"
	mv "$dest.new" "$dest"
	log "$tag: $ver ($(du -h "$dest/vmlinuz" | cut -f1))"
}

# quiet_depmod ROOT VER: depmod without warnings about files only a full
# install has.
quiet_depmod() {
	local f
	for f in modules.order modules.builtin modules.builtin.modinfo; do
		[ -e "$1/lib/modules/$2/$f" ] || : >"$1/lib/modules/$2/$f"
	done
	depmod -b "$1" "$2"
}

# t700_standin OV VER: a second module directory in the overlay,
# usr/lib/vwc-test/t700-modules/VER, made by depmod like the real one but from
# an nvme.ko whose modinfo lacks QEMU's 1b36:0010 alias (its bytes zeroed in
# .modinfo, which the module loader and kmod read as padding). Guests point
# NVME_VWC_SYNC_MODULES_DIR at it where QEMU's controller must stand in for a
# drive the kernel's nvme table does not list (Crucial T700 on 6.1, 6.12);
# its modules.alias, modules.alias.bin and modules.dep(.bin) are depmod's own.
T700_STANDIN_ALIAS='alias=pci:v00001B36d00000010sv*sd*bc*sc*i*'
t700_standin() {
	local ov=$1 ver=$2 st rel n
	local mdir="$ov/lib/modules/$ver"
	rel=$(cd "$mdir" && find kernel -name nvme.ko | head -n 1)
	[ -n "$rel" ] || die "$ver: no nvme.ko for the T700 stand-in"
	st=$(mktemp -d)
	mkdir -p "$st/lib/modules/$ver"
	# nvme.ko and what it needs (nvme-core), as loaded
	(cd "$mdir" && grep -E "^(${rel}|$(sed -n "s|^${rel}: *||p" modules.dep | sed 's/ /|/g'))\$" modules.load) |
		while read -r m; do
			mkdir -p "$st/lib/modules/$ver/$(dirname "$m")"
			cp "$mdir/$m" "$st/lib/modules/$ver/$m"
		done
	n=$(T700_STANDIN_ALIAS=$T700_STANDIN_ALIAS perl -0777 -pi -e \
		'$n += s/\Q$ENV{T700_STANDIN_ALIAS}\E\0/"\0" x length($&)/ge; END { print STDERR ($n || 0), "\n" }' \
		"$st/lib/modules/$ver/$rel" 2>&1)
	[ "$n" = 1 ] || die "$ver: nvme.ko has $n copies of $T700_STANDIN_ALIAS (1 expected)"
	quiet_depmod "$st" "$ver"
	! grep -qi 'v00001B36d00000010' "$st/lib/modules/$ver/modules.alias" ||
		die "$ver: the stand-in still lists QEMU's ID"
	grep -q ' nvme$' "$st/lib/modules/$ver/modules.alias" ||
		die "$ver: the stand-in lists no nvme alias"
	mkdir -p "$ov/usr/lib/vwc-test/t700-modules"
	mv "$st/lib/modules/$ver" "$ov/usr/lib/vwc-test/t700-modules/$ver"
	rm -rf "$st"
	log "$ver: T700 stand-in modules dir ($(grep -c ' nvme$' "$ov/usr/lib/vwc-test/t700-modules/$ver/modules.alias") nvme aliases, QEMU's dropped)"
}

# patched_in ROOT SUITE VER: the nvme host modules of ROOT (the unpacked
# linux-modules package) replaced by those patched-modules.sh builds.
patched_in() {
	local root=$1 suite=$2 ver=$3 built ko m n=0
	built=$(bash "$HERE/patched-modules.sh" "$suite" "$ver")
	[ -s "$built/nvme.ko" ] || die "$ver: no patched nvme.ko"
	local hdir=$root/usr/lib/modules/$ver/kernel/drivers/nvme/host
	[ -d "$hdir" ] || hdir=$root/lib/modules/$ver/kernel/drivers/nvme/host
	[ -d "$hdir" ] || die "$ver: no drivers/nvme/host in the modules package"
	for ko in "$built"/*.ko; do
		m=$(basename "$ko" .ko)
		ls "$hdir/$m".ko* >/dev/null 2>&1 || continue
		rm -f "$hdir/$m".ko*
		cp "$ko" "$hdir/$m.ko"
		n=$((n + 1))
	done
	[ "$n" -gt 0 ] || die "$ver: none of the patched modules is in the package"
	log "$ver: $n nvme host modules patched ($built)"
}

# nvme_modules ROOT VER DEST MODULES [EXTRA]: MODULES (those not built in) and
# their dependencies, decompressed, as an initramfs overlay
# DEST/modules.cpio.gz holding lib/modules/VER/{kernel/...,modules.dep,
# modules.load}; /init insmods modules.load in order. EXTRA t700-standin adds
# t700_standin's directory.
nvme_modules() {
	local root=$1 ver=$2 dest=$3 mods=$4 extra=${5:-} m
	[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
	[ -d "$root/lib/modules/$ver" ] || die "no modules for $ver"
	quiet_depmod "$root" "$ver"
	local ov="$dest/overlay" out="lib/modules/$ver"
	mkdir -p "$ov/$out"
	: >"$ov/$out/modules.load"
	local line path rel
	# insmod lines come in load order: dependencies first.
	for m in $mods; do modprobe -d "$root" -S "$ver" --show-depends "$m"; done |
		while read -r line; do
			[ "${line%% *}" = insmod ] || continue
			path=${line#insmod }
			path=${path%% *}
			rel=${path#*/lib/modules/"$ver"/}
			rel=${rel%.xz}
			rel=${rel%.zst}
			rel=${rel%.gz}
			grep -qx "$rel" "$ov/$out/modules.load" && continue
			mkdir -p "$ov/$out/$(dirname "$rel")"
			case $path in
			*.xz) xz -dc "$path" >"$ov/$out/$rel" ;;
			*.zst) zstd -qdc "$path" >"$ov/$out/$rel" ;;
			*.gz) gzip -dc "$path" >"$ov/$out/$rel" ;;
			*) cp "$path" "$ov/$out/$rel" ;;
			esac
			echo "$rel" >>"$ov/$out/modules.load"
		done
	[ -s "$ov/$out/modules.load" ] || die "modprobe found none of $mods for $ver"
	# modules.dep for busybox modprobe: each module with its dependencies.
	quiet_depmod "$ov" "$ver"
	[ "$extra" != t700-standin ] || t700_standin "$ov" "$ver"
	# Under usr/lib: a "lib" directory entry in the overlay replaces the
	# image's /lib -> usr/lib link when the kernel unpacks it (6.1, 6.12),
	# and /lib/udev/rules.d with it. /init reaches /lib/modules through it.
	mkdir -p "$ov/usr/lib"
	mv "$ov/lib/modules" "$ov/usr/lib/modules"
	rmdir "$ov/lib"
	(cd "$ov" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -9 >"$dest/modules.cpio.gz"
	log "$ver: modules $(tr '\n' ' ' <"$ov/usr/$out/modules.load")"
	rm -rf "$ov"
}

# one_tag TAG
one_tag() {
	case $1 in
	6.1) fetch 6.1 bookworm cloud-amd64 dm-mod ;;
	6.12) fetch 6.12 bookworm-backports cloud-amd64 dm-mod ;;
	7.2) fetch 7.2 sid cloud-amd64 dm-mod ;;
	7.2-generic) fetch 7.2-generic sid amd64 "nvme dm-mod ext4 loop nvmet" ;;
	6.1-generic) fetch 6.1-generic bookworm amd64 "nvme dm-mod ext4 loop nvmet" t700-standin ;;
	7.2-generic-io) fetch 7.2-generic-io sid amd64 "nvme dm-mod ext4 loop nvmet nvme-loop null_blk" ;;
	6.1-generic-io) fetch 6.1-generic-io bookworm amd64 "nvme dm-mod ext4 loop nvmet nvmet-tcp nvme-tcp null_blk" ;;
	7.2-generic-tcp) fetch 7.2-generic-tcp sid amd64 "nvme nvme-tcp nvmet-tcp null_blk virtio_net" ;;
	6.1-generic-tcp) fetch 6.1-generic-tcp bookworm amd64 "nvme nvme-tcp virtio_pci virtio_net" ;;
	6.12-generic-tcp) fetch 6.12-generic-tcp bookworm-backports amd64 "nvme nvme-tcp virtio_pci virtio_net" ;;
	7.2-generic-patched) fetch 7.2-generic-patched sid amd64 "nvme dm-mod ext4 loop nvmet" patched ;;
	6.1-generic-patched) fetch 6.1-generic-patched bookworm amd64 "nvme dm-mod ext4 loop nvmet" patched ;;
	6.12-generic) fetch 6.12-generic bookworm-backports amd64 "nvme dm-mod ext4 loop nvmet" t700-standin ;;
	*) die "unknown kernel tag '$1'" ;;
	esac
}

# The -patched tags last, and side by side: each may make a chroot
# (mmdebstrap, minutes on a fresh machine, mostly downloads and dpkg), of
# suites whose apt states differ, after every other tag has updated them.
patched=()
for tag in "$@"; do
	case $tag in
	*-patched) patched+=("$tag") ;;
	*) one_tag "$tag" ;;
	esac
done
pids=()
for tag in "${patched[@]}"; do
	one_tag "$tag" &
	pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || die "a -patched tag failed"; done
# Each tag's uncompressed image, which run-vm.sh boots (vq_pvh), made
# here once rather than by the first guests side by side.
for tag in "$@"; do
	k=$(vq_pvh "$CACHE/kernels/$tag/vmlinuz")
	[ "$k" != "$CACHE/kernels/$tag/vmlinuz" ] ||
		log "$tag: no uncompressed image with a PVH entry; guests boot the bzImage"
done
