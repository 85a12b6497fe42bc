#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# build-nvme-cli.sh - build nvme-cli with the vwc plugin built in
#
# Run by plugins/meson.build (custom target "nvme-cli"); it can be run by
# hand with the same arguments.
#
# Usage:
#	build-nvme-cli.sh --source DIR --work DIR --output FILE
#		--core-lib FILE --source-root DIR --build-root DIR
#		[--pkg NAME]... [--lib NAME]... [-- MESON_SETUP_ARGS...]
#
#	--source	unpacked nvme-cli tree (scripts/fetch-nvme-cli.sh); never
#			written to
#	--work		scratch directory: WORK/src is a patched copy of the
#			tree, WORK/build its meson build directory
#	--output	where the built nvme binary is copied
#	--core-lib	nvme-vwc-sync's static core library, linked into nvme
#	--source-root	nvme-vwc-sync's source root: the plugin is compiled from
#			PLUGINS/vwc there and "src/cli.h" is included from it
#	--build-root	nvme-vwc-sync's build root, for "vwc-config.h"
#	--pkg NAME	pkg-config dependency of the core library
#	--lib NAME	plain library (-lNAME) needed by the core library
#
# nvme-cli's meson.build is patched, in the copy, at two places of the 2.3
# layout: after "subdir('plugins')" the plugin source and a dependency
# object (include directories, core library, its dependencies) are added;
# the dependency is appended to the nvme executable's dependencies. When
# either place is not found exactly once the script fails and names it.
#
# The copy and its meson setup are redone only when the tree, this script
# or the setup arguments change; ninja does the rest incrementally.

set -eu

prog=build-nvme-cli
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { msg "error: $*"; exit 1; }

src='' work='' output='' core_lib='' source_root='' build_root='' deps=''
while [ $# -gt 0 ]; do
	case $1 in
	--source)	src=$2; shift 2 ;;
	--work)		work=$2; shift 2 ;;
	--output)	output=$2; shift 2 ;;
	--core-lib)	core_lib=$2; shift 2 ;;
	--source-root)	source_root=$2; shift 2 ;;
	--build-root)	build_root=$2; shift 2 ;;
	--pkg)		deps="$deps dependency('$2'),"; shift 2 ;;
	--lib)		deps="$deps cc.find_library('$2'),"; shift 2 ;;
	--)		shift; break ;;
	*)		die "unknown argument '$1'" ;;
	esac
done
for v in src work output core_lib source_root build_root; do
	eval "[ -n \"\$$v\" ]" || die "missing --$(echo "$v" | tr _ -)"
done

abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }

src=$(abspath "$src")
core_lib=$(abspath "$core_lib")
source_root=$(abspath "$source_root")
build_root=$(abspath "$build_root")
mkdir -p "$work"
work=$(abspath "$work")
plugin_c=$source_root/plugins/vwc/vwc-nvme.c

if [ ! -f "$src/meson.build" ] || [ ! -f "$src/plugin.c" ]; then
	die "$src is not an nvme-cli source tree (see scripts/fetch-nvme-cli.sh)"
fi
[ -f "$core_lib" ] || die "core library $core_lib not built"
[ -f "$plugin_c" ] || die "plugin source $plugin_c not found"
case "$src$core_lib$source_root$build_root" in
*\'*|*\\*) die "paths must not contain quotes or backslashes" ;;
esac

meson=${MESON:-meson}
ninja=${NINJA:-ninja}

# 1. Patched copy of the tree.
stamp="source=$src
fetched=$(cat "$src/.vwc-fetched" 2>/dev/null || echo unknown)
script=$(cksum < "$0")
core=$core_lib
root=$source_root
build=$build_root
deps=$deps"
if [ "$(cat "$work/src.stamp" 2>/dev/null)" != "$stamp" ]; then
	msg "copying $src"
	rm -rf "$work/src" "$work/build" "$work/src.stamp" "$work/setup.stamp"
	cp -R "$src" "$work/src.tmp"
	mv "$work/src.tmp" "$work/src"

	msg "patching nvme-cli meson.build"
	mb=$work/src/meson.build
	awk -v plugin_c="$plugin_c" -v root="$source_root" \
	    -v build="$build_root" -v core="$core_lib" -v deps="$deps" '
	BEGIN { plugins = 0; exe = 0 }
	{ print }
	$0 == "subdir('\''plugins'\'')" {
		plugins++
		print "# nvme-vwc-sync: vwc plugin (added by build-nvme-cli.sh)"
		print "sources += [ '\''" plugin_c "'\'' ]"
		print "vwc_plugin_dep = declare_dependency("
		print "  include_directories: include_directories('\''" root "'\'', '\''" build "'\''),"
		print "  link_args: [ '\''" core "'\'' ],"
		print "  dependencies: [" deps " ])"
	}
	' "$mb" > "$mb.tmp"
	# The second edit: the nvme executable gets the dependency.
	awk '
	BEGIN { n = 0 }
	/^ *libhugetlbfs_dep \],$/ && in_exe {
		sub(/libhugetlbfs_dep \],$/, "libhugetlbfs_dep, vwc_plugin_dep ],")
		n++
	}
	/^executable\($/ { pending = 1 }
	pending && /^  '\''nvme'\'',$/ { in_exe = 1 }
	/^\)$/ { pending = 0; in_exe = 0 }
	{ print }
	END { if (n != 1) exit 3 }
	' "$mb.tmp" > "$mb.new" ||
		die "nvme-cli layout changed: the dependencies of executable('nvme', ...) in $src/meson.build do not end with 'libhugetlbfs_dep ],' (pinned to nvme-cli 2.3)"
	[ "$(grep -c '^vwc_plugin_dep = ' "$mb.new")" = 1 ] ||
		die "nvme-cli layout changed: no single line \"subdir('plugins')\" in $src/meson.build (pinned to nvme-cli 2.3)"
	mv "$mb.new" "$mb"
	rm -f "$mb.tmp"
	printf '%s\n' "$stamp" > "$work/src.stamp"
fi

# 2. meson setup, when the arguments changed.
setup="$*"
if [ ! -f "$work/build/build.ninja" ] ||
   [ "$(cat "$work/setup.stamp" 2>/dev/null)" != "$setup" ]; then
	rm -rf "$work/build" "$work/setup.stamp"
	msg "configuring nvme-cli in $work/build"
	"$meson" setup --wrap-mode=nodownload "$@" "$work/build" "$work/src" >&2 ||
		die "meson setup of nvme-cli failed"
	printf '%s\n' "$setup" > "$work/setup.stamp"
fi

# 3. Build. The core library is linked by path: relink when it is newer.
if [ -f "$work/build/nvme" ] &&
   [ -n "$(find "$core_lib" -newer "$work/build/nvme")" ]; then
	rm -f "$work/build/nvme"
fi
"$ninja" -C "$work/build" nvme >&2 || die "building nvme-cli failed"

cp "$work/build/nvme" "$output.tmp"
mv "$output.tmp" "$output"
