#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# A local apt repository holding "Debian's next nvme-cli update", for the
# system suite's nvme-cli update check (tests/system/guest/cases/55-aptup.sh):
#
#   nvme-cli-up.sh SUITE
#
# The suite's own nvme-cli source (the one nvme-cli-vwc is built from,
# scripts/fetch-nvme-cli.sh in the suite's clean chroot, as build-debs.sh
# does), with one new changelog entry, V+vwctest1, rebuilt with
# dpkg-buildpackage in that chroot: the same code under a higher version,
# as a point release or a security update would come. Two test-only
# changes to save the chroot the documentation tool chain (asciidoc, xmlto:
# nvme-cli's Build-Depends): -Ddocs-build=false (the man pages prebuilt in
# the same tarball are installed instead) and dpkg-buildpackage -d.
#
# The repository: that nvme-cli_*.deb, Packages (dpkg-scanpackages) and a
# Release whose Origin is "vwc-test" (the origin unattended-upgrades is told
# to take updates from), for "deb [trusted=yes] file:DIR ./". Cached in
# $VWC_CACHE_DIR/nvme-cli-up/SUITE-KEY, KEY from the source version and
# this script: a warm run builds nothing. Prints the directory; progress
# on stderr.
set -euo pipefail
cd "$(dirname "$0")/../.."
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
suite=${1:?usage: nvme-cli-up.sh SUITE}

log() { echo "nvme-cli-up: $*" >&2; }
die() { log "error: $*"; exit 1; }

root=$(bash scripts/chroot.sh "$suite" nvme-cli libdbus-1-dev libkeyutils-dev zlib1g-dev patch)
[ -x "$root/bin/sh" ] || die "no chroot for $suite"
in_chroot() {
	local dir
	dir=$(cd "$1" && pwd -P)
	shift
	bash scripts/chroot.sh --run "$suite" "$dir" -- "$@"
}

# The suite's nvme-cli source, as build-debs.sh fetches it (cached).
fetch=$CACHE/debs-src/$suite
mkdir -p "$fetch"
cp scripts/fetch-nvme-cli.sh "$fetch/fetch-nvme-cli.sh"
tree=$(in_chroot "$fetch" env VWC_CACHE_DIR="$fetch" bash "$fetch/fetch-nvme-cli.sh" 2>/dev/null) ||
	die "$suite: fetch-nvme-cli.sh failed"
ver=$(cat "$tree/.vwc-fetched")
new=$ver+vwctest1
key=$(printf '%s\n' "$suite" "$ver" "$(sha256sum <"$0")" | sha256sum | cut -c1-16)
dir=$CACHE/nvme-cli-up/$suite-$key
if [ -s "$dir/Release" ] && [ "$(cat "$dir/version" 2>/dev/null)" = "$new" ]; then
	log "$suite: nvme-cli $new cached ($dir)"
	echo "$dir"
	exit 0
fi

t0=$SECONDS
mkdir -p "$CACHE/nvme-cli-up"
work=$(mktemp -d "$CACHE/nvme-cli-up/.work.XXXXXX")
trap 'rm -rf "$work"' EXIT
up=${ver#*:}
src=$work/nvme-cli-${up%-*}
cp -a "$tree" "$src"
{
	printf 'nvme-cli (%s) %s; urgency=medium\n\n' "$new" "$suite"
	printf '  * Rebuild of %s under a higher version (nvme-vwc-sync system test).\n\n' "$ver"
	printf ' -- nvme-vwc-sync tests <tests@invalid>  %s\n\n' "$(date -R)"
	cat "$tree/debian/changelog"
} >"$src/debian/changelog"
sed -i 's/-Ddocs-build=true/-Ddocs-build=false/' "$src/debian/rules"
log "$suite: building nvme-cli $new in $root"
in_chroot "$work" /bin/sh -c 'cd nvme-cli-* && DEB_BUILD_OPTIONS="nocheck nodoc" dpkg-buildpackage -us -uc -b -d' \
	>"$work/build.log" 2>&1 || { tail -n 30 "$work/build.log" >&2; die "$suite: nvme-cli $new did not build"; }
out=$work/repo
mkdir -p "$out"
mv "$work"/nvme-cli_"${new#*:}"_*.deb "$out/" || die "$suite: no nvme-cli_${new#*:}_*.deb built"
cp "$work/build.log" "$out/build.log"
(
	cd "$out"
	dpkg-scanpackages --multiversion . /dev/null >Packages 2>/dev/null
	[ -s Packages ] || exit 1
	{
		printf 'Origin: vwc-test\nLabel: vwc-test\nSuite: %s-vwctest\nCodename: %s-vwctest\n' "$suite" "$suite"
		printf 'Date: %s\nDescription: nvme-vwc-sync system test: a higher nvme-cli\n' "$(date -Ru)"
		printf 'SHA256:\n %s %s Packages\n' "$(sha256sum Packages | cut -d' ' -f1)" "$(stat -c %s Packages)"
	} >Release
) || die "$suite: dpkg-scanpackages failed"
echo "$new" >"$out/version"
rm -rf "$dir"
mv "$out" "$dir"
log "$suite: nvme-cli $new built in $((SECONDS - t0)) s ($dir)"
echo "$dir"
