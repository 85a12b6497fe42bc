#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fetch-nvme-cli.sh - download and unpack Debian's nvme-cli source
#
# Usage: scripts/fetch-nvme-cli.sh
#
# Prints the path of the unpacked tree on stdout (and nothing else), so
#	meson setup build -Dnvme_cli_source="$(scripts/fetch-nvme-cli.sh)"
# works. Progress goes to stderr.
#
# The source comes from the distribution's own archive, never from this
# repository: a private apt configuration is derived from the system's
# sources (same archive, same keys) with deb-src enabled, so the system's
# apt state is left untouched. Nothing is installed.
#
# Environment:
#	VWC_CACHE_DIR		cache root (default /var/cache/nvme-vwc-sync);
#				the tree is unpacked under $VWC_CACHE_DIR/src
#	VWC_NVME_CLI_VERSION	Debian source version to fetch (default: the
#				candidate of the system's suites)
#	VWC_REFRESH=1		ask the archive again even if a tree is cached
#
# Once a tree is cached the script answers from the cache without network
# access. Exit status: 0 success, 1 failure.

set -eu

cache=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
case $cache in
/*) ;;
*) cache=$(pwd)/$cache ;;
esac
srcdir=$cache/src
aptdir=$cache/apt
record=$srcdir/nvme-cli.path
want=${VWC_NVME_CLI_VERSION:-}

msg() { printf 'fetch-nvme-cli: %s\n' "$*" >&2; }
die() { msg "error: $*"; exit 1; }

# Fast path: a tree recorded by an earlier run, for the wanted version.
if [ "${VWC_REFRESH:-0}" != 1 ] && [ -r "$record" ]; then
	path=$(cat "$record")
	if [ -f "$path/meson.build" ] && [ -f "$path/.vwc-fetched" ] &&
	   { [ -z "$want" ] || [ "$(cat "$path/.vwc-fetched")" = "$want" ]; }; then
		printf '%s\n' "$path"
		exit 0
	fi
fi

command -v apt-get >/dev/null || die "apt-get not found (Debian-based system needed)"
command -v dpkg-source >/dev/null || die "dpkg-source not found (install dpkg-dev)"

mkdir -p "$srcdir" "$aptdir/lists/partial" "$aptdir/cache/archives/partial" ||
	die "cannot create $cache"

# Private sources: the system's, with deb-src added. deb822 files first,
# the one-line format otherwise.
sources=$aptdir/sources.sources
if [ -r /etc/apt/sources.list.d/debian.sources ]; then
	sed "s/^Types:.*/Types: deb-src/" \
		/etc/apt/sources.list.d/debian.sources > "$sources.tmp"
elif [ -r /etc/apt/sources.list ]; then
	sources=$aptdir/sources.list
	sed -n 's/^[[:space:]]*deb[[:space:]]/deb-src /p' \
		/etc/apt/sources.list > "$sources.tmp"
else
	die "no system apt sources found to derive deb-src from"
fi
grep -q 'deb-src' "$sources.tmp" || die "could not derive deb-src entries"
mv "$sources.tmp" "$sources"

# Sources file given as sourcelist, its parts dir emptied, private lists and
# package cache: apt's view of the system (dpkg status, keys) is unchanged.
apt_opts="-o Dir::Etc::sourcelist=$sources -o Dir::Etc::sourceparts=/dev/null"
apt_opts="$apt_opts -o Dir::State::Lists=$aptdir/lists -o Dir::Cache=$aptdir/cache"
apt_opts="$apt_opts -o APT::Sandbox::User=root -o Debug::NoLocking=1"

msg "updating private source lists in $aptdir"
# shellcheck disable=SC2086 # word splitting of apt_opts is intended
apt-get $apt_opts -q update >&2 || die "apt-get update failed"

# Resolve the version now, so the unpacked directory is known before
# downloading and a cached tree of that version is reused.
if [ -z "$want" ]; then
	# shellcheck disable=SC2086
	want=$(apt-cache $apt_opts showsrc nvme-cli 2>/dev/null |
		sed -n 's/^Version: //p' | sort -V | tail -n 1)
	[ -n "$want" ] || die "no nvme-cli source package in the configured suites"
fi
upstream=${want#*:}
upstream=${upstream%-*}
tree=$srcdir/nvme-cli-$upstream

if [ -f "$tree/.vwc-fetched" ] && [ "$(cat "$tree/.vwc-fetched")" = "$want" ]; then
	msg "nvme-cli $want already unpacked"
else
	work=$(mktemp -d "$srcdir/.fetch.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	msg "downloading nvme-cli $want source"
	# shellcheck disable=SC2086
	(cd "$work" && apt-get $apt_opts -q source --download-only \
		"nvme-cli=$want" >&2) || die "apt-get source failed"
	dsc=
	for f in "$work"/nvme-cli_*.dsc; do
		[ -f "$f" ] && dsc=$f
	done
	[ -n "$dsc" ] || die "no .dsc downloaded"
	msg "unpacking $(basename "$dsc")"
	# apt checked every file against the archive's signed Release file;
	# dpkg-source re-checks the .dsc checksums (the uploader's signature
	# cannot be verified without debian-keyring and only warns).
	dpkg-source -x "$dsc" "$work/tree" >&2 ||
		die "dpkg-source -x failed"
	[ -f "$work/tree/meson.build" ] || die "unpacked tree has no meson.build"
	printf '%s\n' "$want" > "$work/tree/.vwc-fetched"
	rm -rf "$tree"
	mv "$work/tree" "$tree"
fi

printf '%s\n' "$tree" > "$record.tmp"
mv "$record.tmp" "$record"
printf '%s\n' "$tree"
