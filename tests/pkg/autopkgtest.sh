#!/bin/bash
# SPDX-License-Identifier: GPL-2.0-or-later
#
# tests/pkg/autopkgtest.sh - debian/tests run by Debian's autopkgtest
# against the installed nvme-vwc-sync package
#
# Usage: tests/pkg/autopkgtest.sh [OUTDIR [SUITE...]]
#	(default build/autopkgtest; suites bookworm trixie)
#
# Runner: autopkgtest-virt-unshare (a throw-away user-namespace container
# unpacked from the minbase tarball that tests/pkg/piuparts.sh makes, cached), with the
# package of this tree given as a binary (the system suite's
# debs-SUITE/nvme-vwc-sync_0.1.0_*.deb, else built with
# scripts/build-debs.sh) and the source tree as build-debs.sh copies it
# (for debian/tests). Every test of debian/tests/control counts: one pass
# or one failure each per suite (autopkgtest's summary file).
#
# Prints "autopkgtest: N passed, N failed" last; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
REPO=$PWD
OUT=${1:-$REPO/build/autopkgtest}
shift || true
[ "$#" -gt 0 ] || set -- bookworm trixie
# shellcheck source=tests/pkg/lib.sh
. tests/pkg/lib.sh

passed=0 failed=0
t_all=$SECONDS
log() { echo "autopkgtest: $*" >&2; }

need_pkgs autopkgtest autopkgtest mmdebstrap uidmap
rm -rf "$OUT"
mkdir -p "$OUT"
# autopkgtest-virt-unshare maps the container's users through
# `unshare --map-auto`: root needs subordinate IDs (one range, added once,
# as useradd gives a new user; nothing else on the host changes).
for f in /etc/subuid /etc/subgid; do
	grep -q '^root:' "$f" 2>/dev/null || echo 'root:3000000000:65536' >>"$f"
done

ntests=$(grep -c '^Tests:' debian/tests/control)
if ! src=$(bash scripts/build-debs.sh --stage-only trixie "$OUT/stage" 2>"$OUT/stage.err"); then
	echo "not ok - source copy ($(tail -n 2 "$OUT/stage.err" | tr '\n' ' '))"
	echo "autopkgtest: 0 passed, 1 failed"
	exit 1
fi

# run SUITE: autopkgtest in an unshare container; $OUT/SUITE.result
run() {
	local suite=$1 tgz deb t0=$SECONDS rc=0
	local res=$OUT/$suite.result
	if ! debs "$suite" v1; then
		echo "fail $suite: the package did not build ($OUT/$suite-build.log)" >"$res"
		return
	fi
	if ! tgz=$(base "$suite"); then
		echo "fail $suite: no base tarball" >"$res"
		return
	fi
	deb=$(ls "$v1"/nvme-vwc-sync_0.1.0_*.deb | head -n 1)
	log "$suite: $(basename "$deb") in autopkgtest-virt-unshare"
	autopkgtest --output-dir "$OUT/$suite" --summary-file "$OUT/$suite.summary" \
		--setup-commands='apt-get -q update' "$deb" "$src/" -- \
		unshare --release "$suite" --tarball "$tgz" \
		>"$OUT/$suite.log" 2>&1 || rc=$?
	echo "time $((SECONDS - t0)) s, exit $rc" >"$res"
}

for suite in "$@"; do
	run "$suite" &
done
wait

for suite in "$@"; do
	r=$(cat "$OUT/$suite.result" 2>/dev/null || echo "fail $suite: no result")
	case $r in
	fail*)
		failed=$((failed + ntests)); echo "not ok - ${r#fail }"; continue ;;
	esac
	n=0
	while read -r name status _; do
		grep -qx "Tests: $name" debian/tests/control || continue
		n=$((n + 1))
		if [ "$status" = PASS ]; then
			passed=$((passed + 1)); echo "ok - $suite: debian/tests/$name PASS (${r#time })"
		else
			failed=$((failed + 1)); echo "not ok - $suite: debian/tests/$name $status ($OUT/$suite.log)"
		fi
	done < <(awk '!seen[$1]++' "$OUT/$suite.summary")
	if [ "$n" -lt "$ntests" ]; then
		failed=$((failed + ntests - n))
		echo "not ok - $suite: $n of $ntests tests reported (${r#time }; $OUT/$suite.log)"
		sed 's/^/# /' "$OUT/$suite.summary" 2>/dev/null
		tail -n 20 "$OUT/$suite.log"
	fi
done
echo "autopkgtest: suite time $((SECONDS - t_all)) s"
echo "autopkgtest: $passed passed, $failed failed"
[ "$failed" = 0 ]
