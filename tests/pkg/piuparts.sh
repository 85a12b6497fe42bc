#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/pkg/piuparts.sh - Debian's piuparts on the packages of this tree
#
# Usage: tests/pkg/piuparts.sh [OUTDIR [SUITE...]]
#	(default build/piuparts; suites bookworm trixie)
#
# For each suite, one piuparts run on nvme-vwc-sync of the next version
# (0.1.0+up1), which piuparts checks in a clean minbase system twice:
#	install, remove, purge: no error, nothing left behind, nothing
#		changed outside the packages' files;
#	upgrade: the previous build (0.1.0) installed from a local apt
#		repository (--extra-repo), upgraded to the next, purged.
# The packages are the system suite's (tests/system/run.sh builds the
# first version into $VWC_SYSTEM_OUT/debs-SUITE and repacks it as the
# next in debs-SUITE-up, default build/system): reused when there, else
# made here the same way with scripts/build-debs.sh (VWC_DEBS_OPTS: e.g.
# --no-plugin).
# The base tarball is made once per suite with mmdebstrap (minbase) from
# the system's Debian sources, as scripts/chroot.sh derives them, and
# cached in $VWC_CACHE_DIR/piuparts. The suites run side by side.
#
# Prints "piuparts: N passed, N failed" last; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
OUT=${1:-$REPO/build/piuparts}
shift || true
[ "$#" -gt 0 ] || set -- bookworm trixie
# shellcheck source=tests/pkg/lib.sh
. tests/pkg/lib.sh

passed=0 failed=0
t_all=$SECONDS
log() { echo "piuparts: $*" >&2; }

need_pkgs piuparts piuparts mmdebstrap dpkg-dev

mkdir -p "$OUT" "$CACHE/piuparts"
# run SUITE: one piuparts run; writes $OUT/SUITE.result ("ok"/"fail TEXT")
run() {
	local suite=$1 tgz repo pk=() extra=() u s c t0=$SECONDS first=1 main=''
	local res=$OUT/$suite.result
	rm -f "$res"
	if ! debs "$suite"; then
		echo "fail $suite: packages did not build ($OUT/$suite-build.log)" >"$res"
		return
	fi
	if ! tgz=$(base "$suite"); then
		echo "fail $suite: no base tarball" >"$res"
		return
	fi
	# v1 as a local repository, bind-mounted at the same path
	repo=$OUT/repo-$suite
	rm -rf "$repo"
	mkdir -p "$repo"
	cp "$v1"/nvme-vwc-sync_*.deb "$repo/"
	pk=("$v2"/nvme-vwc-sync_"$NEXT"_*.deb)
	(cd "$repo" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null)
	while IFS='|' read -r u s c; do
		if [ -n "$first" ]; then
			main="$u $c" first=''
		else
			extra+=(--extra-repo="deb $u $s $c")
		fi
	done < <(stanzas "$suite")
	# Left behind when the upgrade test purges udev and systemd, which
	# it installed as our dependencies (trixie's systemd; not ours): the
	# broken /etc symlinks systemd makes, its private and debconf
	# directories, and /usr/lib/udev/ holding udev's own compiled hwdb
	# (its trigger's, which piuparts ignores as a file). Our own files
	# there (rules.d/, hwdb.d/) would still be listed one by one.
	local ignore=(--ignore=/etc/default/locale --ignore=/etc/vconsole.conf
		--ignore=/root/.ssh/ --ignore=/var/cache/debconf/tmp.ci/
		--ignore=/var/cache/private/ --ignore=/var/lib/private/
		--ignore=/var/log/private/ --ignore=/usr/lib/udev/)
	rm -f "$OUT/$suite.log"
	log "$suite: piuparts on $(for p in "${pk[@]}"; do basename "$p"; done | paste -sd' '), upgrade from $(cd "$repo" && echo *.deb)"
	if piuparts --basetgz="$tgz" -d "$suite" -m "$main" "${extra[@]}" \
		--extra-repo="deb [trusted=yes] file://$repo ./" --bindmount="$repo" \
		--warn-on-others "${ignore[@]}" \
		--tmpdir="$OUT" -l "$OUT/$suite.log" "${pk[@]}" >/dev/null 2>&1; then
		# passed, and the upgrade ran: v2 unpacked over v1
		if grep -q 'PASS: All tests' "$OUT/$suite.log" &&
		   ! grep -q "Can't test upgrade" "$OUT/$suite.log" &&
		   grep -q "Unpacking nvme-vwc-sync ($NEXT) over (0.1.0)" "$OUT/$suite.log"; then
			echo "ok $suite: install, purge and upgrade 0.1.0 -> $NEXT of $((${#pk[@]})) package(s) ($((SECONDS - t0)) s)" >"$res"
		else
			echo "fail $suite: piuparts passed but ran no upgrade test ($OUT/$suite.log)" >"$res"
		fi
	else
		echo "fail $suite: $(grep -E 'ERROR|FAIL' "$OUT/$suite.log" | head -n 3 | tr '\n' ' ') ($OUT/$suite.log)" >"$res"
	fi
}

for suite in "$@"; do
	run "$suite" &
done
wait

for suite in "$@"; do
	r=$(cat "$OUT/$suite.result" 2>/dev/null || echo "fail $suite: no result")
	case $r in
	ok*) passed=$((passed + 1)); echo "ok - ${r#ok }" ;;
	*) failed=$((failed + 1)); echo "not ok - ${r#fail }"; tail -n 30 "$OUT/$suite.log" 2>/dev/null ;;
	esac
done
echo "piuparts: suite time $((SECONDS - t_all)) s"
echo "piuparts: $passed passed, $failed failed"
[ "$failed" = 0 ]
