#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
#
# The nvme binary with the vwc plugin links nothing the distribution's
# nvme does not link already, but for what the plugin's libraries need
# (src/core and src/quirks; never the sidecar's src/watch):
#	libudev		device names, the hwdb quirk database (core, quirks)
#	libjson-c	-o json (core; nvme-cli links it too)
#	libkmod		the nvme driver's PCI table (quirks: kmod-table.c)
#	libmount	mounts and swap before a rebind (quirks: inuse.c)
# and the libraries these four link themselves (ldd of each), and a
# sanitizer's runtime in a -Db_sanitize build. libbpf, libtracefs and
# libtraceevent (the sidecar's kernel-side detection) are never linked.
#
# usage: test-ldd.sh B_SANITIZE [OUR_NVME [DISTRIBUTION_NVME]]
#	B_SANITIZE	meson's b_sanitize of the build ("none", "address,undefined")
#	OUR_NVME	build/plugins/nvme; none given: the plugin is not built
#			(-Dnvme_cli_source unset) and the test is skipped
#	DISTRIBUTION_NVME  default /usr/sbin/nvme.distrib (nvme-cli-vwc
#			installed diverts the distribution's there), else
#			/usr/sbin/nvme
# TAP output.

sanitize=${1:-none}
ours=${2:-}
distrib=${3:-}

if [ -z "$ours" ]; then
	echo "1..0 # SKIP the nvme-cli plugin is not built (-Dnvme_cli_source unset)"
	exit 0
fi
if [ -z "$distrib" ]; then
	for c in /usr/sbin/nvme.distrib /usr/sbin/nvme; do
		[ -x "$c" ] && [ "$(readlink -f "$c")" != "$(readlink -f "$ours")" ] &&
			{ distrib=$c; break; }
	done
fi
if [ -z "$distrib" ] || [ ! -x "$distrib" ]; then
	echo "1..0 # SKIP no distribution nvme to compare with (Debian: apt install nvme-cli)"
	exit 0
fi

# libraries by soname, one a line ("libz.so.1"), and where they resolve
names() { ldd "$1" | awk '$1 ~ /^lib/ { print $1 }' | sort -u; }
where() { ldd "$1" | awk -v n="$2" '$1 == n && $3 ~ /^\// { print $3 }'; }

theirs=$(names "$distrib") || theirs=
mine=$(names "$ours") || mine=
if [ -z "$theirs" ] || [ -z "$mine" ]; then
	echo "1..1"
	echo "not ok 1 - ldd lists the libraries of $ours and $distrib"
	exit 0
fi

allowed="libudev libjson-c libkmod libmount"
case $sanitize in *address*) allowed="$allowed libasan" ;; esac
case $sanitize in *undefined*) allowed="$allowed libubsan" ;; esac
case $sanitize in *thread*) allowed="$allowed libtsan" ;; esac
case $sanitize in *leak*) allowed="$allowed liblsan" ;; esac

# what the allowed libraries link themselves
pulled=
for n in $mine; do
	for a in $allowed; do
		case $n in "$a".so*)
			p=$(where "$ours" "$n")
			[ -n "$p" ] && pulled="$pulled $(names "$p" | tr '\n' ' ')"
			;;
		esac
	done
done

n=0
bad=0
printf '1..%s\n' "$(($(printf '%s\n' "$mine" | wc -l) + 1))"
echo "# ours: $ours; the distribution's: $distrib"
for lib in $mine; do
	n=$((n + 1))
	why=
	if printf '%s\n' "$theirs" | grep -qxF "$lib"; then
		why="the distribution's nvme links it"
	else
		for a in $allowed; do
			case $lib in "$a".so*) why="allowed: $a" ;; esac
		done
		if [ -z "$why" ]; then
			for p in $pulled; do
				[ "$p" = "$lib" ] && why="linked by an allowed library"
			done
		fi
	fi
	if [ -n "$why" ]; then
		echo "ok $n - $lib ($why)"
	else
		echo "not ok $n - $lib: the distribution's nvme does not link it, nor is it one of: $allowed"
		bad=1
	fi
done
n=$((n + 1))
side=$(printf '%s\n' "$mine" | grep -E '^lib(bpf|tracefs|traceevent)\.so' | tr '\n' ' ')
if [ -z "$side" ]; then
	echo "ok $n - none of the sidecar's libraries (libbpf, libtracefs, libtraceevent)"
else
	echo "not ok $n - the sidecar's libraries are linked: $side"
	bad=1
fi
[ "$bad" = 0 ] || echo "# nvme must link what the distribution's nvme links, plus only libudev, json-c, and the quirks' libkmod and libmount (src/meson.build)"
exit 0
