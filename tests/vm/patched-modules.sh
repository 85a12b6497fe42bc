#!/bin/bash
# Build Debian's nvme host modules of one kernel version with the kernel
# patches this project stands in for applied (tests/vm/patches/<X.Y>/*.patch,
# in name order): the fixtures of the kernels that carry the fixes.
# Usage: patched-modules.sh SUITE VERSION
#   SUITE    the Debian suite the kernel comes from (bookworm, sid)
#   VERSION  the kernel's release (uname -r), e.g. 7.2.13+deb14-amd64
# Prints the directory holding the built modules (*.ko, flat) and build.log.
# Out of tree, no full kernel build: only drivers/nvme/host of the same
# version's linux-source-X.Y package (the version of linux-headers-VERSION),
# built with `make -C /usr/src/linux-headers-VERSION M=... modules` in a
# minimal chroot of SUITE holding that headers package (its compiler is the
# one the kernel was built with). Cached in $VWC_CACHE_DIR (default
# /var/cache/nvme-vwc-sync):
#   chroots/kmod-SUITE-VERSION           the chroot (mmdebstrap), per version
#   src/nvme-host-PKGVERSION             drivers/nvme/host as Debian ships it
#   patched-modules/VERSION-KEY          the modules; KEY hashes the patches,
#                                        this script and the source version
# Modules are unsigned: they load in a guest without secure boot (QEMU).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}

log() { echo "patched-modules: $*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$#" -eq 2 ] || die "usage: patched-modules.sh SUITE VERSION"
suite=$1 ver=$2
series=$(echo "$ver" | sed -n 's/^\([0-9]*\.[0-9]*\)\..*/\1/p')
pdir=$HERE/patches/$series
[ -n "$series" ] && [ -d "$pdir" ] || die "no patches for $ver in tests/vm/patches/"
[ "$(id -u)" -eq 0 ] || die "needs root (mmdebstrap, chroot)"

# A private apt state for SUITE (the same one kernels.sh keeps): sources
# derived from the system's file, no host name written anywhere.
adir=$CACHE/apt/$suite
mkdir -p "$adir/lists/partial" "$adir/cache/archives/partial"
if [ "$suite" = bookworm ]; then
	grep -v '^#' "$SYS_SOURCES" >"$adir/debian.sources"
else
	awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 { print }' "$SYS_SOURCES" |
		grep -v '^#' | sed "s/^Suites:.*/Suites: $suite/" >"$adir/debian.sources"
fi
APT=(-o "Dir::Etc::sourcelist=$adir/debian.sources" -o Dir::Etc::sourceparts=/dev/null
	-o "Dir::State::Lists=$adir/lists" -o "Dir::Cache=$adir/cache"
	-o APT::Sandbox::User=root -o 'Acquire::Check-Valid-Until=false' -q)
if [ ! -e "$adir/updated" ]; then
	log "apt-get update ($suite)"
	apt-get "${APT[@]}" update >/dev/null
	touch "$adir/updated"
fi
pkgver=$(apt-cache "${APT[@]}" show "linux-headers-$ver" 2>/dev/null |
	sed -n 's/^Version: //p' | head -n 1)
[ -n "$pkgver" ] || die "no linux-headers-$ver in $suite"

key=$({
	echo "$suite $ver $pkgver"
	cat "$pdir"/*.patch "${BASH_SOURCE[0]}"
} | sha256sum | cut -c1-16)
out=$CACHE/patched-modules/$ver-$key
if [ -s "$out/nvme.ko" ] && [ -s "$out/nvme-core.ko" ]; then
	log "$ver: cached ($out)"
	echo "$out"
	exit 0
fi
t0=$SECONDS
mkdir -p "$CACHE/patched-modules" "$CACHE/chroots" "$CACHE/src"

# --- the source: drivers/nvme/host of linux-source-X.Y at $pkgver ---
src=$CACHE/src/nvme-host-$pkgver
if [ ! -d "$src/drivers/nvme/host" ]; then
	tmp=$(mktemp -d "$CACHE/src/.nvme-host.XXXXXX")
	log "$ver: downloading linux-source-$series $pkgver"
	(cd "$tmp" && apt-get "${APT[@]}" download "linux-source-$series=$pkgver" >/dev/null)
	dpkg-deb --fsys-tarfile "$tmp"/linux-source-*.deb |
		tar -xOf - "./usr/src/linux-source-$series.tar.xz" |
		xz -dc | tar -xf - -C "$tmp" "linux-source-$series/drivers/nvme/host"
	mkdir -p "$tmp/tree"
	mv "$tmp/linux-source-$series/drivers" "$tmp/tree/drivers"
	rm -rf "$src"
	mv -T "$tmp/tree" "$src"
	rm -rf "$tmp"
	log "$ver: source extracted ($((SECONDS - t0)) s)"
fi

# --- the chroot: minbase, make and the headers package (its compiler) ---
root=$CACHE/chroots/kmod-$suite-$ver
exec 9>"$root.lock"
flock 9
if [ ! -x "$root/usr/bin/make" ] || [ ! -d "$root/usr/src/linux-headers-$ver" ]; then
	command -v mmdebstrap >/dev/null || {
		log "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >&2
	}
	t1=$SECONDS
	tmp=$(mktemp -d "$CACHE/chroots/.kmod.XXXXXX")
	log "$ver: mmdebstrap $suite with linux-headers-$ver"
	mmdebstrap --variant=minbase --mode=root --format=directory \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='APT::Install-Recommends "false"' \
		--include="make,linux-headers-$ver" \
		"$suite" "$tmp/root" "$adir/debian.sources" >"$tmp/log" 2>&1 ||
		{ tail -n 30 "$tmp/log" >&2; rm -rf "$tmp"; die "mmdebstrap failed"; }
	rm -rf "$root"
	mv -T "$tmp/root" "$root"
	rm -rf "$tmp"
	log "$ver: chroot made in $((SECONDS - t1)) s ($(du -sh "$root" | cut -f1))"
fi

# --- patch and build, in a directory of the chroot ---
t1=$SECONDS
bdir=$(mktemp -d "$root/tmp/nvme-build.XXXXXX")
trap 'rm -rf "$bdir"' EXIT
cp -a "$src/drivers" "$bdir/"
for p in "$pdir"/*.patch; do
	(cd "$bdir" && patch -p1 --fuzz=0 --no-backup-if-mismatch -s) <"$p" ||
		die "$(basename "$p") does not apply to $pkgver"
done
rel=${bdir#"$root"}
unshare --mount --propagation private -- /bin/bash -euc '
	root=$1 ver=$2 rel=$3
	mount -t proc proc "$root/proc"
	mount --rbind /dev "$root/dev"
	exec chroot "$root" /usr/bin/env -i LC_ALL=C.UTF-8 PATH=/usr/sbin:/usr/bin:/sbin:/bin \
		make -C "/usr/src/linux-headers-$ver" M="$rel/drivers/nvme/host" \
		-j"$(nproc)" modules
' build "$root" "$ver" "$rel" >"$bdir/build.log" 2>&1 ||
	{ tail -n 30 "$bdir/build.log" >&2; die "$ver: the build failed"; }
tmp=$(mktemp -d "$CACHE/patched-modules/.$ver.XXXXXX")
cp "$bdir"/drivers/nvme/host/*.ko "$bdir/build.log" "$tmp/"
for p in "$pdir"/*.patch; do echo "$(sha256sum <"$p" | cut -c1-16) $(basename "$p")"; done >"$tmp/patches"
chmod 755 "$tmp"
rm -rf "$out"
mv -T "$tmp" "$out"
# other keys of this version: a patch changed
find "$CACHE/patched-modules" -maxdepth 1 -name "$ver-*" ! -name "$ver-$key" -exec rm -rf {} +
log "$ver: built $(cd "$out" && ls ./*.ko | tr '\n' ' ')in $((SECONDS - t1)) s (all $((SECONDS - t0)) s)"
echo "$out"
