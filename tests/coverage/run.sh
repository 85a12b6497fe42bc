#!/bin/bash
# Line coverage of src/ from the unit tests and VM cases together: a
# -Db_coverage=true build (the nvme binary with the plugin too when an
# nvme-cli source is given), meson test on the host, then the cases in
# guests with the instrumented install tree (guest-env.sh and
# guest-after.sh through tests/vm/mkinitramfs.sh's /etc/vwc-test hooks
# send the guests' .gcda files back), then report.sh.
# Usage: run.sh BUILDDIR [NVME_CLI_SOURCE]
# Environment: VWC_COV_CASES (cases, default below; "" for unit tests
#   only), VWC_COV_KERNELS (default "7.2"), VWC_COV_EXTRA (more guests as
#   KERNEL:CASE words, default below: the cases whose paths only another
#   kernel takes; "" for none), VWC_COV_GOAL. Guests run VWC_JOBS at a time.
# Last line: "coverage: N passed, N failed" (report.sh's).
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: run.sh BUILDDIR [NVME_CLI_SOURCE]}
SRC=${2:-}
mkdir -p "$B"
B=$(cd "$B" && pwd)
# Lines only one guest covers (a2b9312, leave-one-out over the 10 guests
# below plus multipath and smart): hygon 165, t700-dynid (6.1) 123,
# setcache 84, fleet 65, udev 50, t700 47, watch 38, core 13, multipath 7,
# smart 5. multipath and smart (40 s of guests for 12 lines, 0.3%) run in
# the VM suite only.
CASES=${VWC_COV_CASES-core setcache watch udev hygon fleet}
KERNELS=${VWC_COV_KERNELS:-7.2}
# t700: the modprobe.d route (libkmod) exists only where nvme is a module
# with a quirks parameter (7.2-generic); t700-dynid on 6.1: no quirks
# attribute, so the driver's table is read (libkmod), then the same dynamic
# ID and rebind paths as on 7.2.
EXTRA=${VWC_COV_EXTRA-7.2-generic:t700 6.1:t700-dynid}
bad() { echo "coverage: $*"; echo "coverage: 0 passed, 1 failed"; exit 1; }

bash tests/analyze/deps.sh gcc meson ninja-build pkg-config libudev-dev libkmod-dev libmount-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev libnvme-dev || bad "dependencies"
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
if [ -n "$CASES$EXTRA" ]; then
	rm -rf "$B/destdir" "$B"/vm-logs*
	DESTDIR=$B/destdir meson install -C "$B/build" --quiet >"$B/install.log" 2>&1 ||
		{ tail -n 20 "$B/install.log"; bad "meson install failed"; }
	install -D -m 644 tests/coverage/guest-env.sh "$B/destdir/etc/vwc-test/env"
	install -D -m 755 tests/coverage/guest-after.sh "$B/destdir/etc/vwc-test/after"
	echo "$B/build" >"$B/destdir/etc/vwc-test/gcov-dir"
	: >"$B/vm.out"
	runs=()
	[ -n "$CASES" ] && runs+=("$KERNELS|$CASES")
	for e in $EXTRA; do runs+=("${e%%:*}|${e#*:}"); done
	i=0
	for run in "${runs[@]}"; do
		i=$((i + 1))
		VWC_LOG_DIR=$B/vm-logs$i VWC_CASES="${run#*|}" VWC_KERNELS="${run%%|*}" VWC_INFO=0 \
			bash tests/vm/run-suite.sh "$B/destdir" >"$B/vm$i.out" 2>&1
		cat "$B/vm$i.out" >>"$B/vm.out"
		grep -E '^vm: [0-9]+ passed' "$B/vm$i.out" | sed "s/^/coverage: guests (${run%%|*}: ${run#*|}): /"
		logs+=("$B"/vm-logs$i/*.log)
	done
	grep -E '^\[.*(FAIL|SKIP)' "$B/vm.out" | head -n 20 | sed 's/^/coverage:   /'
fi
bash tests/coverage/report.sh "$B/build" "${logs[@]}"
