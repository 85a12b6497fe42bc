#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Build the Debian packages of this tree in a clean chroot of SUITE, as
# sbuild and pbuilder do: `dpkg-buildpackage -us -uc -b` in the chroot made
# by scripts/chroot.sh (cached), then lintian from the same suite.
#
#   build-debs.sh [--version V] [--head] [--no-plugin] [--stage-only] SUITE [OUTDIR]
#   build-debs.sh --version V --repack DIR SUITE OUTDIR
#
# SUITE: bookworm or trixie (sid works too). OUTDIR defaults to
# build-debs/SUITE in the repository (git-ignored); it receives the .deb
# files, the .changes and .buildinfo, build.log and lintian.txt. The source
# is the working tree's files (tracked and not ignored); with --head it is
# the last commit (git archive HEAD) with the working tree's debian/ on top,
# so that other people's unfinished edits stay out. --version V adds a
# changelog entry V on top in the copy (for upgrade tests); the tree is not
# changed. dpkg-checkbuilddeps proves debian/control's Build-Depends hold
# in the chroot. Exit status 0 only if the build succeeded and lintian
# reported no error (E:); warnings are listed in lintian.txt.
#
# The tree is a git checkout or an unpacked tarball (git archive, a release
# download): without git, every file is copied but the ones .gitignore
# names (build*/, _cache/, *.o, *.orig) and nvme-cli/; --head needs git.
# --stage-only stops after that copy (OUTDIR/work/nvme-vwc-sync-VERSION,
# printed), before any chroot: tests/pkg/rpm.sh compares the two ways.
#
# Two binary packages from the one source: nvme-vwc-sync, and nvme-cli-vwc
# (build profile pkg.nvme-vwc-sync.plugin; --no-plugin leaves it out):
# the suite's own nvme-cli, `nvme`, rebuilt from the suite's nvme-cli
# source with the vwc plugin added, diverted over /usr/sbin/nvme. That
# source is fetched in the chroot by scripts/fetch-nvme-cli.sh (apt-get
# source from the chroot's own archive, the version of the nvme-cli
# installed there, cached in $VWC_CACHE_DIR/debs-src/SUITE) and unpacked
# as nvme-cli/ beside debian/ in the build tree, where debian/rules checks
# it against the installed nvme-cli and makes nvme-cli-vwc depend on
# exactly that version.
#
# --repack DIR: no build. The packages in DIR (this script's output for
# the same tree) as version V, for the upgrade checks that need a higher
# version of the same build (tests/system, tests/pkg/piuparts.sh): each
# .deb unpacked, its control's Version and its exact dependencies on
# nvme-vwc-sync and nvme-cli-vwc made V, V's entry put on top of its
# changelog (md5sums mended), packed again with dpkg-deb. The
# files are the same; the binaries still print DIR's version in
# --version. DIR's lintian.txt is copied (the files it judged). A build
# of the same tree as V costs a dpkg-buildpackage (two compilations, one
# of them nvme-cli's) and tells these checks nothing more.
# Last line on stdout: the output directory.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD
CACHE_DIR=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}

log() { echo "build-debs: $*" >&2; }
die() { log "error: $*"; exit 1; }

version='' head='' plugin=1 stage_only='' repack=''
while [ "$#" -gt 0 ]; do
	case $1 in
	--version) version=${2:?--version needs a value}; shift 2 ;;
	--repack) repack=${2:?--repack needs a directory}; shift 2 ;;
	--head) head=1; shift ;;
	--no-plugin) plugin=''; shift ;;
	--stage-only) stage_only=1; shift ;;
	*) break ;;
	esac
done
suite=${1:?usage: build-debs.sh [--version V] [--head] [--no-plugin] SUITE [OUTDIR]}
out=${2:-$REPO/build-debs/$suite}

# repack_deb DEB OLD: DEB (version OLD) as version $version in $out;
# fails, leaving nothing in $out for DEB, at the first step that fails
repack_deb() {
	local deb=$1 old=$2 t name arch cl f real
	name=$(dpkg-deb -f "$deb" Package) && arch=$(dpkg-deb -f "$deb" Architecture) || return 1
	t=$(mktemp -d "$out/repack.XXXXXX") || return 1
	dpkg-deb -R "$deb" "$t/r" &&
		sed -i -e "s/^Version: .*/Version: $version/" \
			-e "/^\(Pre-\)\{0,1\}Depends:\|^Recommends:\|^Breaks:\|^Replaces:/s/\(nvme-vwc-sync\|nvme-cli-vwc\) (= $old)/\1 (= $version)/g" \
			"$t/r/DEBIAN/control" || { rm -rf "$t"; return 1; }
	# (a native package's is changelog.gz)
	for cl in usr/share/doc/"$name"/changelog.Debian.gz usr/share/doc/"$name"/changelog.gz ''; do
		[ -z "$cl" ] || { [ -f "$t/r/$cl" ] && [ ! -L "$t/r/$cl" ]; } && break
	done
	if [ -n "$cl" ]; then
		# only a file inside the unpacked tree (no directory on the
		# way is a link out of it)
		real=$(realpath -e "$t/r/$cl") && [ "${real#"$(realpath "$t/r")"/}" != "$real" ] || {
			log "$deb: $cl is not inside the package"
			rm -rf "$t"
			return 1
		}
		{
			printf 'nvme-vwc-sync (%s) unstable; urgency=medium\n\n' "$version"
			printf '  * Test build %s: the packages of %s, repacked.\n\n' "$version" "$old"
			printf ' -- %s  %s\n\n' "$(dpkg-deb -f "$deb" Maintainer)" "$(date -R)"
			gzip -dc "$real"
		} | gzip -9n >"$t/cl.gz" &&
			cat "$t/cl.gz" >"$real" &&
			f=$(md5sum "$real" | cut -d' ' -f1) &&
			sed -i "s|^[0-9a-f]*  $cl\$|$f  $cl|" "$t/r/DEBIAN/md5sums" || { rm -rf "$t"; return 1; }
	fi
	dpkg-deb --root-owner-group --build "$t/r" "$out/${name}_${version}_$arch.deb" >/dev/null ||
		{ rm -rf "$t"; rm -f "$out/${name}_${version}_$arch.deb"; return 1; }
	rm -rf "$t"
}
if [ -n "$repack" ]; then
	[ -n "$version" ] || die "--repack needs --version"
	[ -n "${2:-}" ] || die "--repack needs OUTDIR"
	dpkg --validate-version "$version" 2>/dev/null || die "--version $version: not a Debian version"
	[ -d "$repack" ] && ls "$repack"/*.deb >/dev/null 2>&1 || die "--repack $repack: no .deb there"
	src_dir=$(realpath "$repack") out_dir=$(realpath -m "$out")
	case $out_dir/ in "$src_dir"/*) die "--repack: OUTDIR $out is $repack or inside it" ;; esac
	case $src_dir/ in "$out_dir"/*) die "--repack: $repack is inside OUTDIR $out" ;; esac
	t0=$SECONDS
	rm -rf "$out"
	mkdir -p "$out"
	n=0
	for deb in "$repack"/*.deb; do
		repack_deb "$deb" "$(dpkg-deb -f "$deb" Version)" || die "$suite: repacking $deb failed"
		n=$((n + 1))
	done
	cp "$repack/lintian.txt" "$out/lintian.txt" 2>/dev/null || : >"$out/lintian.txt"
	log "$suite: $n package(s) of $repack as $version in $((SECONDS - t0)) s: $(cd "$out" && echo ./*.deb)"
	echo "$out"
	exit 0
fi

# What debian/control's Build-Depends resolve to in each suite (checked in
# the chroot by dpkg-checkbuilddeps), plus lintian.
deps=(libnvme-dev libssl-dev libudev-dev libkmod-dev libmount-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev asciidoctor udev kmod lintian)
case $suite in
bookworm) deps+=(systemd pkg-config) ;;
*) deps+=(systemd-dev pkgconf) ;;
esac
# Profile pkg.nvme-vwc-sync.plugin: the nvme-cli whose source is rebuilt,
# and what that source's build needs beyond ours (as in nvme-cli's own
# Build-Depends: libnvme's pkg-config files require them).
profile=()
if [ -n "$plugin" ]; then
	deps+=(nvme-cli libdbus-1-dev libkeyutils-dev zlib1g-dev patch)
	profile=(pkg.nvme-vwc-sync.plugin)
fi

# in_chroot DIR CMD...: scripts/chroot.sh --run (it makes the mount point
# and removes what it made when no other run is inside the chroot).
in_chroot() {
	local dir
	dir=$(cd "$1" && pwd -P)
	shift
	bash scripts/chroot.sh --run "$suite" "$dir" -- "$@"
}

# A git checkout (this tree its top level) or an unpacked tarball.
in_git=''
[ "$(git -C "$REPO" rev-parse --show-toplevel 2>/dev/null)" != "$(pwd -P)" ] || in_git=1

t0=$SECONDS
mkdir -p "$out"
out=$(cd "$out" && pwd -P)
work=$out/work
rm -rf "$work"
mkdir -p "$work"
pkgver=$(dpkg-parsechangelog -l debian/changelog -S Version)
src=$work/nvme-vwc-sync-${pkgver%%-*}
mkdir -p "$src"
if [ -n "$head" ]; then
	[ -n "$in_git" ] || die "--head needs a git checkout; $REPO is not one (an unpacked tarball: leave --head out)"
	git archive HEAD | tar -C "$src" -xf -
	rm -rf "$src/debian"
	tar -C "$REPO" -cf - debian | tar -C "$src" -xf -
elif [ -n "$in_git" ]; then
	git ls-files -z --cached --others --exclude-standard |
		xargs -0 sh -c 'for f; do [ -e "$f" ] && printf "%s\0" "$f"; done' sh |
		tar -C "$REPO" --null -T - -cf - | tar -C "$src" -xf -
else
	# An unpacked tarball (git archive, a release download): every file
	# but what .gitignore keeps out of a checkout, and nvme-cli/ (the
	# plugin profile's input, put there again below).
	tar -C "$REPO" --exclude=./.git --exclude='./build*' --exclude=./_cache \
		--exclude=./nvme-cli --exclude='*.o' --exclude='*.orig' -cf - . |
		tar -C "$src" -xf -
fi
[ -f "$src/debian/rules" ] || die "no debian/rules in the copy of $REPO"
if [ -n "$version" ]; then
	{
		printf 'nvme-vwc-sync (%s) unstable; urgency=medium\n\n' "$version"
		printf '  * Test build %s.\n\n' "$version"
		printf ' -- %s  %s\n\n' "$(dpkg-parsechangelog -l debian/changelog -S Maintainer)" \
			"$(date -R)"
		cat debian/changelog
	} >"$src/debian/changelog"
fi

if [ -n "$stage_only" ]; then
	echo "$src"
	exit 0
fi

root=$(bash scripts/chroot.sh "$suite" "${deps[@]}")
[ -x "$root/bin/sh" ] || die "no chroot for $suite"

if [ -n "$plugin" ]; then
	# The suite's nvme-cli source, fetched in the chroot (cached there).
	fetch=$CACHE_DIR/debs-src/$suite
	mkdir -p "$fetch"
	cp scripts/fetch-nvme-cli.sh "$fetch/fetch-nvme-cli.sh"
	inst=$(in_chroot "$fetch" \
		dpkg-query -W -f='${source:Version}' nvme-cli) ||
		die "$suite: no nvme-cli in the chroot"
	tree=$(in_chroot "$fetch" env VWC_CACHE_DIR="$fetch" \
		bash "$fetch/fetch-nvme-cli.sh" 2>"$out/fetch-nvme-cli.log") ||
		{ tail -n 5 "$out/fetch-nvme-cli.log" >&2; die "$suite: fetch-nvme-cli.sh failed ($out/fetch-nvme-cli.log)"; }
	got=$(cat "$tree/.vwc-fetched" 2>/dev/null || true)
	[ "$got" = "$inst" ] ||
		die "$suite: fetched nvme-cli source '$got' is not the chroot's nvme-cli $inst"
	log "$suite: nvme-cli source $got ($(cat "$tree/.vwc-unpacked-from" 2>/dev/null)) for nvme-cli-vwc"
	rm -rf "$src/nvme-cli"
	cp -a "$tree" "$src/nvme-cli"
fi

log "$suite: dpkg-buildpackage${profile[*]:+ (profile ${profile[*]})} in $root"
rc=0
in_chroot "$work" /bin/sh -c '
	set -e
	cd nvme-vwc-sync-*
	dpkg-checkbuilddeps ${1:+-P "$1"}
	dpkg-buildpackage -us -uc -b ${1:+--build-profiles="$1"}
' sh "${profile[@]}" >"$out/build.log" 2>&1 || rc=$?
if [ "$rc" -ne 0 ]; then
	tail -n 40 "$out/build.log" >&2
	die "$suite: dpkg-buildpackage failed (exit $rc; $out/build.log)"
fi
rm -f "$out"/*.deb "$out"/*.changes "$out"/*.buildinfo
mv "$work"/*.deb "$work"/*.changes "$work"/*.buildinfo "$out"/
rm -rf "$work"

in_chroot "$out" /bin/sh -c \
	'lintian --info --display-info --pedantic ./*.changes 2>&1 | grep -v "^running with root privileges"' \
	>"$out/lintian.txt" 2>&1 || true
errors=$(grep -c '^E: ' "$out/lintian.txt" || true)
warnings=$(grep -c '^W: ' "$out/lintian.txt" || true)
log "$suite: built in $((SECONDS - t0)) s: $(cd "$out" && echo ./*.deb); lintian: $errors error(s), $warnings warning(s) ($out/lintian.txt)"
[ "$errors" -eq 0 ] || { grep '^E: ' "$out/lintian.txt" >&2; die "$suite: lintian errors"; }
echo "$out"
