#!/bin/bash
# The single test command: dependencies, guest kernels, meson build, unit
# tests, install into build/destdir, then the VM suite on real kernels.
# The last line is the total: "N passed, N failed" (", N skipped" if any).
# Environment: VWC_MESON_OPTS (extra meson setup options, words), and what
# tests/vm/run-suite.sh reads (VWC_KERNELS, VWC_CASES, ...).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$PWD

# >>> Extra `meson setup` options, e.g. -Dnvme_cli_source=PATH (set by the
# >>> plugin's build script). Words from $VWC_MESON_OPTS are appended.
MESON_OPTS=()
# shellcheck disable=SC2206 # word splitting intended
MESON_OPTS+=(${VWC_MESON_OPTS:-})

BUILD=$REPO/build
DESTDIR_OUT=$BUILD/destdir
passed=0 failed=0 skipped=0
step() { echo; echo "=== $*"; }
broken() { # STEP: count a failed step as one failure
	echo "run-all: FAIL $1"
	failed=$((failed + 1))
}

step deps
bash scripts/deps.sh

step kernels
bash tests/vm/kernels.sh 6.1 6.12 7.2 7.2-generic 6.1-generic 6.12-generic

step "nvme-cli source (Debian's, for the nvme binary with the plugin)"
MESON_OPTS+=("-Dnvme_cli_source=$(bash scripts/fetch-nvme-cli.sh)")

built=0
step "meson build"
if [ -f "$BUILD/build.ninja" ]; then
	setup=(meson setup --reconfigure "$BUILD" "${MESON_OPTS[@]}")
else
	setup=(meson setup "$BUILD" "${MESON_OPTS[@]}")
fi
if "${setup[@]}" && meson compile -C "$BUILD"; then
	built=1
else
	broken "meson build"
fi

if [ "$built" = 1 ]; then
	step "unit tests"
	out=$BUILD/unit-tests.out
	rc=0
	meson test -C "$BUILD" --print-errorlogs 2>&1 | tee "$out" || rc=$?
	# meson's summary: "Ok: N", "Expected Fail: N", "Fail: N",
	# "Unexpected Pass: N", "Skipped: N", "Timeout: N".
	n() { sed -n "s/^$1:[[:space:]]*\([0-9][0-9]*\).*/\1/p" "$out" | tail -n 1; }
	ok=$(n Ok) xf=$(n 'Expected Fail') fl=$(n Fail) up=$(n 'Unexpected Pass') sk=$(n Skipped) to=$(n Timeout)
	passed=$((passed + ${ok:-0} + ${xf:-0}))
	failed=$((failed + ${fl:-0} + ${up:-0} + ${to:-0}))
	skipped=$((skipped + ${sk:-0}))
	if [ "$rc" -ne 0 ] && [ -z "$fl$up$to" ]; then broken "meson test (exit $rc, no summary)"; fi
	echo "unit: ${ok:-0} ok, $((${fl:-0} + ${up:-0} + ${to:-0})) failed, ${sk:-0} skipped"

	step "meson install"
	rm -rf "$DESTDIR_OUT"
	if ! DESTDIR=$DESTDIR_OUT meson install -C "$BUILD" --quiet; then
		broken "meson install"
		rm -rf "$DESTDIR_OUT"
	fi
fi

step "VM suite"
vm_out=$BUILD/vm-suite.out
mkdir -p "$BUILD"
rc=0
vm_dest=()
[ -d "$DESTDIR_OUT" ] && vm_dest=("$DESTDIR_OUT")
bash tests/vm/run-suite.sh "${vm_dest[@]}" 2>&1 | tee "$vm_out" || rc=$?
summary=$(grep -E '^vm: [0-9]+ passed, [0-9]+ failed' "$vm_out" | tail -n 1 || true)
if [ -n "$summary" ]; then
	read -r vp vf vs < <(sed -E 's/^vm: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/' <<<"$summary")
	passed=$((passed + vp)) failed=$((failed + vf)) skipped=$((skipped + vs))
	if [ "$rc" -ne 0 ] && [ "$vf" -eq 0 ]; then broken "VM suite (exit $rc)"; fi
else
	broken "VM suite (exit $rc, no summary)"
fi

# suite NAME CMD...: run a host-side suite whose last count line is
# "NAME: N passed, N failed" (", N skipped" optional) and add it up. A
# suite that exits non-zero without a failure in its count, or prints no
# count, is one failure.
suite() {
	local name=$1 out rc=0 summary sp sf ss
	shift
	out=$BUILD/$name.out
	mkdir -p "$BUILD"
	"$@" 2>&1 | tee "$out" || rc=$?
	summary=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$out" | tail -n 1 || true)
	if [ -z "$summary" ]; then
		broken "$name (exit $rc, no summary)"
		return 0
	fi
	read -r sp sf ss < <(sed -E "s/^$name: ([0-9]+) passed, ([0-9]+) failed(, ([0-9]+) skipped)?.*/\1 \2 \4/" <<<"$summary")
	passed=$((passed + sp)) failed=$((failed + sf)) skipped=$((skipped + ${ss:-0}))
	if [ "$rc" -ne 0 ] && [ "$sf" -eq 0 ]; then broken "$name (exit $rc)"; fi
}

# within NAME MINUTES: true if a suite that may take MINUTES still ends
# within the run's budget (VWC_TIME_BUDGET minutes from the start, default
# 85: CI stops a run at 90). Otherwise the suite is counted as one skip,
# said by name, so a slow host reports less instead of being cut off.
BUDGET_MIN=${VWC_TIME_BUDGET:-85}
within() {
	local used=$((SECONDS / 60))
	if [ $((used + $2)) -le "$BUDGET_MIN" ]; then
		return 0
	fi
	echo "run-all: SKIP $1: ${used} min used, it may take $2, the budget is $BUDGET_MIN (VWC_TIME_BUDGET)"
	skipped=$((skipped + 1))
	return 1
}

step "system (the packages in booted Debian 12 and 13 systems)"
within system 40 && suite system bash tests/system/run.sh

# after system: the fleet suite's .deb test installs what it built
step "fleet (ansible playbook, promtool)"
within fleet 15 && suite fleet bash tests/fleet/run.sh "$BUILD" "$BUILD"/vm-logs/*-fleet.log "$BUILD"/vm-logs/*-textfile.log

# after system: both reuse the packages it built (both versions)
step "piuparts (install, purge, upgrade 0.1.0 -> next; bookworm, trixie)"
within piuparts 10 && suite piuparts bash tests/pkg/piuparts.sh "$BUILD/piuparts"

step "autopkgtest (debian/tests, autopkgtest-virt-unshare; bookworm, trixie)"
within autopkgtest 8 && suite autopkgtest bash tests/pkg/autopkgtest.sh "$BUILD/autopkgtest"

step "compat (nvme-cli 2.3, 2.13, 2.16, 3.x; VM on 7.2)"
within compat 15 && suite compat bash tests/compat/run.sh

step "rpm (the RPM spec built with Debian's rpmbuild, rpmlint; the release tarball's source copy)"
within rpm 5 && suite rpm bash tests/pkg/rpm.sh "$BUILD/rpm"

step "analyze (gcc -fanalyzer, clang scan-build)"
within analyze 6 && suite analyze bash tests/analyze/run.sh "$BUILD/analyze"

step "fuzz (libFuzzer harnesses of the parsers, 20 s each)"
within fuzz 6 && suite fuzz bash tests/fuzz/run.sh "$BUILD/fuzz" 20

step "sanitize (ASan+UBSan: unit tests; VM core and watch on 7.2)"
within sanitize 10 && suite sanitize bash tests/sanitize/run.sh "$BUILD/sanitize" "$(bash scripts/fetch-nvme-cli.sh)"

step "valgrind (memcheck on the sidecar over 1000 Set Features, VM 7.2)"
within valgrind 8 && suite valgrind bash tests/sanitize/valgrind.sh "$BUILD/valgrind"

step "coverage (src/ lines: unit tests + 6 VM cases on 7.2, t700 on 7.2-generic, t700-dynid on 6.1, see tests/coverage/run.sh)"
within coverage 15 && suite coverage bash tests/coverage/run.sh "$BUILD/coverage" "$(bash scripts/fetch-nvme-cli.sh)"

echo
total="$passed passed, $failed failed"
[ "$skipped" -eq 0 ] || total="$total, $skipped skipped"
echo "$total"
[ "$failed" -eq 0 ]
