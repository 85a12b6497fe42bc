#!/bin/bash
# ASan + UBSan (gcc, -fno-sanitize-recover): build everything (the nvme
# binary with the plugin too when an nvme-cli source is given), run the
# unit tests, install, then the VM cases with the sanitized binaries in
# the guest: reports are collected from the guest (guest-env.sh,
# guest-after.sh through tests/vm/mkinitramfs.sh's /etc/vwc-test hooks).
# Usage: run.sh BUILDDIR [NVME_CLI_SOURCE]
# Environment: VWC_SAN_CASES (default "core watch"; "" skips the VM part),
#   VWC_SAN_KERNELS (default "7.2").
# Last line: "sanitize: N passed, N failed[, N skipped]" (unit tests + VM
# results, and one failure per guest that left a sanitizer report; the
# VM suite's and meson's skips are counted, not dropped).
set -uo pipefail
cd "$(dirname "$0")/../.."
REPO=$PWD
B=${1:?usage: run.sh BUILDDIR [NVME_CLI_SOURCE]}
SRC=${2:-}
mkdir -p "$B"
B=$(cd "$B" && pwd)
CASES=${VWC_SAN_CASES-core watch}
KERNELS=${VWC_SAN_KERNELS:-7.2}
passed=0 failed=0 skipped=0
fail() { echo "sanitize: FAIL $*"; failed=$((failed + 1)); }
finish() {
	echo "sanitize: $passed passed, $failed failed$([ "$skipped" = 0 ] || echo ", $skipped skipped")"
	[ "$failed" -eq 0 ]
	exit
}

bash tests/analyze/deps.sh gcc meson ninja-build pkg-config libudev-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev libnvme-dev || {
	fail "dependencies"; finish; }

opts=(-Db_sanitize=address,undefined -Dc_args=-fno-sanitize-recover=all
      -Dc_link_args=-fno-sanitize-recover=all)
[ -n "$SRC" ] && opts+=("-Dnvme_cli_source=$SRC")
if [ -f "$B/build/build.ninja" ]; then
	meson setup --reconfigure "$B/build" "${opts[@]}" >"$B/setup.log" 2>&1
else
	meson setup "$B/build" "${opts[@]}" >"$B/setup.log" 2>&1
fi || { tail -n 20 "$B/setup.log"; fail "meson setup"; finish; }
nice ninja -C "$B/build" >"$B/build.log" 2>&1 || {
	tail -n 30 "$B/build.log"; fail "build"; finish; }

# unit tests: a report fails the test (exit status)
out=$B/unit.out
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	meson test -C "$B/build" --print-errorlogs >"$out" 2>&1
n() { sed -n "s/^$1:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$out" | tail -n 1; }
ok=$(n Ok) fl=$(n Fail) to=$(n Timeout) sk=$(n Skipped)
passed=$((passed + ${ok:-0})) skipped=$((skipped + ${sk:-0}))
failed=$((failed + ${fl:-0} + ${to:-0}))
reports=$(grep -cE 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$B/build/meson-logs/testlog.txt" || true)
echo "sanitize: unit tests: ${ok:-0} ok, ${fl:-0} failed, ${to:-0} timed out; $reports sanitizer reports"
grep -E 'ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:' "$B/build/meson-logs/testlog.txt" | head -n 10
[ -n "$ok" ] || fail "meson test printed no summary"
[ "$reports" -eq 0 ] || fail "unit tests: $reports sanitizer reports"

[ -n "$CASES" ] || finish
rm -rf "$B/destdir"
DESTDIR=$B/destdir meson install -C "$B/build" --quiet >"$B/install.log" 2>&1 || {
	tail -n 20 "$B/install.log"; fail "meson install"; finish; }
install -d "$B/destdir/etc/vwc-test"
install -m 644 tests/sanitize/guest-env.sh "$B/destdir/etc/vwc-test/env"
install -m 755 tests/sanitize/guest-after.sh "$B/destdir/etc/vwc-test/after"
install -m 644 tests/sanitize/asan.supp tests/sanitize/lsan.supp "$B/destdir/etc/vwc-test/"

vm_out=$B/vm.out
VWC_LOG_DIR=$B/vm-logs VWC_CASES="$CASES" VWC_KERNELS="$KERNELS" VWC_INFO=0 \
	bash tests/vm/run-suite.sh "$B/destdir" >"$vm_out" 2>&1
grep -E '^\[|^vm:' "$vm_out" | grep -vE ' PASS ' | tail -n 30
summary=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$vm_out" | tail -n 1)
if [ -z "$summary" ]; then
	fail "VM suite printed no summary (log $vm_out)"
else
	read -r vp vf vs < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$summary")
	passed=$((passed + vp)) failed=$((failed + vf)) skipped=$((skipped + vs))
	echo "sanitize: VM ($CASES on $KERNELS): $summary"
fi
for k in $KERNELS; do
	for c in $CASES; do
		log=$B/vm-logs/$k-$c.log
		r=$(sed -n 's/.*VWC-SAN-REPORTS: \([0-9]*\).*/\1/p' "$log" 2>/dev/null | tail -n 1)
		if [ -z "$r" ]; then
			fail "[$k] $c: no sanitizer summary from the guest (log $log)"
		elif [ "$r" -ne 0 ]; then
			fail "[$k] $c: $r sanitizer reports"
			grep -a 'VWC-SAN: ' "$log" | head -n 40
		else
			passed=$((passed + 1))
			echo "sanitize: [$k] $c: 0 sanitizer reports in the guest"
		fi
	done
done
finish
