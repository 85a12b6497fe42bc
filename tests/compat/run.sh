#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/compat/run.sh - the nvme-cli compatibility matrix
#
# Usage: tests/compat/run.sh [ROW...]	rows: 2.3 2.13 2.16 3.x (default all)
#
# For each nvme-cli users have, in the place it comes from:
#	2.3	Debian 12, on this (bookworm) host, libnvme 1.3
#	2.13	Debian 13, in a clean trixie chroot (scripts/chroot.sh), 1.13
#	2.16	sid (and Ubuntu 26.04), in a clean sid chroot, libnvme 1.16
#	3.x	upstream 3.x from the pinned tarball (../shared/vendor, or
#		$VWC_NVME_CLI3_TARBALL), libnvme3 built from it into a private
#		prefix, on this host
# the row fetches the nvme-cli source with scripts/fetch-nvme-cli.sh (the
# installed version, as a user would; 3.x: the tarball), builds
# nvme-vwc-sync with -Dlibnvme=1|3 and -Dnvme_cli_source, that is the
# `nvme` binary with the plugin and the standalone binary on that libnvme,
# and checks:
#	fetch		the source is the installed nvme-cli's version (2.13:
#			and an older suite is refused)
#	nvme		the nvme built reports that version and that libnvme
#	plugin		plugins/test-nvme-cli-plugin.sh (TAP, every line counts)
#	standalone	nvme-vwc-sync links that libnvme; dry run exits 0, a
#			bad device 1
#	unit		the meson unit tests of that build
#	one-step	3.x: `meson setup -Dnvme_cli_source=TREE` alone builds
#			libnvme3 from the tree (onestep_3x)
# and, under QEMU on kernel $VWC_COMPAT_KERNEL (default 7.2) unless
# VWC_COMPAT_VM=0:
#	2.16	tests/vm/cases/compat-core.sh with the nvme and nvme-vwc-sync
#		built in the sid chroot (their own loader and libraries under
#		/opt/vwc-compat in the image, started through small wrappers)
#	3.x	compat-core.sh with the 3.x nvme and the standalone on libnvme3;
#		compat-errpath.sh: Get Features failing through an LD_PRELOAD
#		ioctl shim, side by side: nvme-vwc-sync on libnvme 1.3 (row
#		2.3's) and on libnvme3, and "nvme vwc" of the 3.x nvme;
#		compat-idle.sh on $VWC_COMPAT_KERNEL_MOD (default
#		7.2-generic, nvme a module): the sidecar on libnvme3 holds no
#		NVMe node after its idle release, rmmod nvme and a PCI
#		removal go through
#
# Builds live in $VWC_CACHE_DIR/compat/ROW (default /var/cache/
# nvme-vwc-sync): a copy of this tree (src), the build directory (build),
# the row's downloads (cache). Kept between runs: the next run rebuilds
# only what changed. Chroots come from scripts/chroot.sh (cached too).
# Needs root (chroots, VM images).
#
# Prints the matrix, then last "compat: N passed, N failed, N skipped".
# Exit status 1 when anything failed.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
CACHE=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}
TOP=$CACHE/compat
KERNEL=${VWC_COMPAT_KERNEL:-7.2}
# compat-idle wants nvme as a module (rmmod, PCI removal)
KERNEL_MOD=${VWC_COMPAT_KERNEL_MOD:-7.2-generic}
# What nvme-cli 2.x and the project need in a clean chroot (trixie, sid),
# plus what scripts/build-debs.sh asks for there: scripts/chroot.sh remakes
# a chroot when a caller asks for a package it lacks, so on a fresh machine
# the two callers asking for the same set make each chroot once.
CHROOT_PKGS=(libnvme-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev libssl-dev libdbus-1-dev libkeyutils-dev
	zlib1g-dev libudev-dev libkmod-dev libmount-dev nvme-cli patch udev kmod
	asciidoctor lintian systemd-dev pkgconf)

rows=("$@")
[ "${#rows[@]}" -gt 0 ] || rows=(2.3 2.13 2.16 3.x)

passed=0 failed=0 skipped=0
declare -A cell=()	# "ROW:COLUMN" -> text shown in the matrix

say() { echo "compat: $*"; }
ok() { passed=$((passed + 1)); echo "ok - $1: $2"; }
bad() { failed=$((failed + 1)); echo "not ok - $1: $2${3:+ ($3)}"; }
skp() { skipped=$((skipped + 1)); echo "ok - $1: $2 # SKIP ${3:-}"; }

mkdir -p "$TOP"
exec 8>"$TOP/.lock"
flock 8

# where ROW: "host" or the chroot suite
where() {
	case $1 in
	2.13) echo trixie ;;
	2.16) echo sid ;;
	*) echo host ;;
	esac
}

# run_in ROW CMD...: CMD on the host, or in the row's chroot with the row's
# directory bind-mounted at the same path.
run_in() {
	local row=$1 w
	shift
	w=$(where "$row")
	if [ "$w" = host ]; then
		"$@"
	else
		bash "$REPO/scripts/chroot.sh" --run "$w" "$TOP/$row" -- "$@"
	fi
}

# sync_src DIR: copy this tree (no build dirs, no .git) to DIR, keeping
# modification times so that ninja rebuilds only what changed.
sync_src() {
	mkdir -p "$1"
	tar -C "$REPO" --exclude=./.git --exclude='./build*' -cf - . | tar -C "$1" -xpf -
}

# tap ROW CMD...: run a TAP producer, count its lines; sets tap_ok/tap_n
tap() {
	local row=$1 line out
	shift
	tap_ok=0 tap_n=0
	out=$("$@" 2>&1)
	while IFS= read -r line; do
		case $line in
		'ok '*) tap_n=$((tap_n + 1)) tap_ok=$((tap_ok + 1)); ok "$row plugin" "${line#ok * - }" ;;
		'not ok '*) tap_n=$((tap_n + 1)); bad "$row plugin" "${line#not ok * - }" ;;
		'Bail out!'*) tap_n=$((tap_n + 1)); bad "$row plugin" "$line" ;;
		'#'*) echo "$line" ;;
		esac
	done <<<"$out"
	[ "$tap_n" -gt 0 ] || bad "$row plugin" "no TAP output" "$(tail -n 3 <<<"$out")"
}

# --- 3.x inputs: the tarball, unpacked once; libnvme3 in a private prefix ---
tarball=${VWC_NVME_CLI3_TARBALL:-}
if [ -z "$tarball" ]; then
	for t in "$REPO"/../shared/vendor/nvme-cli-3*.tar.gz /work/shared/vendor/nvme-cli-3*.tar.gz; do
		[ -f "$t" ] && { tarball=$t; break; }
	done
fi

# prepare_3x: sets tree3 and l3prefix; returns 2 without a tarball, 1 when
# unpacking or building libnvme3 failed
prepare_3x() {
	local sum name b
	[ -n "$tarball" ] && [ -f "$tarball" ] || return 2
	sum=$(sha256sum "$tarball" | cut -c1-64)
	name=$(tar -tzf "$tarball" | head -n 1 | cut -d/ -f1)
	tree3=$CACHE/src/$name
	if [ "$(cat "$tree3/.vwc-fetched" 2>/dev/null)" != "$sum" ]; then
		say "unpacking $(basename "$tarball")"
		rm -rf "$tree3"
		mkdir -p "$CACHE/src"
		tar -C "$CACHE/src" -xzf "$tarball" || return 1
		echo "$sum" >"$tree3/.vwc-fetched"
	fi
	l3prefix=$TOP/libnvme3/${sum:0:16}
	if [ ! -f "$l3prefix/lib/pkgconfig/libnvme3.pc" ]; then
		say "building libnvme3 from $name into $l3prefix"
		b=$TOP/libnvme3/build-${sum:0:16}
		rm -rf "$b" "$l3prefix"
		mkdir -p "$TOP/libnvme3"
		(cd "$tree3" && meson setup "$b" -Dnvme=disabled -Dplugins=[] \
			-Dtests=false -Dexamples=false -Dpython=disabled -Ddocs=false \
			-Dnvmf-autoconnect=disabled --prefix="$l3prefix" --libdir=lib &&
			ninja -C "$b" install) >"$TOP/libnvme3/build-${sum:0:16}.log" 2>&1 ||
			{ tail -n 20 "$TOP/libnvme3/build-${sum:0:16}.log"; return 1; }
		rm -rf "$b"
	fi
	return 0
}

# --- one row ---
do_row() {
	local row=$1 w dir src build tree api inst want got from t0 out pcpath=''
	w=$(where "$row")
	dir=$TOP/$row src=$TOP/$row/src build=$TOP/$row/build
	mkdir -p "$dir"
	cell[$row:where]=$([ "$w" = host ] && echo "host (bookworm)" || echo "$w chroot")
	t0=$SECONDS

	if [ "$w" != host ]; then
		if ! bash "$REPO/scripts/chroot.sh" "$w" "${CHROOT_PKGS[@]}" >"$dir/chroot.log" 2>&1; then
			tail -n 5 "$dir/chroot.log"
			bad "$row" "clean $w chroot (scripts/chroot.sh)"
			cell[$row:fetch]="no chroot"
			return
		fi
	fi
	sync_src "$src"

	# fetch
	if [ "$row" = 3.x ]; then
		api=3
		prepare_3x
		case $? in
		0) ;;
		2)
			skp "$row" "nvme-cli 3.x source" "no nvme-cli-3*.tar.gz in ../shared/vendor (VWC_NVME_CLI3_TARBALL)"
			cell[$row:fetch]="skipped (no tarball)"
			return
			;;
		*)
			bad "$row" "nvme-cli 3.x source unpacked and libnvme3 built"
			cell[$row:fetch]="FAIL"
			return
			;;
		esac
		tree=$tree3
		pcpath=$l3prefix/lib/pkgconfig
		want=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$tree/meson.build" | head -n 1)
		cell[$row:fetch]="$(basename "$tarball" .tar.gz)"
		ok "$row" "source $(basename "$tree") unpacked, libnvme3 in $l3prefix"
	else
		api=1
		inst=$(run_in "$row" dpkg-query -W -f='${source:Version}' nvme-cli 2>/dev/null)
		if [ "$w" = host ]; then
			tree=$(bash "$src/scripts/fetch-nvme-cli.sh" 2>"$dir/fetch.log")
		else
			tree=$(run_in "$row" env VWC_CACHE_DIR="$dir/cache" bash "$src/scripts/fetch-nvme-cli.sh" 2>"$dir/fetch.log")
		fi
		got=$(cat "$tree/.vwc-fetched" 2>/dev/null)
		if [ -n "$tree" ] && [ -n "$inst" ] && [ "$got" = "$inst" ]; then
			ok "$row" "fetch-nvme-cli.sh: source $got = installed nvme-cli $inst"
			cell[$row:fetch]=$got
			from=$(cat "$tree/.vwc-unpacked-from" 2>/dev/null)
			case $from in
			'') ;;
			dsc) cell[$row:fetch]="$got (.dsc)" ;;
			*) cell[$row:fetch]="$got (tarballs, no .dsc)" ;;
			esac
		else
			bad "$row" "fetch-nvme-cli.sh: source '$got' = installed '$inst'" "$(tail -n 3 "$dir/fetch.log" | tr '\n' ' ')"
			cell[$row:fetch]="FAIL"
			return
		fi
		want=${inst#*:}
		want=${want%-*}
		want=${want#*really}
		if [ "$row" = 2.3 ] && ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
			# The system's deb822 sources rewritten in the one-line
			# format under another name: the same version is found.
			local ol=$dir/oneline
			mkdir -p "$ol/parts"
			cat /etc/apt/sources.list.d/*.sources | awk '
			BEGIN { RS = ""; FS = "\n" }
			{
				t = u = s = c = k = ""
				for (i = 1; i <= NF; i++) {
					if ($i ~ /^Types:/) t = substr($i, 7)
					if ($i ~ /^URIs:/) u = substr($i, 6)
					if ($i ~ /^Suites:/) s = substr($i, 8)
					if ($i ~ /^Components:/) c = substr($i, 12)
					if ($i ~ /^Signed-By:/) k = substr($i, 11)
				}
				gsub(/^[ \t]+/, "", k)
				nt = split(t, T, " "); ns = split(s, S, " ")
				for (a = 1; a <= nt; a++) for (b = 1; b <= ns; b++)
					if (T[a] != "")
						print T[a] (k != "" ? " [signed-by=" k "]" : "") " " u " " S[b] " " c
			}' | sed 's/  */ /g' >"$ol/my.list"
			printf 'Dir::Etc::sourcelist "%s";\nDir::Etc::sourceparts "%s";\n' \
				"$ol/my.list" "$ol/parts" >"$ol/apt.conf"
			out=$(APT_CONFIG=$ol/apt.conf VWC_REFRESH=1 VWC_CACHE_DIR=$ol/cache \
				bash "$src/scripts/fetch-nvme-cli.sh" 2>&1)
			if [ "$(cat "$(tail -n 1 <<<"$out")/.vwc-fetched" 2>/dev/null)" = "$inst" ]; then
				ok "$row" "fetch-nvme-cli.sh with one-line sources in $(basename "$ol")/my.list: $inst"
			else
				bad "$row" "fetch-nvme-cli.sh with one-line sources" "$(tail -n 3 <<<"$out" | tr '\n' ' ')"
			fi
		fi
		if [ "$row" = 2.13 ]; then
			# never older: bookworm's 2.3 is refused under an installed 2.13
			out=$(run_in "$row" env VWC_CACHE_DIR="$dir/cache" bash "$src/scripts/fetch-nvme-cli.sh" bookworm 2>&1)
			if [ $? = 1 ] && grep -q 'older than the installed' <<<"$out"; then
				ok "$row" "fetch-nvme-cli.sh bookworm refused (older than the installed $inst)"
			else
				bad "$row" "fetch-nvme-cli.sh bookworm refused" "$(tail -n 2 <<<"$out" | tr '\n' ' ')"
			fi
		fi
	fi

	[ "$row" != 3.x ] || onestep_3x "$tree"

	# build: nvme with the plugin and the standalone binary
	local setup=(meson setup "$build" "$src" -Dlibnvme="$api" -Dnvme_cli_source="$tree")
	[ -f "$build/build.ninja" ] && setup=(meson setup --reconfigure "$build" "$src" -Dlibnvme="$api" -Dnvme_cli_source="$tree")
	t0=$SECONDS
	if run_in "$row" env ${pcpath:+PKG_CONFIG_PATH=$pcpath} "${setup[@]}" >"$dir/build.log" 2>&1 &&
	   run_in "$row" env ${pcpath:+PKG_CONFIG_PATH=$pcpath} ninja -C "$build" >>"$dir/build.log" 2>&1; then
		ok "$row" "nvme with the vwc plugin and nvme-vwc-sync built ($((SECONDS - t0)) s)"
		cell[$row:build]="ok $((SECONDS - t0))s"
	else
		tail -n 15 "$dir/build.log"
		bad "$row" "build" "see $dir/build.log"
		cell[$row:build]="FAIL"
		return
	fi

	# nvme: its version is the source's (never older than the installed)
	out=$(run_in "$row" "$build/plugins/nvme" version 2>&1)
	if [[ $(head -n 1 <<<"$out") == "nvme version $want"* ]]; then
		ok "$row" "nvme version: $(head -n 1 <<<"$out")"
		cell[$row:nvme]=$(sed -n 's/^nvme version \([^ ]*\).*/\1/p' <<<"$out" | head -n 1)
		cell[$row:nvme]+=" / libnvme $(sed -n 's/^libnvme version \([^ ]*\).*/\1/p' <<<"$out" | head -n 1)"
	else
		bad "$row" "nvme version $want" "$out"
		cell[$row:nvme]="FAIL"
	fi

	# plugin test
	tap "$row" run_in "$row" sh "$src/plugins/test-nvme-cli-plugin.sh" "$build/plugins/nvme" \
		"$src/src/core/verbs.h" "$(sed -n "s/^\tversion: '\([^']*\)'.*/\1/p" "$src/meson.build" | head -n 1)"
	cell[$row:plugin]="$tap_ok/$tap_n"

	# standalone: which libnvme, and two exit statuses
	local lib libv
	if [ "$api" = 3 ]; then
		lib=$(ldd "$build/src/nvme-vwc-sync" | awk '/libnvme3/ { print $3 }')
		libv="libnvme3 $want"
	else
		lib=$(run_in "$row" ldd "$build/src/nvme-vwc-sync" | awk '/libnvme\.so/ { print $3 }')
		libv="libnvme $(run_in "$row" pkg-config --modversion libnvme 2>/dev/null)"
	fi
	local rc0 rc1 err1
	run_in "$row" "$build/src/nvme-vwc-sync" sync --dry-run >/dev/null 2>&1; rc0=$?
	err1=$(run_in "$row" "$build/src/nvme-vwc-sync" sync /dev/null 2>&1 >/dev/null); rc1=$?
	if [ -n "$lib" ] && [ "$rc0" = 0 ] && [ "$rc1" = 1 ] && [[ $err1 == */dev/null* ]]; then
		ok "$row" "nvme-vwc-sync on $libv ($lib): dry run 0, /dev/null 1"
		cell[$row:standalone]="ok ($libv)"
	else
		bad "$row" "nvme-vwc-sync on $libv" "lib='$lib' rc=$rc0/$rc1 $err1"
		cell[$row:standalone]="FAIL"
	fi

	# unit tests: all but the plugin test (it ran above) and man-render
	# (troff's warnings vary with the suite's groff: the man pages' own
	# business, tested in the main build)
	local names
	names=$(run_in "$row" meson test -C "$build" --list 2>/dev/null |
		sed -n 's/^\([a-z]* - \)\{0,1\}[^ :]*:\([A-Za-z0-9_-]*\)$/\2/p' |
		grep -vx -e nvme-cli-plugin -e man-render)
	# shellcheck disable=SC2086 # one word per test name
	out=$(run_in "$row" meson test -C "$build" --print-errorlogs $names 2>&1)
	local uok ufail
	uok=$(sed -n 's/^Ok:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	ufail=$(sed -n 's/^Fail:[[:space:]]*\([0-9]*\).*/\1/p' <<<"$out" | tail -n 1)
	if [ -n "$uok" ] && [ "${ufail:-1}" = 0 ]; then
		ok "$row" "unit tests: $uok ok"
		cell[$row:unit]="$uok/$uok"
	else
		grep -E '^[0-9 /]+.*(FAIL|ERROR)' <<<"$out" | head -n 5
		bad "$row" "unit tests" "ok=$uok fail=$ufail"
		cell[$row:unit]="FAIL ($ufail)"
	fi
}

# onestep_3x TREE: `meson setup -Dnvme_cli_source=TREE` alone (no
# -Dlibnvme, no PKG_CONFIG_PATH) builds libnvme3 from TREE and the core on
# it (static: the standalone needs no libnvme3.so); -Dlibnvme=1 with the
# same tree still stops with the error naming the mismatch. Only the
# standalone target is built here: the nvme target is the row's own.
onestep_3x() {
	local tree=$1 b=$TOP/3.x/build-onestep log=$TOP/3.x/onestep.log out rc0 rc1 t0=$SECONDS
	local setup=(meson setup "$b" "$TOP/3.x/src" -Dnvme_cli_source="$tree")
	[ -f "$b/build.ninja" ] && setup=(meson setup --reconfigure "$b" "$TOP/3.x/src" -Dnvme_cli_source="$tree")
	if env -u PKG_CONFIG_PATH "${setup[@]}" >"$log" 2>&1 &&
	   grep -q 'libnvme from *: nvme_cli_source' "$log" &&
	   ninja -C "$b" src/nvme-vwc-sync >>"$log" 2>&1; then
		"$b/src/nvme-vwc-sync" sync --dry-run >/dev/null 2>&1; rc0=$?
		"$b/src/nvme-vwc-sync" sync /dev/null >/dev/null 2>&1; rc1=$?
		if ldd "$b/src/nvme-vwc-sync" | grep -c libnvme >/dev/null; then
			bad "3.x one-step" "standalone links no shared libnvme" "$(ldd "$b/src/nvme-vwc-sync" | grep libnvme)"
		elif [ "$rc0" = 0 ] && [ "$rc1" = 1 ]; then
			ok "3.x one-step" "meson setup -Dnvme_cli_source only: libnvme3 built from the tree, standalone static on it, dry run 0, /dev/null 1 ($((SECONDS - t0)) s)"
		else
			bad "3.x one-step" "standalone dry run 0, /dev/null 1" "rc=$rc0/$rc1"
		fi
	else
		tail -n 15 "$log"
		bad "3.x one-step" "meson setup -Dnvme_cli_source only" "see $log"
	fi
	rm -rf "$b-mismatch"
	out=$(env -u PKG_CONFIG_PATH meson setup "$b-mismatch" "$TOP/3.x/src" -Dnvme_cli_source="$tree" -Dlibnvme=1 2>&1)
	if [ $? != 0 ] && grep -q 'is nvme-cli 3.x (libnvme 3) but the core is built for libnvme 1' <<<"$out"; then
		ok "3.x one-step" "-Dlibnvme=1 with a 3.x tree refused, the error names both"
	else
		bad "3.x one-step" "-Dlibnvme=1 with a 3.x tree refused" "$(tail -n 3 <<<"$out" | tr '\n' ' ')"
	fi
	rm -rf "$b-mismatch"
}

# --- VM: compat-core (and compat-errpath) on $KERNEL ---

# vm_run ROW DESTDIR CASES [KERNEL]: run the cases (on $KERNEL by
# default), add their counts
vm_run() {
	local row=$1 dest=$2 cases=$3 k=${4:-$KERNEL} out rc=0 s vp vf vs
	out=$(VWC_LOG_DIR="$TOP/$row/vm-logs" VWC_CASES="$cases" VWC_KERNELS="$k" VWC_INFO=0 \
		bash "$REPO/tests/vm/run-suite.sh" "$dest" 2>&1) || rc=$?
	grep -E '(FAIL|SKIP) ' <<<"$out" | head -n 40
	s=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' <<<"$out" | tail -n 1)
	if [ -z "$s" ]; then
		tail -n 10 <<<"$out"
		bad "$row vm" "$cases on $k" "no summary, exit $rc"
		vm_cell="FAIL"
		return
	fi
	read -r vp vf vs < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$s")
	passed=$((passed + vp)) failed=$((failed + vf)) skipped=$((skipped + vs))
	echo "$row vm: $s"
	vm_cell="$vp/$((vp + vf))"
	[ "$vs" = 0 ] || vm_cell+=" ($vs skipped)"
	if [ "$rc" -ne 0 ] && [ "$vf" = 0 ]; then bad "$row vm" "$cases (exit $rc)"; fi
}

vm_2_16() {
	local row=2.16 dir=$TOP/2.16 dest lib b
	dest=$dir/destdir
	rm -rf "$dest"
	if ! run_in "$row" env DESTDIR="$dest" meson install -C "$dir/build" --quiet >"$dir/install.log" 2>&1; then
		bad "$row vm" "meson install" "$(tail -n 3 "$dir/install.log")"
		return
	fi
	# sid's binaries with sid's loader and libraries, behind wrappers
	local opt=/opt/vwc-compat/sid
	mkdir -p "$dest$opt/bin" "$dest$opt/lib"
	for b in nvme nvme-vwc-sync; do
		mv "$dest/usr/local/sbin/$b" "$dest$opt/bin/$b"
		run_in "$row" ldd "$dest$opt/bin/$b" | awk '/=> \// { print $3 } /^\t\// { print $1 }' |
			while read -r lib; do
				cp -L "$CACHE/chroots/sid$lib" "$dest$opt/lib/" || echo "missing $lib"
			done
		printf '#!/bin/sh\nexec %s/lib/ld-linux-x86-64.so.2 --library-path %s/lib %s/bin/%s "$@"\n' \
			"$opt" "$opt" "$opt" "$b" >"$dest/usr/local/sbin/$b"
		chmod 755 "$dest/usr/local/sbin/$b"
	done
	mkdir -p "$dest/etc/vwc-compat"
	{
		echo "VWC_EXPECT_NVME='nvme version 2.16'"
		echo "VWC_EXPECT_NVME_LIBNVME='1.16'"
		echo "VWC_EXPECT_STANDALONE='$opt/lib/libnvme.so.1'"
	} >"$dest/etc/vwc-compat/expect"
	vm_run "$row" "$dest" compat-core
	cell[$row:vm]="core $vm_cell"
}

vm_3x() {
	local row=3.x dir=$TOP/3.x dest shimdir
	dest=$dir/destdir
	rm -rf "$dest"
	if ! PKG_CONFIG_PATH=$l3prefix/lib/pkgconfig DESTDIR=$dest meson install -C "$dir/build" --quiet >"$dir/install.log" 2>&1; then
		bad "$row vm" "meson install" "$(tail -n 3 "$dir/install.log")"
		return
	fi
	# libnvme3 for the standalone binary (the 3.x nvme has it built in)
	mkdir -p "$dest/usr/local/lib/x86_64-linux-gnu"
	cp -L "$l3prefix"/lib/libnvme3.so.1 "$dest/usr/local/lib/x86_64-linux-gnu/"
	# the libnvme 1.3 backend beside it, and the ioctl shim
	shimdir=$dest/opt/vwc-compat
	mkdir -p "$shimdir/libnvme1" "$dest/etc/vwc-compat"
	if [ -x "$TOP/2.3/build/src/nvme-vwc-sync" ]; then
		cp "$TOP/2.3/build/src/nvme-vwc-sync" "$shimdir/libnvme1/"
	fi
	# the plugin inside the 3.x nvme, as a third "backend" (libnvme3 built in)
	printf '#!/bin/sh\nexec /usr/local/sbin/nvme vwc "$@"\n' >"$shimdir/nvme-vwc"
	chmod 755 "$shimdir/nvme-vwc"
	if ! gcc -O2 -Wall -Wextra -shared -fPIC -o "$shimdir/ioctl-shim.so" "$HERE/ioctl-shim.c" -ldl; then
		bad "$row vm" "ioctl shim build"
	fi
	{
		echo "VWC_EXPECT_NVME='nvme version $want3'"
		echo "VWC_EXPECT_NVME_LIBNVME='$want3'"
		echo "VWC_EXPECT_STANDALONE='libnvme3.so.1 => /usr/local/lib/x86_64-linux-gnu/libnvme3.so.1'"
		echo "VWC_SHIM=/opt/vwc-compat/ioctl-shim.so"
		if [ -x "$shimdir/libnvme1/nvme-vwc-sync" ]; then
			echo "VWC_BACKENDS='libnvme1=/opt/vwc-compat/libnvme1/nvme-vwc-sync libnvme3=/usr/local/sbin/nvme-vwc-sync nvme-3.x-plugin=/opt/vwc-compat/nvme-vwc'"
		else
			echo "VWC_BACKENDS='libnvme3=/usr/local/sbin/nvme-vwc-sync nvme-3.x-plugin=/opt/vwc-compat/nvme-vwc'"
		fi
	} >"$dest/etc/vwc-compat/expect"
	vm_run "$row" "$dest" compat-core
	cell[$row:vm]="core $vm_cell"
	[ -x "$shimdir/libnvme1/nvme-vwc-sync" ] ||
		bad "$row vm" "errpath needs the 2.3 row's libnvme 1.3 nvme-vwc-sync (run row 2.3 too)"
	vm_run "$row" "$dest" compat-errpath
	cell[$row:vm]+=", errpath $vm_cell"
	# nvme a module: the idle release lets rmmod and PCI removal through
	vm_run "$row" "$dest" compat-idle "$KERNEL_MOD"
	cell[$row:vm]+=", idle $vm_cell"
}

t_all=$SECONDS
for row in "${rows[@]}"; do
	case $row in
	2.3 | 2.13 | 2.16 | 3.x) ;;
	*) echo "compat: unknown row '$row' (2.3 2.13 2.16 3.x)" >&2; exit 2 ;;
	esac
	echo
	say "=== nvme-cli $row ($(where "$row"))"
	t_row=$SECONDS
	do_row "$row"
	cell[$row:time]=$((SECONDS - t_row))
done

if [ "${VWC_COMPAT_VM:-1}" != 0 ]; then
	for row in "${rows[@]}"; do
		t_row=$SECONDS
		case $row in
		2.16)
			[ "${cell[2.16:build]:-}" = FAIL ] || [ -z "${cell[2.16:build]:-}" ] ||
				{ echo; say "=== VM $KERNEL: nvme 2.16 (sid)"; vm_2_16; }
			;;
		3.x)
			if [ -n "${cell[3.x:build]:-}" ] && [ "${cell[3.x:build]}" != FAIL ]; then
				echo; say "=== VM $KERNEL: nvme 3.x, nvme-vwc-sync on libnvme3"
				want3=$(sed -n "s/^ *version: *'\([^']*\)'.*/\1/p" "$tree3/meson.build" | head -n 1)
				vm_3x
			fi
			;;
		esac
		cell[$row:time]=$((${cell[$row:time]:-0} + SECONDS - t_row))
	done
fi

echo
echo "compat matrix (kernel $KERNEL for the VM column; times include fetch, build, tests)"
fmt='%-5s  %-15s  %-30s  %-8s  %-26s  %-6s  %-28s  %-5s  %-27s  %s\n'
# shellcheck disable=SC2059
printf "$fmt" row where "nvme-cli source" build "nvme built (libnvme)" plugin standalone unit vm time
for row in "${rows[@]}"; do
	# shellcheck disable=SC2059
	printf "$fmt" "$row" "${cell[$row:where]:--}" "${cell[$row:fetch]:--}" "${cell[$row:build]:--}" \
		"${cell[$row:nvme]:--}" "${cell[$row:plugin]:--}" "${cell[$row:standalone]:--}" \
		"${cell[$row:unit]:--}" "${cell[$row:vm]:--}" "${cell[$row:time]:-0}s"
done
echo "total time: $((SECONDS - t_all)) s"
echo "compat: $passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
