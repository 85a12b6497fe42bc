#!/bin/bash
# Static analysis of the whole tree (src/, tests/, plugins when built):
# gcc -fanalyzer and clang's scan-build, each from a clean build dir
# (gcc's through ccache: an unchanged translation unit's diagnostics are
# replayed from the cache).
# A report is either fixed or silenced where it is raised with a comment
# saying why it is a false positive (gcc 12 loses pointers stored through
# an array at a symbolic index: grep the tree for -Wanalyzer-malloc-leak).
# Usage: run.sh BUILDDIR
# Last line: "analyze: N passed, N failed" (one per analyzer with reports).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: run.sh BUILDDIR}
mkdir -p "$B"
B=$(cd "$B" && pwd)
passed=0 failed=0

bash tests/analyze/deps.sh gcc ccache clang clang-tools meson ninja-build pkg-config libudev-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev libnvme-dev || {
	echo "analyze: 0 passed, 1 failed"; exit 1; }

result() { # NAME COUNT LOG
	if [ "$2" = 0 ]; then
		passed=$((passed + 1))
		echo "analyze: ok   $1: 0 reports"
	else
		failed=$((failed + 1))
		echo "analyze: FAIL $1: ${2} reports (log $3)"
	fi
}

# gcc -fanalyzer: every diagnostic it emits carries [-Wanalyzer-...].
# Through ccache, in the cache directory: a translation unit whose
# preprocessed text, options and compiler are those of an earlier run is
# not analyzed again, its diagnostics are replayed from that run (ccache
# keeps a compiler's stderr with its object). Paths under the tree are
# hashed as relative ones and the working directory not at all, so that
# another clone of the same commit finds them (CI clones afresh).
rm -rf "$B/gcc"
log=$B/gcc-fanalyzer.log
# (tests/check disables ccache for every other build)
unset CCACHE_DISABLE
export CCACHE_DIR=${VWC_CACHE_DIR:-/var/cache/nvme-vwc-sync}/ccache
export CCACHE_BASEDIR=$PWD CCACHE_NOHASHDIR=1
if CC="ccache gcc" meson setup "$B/gcc" -Dc_args=-fanalyzer >"$log" 2>&1 &&
	nice ninja -C "$B/gcc" >>"$log" 2>&1; then
	n=$(grep -c '\[-Wanalyzer' "$log" || true)
	grep -B2 '\[-Wanalyzer' "$log" | grep -E 'warning:' | head -n 20
else
	n="build failed"
	tail -n 20 "$log"
fi
result "gcc $(gcc -dumpversion) -fanalyzer" "$n" "$log"

# scan-build (clang static analyzer, default checkers)
rm -rf "$B/scan-build" "$B/scan-build-report"
log=$B/scan-build.log
if scan-build meson setup "$B/scan-build" >"$log" 2>&1 &&
	nice scan-build -o "$B/scan-build-report" ninja -C "$B/scan-build" >>"$log" 2>&1; then
	if grep -q 'scan-build: No bugs found' "$log"; then
		n=0
	else
		n=$(sed -n 's/^scan-build: \([0-9][0-9]*\) bugs\? found.*/\1/p' "$log" | tail -n 1)
		grep -E 'warning: .*\[[a-z]+\.[A-Za-z.]+\]' "$log" | head -n 20
	fi
else
	n="build failed"
	tail -n 20 "$log"
fi
result "scan-build (clang $(clang -dumpversion))" "${n:-unknown}" "$log"

echo "analyze: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
