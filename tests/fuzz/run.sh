#!/bin/bash
# Build the libFuzzer harnesses and run each one for a fixed time, one per
# core at a time (nice 10), from the committed seeds
# (tests/fuzz/corpus/NAME) plus what earlier runs found
# (BUILDDIR/corpus/NAME).
# Usage: run.sh BUILDDIR [SECONDS]   (SECONDS per harness, default 20)
# Prints one line per harness (executions, crashes) and
# "fuzz: N passed, N failed": a harness fails on any crash, leak, timeout
# or sanitizer report; the input is kept as BUILDDIR/artifacts/NAME-*.
set -uo pipefail
cd "$(dirname "$0")/../.."
B=${1:?usage: run.sh BUILDDIR [SECONDS]}
T=${2:-20}
mkdir -p "$B"
B=$(cd "$B" && pwd)
passed=0 failed=0
# shellcheck source=tests/lib/cpu.sh
. tests/lib/cpu.sh

bash tests/analyze/deps.sh clang libclang-rt-14-dev libudev-dev libkmod-dev libmount-dev libjson-c-dev libtracefs-dev libtraceevent-dev libbpf-dev libnvme-dev meson ninja-build pkg-config || {
	echo "fuzz: 0 passed, 1 failed"; exit 1; }
if ! bash tests/fuzz/build.sh "$B/build"; then
	echo "fuzz: 0 passed, 1 failed"
	exit 1
fi
mkdir -p "$B/artifacts"
# fuzz_one HARNESS: run it for T seconds; its verdict line goes to
# $B/NAME.result ("ok ..." or "FAIL ...", then the crash lines)
# (its T seconds are wall time: beside the guests of a full run, at nice
# 19 there, a harness gets a fraction of a core, and its line says how
# much CPU it had: this shell's children's ticks, kids_cpu)
fuzz_one() {
	local h=$1 name=${1#fuzz-} rc=0 execs crashes log c0 cpu
	log=$B/$name.log
	mkdir -p "$B/corpus/$name"
	kids_cpu
	c0=$KIDS
	nice -n 10 "$B/build/$h" -max_total_time="$T" -timeout=10 \
		-print_final_stats=1 -artifact_prefix="$B/artifacts/$name-" \
		"$B/corpus/$name" "tests/fuzz/corpus/$name" >"$log" 2>&1 || rc=$?
	kids_cpu
	cpu=$(((KIDS - c0) * 10 / HZ))
	cpu=$((cpu / 10)).$((cpu % 10))
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	crashes=$(grep -cE '^==[0-9]+== ?ERROR|^SUMMARY: (Address|Undefined|Leak)|runtime error:' "$log" || true)
	if [ "$rc" -eq 0 ] && [ "$crashes" -eq 0 ] && [ -n "$execs" ]; then
		echo "ok   $name: ${execs} executions in ${T} s (${cpu} s of CPU), 0 crashes, corpus $(ls "$B/corpus/$name" | wc -l) + $(ls "tests/fuzz/corpus/$name" | wc -l) seeds" >"$B/$name.result"
	else
		{
			echo "FAIL $name: exit $rc, ${execs:-?} executions, $crashes reports (log $log)"
			grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -n 5
		} >"$B/$name.result"
	fi
}
# libFuzzer runs one thread: one harness per core at a time, each for its
# full T seconds
names=()
for src in tests/fuzz/fuzz-*.c; do
	h=$(basename "$src" .c)
	names+=("${h#fuzz-}")
	rm -f "$B/${h#fuzz-}.result"
	while [ "$(jobs -rp | wc -l)" -ge "$(nproc)" ]; do wait -n || true; done
	fuzz_one "$h" &
done
wait
for name in "${names[@]}"; do
	if [ -s "$B/$name.result" ] && head -n 1 "$B/$name.result" | grep -q '^ok '; then
		passed=$((passed + 1))
		sed '1s/^/fuzz: /' "$B/$name.result"
	else
		failed=$((failed + 1))
		[ -s "$B/$name.result" ] || echo "FAIL $name: no verdict" >"$B/$name.result"
		sed '1s/^/fuzz: /' "$B/$name.result"
	fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
