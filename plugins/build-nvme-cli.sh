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
#	--work		scratch directory: WORK/src is a copy of the tree with
#			the plugin folder added, WORK/build its build directory
#	--output	where the built nvme binary is copied
#	--core-lib	a static library of nvme-vwc-sync linked into nvme; given
#			once per library, in link order (src/quirks before
#			src/core: the sidecar's src/watch is never among them)
#	--source-root	nvme-vwc-sync's source root: the plugin is compiled from
#			PLUGINS/vwc there and "src/core/cli.h" is included from it
#	--build-root	nvme-vwc-sync's build root, for "vwc-config.h"
#	--pkg NAME	pkg-config dependency of those libraries
#	--lib NAME	plain library (-lNAME) needed by those libraries
#
# The plugin reaches nvme-cli the way nvme-cli's own plugins do, through
# its plugins/ folder: PLUGINS/vwc (meson.build, vwc-nvme.c, vwc-nvme.h)
# is copied into WORK/src/plugins/vwc with a vwc-build.txt naming the
# nvme-vwc-sync libraries, include directories and libraries, and then
#	nvme-cli 2.x (cmd.h present: 2.3 to 2.16): "subdir('vwc')" is
#		appended to plugins/meson.build, which each of these releases
#		reads before the nvme executable is declared;
#	nvme-cli 3.x (no cmd.h): "vwc" is added to the choices of the
#		"plugins" option in meson_options.txt, the list nvme-cli's
#		plugins/meson.build itself reads; the option's default selects
#		every choice, so vwc is built with all the others.
# nvme-cli's own meson.build is not edited. See plugins/vwc/meson.build.
#
# The copy and its meson setup are redone only when the tree, this script
# or the setup arguments change; the plugin files are refreshed on every
# run (only when they differ) and ninja does the rest incrementally.

set -eu

prog=build-nvme-cli
msg() { printf '%s: %s\n' "$prog" "$*" >&2; }
die() { msg "error: $*"; exit 1; }

src='' work='' output='' core_lib='' source_root='' build_root='' pkgs='' libs=''
while [ $# -gt 0 ]; do
	case $1 in
	--source)	src=$2; shift 2 ;;
	--work)		work=$2; shift 2 ;;
	--output)	output=$2; shift 2 ;;
	--core-lib)	core_lib="$core_lib $2"; shift 2 ;;
	--source-root)	source_root=$2; shift 2 ;;
	--build-root)	build_root=$2; shift 2 ;;
	--pkg)		pkgs="$pkgs $2"; shift 2 ;;
	--lib)		libs="$libs $2"; shift 2 ;;
	--)		shift; break ;;
	*)		die "unknown argument '$1'" ;;
	esac
done
for v in src work output core_lib source_root build_root; do
	eval "[ -n \"\$$v\" ]" || die "missing --$(echo "$v" | tr _ -)"
done

abspath() { (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$1")"); }

src=$(abspath "$src")
libs_abs=''
for l in $core_lib; do
	[ -f "$l" ] || die "library $l not built"
	libs_abs="$libs_abs $(abspath "$l")"
done
core_lib=${libs_abs# }
source_root=$(abspath "$source_root")
build_root=$(abspath "$build_root")
mkdir -p "$work"
work=$(abspath "$work")
plugin_dir=$source_root/plugins/vwc

if [ ! -f "$src/meson.build" ] ||
   { [ ! -f "$src/plugin.c" ] && [ ! -f "$src/src/plugin.c" ]; }; then
	die "$src is not an nvme-cli source tree (see scripts/fetch-nvme-cli.sh)"
fi
for f in meson.build vwc-nvme.c vwc-nvme.h; do
	[ -f "$plugin_dir/$f" ] || die "plugin file $plugin_dir/$f not found"
done
case "$src$core_lib$source_root$build_root$pkgs$libs" in
*=*|*"
"*) die "paths and names must not contain '=' or newlines" ;;
esac

meson=${MESON:-meson}
ninja=${NINJA:-ninja}

# 1. Copy of the tree, hooked to plugins/vwc.
stamp="source=$src
fetched=$(cat "$src/.vwc-fetched" 2>/dev/null || echo unknown)
script=$(cksum < "$0")"
if [ "$(cat "$work/src.stamp" 2>/dev/null)" != "$stamp" ]; then
	msg "copying $src"
	rm -rf "$work/src" "$work/build" "$work/src.stamp" "$work/setup.stamp"
	cp -R "$src" "$work/src.tmp"
	if [ -f "$work/src.tmp/cmd.h" ]; then
		pm=$work/src.tmp/plugins/meson.build
		[ -f "$pm" ] ||
			die "nvme-cli 2.x tree without plugins/meson.build: cannot add the plugin"
		msg "nvme-cli 2.x: plugins/meson.build gets subdir('vwc')"
		printf "\n# nvme-vwc-sync (build-nvme-cli.sh)\nsubdir('vwc')\n" >> "$pm"
	else
		mo=$work/src.tmp/meson_options.txt
		msg "nvme-cli 3.x: 'vwc' among the choices of option 'plugins'"
		awk '
		/^option\($/ { opt = "" }
		/^[ \t]*'\''plugins'\'',?[ \t]*$/ || /^option\([ \t]*'\''plugins'\''/ { opt = "plugins" }
		opt == "plugins" && /^[ \t]*choices[ \t]*:[ \t]*\[/ && !done {
			sub(/\[/, "['\''vwc'\'', ")
			done = 1
		}
		{ print }
		END { if (!done) exit 3 }
		' "$mo" > "$mo.new" ||
			die "nvme-cli 3.x layout changed: no choices list of option 'plugins' in $src/meson_options.txt"
		mv "$mo.new" "$mo"
		[ -f "$work/src.tmp/plugins/meson.build" ] &&
			grep -q 'subdir(plugin_name' "$work/src.tmp/plugins/meson.build" ||
			die "nvme-cli 3.x layout changed: plugins/meson.build does not subdir() into selected plugins"
	fi
	mkdir -p "$work/src.tmp/plugins/vwc"
	mv "$work/src.tmp" "$work/src"
	printf '%s\n' "$stamp" > "$work/src.stamp"
fi

# The plugin folder, refreshed when its files differ (ninja sees the change).
put() { # put CONTENT-FILE DEST
	cmp -s "$1" "$2" || cp "$1" "$2"
}
for f in meson.build vwc-nvme.c vwc-nvme.h; do
	put "$plugin_dir/$f" "$work/src/plugins/vwc/$f"
done
printf 'core_lib=%s\ninc=%s %s\npkgs=%s\nlibs=%s\n' "$core_lib" \
	"$source_root" "$build_root" "$pkgs" "$libs" > "$work/vwc-build.txt"
put "$work/vwc-build.txt" "$work/src/plugins/vwc/vwc-build.txt"

# 2. meson setup, when the arguments changed. nvme-cli 3.x builds libnvme3
# in the tree: linked statically, the nvme binary stands alone (it does not
# pick up another libnvme3 at run time) and its tests and examples are not
# needed here.
if [ ! -f "$work/src/cmd.h" ]; then
	set -- -Ddefault_library=static -Dtests=false -Dexamples=false \
		-Dpython=disabled "$@"
fi
setup="$*"
if [ ! -f "$work/build/build.ninja" ] ||
   [ "$(cat "$work/setup.stamp" 2>/dev/null)" != "$setup" ]; then
	rm -rf "$work/build" "$work/setup.stamp"
	msg "configuring nvme-cli in $work/build"
	"$meson" setup --wrap-mode=nodownload "$@" "$work/build" "$work/src" >&2 ||
		die "meson setup of nvme-cli failed"
	printf '%s\n' "$setup" > "$work/setup.stamp"
fi

# 3. Build. The libraries are linked by path: relink when one is newer.
# shellcheck disable=SC2086 # a list of paths without blanks
if [ -f "$work/build/nvme" ] &&
   [ -n "$(find $core_lib -newer "$work/build/nvme")" ]; then
	rm -f "$work/build/nvme"
fi
"$ninja" -C "$work/build" nvme >&2 || die "building nvme-cli failed"

cp "$work/build/nvme" "$output.tmp"
mv "$output.tmp" "$output"
