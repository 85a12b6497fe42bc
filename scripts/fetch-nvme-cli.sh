#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# fetch-nvme-cli.sh - download and unpack Debian's nvme-cli source
#
# Usage: scripts/fetch-nvme-cli.sh [--allow-older] [SUITE] [VERSION]
#
#	(nothing)	the source of the nvme-cli installed on this system
#			(dpkg's source version); when none is installed, the
#			newest source of the system's suites
#	SUITE		the newest nvme-cli source of that suite (e.g. trixie,
#			sid), taken from the system's archive with the suite
#			name replaced
#	VERSION		that Debian source version (e.g. 2.13-2), looked up in
#			the system's suites, or in SUITE when one is named too
#	--allow-older	accept a source older than the installed nvme-cli
#			(refused by default: the nvme binary built from it
#			would shadow a newer nvme-cli)
#
# Prints the path of the unpacked tree on stdout (and nothing else), so
#	meson setup build -Dnvme_cli_source="$(scripts/fetch-nvme-cli.sh)"
# works. Progress goes to stderr.
#
# The source comes from the distribution's own archive, never from this
# repository: a private apt configuration is derived from every sources
# file apt itself reads (Dir::Etc::sourcelist and Dir::Etc::sourceparts,
# deb822 ".sources" and one-line ".list" files alike, whatever their names),
# with deb-src enabled, so the system's apt state is left untouched. Every
# file is checked against the archive's signed indexes. When the archive
# does not serve the .dsc but serves the tarballs (seen for sid's 2.16),
# the tarballs are fetched one by one with their indexed checksums, the
# orig tarball unpacked and debian/patches applied in series order, as
# dpkg-source does. Nothing is installed.
#
# Environment:
#	VWC_CACHE_DIR		cache root (default /var/cache/nvme-vwc-sync);
#				trees are unpacked under $VWC_CACHE_DIR/src
#	VWC_NVME_CLI_VERSION	same as the VERSION argument
#	VWC_REFRESH=1		ask the archive again even if a tree is cached
#
# Once a tree is cached the script answers from the cache without network
# access. Exit status: 0 success, 1 failure, 2 usage.

set -euo pipefail

prog=fetch-nvme-cli
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { msg "error: $*"; exit 1; }
usage() { sed -n '6,20s/^# \{0,1\}//p' "$0" >&2; exit 2; }

allow_older=0 suite='' want=${VWC_NVME_CLI_VERSION:-}
while [ $# -gt 0 ]; do
	case $1 in
	--allow-older)	allow_older=1 ;;
	-h|--help)	usage ;;
	-*)		msg "unknown option '$1'"; usage ;;
	[0-9]*)		want=$1 ;;
	[a-z]*)		suite=$1 ;;
	*)		msg "neither a suite nor a version: '$1'"; usage ;;
	esac
	shift
done
case $suite in
*[!a-z0-9-]*) die "bad suite name '$suite'" ;;
esac

cache=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
case $cache in
/*) ;;
*) cache=$(pwd)/$cache ;;
esac
srcdir=$cache/src
aptdir=$cache/apt-src/${suite:-system}
record=$srcdir/nvme-cli${suite:+-$suite}.path

command -v dpkg >/dev/null || die "dpkg not found (Debian-based system needed)"

installed=$(dpkg-query -W -f='${db:Status-Status} ${source:Version}\n' nvme-cli 2>/dev/null |
	sed -n 's/^installed //p')
if [ -z "$want" ] && [ -z "$suite" ] && [ -n "$installed" ]; then
	want=$installed
	msg "installed nvme-cli: $installed"
fi

# tree_of VERSION: where that version is unpacked.
tree_of() {
	local v=${1#*:}
	printf '%s/nvme-cli-%s\n' "$srcdir" "${v%-*}"
}
cached() { [ -f "$1/meson.build" ] && [ "$(cat "$1/.vwc-fetched" 2>/dev/null)" = "$2" ]; }

# Fast paths, no network: the wanted version already unpacked; or the tree
# recorded for this suite (or for the system) by an earlier run.
if [ "${VWC_REFRESH:-0}" != 1 ]; then
	if [ -n "$want" ] && cached "$(tree_of "$want")" "$want"; then
		tree_of "$want"
		exit 0
	fi
	if [ -z "$want" ] && [ -r "$record" ]; then
		path=$(cat "$record")
		if [ -f "$path/.vwc-fetched" ] && cached "$path" "$(cat "$path/.vwc-fetched")"; then
			printf '%s\n' "$path"
			exit 0
		fi
	fi
fi

command -v apt-get >/dev/null || die "apt-get not found (Debian-based system needed)"
mkdir -p "$srcdir" "$aptdir/lists/partial" "$aptdir/cache/archives/partial" \
	"$aptdir/sources.d" || die "cannot create $cache"

# 1. Private sources: every sources file apt reads, as deb-src, with the
# suite replaced when one is named (the base suites only: "-updates",
# "-security" and the like do not exist for every suite).
eval "$(apt-config shell SL Dir::Etc::sourcelist/f SP Dir::Etc::sourceparts/d)"
rm -f "$aptdir/sources.d/"*
n=0
for f in "${SL:-}" "${SP:-/etc/apt/sources.list.d}"/*.list "${SP:-/etc/apt/sources.list.d}"/*.sources; do
	[ -f "$f" ] && [ -r "$f" ] || continue
	n=$((n + 1))
	case $f in
	*.sources)
		awk -v suite="$suite" '
		BEGIN { RS = ""; ORS = "\n\n"; FS = "\n" }
		{
			out = ""; keep = 1; types = 0; suites = 0
			for (i = 1; i <= NF; i++) {
				line = $i
				if (line ~ /^#/)
					continue
				if (tolower(line) ~ /^enabled:[ \t]*no/)
					keep = 0
				if (line ~ /^Types:/) {
					if (line !~ /[ \t]deb([ \t]|$)/ && line !~ /[ \t]deb-src([ \t]|$)/)
						keep = 0
					line = "Types: deb-src"; types = 1
				} else if (line ~ /^Suites:/ && suite != "") {
					m = split(substr(line, 8), w, /[ \t]+/); base = 0
					for (j = 1; j <= m; j++)
						if (w[j] != "" && w[j] !~ /-/ && w[j] !~ /\//)
							base = 1
					if (!base)
						keep = 0
					line = "Suites: " suite
				}
				if (line ~ /^Suites:/)
					suites = 1
				out = out line "\n"
			}
			if (keep && types && suites)
				printf "%s\n", out
		}' "$f" > "$aptdir/sources.d/$n.sources"
		;;
	*)
		awk -v suite="$suite" '
		/^[ \t]*deb(-src)?[ \t]/ {
			sub(/^[ \t]*deb(-src)?[ \t]+/, "")
			opts = ""
			if ($0 ~ /^\[/) {
				opts = substr($0, 1, index($0, "]")) " "
				$0 = substr($0, index($0, "]") + 1)
			}
			split($0, w, /[ \t]+/)
			k = (w[1] == "") ? 2 : 1
			uri = w[k]; s = w[k + 1]; comps = ""
			for (j = k + 2; j in w; j++)
				comps = comps " " w[j]
			if (suite != "") {
				if (s ~ /-/ || s ~ /\//)
					next
				s = suite
			}
			print "deb-src " opts uri " " s comps
		}' "$f" | sort -u > "$aptdir/sources.d/$n.list"
		;;
	esac
	[ -s "$aptdir/sources.d/$n.${f##*.}" ] || rm -f "$aptdir/sources.d/$n.${f##*.}"
done
[ "$n" -gt 0 ] || die "no apt sources files found (Dir::Etc::sourcelist, Dir::Etc::sourceparts)"
ls "$aptdir/sources.d/"* >/dev/null 2>&1 ||
	die "could not derive deb-src entries from the system apt sources${suite:+ for suite $suite}"

# Sources parts dir replaced, private lists and package cache: apt's view of
# the system (dpkg status, keys) is unchanged. sid's Release file reads as
# expired to a fresh apt: the signature is still checked.
apt_opts=(-o "Dir::Etc::sourcelist=/dev/null" -o "Dir::Etc::sourceparts=$aptdir/sources.d"
	-o "Dir::State::Lists=$aptdir/lists" -o "Dir::Cache=$aptdir/cache"
	-o "APT::Sandbox::User=root" -o "Debug::NoLocking=1"
	-o "Acquire::Check-Valid-Until=false")

msg "updating private source lists in $aptdir"
apt-get "${apt_opts[@]}" -q update >&2 || die "apt-get update failed"

versions=$(apt-cache "${apt_opts[@]}" showsrc nvme-cli 2>/dev/null |
	sed -n 's/^Version: //p' | sort -u)
[ -n "$versions" ] || die "no nvme-cli source package in ${suite:-the system suites}"
if [ -z "$want" ]; then
	want=$(printf '%s\n' "$versions" | sort -V | tail -n 1)
elif ! grep -qxF "$want" <<<"$versions"; then
	die "nvme-cli $want not in ${suite:-the system suites} (there: $(echo $versions)); name the suite that has it"
fi
if [ -n "$installed" ] && dpkg --compare-versions "$want" lt "$installed"; then
	[ "$allow_older" = 1 ] ||
		die "nvme-cli $want is older than the installed $installed: an nvme built from it would downgrade every nvme-cli command (--allow-older to insist)"
	msg "warning: $want is older than the installed $installed"
fi
msg "nvme-cli source $want${suite:+ ($suite)}"
tree=$(tree_of "$want")

if cached "$tree" "$want"; then
	msg "nvme-cli $want already unpacked"
else
	work=$(mktemp -d "$srcdir/.fetch.XXXXXX")
	trap 'rm -rf "$work"' EXIT
	msg "downloading nvme-cli $want source"
	(cd "$work" && apt-get "${apt_opts[@]}" -q source --download-only \
		"nvme-cli=$want" >&2) || msg "apt-get source failed; fetching the files one by one"
	# Whatever is missing, by the URIs and checksums of the signed index.
	uris=$(cd "$work" && apt-get "${apt_opts[@]}" -qq --print-uris source \
		"nvme-cli=$want") || die "apt-get --print-uris source failed"
	while read -r uri file _ hash; do
		uri=${uri#\'} uri=${uri%\'}
		[ -n "$file" ] && [ ! -f "$work/$file" ] || continue
		/usr/lib/apt/apt-helper "${apt_opts[@]}" download-file "$uri" \
			"$work/$file" "$hash" >&2 2>/dev/null ||
			msg "not served: $file"
	done <<< "$uris"

	dsc=$(ls "$work"/nvme-cli_*.dsc 2>/dev/null | head -n 1 || true)
	if [ -n "$dsc" ]; then
		command -v dpkg-source >/dev/null || die "dpkg-source not found (install dpkg-dev)"
		msg "unpacking $(basename "$dsc")"
		# apt checked every file against the signed index; dpkg-source
		# re-checks the .dsc checksums (the uploader's signature cannot be
		# verified without debian-keyring and only warns).
		dpkg-source -x "$dsc" "$work/tree" >&2 || die "dpkg-source -x failed"
		echo dsc > "$work/tree/.vwc-unpacked-from"
	else
		orig=$(ls "$work"/nvme-cli_*.orig.tar.* 2>/dev/null | head -n 1 || true)
		deb=$(ls "$work"/nvme-cli_*.debian.tar.* 2>/dev/null | head -n 1 || true)
		[ -n "$orig" ] || die "neither the .dsc nor the orig tarball of $want could be downloaded"
		msg "no .dsc served: unpacking $(basename "$orig")${deb:+ and $(basename "$deb")}"
		mkdir "$work/x"
		tar -xf "$orig" -C "$work/x" || die "cannot unpack $orig"
		top=$(ls -A "$work/x")
		[ "$(printf '%s\n' "$top" | wc -l)" = 1 ] && [ -d "$work/x/$top" ] ||
			die "$orig does not hold one top directory"
		mv "$work/x/$top" "$work/tree"
		if [ -n "$deb" ]; then
			rm -rf "$work/tree/debian"
			tar -xf "$deb" -C "$work/tree" || die "cannot unpack $deb"
			series=$work/tree/debian/patches/series
			if [ -f "$series" ]; then
				command -v patch >/dev/null || die "patch not found"
				sed -e 's/#.*//' "$series" | while read -r p opt; do
					[ -n "$p" ] || continue
					msg "applying debian/patches/$p"
					patch -d "$work/tree" -s -f ${opt:--p1} --no-backup-if-mismatch \
						< "$work/tree/debian/patches/$p" >&2 ||
						die "debian/patches/$p does not apply"
				done
			fi
		fi
	fi
	[ -f "$work/tree/.vwc-unpacked-from" ] ||
		echo "orig tarball${deb:+ + debian tarball} (no .dsc served)" > "$work/tree/.vwc-unpacked-from"
	[ -f "$work/tree/meson.build" ] || die "unpacked tree has no meson.build"
	printf '%s\n' "$want" > "$work/tree/.vwc-fetched"
	rm -rf "$tree"
	mv "$work/tree" "$tree"
fi

printf '%s\n' "$tree" > "$record.tmp"
mv "$record.tmp" "$record"
printf '%s\n' "$tree"
