#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# Clean Debian build chroots, made with mmdebstrap from the system's own
# Debian sources (as sbuild and pbuilder do), cached between runs.
#
#   chroot.sh SUITE [EXTRA-PKG...]
#       Make (once) the chroot for SUITE (bookworm, trixie or sid) with
#       build-essential, meson, ninja-build, pkg-config, debhelper, dpkg-dev,
#       fakeroot and the EXTRA packages, and print its directory on stdout
#       (progress goes to stderr). The chroot lives in
#       $VWC_CACHE_DIR/chroots/SUITE (default /var/cache/nvme-vwc-sync).
#       It is made again only when it is missing or when a package is asked
#       for that it was not made with; it is then made with the union of the
#       old and new lists, so that callers asking for different extras do not
#       rebuild it back and forth. The list is in SUITE.pkgs beside it.
#
#   chroot.sh --run SUITE DIR -- CMD...
#       Run CMD (as root, cwd DIR) inside the chroot of SUITE, with the host
#       directory DIR bind-mounted at the same path, and /proc, /dev (and
#       /dev/pts, /sys) mounted. Everything is mounted inside a private mount
#       namespace (unshare), so the mounts disappear with CMD, whatever
#       happens; the cached chroot is never left with mounts in it. The
#       chroot must exist (make it first with the first form). Exit status
#       is CMD's.
#
# Sources: bookworm uses the system's deb822 file as it is (with updates and
# security); another suite takes its first stanza (the main archive) with
# the Suites line replaced. No host name is written anywhere by this script.
# Acquire::Check-Valid-Until is off (sid's Release file reads as expired).
# Needs root and mmdebstrap (installed with apt-get when missing).
set -euo pipefail

CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
SYS_SOURCES=${VWC_SYS_SOURCES:-/etc/apt/sources.list.d/debian.sources}
BASE_PKGS=(build-essential meson ninja-build pkg-config debhelper dpkg-dev fakeroot)

log() { echo "chroot: $*" >&2; }
die() { log "error: $*"; exit 1; }
usage() {
	sed -n '4,25s/^# \{0,1\}//p' "$0" >&2
	exit 2
}

check_suite() {
	case $1 in
	bookworm | trixie | sid | forky) ;;
	*) die "unknown suite '$1' (bookworm, trixie, sid)" ;;
	esac
}

# suite_sources SUITE OUT: a deb822 sources file for SUITE from the system's.
suite_sources() {
	local suite=$1 out=$2
	[ -r "$SYS_SOURCES" ] || die "$SYS_SOURCES not found (deb822 sources expected)"
	if [ "$suite" = bookworm ]; then
		grep -v '^#' "$SYS_SOURCES" >"$out"
	else
		awk 'BEGIN { RS = ""; ORS = "\n\n" } NR == 1 { print }' "$SYS_SOURCES" |
			grep -v '^#' | sed "s/^Suites:.*/Suites: $suite/" >"$out"
	fi
	grep -q '^URIs:' "$out" || die "no URIs in $SYS_SOURCES"
}

run_in() {
	local suite=$1 dir=$2
	shift 2
	local root=$CACHE/chroots/$suite lk
	# Shared with other runs, exclusive against make_chroot remaking it.
	exec {lk}>"$CACHE/chroots/$suite.lock"
	flock -s "$lk"
	[ -x "$root/bin/sh" ] || die "no chroot for $suite: run 'chroot.sh $suite' first"
	# An older build-debs.sh removed empty parents of its mount point up to
	# the chroot's /tmp: put it back in a cached chroot.
	[ -d "$root/tmp" ] || install -d -m 1777 "$root/tmp"
	[ -d "$dir" ] || die "$dir: not a directory"
	dir=$(cd "$dir" && pwd -P)
	[ "$dir" != / ] || die "refusing to bind-mount /"
	# The mount point: remember the first directory made, to remove it after.
	local made="" d=$dir
	while [ ! -d "$root$d" ]; do made=$d; d=$(dirname "$d"); done
	mkdir -p "$root$dir"
	# Inside a private mount namespace: the mounts die with the namespace.
	local rc=0
	unshare --mount --propagation private -- /bin/bash -euc '
		root=$1 dir=$2
		shift 2
		mount --bind "$dir" "$root$dir"
		mount -t proc proc "$root/proc"
		mount -t sysfs sysfs "$root/sys"
		mount --rbind /dev "$root/dev"
		cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
		cd "$root$dir"
		exec chroot "$root" /usr/bin/env -i HOME=/root LC_ALL=C.UTF-8 \
			PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
			DEBIAN_FRONTEND=noninteractive TERM="${TERM:-dumb}" \
			/bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$dir" "$@"
	' chroot-run "$root" "$dir" "$@" || rc=$?
	# Leave no mount point behind in the cached chroot (only what was made),
	# but only when no other run is inside: from here their mount points
	# look empty, and removing one detaches their bind mount.
	if [ -n "$made" ] && flock -n -x "$lk"; then
		find "$root$made" -depth -type d -empty -delete 2>/dev/null || true
	fi
	exec {lk}>&-
	return "$rc"
}

make_chroot() {
	local suite=$1
	shift
	local dir=$CACHE/chroots
	local root=$dir/$suite list=$dir/$suite.pkgs
	mkdir -p "$dir"
	exec 9>"$dir/$suite.lock"
	flock 9

	local want
	want=$(printf '%s\n' "${BASE_PKGS[@]}" "$@" | sed '/^$/d' | sort -u)
	if [ -x "$root/bin/sh" ] && [ -r "$list" ]; then
		if [ -z "$(comm -23 <(echo "$want") <(sort -u "$list"))" ]; then
			log "$suite: cached ($root)"
			echo "$root"
			return 0
		fi
		want=$(printf '%s\n' "$want" | cat - "$list" | sort -u)
		log "$suite: new packages asked for, making it again"
	fi

	command -v mmdebstrap >/dev/null || {
		log "installing mmdebstrap"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >&2
	}
	local tmp
	tmp=$(mktemp -d "$dir/.$suite.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	suite_sources "$suite" "$tmp/sources"
	local t0=$SECONDS
	log "$suite: mmdebstrap ($(echo "$want" | wc -l) packages asked for)"
	mmdebstrap --variant=apt --mode=root --format=directory \
		--aptopt='Acquire::Check-Valid-Until "false"' \
		--aptopt='APT::Install-Recommends "false"' \
		--include="$(echo "$want" | paste -sd,)" \
		"$suite" "$tmp/root" "$tmp/sources" >"$tmp/log" 2>&1 ||
		{ tail -n 30 "$tmp/log" >&2; die "$suite: mmdebstrap failed"; }
	rm -rf "$root.old"
	[ ! -e "$root" ] || mv "$root" "$root.old"
	mv "$tmp/root" "$root"
	echo "$want" >"$list"
	rm -rf "$root.old" "$tmp"
	trap - EXIT
	log "$suite: made in $((SECONDS - t0)) s ($(du -sh "$root" | cut -f1))"
	echo "$root"
}

[ "$#" -ge 1 ] || usage
[ "$(id -u)" -eq 0 ] || die "needs root"
if [ "$1" = --run ]; then
	[ "$#" -ge 5 ] && [ "$4" = -- ] || usage
	check_suite "$2"
	suite=$2 dir=$3
	shift 4
	run_in "$suite" "$dir" "$@"
else
	check_suite "$1"
	make_chroot "$@"
fi
