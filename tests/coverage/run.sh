#!/bin/bash
# Line coverage of src/ from the unit tests and VM cases together: a
# -Db_coverage=true build (the nvme binary with the plugin too when an
# nvme-cli source is given), meson test on the host, then the cases in
# guests with the instrumented install tree (guest-env.sh and
# guest-after.sh through tests/vm/mkinitramfs.sh's /etc/vwc-test hooks
# send the guests' .gcda files back), then report.sh.
# Usage: run.sh BUILDDIR [NVME_CLI_SOURCE]
# Environment: VWC_COV_CASES (cases, default below; "" for unit tests
#   only), VWC_COV_KERNELS (default "7.2"), VWC_COV_GOAL.
# Last line: "coverage: N passed, N failed" (report.sh's).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: run.sh BUILDDIR [NVME_CLI_SOURCE]}
SRC=${2:-}
mkdir -p "$B"
B=$(cd "$B" && pwd)
CASES=${VWC_COV_CASES-core setcache watch udev t700-dynid hygon smart multipath fleet}
KERNELS=${VWC_COV_KERNELS:-7.2}
bad() { echo "coverage: $*"; echo "coverage: 0 passed, 1 failed"; exit 1; }

bash tests/analyze/deps.sh gcc meson ninja-build pkg-config libudev-dev libjson-c-dev libnvme-dev || bad "dependencies"
opts=(-Db_coverage=true)
[ -n "$SRC" ] && opts+=("-Dnvme_cli_source=$SRC")
if [ -f "$B/build/build.ninja" ]; then
	meson setup --reconfigure "$B/build" "${opts[@]}" >"$B/setup.log" 2>&1
else
	meson setup "$B/build" "${opts[@]}" >"$B/setup.log" 2>&1
fi || { tail -n 20 "$B/setup.log"; bad "meson setup failed"; }
nice ninja -C "$B/build" >"$B/build.log" 2>&1 || { tail -n 30 "$B/build.log"; bad "build failed"; }
# fresh counters for this run
find "$B/build" -name '*.gcda' -delete
meson test -C "$B/build" >"$B/unit.out" 2>&1 ||
	echo "coverage: note: some unit tests failed (see $B/unit.out); counted anyway"
grep -E '^(Ok|Fail):' "$B/unit.out" | tr -s ' ' | sed 's/^/coverage: unit /'

logs=()
if [ -n "$CASES" ]; then
	rm -rf "$B/destdir" "$B/vm-logs"
	DESTDIR=$B/destdir meson install -C "$B/build" --quiet >"$B/install.log" 2>&1 ||
		{ tail -n 20 "$B/install.log"; bad "meson install failed"; }
	install -D -m 644 tests/coverage/guest-env.sh "$B/destdir/etc/vwc-test/env"
	install -D -m 755 tests/coverage/guest-after.sh "$B/destdir/etc/vwc-test/after"
	echo "$B/build" >"$B/destdir/etc/vwc-test/gcov-dir"
	VWC_LOG_DIR=$B/vm-logs VWC_CASES="$CASES" VWC_KERNELS="$KERNELS" VWC_INFO=0 \
		bash tests/vm/run-suite.sh "$B/destdir" >"$B/vm.out" 2>&1
	grep -E '^vm: [0-9]+ passed' "$B/vm.out" | sed 's/^/coverage: guests: /'
	grep -E '^\[.*(FAIL|SKIP)' "$B/vm.out" | head -n 20 | sed 's/^/coverage:   /'
	logs=("$B"/vm-logs/*.log)
fi
bash tests/coverage/report.sh "$B/build" "${logs[@]}"
